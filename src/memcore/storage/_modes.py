"""Private folders and files for what memcore derives from a store (indexes, journals, scratch)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "make_private_dir", "touch_private_file"]

#: Mode of every folder memcore creates for derived data (index cache, journals, locks).
PRIVATE_DIR_MODE = 0o700
#: Mode of every derived file memcore creates (index databases and their side files, journals).
PRIVATE_FILE_MODE = 0o600


def make_private_dir(folder: str | os.PathLike[str]) -> Path:
    """Create ``folder`` and every missing parent with mode 0700 (whatever the umask).

    Folders that exist already keep their mode: they are the user's (``~/.cache``) or were
    chosen by them (``$MEMCORE_CACHE_DIR``).

    Returns:
        ``folder`` as a :class:`~pathlib.Path`.
    """
    path = Path(folder)
    missing: list[Path] = []
    cur = path
    while not os.path.lexists(cur) and cur != cur.parent:
        missing.append(cur)
        cur = cur.parent
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, PRIVATE_DIR_MODE)
            os.chmod(part, PRIVATE_DIR_MODE)
    return path


def touch_private_file(path: str | os.PathLike[str]) -> Path:
    """Make sure ``path`` exists as a regular file readable by its owner only (0600).

    Creates it empty with 0600 (never through a symlink), or narrows an existing file whose
    mode lets others read or write it (a database an older memcore created 0644). SQLite gives
    a database's ``-wal``, ``-shm`` and ``-journal`` files the database file's mode, so creating
    the database this way before connecting makes its side files 0600 too.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    target = Path(path)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(target, flags, PRIVATE_FILE_MODE)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o700 | 0o600)
    finally:
        os.close(fd)
    return target
