"""Cross-process locks for read-modify-write, kept outside the store."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
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


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], *, timeout: float = _DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive cross-process lock for ``path`` (a file, or a whole store folder).

    Re-entrant within one thread. Use one lock per store for multi-file read-modify-write.

    Args:
        path: What the lock guards; it need not exist.
        timeout: Seconds to wait before giving up.

    Raises:
        StoreBusyError: Another process held the lock for longer than ``timeout`` seconds; the
            message names what is locked and the lock file.
    """
    held: dict[Path, filelock.BaseFileLock] = getattr(_local, "held", None) or {}
    _local.held = held
    by_name: dict[str, tuple[Path, filelock.BaseFileLock]] = getattr(_local, "by_name", None) or {}
    _local.by_name = by_name
    name = os.fspath(path)
    known = by_name.get(name)
    if known is not None and known[1].is_locked:
        # this thread holds it already (an add inside a batch): nothing to acquire or release,
        # and no path to resolve (~80 us per nested call otherwise); the outer holder's
        # release comes after this block ends
        yield
        return
    lock_file = lock_path_for(path)
    found = held.get(lock_file)
    if found is None:
        found = held[lock_file] = filelock.FileLock(str(lock_file), timeout=timeout, thread_local=True)
    lock = found
    by_name[name] = (lock_file, lock)
    # filelock polls every 50 ms by default; memcore's critical sections last a few ms, so a
    # 2 ms poll cuts the wait of contended writers by an order of magnitude.
    try:
        lock.acquire(poll_interval=0.002)
    except filelock.Timeout:
        raise StoreBusyError(
            f"{os.fspath(path)}: another process (a memcore batch or writer) has held this store's lock "
            f"for more than {timeout:g} s; wait for it to finish or stop it, then retry (lock file {lock_file})"
        ) from None
    try:
        yield
    finally:
        lock.release()
