"""Atomic whole-file writes and whole-record appends."""

from __future__ import annotations

import contextlib
import contextvars
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from memcore.storage._lock import file_lock

__all__ = ["append_record", "atomic_write", "scratch_writes"]

#: False inside :func:`scratch_writes`: writes skip fsync (this thread / task only)
_DURABLE: contextvars.ContextVar[bool] = contextvars.ContextVar("memcore_durable_writes", default=True)


@contextlib.contextmanager
def scratch_writes() -> Iterator[None]:
    """Within the block, :func:`atomic_write` and :func:`append_record` skip ``fsync``.

    For stores that are thrown away afterwards (a dry run, the trial run of ``--strict``, the
    id-predicting trial of a migration, all in a temporary folder): durability buys nothing
    there and costs a disk flush per file. Writes stay atomic (temp file + ``os.replace``) and
    whole-record; only the flush to stable storage is left out. Applies to the current thread
    (a :class:`contextvars.ContextVar`), never to other threads or processes.
    """
    token = _DURABLE.set(False)
    try:
        yield
    finally:
        _DURABLE.reset(token)


def _fsync(fd: int) -> None:
    if _DURABLE.get():
        os.fsync(fd)


def _fsync_dir(folder: Path) -> None:
    if not _DURABLE.get():
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, absent: bool = False) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix.

    Writes a uniquely named temp file in the same folder, fsyncs it, then ``os.replace``\\ s it
    over ``path`` and fsyncs the folder. The file's permission bits are kept when it existed.

    Args:
        path: Target file; its folder must exist.
        data: The complete new content, in bytes.
        mode: Permission bits for the new file (e.g. ``0o600``). Default: the old file's bits,
            or ``0o644`` less the umask for a new file.
        absent: The caller has just found no file at ``path`` (under the store's lock): the
            default mode is a new file's, without asking for the old file's bits.

    Raises:
        OSError: The folder is missing or not writable. The target is then untouched and the
            temp file removed.
    """
    target = Path(path)
    folder = target.parent
    if mode is None:
        try:
            if absent:
                raise FileNotFoundError(path)
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    tmp = folder / f".{target.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            _fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def append_record(path: str | os.PathLike[str], record: bytes, *, mode: int | None = None) -> int:
    """Append one whole record to ``path`` under the cross-process lock.

    If the file does not end in a newline, one is written before the record, in the same
    ``write`` call, so records never run together; it is ``\\r\\n`` when the file's last 4 KiB
    or the record use CRLF. The record goes out in a single
    ``os.write`` on an ``O_APPEND`` descriptor, then the file is fsynced.

    Args:
        path: File to append to; created (with ``mode``) when missing.
        record: The bytes of one record; should end with ``b"\\n"``.
        mode: Permission bits for a new file (existing files keep theirs).

    Returns:
        The byte offset at which ``record`` starts.

    Raises:
        OSError: The file could not be opened or written.
    """
    target = Path(path)
    with file_lock(target):
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        fd = os.open(target, flags, 0o666 if mode is None else mode)
        try:
            size = os.fstat(fd).st_size
            prefix = b""
            if size:
                with open(target, "rb") as fh:
                    fh.seek(max(0, size - 4096))
                    tail = fh.read()
                if not tail.endswith((b"\n", b"\r")):
                    # Repair with the file's own line ending, so a CRLF file stays CRLF.
                    prefix = b"\r\n" if b"\r\n" in tail or record.endswith(b"\r\n") else b"\n"
            payload = prefix + record
            written = os.write(fd, payload)
            if written != len(payload):  # pragma: no cover - regular files write whole
                raise OSError(f"{target}: short append ({written} of {len(payload)} bytes)")
            _fsync(fd)
        finally:
            os.close(fd)
        return size + len(prefix)
