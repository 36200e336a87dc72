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

The drift check also reports a rollup (the workspace's ``_index.json``) that is not a JSON
object, which takes parsing all of it (~40 ms for the 8 MB rollup of 10,000 memories). After
memcore writes a rollup of at least :data:`KNOWN_FROM_BYTES`, :func:`remember_rollup` saves its
version (the SHA-256 of its bytes) beside the folder indexes' layouts
(:func:`memcore_box._patch.save`, memcore's cache folder); a later read that finds the same
version (:func:`rollup_known`) knows the bytes are the writer's, a JSON object, and takes only
their unknown top-level keys (:func:`memcore_box._splice.top_level_extras`, as every read but
the check does). ``MEMCORE_BOX_READ_ALL_FAST=0`` (or ``MEMCORE_BOX_SPLICE=0``) turns this off:
nothing is saved and the check parses the whole rollup.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from operator import itemgetter
from typing import Any

from memcore.storage import LocalStorage

__all__ = [
    "KNOWN_FROM_BYTES",
    "SETTLED_NS",
    "Listed",
    "indexed_files_match",
    "now_ns",
    "remember_rollup",
    "rollup_known",
    "stamp",
    "take",
]

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


#: A rollup's version is saved (:func:`remember_rollup`) when it is at least this large (a smaller
#: one parses quickly).
KNOWN_FROM_BYTES = 1 << 20
#: Changes whenever the rollup writer's output could be other than one JSON object: older records
#: are then ignored.
ROLLUP_WRITER = "box-rollup-writer/1"


def _rollup_record(rollup_file: str) -> str:
    """Return where the record of ``rollup_file`` (an absolute path) is saved (beside the layouts)."""
    from memcore_box._patch import _record

    return _record(rollup_file).removesuffix(".json") + ".rollup.json"


def remember_rollup(rollup_file: str, version: str, size: int) -> None:
    """Save that the rollup ``rollup_file`` holds, at ``version`` (``size`` bytes), what memcore wrote; best effort.

    Nothing is saved for a rollup under :data:`KNOWN_FROM_BYTES` (a record of an older, larger
    one is removed).
    """
    with contextlib.suppress(OSError, ValueError):
        path = _rollup_record(rollup_file)
        if size < KNOWN_FROM_BYTES:
            if os.path.exists(path):
                os.unlink(path)
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{secrets.token_hex(6)}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"writer": ROLLUP_WRITER, "version": version, "size": size}, fh)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def rollup_known(rollup_file: str, version: str, size: int) -> bool:
    """Return whether memcore wrote exactly these bytes of ``rollup_file`` (:func:`remember_rollup` saved them).

    Args:
        rollup_file: The rollup's absolute path.
        version: The version of the bytes just read (their SHA-256).
        size: Their length.
    """
    if size < KNOWN_FROM_BYTES:
        return False
    try:
        with open(_rollup_record(rollup_file), encoding="utf-8") as fh:
            record = json.load(fh)
        return bool(record["writer"] == ROLLUP_WRITER and record["version"] == version and record["size"] == size)
    except (OSError, ValueError, KeyError, TypeError):
        return False
