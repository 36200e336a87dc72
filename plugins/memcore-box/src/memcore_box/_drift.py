"""The drift check's listing, answered from the listing opening made when the folder has not changed since.

The first write after opening brings each folder index in line with the folder's files (index
files nobody indexed, drop entries whose file is gone): it lists the folder, 100,000 names and
sizes for a large one (~1 s). Opening the workspace listed every folder already
(:meth:`memcore_box._state.WorkspaceState._discover`). On a local folder, :func:`stamp` of a
folder (its inode, modification and change times) taken before and after that listing, and
again at the drift check, tells whether a name was added, removed or renamed in it since: each
of those changes both times of the folder. When the stamp is the same, the memory-file names
opening saw are the folder's names now, and the check compares the index with them instead of
listing again.

A change made within the same clock tick as the folder's previous change may leave its times
as they were, so a listing is remembered only when the folder's last change is at least
:data:`SETTLED_NS` older than the listing. ``MEMCORE_BOX_SPLICE=0`` turns this off with the
splice (every drift check lists the folder).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from operator import itemgetter
from typing import Any

from memcore.storage import LocalStorage

__all__ = ["SETTLED_NS", "Listed", "indexed_files_match", "now_ns", "stamp", "take"]

#: How much older than a listing the folder's last change must be for the listing to be kept
#: (nanoseconds): beyond any file system's timestamp granularity (FAT's is 2 s).
SETTLED_NS = 2_000_000_000

Stamp = tuple[int, int, int, int]


class Listed:
    """The file names (not folders) of one folder listing and the folder's stamp during it."""

    __slots__ = ("names", "stamp")

    def __init__(self, names: frozenset[str], folder_stamp: Stamp) -> None:
        self.names = names
        self.stamp = folder_stamp


def stamp(storage: Any, folder: str) -> Stamp | None:
    """Return ``(device, inode, mtime_ns, ctime_ns)`` of a local folder, or ``None``.

    ``None`` for any storage but :class:`memcore.storage.LocalStorage` (a remote folder has no
    such times) and when the folder cannot be stat'ed.
    """
    if not isinstance(storage, LocalStorage):
        return None
    try:
        st = os.stat(os.path.join(storage.root, folder) if folder else storage.root)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns


def take(before: Stamp | None, after: Stamp | None, started_ns: int, names: frozenset[str]) -> Listed | None:
    """Return what to remember of a listing made between the stamps ``before`` and ``after``, or ``None``.

    Args:
        before: :func:`stamp` of the folder just before it was listed.
        after: :func:`stamp` just after.
        started_ns: ``time.time_ns()`` just before ``before`` was taken.
        names: The names of the files (not folders) the listing holds.

    Returns:
        ``None`` when the folder changed during the listing or changed less than
        :data:`SETTLED_NS` before it (see the module docstring).
    """
    if before is None or before != after or before[3] > started_ns - SETTLED_NS:
        return None
    return Listed(names, before)


def now_ns() -> int:
    """Return the wall clock in nanoseconds (the clock a local file system's times follow)."""
    return time.time_ns()


def indexed_files_match(rows: Sequence[Any], names: AbstractSet[str], is_memory_name: Callable[[str], bool]) -> bool:
    """Return ``{r.filename for r in rows} == {n for n in names if is_memory_name(n)}``.

    Args:
        rows: A folder index's rows (:class:`memcore_box.index.IndexRow`).
        names: The names of the folder's files.
        is_memory_name: :func:`memcore_box._parse.is_memory_name`.

    When every row has the conventional file name ``<kind>__<slug>.md`` (a memory name unless
    the kind starts with a dot), the names are built and compared in C-level passes, and only
    the folder's other files (``_index.json``…) go through ``is_memory_name``.
    """
    try:
        conventional = list(map(itemgetter(2), rows)).count(None) == len(rows)
        kinds = set(map(itemgetter(5), rows)) if conventional else set()
    except TypeError:  # an unhashable kind (a foreign index): the general comparison
        conventional = False
    if not conventional or any(f"{kind}".startswith(".") for kind in kinds):
        return {row.filename for row in rows} == {n for n in names if is_memory_name(n)}
    indexed = set(map("{}__{}.md".format, map(itemgetter(5), rows), map(itemgetter(4), rows)))
    return indexed <= names and not any(map(is_memory_name, names - indexed))
