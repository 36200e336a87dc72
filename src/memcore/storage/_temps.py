"""Temp files an interrupted atomic write left behind: found, reported, swept under the lock.

:func:`memcore.storage.atomic_write` writes ``.<name>.<12 hex digits>.tmp`` beside its target and
renames it over the target; a crash (SIGKILL, power loss) between the two leaves the temp file.
Only names of exactly that shape are ever touched here: anything else in a store is the user's.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from itertools import compress, repeat
from pathlib import Path

from memcore.models import Diagnostic, Severity

__all__ = [
    "STALE_TEMP_AGE_S",
    "TEMP_NAME",
    "TempSweeper",
    "find_temp_files",
    "sweep_temp_files",
    "temp_file_diagnostics",
]

#: The name :func:`memcore.storage.atomic_write` gives its temp files.
TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.[0-9a-f]{12}\.tmp$")
#: A temp file younger than this may belong to a live write (it exists from the write's first
#: byte to its rename, milliseconds): the sweep leaves it. Older ones were left by a crash.
STALE_TEMP_AGE_S = 60.0
_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


def find_temp_files(location: str | os.PathLike[str]) -> list[Path]:
    """Return memcore's temp files under ``location``, sorted.

    A folder is walked (symlinks not followed, ``.git`` skipped); for a single-file store (a
    file location) its folder is looked at, not below. Only regular files whose name matches
    :data:`TEMP_NAME` are returned.
    """
    root = Path(location)
    found: list[Path] = []
    if root.is_dir():
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
            # names ending in ".tmp" picked in one C-level pass first (a folder may hold 100,000 files)
            candidates = compress(files, map(str.endswith, files, repeat(".tmp")))
            found.extend(Path(folder, name) for name in candidates if TEMP_NAME.match(name))
    else:
        with contextlib.suppress(OSError), os.scandir(root.parent) as it:
            found.extend(Path(e.path) for e in it if TEMP_NAME.match(e.name))
    out = []
    for path in found:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                out.append(path)
    return sorted(out)


def sweep_temp_files(location: str | os.PathLike[str], *, min_age: float = STALE_TEMP_AGE_S) -> list[Path]:
    """Remove memcore's temp files under ``location`` left by interrupted writes.

    Call it only while holding the store's write lock (:func:`memcore.storage.file_lock`), so
    that no memcore writer of this store is between its temp file and its rename; files younger
    than ``min_age`` seconds are left too, for writers that lock only the file they write.

    Returns:
        The files removed.
    """
    now = time.time()
    removed = []
    for path in find_temp_files(location):
        try:
            if now - os.lstat(path).st_mtime < min_age:
                continue
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def temp_file_diagnostics(location: str | os.PathLike[str], format_name: str) -> list[Diagnostic]:
    """One warning per memcore temp file under ``location`` (``<format>.leftover-temp``)."""
    root = Path(location)
    base = root if root.is_dir() else root.parent
    out = []
    for path in find_temp_files(location):
        match = TEMP_NAME.match(path.name)
        assert match is not None
        rel = path.relative_to(base).as_posix()
        out.append(
            Diagnostic(
                path=rel,
                code=f"{format_name}.leftover-temp",
                severity=Severity.WARNING,
                message=(
                    f"{rel}: a temp file of an interrupted write of {match['target']} (memcore's atomic write); "
                    "the next write to this store removes it, or delete it by hand"
                ),
            )
        )
    return out


class TempSweeper:
    """Sweep a store once per open provider, and again at most every :data:`STALE_TEMP_AGE_S`.

    A provider keeps one and calls :meth:`sweep` where it holds its write lock: the first write
    of each open walks the store once; later writes cost a clock read.

    Args:
        location: The store's folder or file.
    """

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.location = location
        self._last: float | None = None

    def sweep(self) -> list[Path]:
        """Sweep now unless this sweeper did within the last minute; return the files removed."""
        now = time.monotonic()
        if self._last is not None and now - self._last < STALE_TEMP_AGE_S:
            return []
        self._last = now
        return sweep_temp_files(self.location)
