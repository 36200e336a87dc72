"""The switch of WhiteBox's memos of pure functions (``MEMCORE_WHITEBOX_FAST``) and the memo they share.

Writing and reading a vault computes the same small answers again and again: the text of a
tag list, a field value's quoting, a confidence's label, whether the text between two blocks
holds anything to report, the reference parser's reading of a ``key: value`` line. Each is a
pure function of its argument, so its answers are remembered (bounded, cleared when full) and
given back for an equal argument: the same values, the same bytes. ``MEMCORE_WHITEBOX_FAST=0``
turns every such memo off (each answer computed again), for comparison
(``tests/test_whitebox_fast.py`` compares both). The same switch turns off the building of
entries without validating them again (``codec._as_validated``); the readers take it from the
provider's :class:`~memcore_whitebox._readback.Built`, which reads it when it is made.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from memcore.switches import switch_on

__all__ = ["MEMO_MAX", "fast_enabled", "remembered"]

#: Answers kept per memo at most (then it starts again empty).
MEMO_MAX = 4096

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def fast_enabled() -> bool:
    """Whether WhiteBox's memos are on (default: yes; ``MEMCORE_WHITEBOX_FAST=0``: no)."""
    return switch_on("MEMCORE_WHITEBOX_FAST")


def remembered(memo: dict[K, V], key: K, compute: Callable[[K], V]) -> V:
    """Return ``compute(key)``, from ``memo`` when it holds ``key``, else computed and kept there."""
    try:
        return memo[key]
    except KeyError:
        pass
    value = compute(key)
    if len(memo) >= MEMO_MAX:
        memo.clear()
    memo[key] = value
    return value
