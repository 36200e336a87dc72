"""Cross-process locks for read-modify-write, kept outside the store."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import filelock

from memcore.errors import StoreBusyError

__all__ = ["file_lock", "lock_path_for"]

_DEFAULT_TIMEOUT_S = 60.0
_local = threading.local()


def lock_path_for(path: str | os.PathLike[str]) -> Path:
    """Return the lock file guarding ``path``.

    Locks live in ``$MEMCORE_LOCK_DIR`` (default: ``<tempdir>/memcore-locks``), named by the
    sha256 of the resolved path, so taking a lock never adds a file to the user's store.
    """
    base = Path(os.environ.get("MEMCORE_LOCK_DIR") or Path(tempfile.gettempdir()) / "memcore-locks")
    base.mkdir(parents=True, exist_ok=True)
    key = os.path.normcase(str(Path(path).resolve()))
    return base / (hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".lock")


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
        held = _Held(filelock.FileLock(str(lock_file), timeout=timeout, thread_local=True))
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
