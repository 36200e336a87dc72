"""Cross-process locks for read-modify-write, kept outside the store."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import filelock
import platformdirs

from memcore.errors import LockPathError, StoreBusyError
from memcore.storage._modes import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, make_private_dir

__all__ = ["file_lock", "lock_dir", "lock_path_for"]

_DEFAULT_TIMEOUT_S = 60.0
_local = threading.local()


def lock_dir() -> Path:
    """Return this user's lock folder, creating it private (0700) when missing.

    ``$MEMCORE_LOCK_DIR`` when set (an absolute path); else ``locks`` in the user's cache folder
    (:func:`platformdirs.user_cache_dir`: ``~/.cache/memcore/locks`` on Linux,
    ``~/Library/Caches/memcore/locks`` on macOS, ``%LOCALAPPDATA%\\memcore\\Cache\\locks`` on
    Windows). Never a folder shared between users, so another user cannot create, replace or block
    our locks; and not the runtime folder (``$XDG_RUNTIME_DIR``), which a login session has and a
    cron job or service of the same user does not: two processes writing one store must take the
    same lock file.

    Raises:
        LockPathError: ``$MEMCORE_LOCK_DIR`` is relative, or the folder is a symlink, not a
            folder, not owned by this user or open to others (mode not 0700); the message names
            it and says how to fix it.
    """
    explicit = os.environ.get("MEMCORE_LOCK_DIR")
    if explicit:
        base = Path(explicit)
        if not base.is_absolute():
            raise LockPathError(
                f"MEMCORE_LOCK_DIR={explicit!r} is a relative path: processes started in other folders "
                "would take other locks for the same store; set it to an absolute path"
            )
    else:
        base = Path(platformdirs.user_cache_dir("memcore", appauthor=False, ensure_exists=False)) / "locks"
    _ensure_private_dir(base)
    return base


def _ensure_private_dir(folder: Path) -> None:
    """Create ``folder`` (and missing parents) 0700, or check that the existing one is private."""
    make_private_dir(folder)
    try:
        st = os.lstat(folder)
    except OSError as exc:  # pragma: no cover - removed between the two calls
        raise LockPathError(
            f"lock folder {folder}: cannot be created ({exc.strerror or exc}); "
            "set MEMCORE_LOCK_DIR to a private folder of yours"
        ) from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise LockPathError(
            f"lock folder {folder} is {'a symlink' if stat.S_ISLNK(st.st_mode) else 'not a folder'}; "
            "remove it (memcore creates it again, private) or set MEMCORE_LOCK_DIR to a private folder of yours"
        )
    if os.name == "posix":
        if st.st_uid != os.getuid():
            raise LockPathError(
                f"lock folder {folder} belongs to user id {st.st_uid}, not to you ({os.getuid()}): another "
                "user could take or block your locks; remove it or set MEMCORE_LOCK_DIR to a private folder of yours"
            )
        if stat.S_IMODE(st.st_mode) != PRIVATE_DIR_MODE:
            raise LockPathError(
                f"lock folder {folder} has mode {stat.S_IMODE(st.st_mode):04o}, not 0700: other users could "
                f"take or block your locks; run `chmod 700 {folder}` or set MEMCORE_LOCK_DIR to a private folder"
            )


def lock_path_for(path: str | os.PathLike[str]) -> Path:
    """Return the lock file guarding ``path``.

    Locks live in this user's private lock folder (:func:`lock_dir`), named by the sha256 of
    the resolved path, so taking a lock never adds a file to the user's store.

    Raises:
        LockPathError: The lock folder is not private to this user (see :func:`lock_dir`).
    """
    base = lock_dir()
    key = os.path.normcase(str(Path(path).resolve()))
    return base / (hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".lock")


def _check_lock_file(lock_file: Path) -> None:
    """Create ``lock_file`` 0600 without following a symlink; refuse anything planted there."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock_file, flags, PRIVATE_FILE_MODE)
    except OSError as exc:
        what = "a symlink" if os.path.islink(lock_file) else ("a folder" if lock_file.is_dir() else None)
        raise LockPathError(
            f"lock file {lock_file} cannot be opened ({what or exc.strerror or exc}); memcore never follows "
            "a link at a lock's path: remove it and retry"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # pragma: no cover - O_RDWR refuses folders already
            raise LockPathError(f"lock file {lock_file} is not a regular file; remove it and retry")
    finally:
        os.close(fd)


@dataclass
class _Held:
    """This thread's hold on one lock file: how many open blocks share it."""

    lock: filelock.BaseFileLock
    depth: int = 0


def _identity(name: str) -> tuple[int, int] | None:
    """(device, inode) that ``name`` names now (through symlinks), or ``None`` if it does not exist."""
    try:
        st = os.stat(name)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], *, timeout: float = _DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive cross-process lock for ``path`` (a file, or a whole store folder).

    Re-entrant within one thread: the lock file is taken by the first open block and released
    when the last one ends, in whatever order they end (generators, ``ExitStack``). Use one lock
    per store for multi-file read-modify-write.

    A block opened while this thread already holds the lock of the same path costs a ``stat``
    (no path resolution, no lock file call): the path is matched by its absolute form and the
    (device, inode) it names, so a changed working directory or a symlink pointed elsewhere is
    resolved afresh and locks what it names now.

    Args:
        path: What the lock guards; it need not exist.
        timeout: Seconds to wait before giving up.

    Raises:
        StoreBusyError: Another process held the lock for longer than ``timeout`` seconds; the
            message names what is locked and the lock file.
        LockPathError: The lock folder is not private to this user, or a symlink or folder sits at
            the lock file's path; the message names it and the fix.
    """
    holds: dict[Path, _Held] = getattr(_local, "holds", None) or {}
    _local.holds = holds
    names: dict[str, tuple[Path, tuple[int, int] | None]] = getattr(_local, "names", None) or {}
    _local.names = names
    name = os.path.abspath(os.fspath(path))
    identity = _identity(name)
    known = names.get(name)
    if known is not None and identity is not None and known[1] == identity and known[0] in holds:
        lock_file = known[0]  # held by an open block of this thread, and still the same file
    else:
        lock_file = lock_path_for(path)
        names[name] = (lock_file, identity)
    held = holds.get(lock_file)
    if held is None:
        _check_lock_file(lock_file)
        held = _Held(filelock.FileLock(str(lock_file), mode=PRIVATE_FILE_MODE, timeout=timeout, thread_local=True))
        # filelock polls every 50 ms by default; memcore's critical sections last a few ms, so
        # a 2 ms poll cuts the wait of contended writers by an order of magnitude.
        try:
            held.lock.acquire(poll_interval=0.002)
        except filelock.Timeout:
            raise StoreBusyError(
                f"{os.fspath(path)}: another process (a memcore batch or writer) has held this store's lock "
                f"for more than {timeout:g} s; wait for it to finish or stop it, then retry (lock file {lock_file})"
            ) from None
        holds[lock_file] = held
    held.depth += 1
    try:
        yield
    finally:
        held.depth -= 1
        if held.depth == 0:
            del holds[lock_file]
            held.lock.release()
