"""Pausing Python's cyclic garbage collector around bulk work.

A bulk pass (a migration, a Box ``read_all``) builds and keeps tens of thousands of objects
(entries, parsed files, reports): each collection the growing heap sets off rescans all of
them, and at 10,000 entries those collections cost a quarter to a third of the pass's CPU.
What such a pass drops is freed by reference counting; the few reference cycles it leaves
wait for the collector's next run once the pass is over.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (unless it is off already); resume it after.

    A host application that turned the collector off keeps it off; one that turns it off
    during the block finds it on again afterwards only if it was on before. Reference
    counting frees memory as usual meanwhile; only reference cycles wait for the collector.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
