"""``assert_equivalent``: a fast path gives exactly what the path it shortcuts gives.

Plugins keep their optimisations (fast YAML readers, incremental renderers, cached parses)
beside the general code they replace, with an off switch; their ``test_equivalence.py`` feeds
both the same inputs through this helper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["assert_equivalent"]

T = TypeVar("T")

_REPR_LIMIT = 300


def _short(value: object, *, as_repr: bool = True) -> str:
    text = repr(value) if as_repr else str(value)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 15] + f"... ({len(text)} chars)"


def _outcome(call: Callable[[T], Any], item: T) -> tuple[bool, Any]:
    """``(True, result)`` or ``(False, exception)`` of ``call(item)``."""
    try:
        return True, call(item)
    except Exception as exc:  # noqa: BLE001 - an exception is an outcome to compare
        return False, exc


def _describe(outcome: tuple[bool, Any]) -> str:
    returned, value = outcome
    if returned:
        return f"returned {type(value).__name__} {_short(value)}"
    return f"raised {type(value).__qualname__}: {_short(value, as_repr=False)}"


def _same(fast: tuple[bool, Any], reference: tuple[bool, Any]) -> bool:
    if fast[0] != reference[0] or type(fast[1]) is not type(reference[1]):
        return False
    if fast[0]:
        return bool(fast[1] == reference[1])
    return str(fast[1]) == str(reference[1])


def assert_equivalent(fast: Callable[[T], Any], reference: Callable[[T], Any], inputs: Iterable[T]) -> int:
    """Assert that ``fast`` and ``reference`` give the same outcome on every input.

    Each input is passed, as the one positional argument, to ``fast`` and then to
    ``reference`` (wrap a function of several arguments in a lambda over a tuple). Two outcomes
    are the same when both calls return values of the same type that compare equal (``==``),
    or both raise exceptions of the same type with the same message (``str(exc)``). An
    exception that is not an :class:`Exception` (``KeyboardInterrupt``) is not caught. The
    callables must not modify the input: both get the same object.

    Example::

        from memcore_conformance import assert_equivalent

        def test_fast_scalar_reader_matches_ruamel() -> None:
            assert_equivalent(fast_scalar, ruamel_scalar, ["a", "'b'", "no", "10:00", "", "x: y"])

    Args:
        fast: The optimised implementation.
        reference: The implementation it must agree with (the general path).
        inputs: The inputs to try, in order; an iterator is consumed once.

    Returns:
        How many inputs were compared (all of them, when nothing differed).

    Raises:
        AssertionError: On the first input whose outcomes differ (the message gives its index,
            the input and both outcomes), or when ``inputs`` is empty (an equivalence over no
            input proves nothing).
    """
    count = 0
    for index, item in enumerate(inputs):
        got, want = _outcome(fast, item), _outcome(reference, item)
        if not _same(got, want):
            raise AssertionError(
                f"fast path and reference differ on input #{index} {_short(item)}:\n"
                f"  fast:      {_describe(got)}\n"
                f"  reference: {_describe(want)}"
            )
        count += 1
    if count == 0:
        raise AssertionError("assert_equivalent was given no inputs: an equivalence over nothing proves nothing")
    return count
