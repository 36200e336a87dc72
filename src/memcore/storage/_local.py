"""A local folder as a :class:`~memcore.storage.Storage`: the one implementation on disk."""

from __future__ import annotations

import builtins
import contextlib
import errno
import functools
import hashlib
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from memcore.errors import ConflictError, UnsafePathError
from memcore.storage._atomic import atomic_write
from memcore.storage._interface import ANY_VERSION, Item, Storage, join, version_token
from memcore.storage._lock import file_lock
from memcore.storage._paths import check_component, safe_join
from memcore.switches import switch_on

__all__ = ["BULK_READ_ENV", "NEW_FILE_WRITES_ENV", "LocalStorage", "bulk_reads", "file_reader", "new_file_writes"]

_REMEMBER_FROM_BYTES = 64 * 1024
# A store-relative path of plain ASCII components (what memcore's own folders and
# ``<kind>__<slug>.md`` names usually are): nothing in it can be absolute, a drive letter, NUL,
# a backslash, ``.``/``..``, empty, or change under NFC. :meth:`LocalStorage._path` checks such a
# path without resolving it (see there); anything else goes to ``safe_join`` as it is.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.,()'+=@%~-]*(?:/[A-Za-z0-9_][A-Za-z0-9 _.,()'+=@%~-]*)*\Z")
_FAST_PATHS = os.name == "posix"
#: How every Windows-reserved device name (``CON``, ``nul.txt``, ``COM1``…) starts, lower-cased.
_DEVICE_HEADS = frozenset({"con", "prn", "aux", "nul", "com", "lpt"})
#: ``MEMCORE_BULK_READ=0`` (or ``false``/``no``/``off``) turns :meth:`LocalStorage.reader`'s
#: descriptor reads off: every read it serves is :meth:`LocalStorage.read`.
BULK_READ_ENV = "MEMCORE_BULK_READ"
#: ``MEMCORE_NEW_FILE_WRITES=0`` (or ``false``/``no``/``off``) turns :meth:`LocalStorage.write`'s
#: new-file path off: every write asks the disk as for a replacement.
NEW_FILE_WRITES_ENV = "MEMCORE_NEW_FILE_WRITES"
# One path component that _PLAIN_PATH accepts.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.,()'+=@%~-]*\Z")
_BULK = _FAST_PATHS and os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
_OPEN_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_MAX_FOLDERS = 64  # folder descriptors one reader keeps open


def _no_version(data: bytes) -> None:
    """The version :meth:`LocalStorage.reader` gives with ``versions=False``: none (``version_token(data)``)."""
    return None


def bulk_reads() -> bool:
    """Return whether :meth:`LocalStorage.reader` reads through folder descriptors (POSIX, ``MEMCORE_BULK_READ`` on)."""
    return _BULK and switch_on(BULK_READ_ENV)


def new_file_writes() -> bool:
    """Whether :meth:`LocalStorage.write` of a new file checks its path once (POSIX, ``MEMCORE_NEW_FILE_WRITES`` on)."""
    return _FAST_PATHS and switch_on(NEW_FILE_WRITES_ENV)


@contextlib.contextmanager
def _no_loop(path: str | os.PathLike[str], label: str = "store") -> Iterator[None]:
    """Turn a symbolic-link loop met by the OS (``ELOOP``) into :class:`UnsafePathError`."""
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"{label}: {path}: symbolic link loop") from exc
        raise


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


class LocalStorage:
    """:class:`Storage` on a local folder, through :mod:`memcore.storage` only.

    Every path goes through :func:`memcore.storage.safe_join`; every write through
    :func:`memcore.storage.atomic_write`; conditional writes check the version under the
    store's cross-process :func:`memcore.storage.file_lock`. Versions are
    :func:`~memcore.storage.version_token` of the file's bytes (``"sha256:<hex>"``), so a token
    stays valid across processes and restarts and changes exactly when the content does.

    Hashing a large ``_index.json`` on every check would cost a full read, so the versions of
    files of 64 KiB or more are remembered with the file's ``(inode, mtime_ns, size)``: while
    those are unchanged the version is reused. Every memcore write replaces the file (new
    inode), and any other write changes the mtime, so a changed file is hashed again. Small
    files (every memory file) are always hashed.

    Symbolic links that loop, are broken, lead outside the store or lead to a folder
    holding them are left out of :meth:`list` and recorded in :attr:`skipped`: one bad link
    never makes the rest of the store unreadable, and nothing outside the store is read. A link
    to a file or folder inside the store is followed. Temp files of interrupted atomic writes
    (``.<name>.<hex>.tmp``) are never listed.

    Args:
        root: The store's root folder (need not exist until something is written).
        label: The prefix of error messages (the format's name, e.g. ``"box"``).
        noun: What the messages call the root folder (``"store"``, ``"workspace"``, ``"vault"``).
        lock_target: The path whose :func:`~memcore.storage.file_lock` :meth:`lock` takes;
            default ``root`` (a single-file store passes its file).
        file_mode: Permission bits for files this storage creates (e.g. ``0o600``); default
            :func:`~memcore.storage.atomic_write`'s (the old file's bits, else the umask's).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        label: str = "store",
        noun: str = "store",
        lock_target: str | os.PathLike[str] | None = None,
        file_mode: int | None = None,
    ) -> None:
        self.root = Path(root)
        self.description = str(self.root)
        self.label = label
        self.noun = noun
        self.lock_target = Path(lock_target) if lock_target is not None else self.root
        self.file_mode = file_mode
        self._known: dict[Path, tuple[tuple[int, int, int], str]] = {}
        self._holder: int | None = None  # thread id holding the lock through this storage
        self._skipped: dict[str, str] = {}
        self._root_text = os.fspath(self.root)
        self._components: set[str] = set()  # path components check_component accepted

    @property
    def skipped(self) -> builtins.list[tuple[str, str]]:
        """Return ``(store-relative path, reason)`` of every entry :meth:`list` left out, by path.

        An entry is recorded when the listing of its folder meets it and dropped when a later
        listing of that folder no longer does (the link was fixed or removed). Reasons read like
        ``"symbolic link loop"`` or ``"symbolic link to /etc/hostname, outside the store"``.
        """
        return sorted(self._skipped.items())

    def __repr__(self) -> str:
        return f"LocalStorage({self.description!r})"

    def _path(self, path: str) -> Path:
        """Return the local path of ``path``.

        Raises:
            UnsafePathError: ``path`` leaves the store or goes through a symbolic-link loop.
        """
        if not path:
            return self.root
        found = self._plain_path(path)
        if found is not None:
            return found
        try:
            return safe_join(self.root, path)
        except RuntimeError as exc:  # Path.resolve() meeting a symlink loop (Python < 3.13)
            raise UnsafePathError(f"{self.label}: {path}: symbolic link loop") from exc

    def _plain_path(self, path: str) -> Path | None:
        """Return what ``safe_join(self.root, path)`` returns, checked cheaply, or ``None``.

        For a path of plain ASCII components (:data:`_PLAIN_PATH`): each component goes through
        :func:`memcore.storage.check_component` (cached: it depends on the text only), and no
        component below the root may be a symbolic link (one ``lstat`` each, from the root
        down, stopping at the first that does not exist). Without links and ``..`` the path
        resolves to the resolved root plus those components, inside the store, which is
        the containment ``safe_join`` checks by resolving both whole paths (a ``realpath`` of
        every component of the absolute path, twice, per call: most of a small file's read or
        write). ``None`` (let ``safe_join`` decide, and raise) for other paths, a link, any
        other ``lstat`` error, or a platform other than POSIX.

        Raises:
            UnsafePathError: A component is one ``check_component`` refuses (as ``safe_join``).
        """
        text = self._plain_text(path)
        return None if text is None else Path(text)

    def _plain_text(self, path: str) -> str | None:
        """Return :meth:`_plain_path` of ``path`` as text (no :class:`~pathlib.Path` built), or ``None``.

        Raises:
            UnsafePathError: As :meth:`_plain_path`.
        """
        found = self._plain_walk(path)
        return None if found is None else found[0]

    def _plain_walk(self, path: str) -> tuple[str, bool] | None:
        """Return :meth:`_plain_text` of ``path`` and whether it names no entry in a folder that exists.

        ``True`` when every component but the last is a folder (not a link) and the last is no
        entry at all (``lstat`` finds nothing: no file, folder or link): a new file there needs
        no other check of the disk.

        Raises:
            UnsafePathError: As :meth:`_plain_path`.
        """
        if not _FAST_PATHS:
            return None
        if not _PLAIN_PATH.match(path):
            return None
        parts = path.split("/")
        checked = self._components
        for part in parts:
            # A plain component holds no forbidden character and is no dot name (its first
            # character is a letter, digit or "_"): only a last dot or space, or a Windows device
            # name (whose first three letters tell), can still make check_component refuse it.
            if (part[-1] in " ." or part[:3].lower() in _DEVICE_HEADS) and part not in checked:
                check_component(part)
                if len(checked) >= 4096:
                    checked.clear()
                checked.add(part)
        local = self._root_text.rstrip("/")  # "" for the file system root
        last = len(parts) - 1
        new = False
        mode = 0  # the kind of the entry met last (a top-level name is never taken as new: the root is not asked)
        for i, part in enumerate(parts):
            local = f"{local}/{part}"
            folder_mode = mode
            try:
                mode = os.lstat(local).st_mode
            except FileNotFoundError:
                new = i == last and i > 0 and stat.S_ISDIR(folder_mode)
                break  # nothing below exists, so no link either
            except OSError:
                return None
            if stat.S_ISLNK(mode):
                return None
        return f"{self._root_text.rstrip('/')}/{path}", new  # "" for the file system root

    @staticmethod
    def _key(st: os.stat_result) -> tuple[int, int, int]:
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _remember(self, p: Path, key: tuple[int, int, int], version: str) -> str:
        if key[2] >= _REMEMBER_FROM_BYTES:
            if len(self._known) > 10_000:
                self._known.clear()
            self._known[p] = (key, version)
        return version

    def _current_version(self, p: Path) -> str | None:
        """Return the version of the file at ``p`` (``None`` if missing), hashing only if changed."""
        try:
            with _no_loop(p, self.label):
                key = self._key(os.stat(p))
        except FileNotFoundError:
            return None
        known = self._known.get(p)
        if known is not None and known[0] == key:
            return known[1]
        try:
            with _no_loop(p, self.label), open(p, "rb") as fh:
                key = self._key(os.fstat(fh.fileno()))
                data = fh.read()
        except FileNotFoundError:
            return None
        return self._remember(p, key, version_token(data))

    def _link_problem(self, link: str, real_root: str, real_base: str) -> str | None:
        """Return why the symbolic link ``link`` must be skipped, or ``None`` to follow it."""
        try:
            target = os.readlink(link)
        except OSError:
            target = "?"
        try:
            os.stat(link)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "symbolic link loop"
            if isinstance(exc, FileNotFoundError):
                return f"broken symbolic link to {target}"
            return f"symbolic link to {target} cannot be followed: {exc.strerror or exc}"
        real = os.path.realpath(link)
        if not _inside(real, real_root):
            return f"symbolic link to {target}, outside the {self.noun}"
        if os.path.isdir(real) and _inside(real_base, real):
            return f"symbolic link to {target}, a folder holding the link (a loop)"
        return None

    def list(self, folder: str = "") -> builtins.list[Item]:
        """Return the files and folders directly inside ``folder``, sorted by name.

        Temp files of interrupted atomic writes (``.<name>.<hex>.tmp``) are skipped.
        ``version`` is ``None`` (computing it would read every file); ``size`` is set. Symbolic
        links that loop, are broken, lead outside the store or to a folder holding them, and
        entries that cannot be stat'ed, are left out and recorded in :attr:`skipped`.

        Raises:
            FileNotFoundError: ``folder`` does not exist.
            UnsafePathError: ``folder`` itself leaves the store or is a symbolic-link loop.
        """
        base = self._path(folder)
        prefix = join(folder)
        for key in [k for k in self._skipped if k.rpartition("/")[0] == prefix]:
            del self._skipped[key]
        real_root = os.path.realpath(self.root)
        real_base = os.path.realpath(base)
        out: builtins.list[Item] = []
        with _no_loop(base, self.label), os.scandir(base) as it:
            for de in it:
                if de.name.startswith(".") and de.name.endswith(".tmp"):
                    continue
                rel = join(folder, de.name)
                try:
                    if de.is_symlink():
                        problem = self._link_problem(de.path, real_root, real_base)
                        if problem is not None:
                            self._skipped[rel] = problem
                            continue
                    is_dir = de.is_dir()
                    size = None if is_dir else de.stat().st_size
                except OSError as exc:
                    self._skipped[rel] = f"cannot be read: {exc.strerror or exc}"
                    continue
                out.append(Item(name=de.name, is_folder=is_dir, size=size))
        out.sort(key=lambda i: i.name)
        return out

    def stat(self, path: str) -> Item:
        """Return the item at ``path``; files get their version (hashed when changed).

        Raises:
            FileNotFoundError: Nothing at ``path``.
        """
        p = self._path(path)
        name = p.name if path else ""
        if p.is_dir():
            return Item(name=name, is_folder=True)
        version = self._current_version(p)
        if version is None:
            raise FileNotFoundError(f"{p}: no such file")
        with _no_loop(p, self.label):
            size = os.stat(p).st_size
        return Item(name=name, is_folder=False, version=version, size=size)

    def exists(self, path: str) -> bool:
        """Return whether a file or folder exists at ``path``."""
        return self._path(path).exists()

    def read(self, path: str) -> tuple[bytes, str]:
        """Return ``(bytes, version)`` of the file at ``path``.

        Raises:
            FileNotFoundError: No file at ``path`` (also when ``path`` is a folder).
            UnsafePathError: ``path`` leaves the store or is a symbolic-link loop.
        """
        # A plain path is opened as text: no Path object per read (most of a small file's cost).
        p: str | Path | None = self._plain_text(path) if path else None
        if p is None:
            p = self._path(path)
        try:
            with open(p, "rb") as fh:
                key = self._key(os.fstat(fh.fileno()))
                data = fh.read()
        except IsADirectoryError as exc:
            raise FileNotFoundError(f"{p}: is a folder, not a file") from exc
        except OSError as exc:  # as _no_loop, without a generator per read
            if exc.errno == errno.ELOOP:
                raise UnsafePathError(f"{self.label}: {p}: symbolic link loop") from exc
            raise
        if key[2] < _REMEMBER_FROM_BYTES:  # smaller files' versions are never remembered
            return data, version_token(data)
        local = Path(p)  # the key _current_version and write() use
        known = self._known.get(local)
        if known is not None and known[0] == key:
            return data, known[1]
        return data, self._remember(local, key, version_token(data))

    @contextlib.contextmanager
    def reader(self, *, versions: bool = True) -> Iterator[Callable[[str], tuple[bytes, str | None]]]:
        """Return a context giving a function that reads like :meth:`read`, cheaper for many files.

        The function returns what :meth:`read` returns for the same path, and raises what it
        raises. A file of a plain folder (see :meth:`_plain_path`: no component a symbolic
        link) with a plain name is opened relative to a descriptor of its folder, kept open
        while the context lasts (at most 64), with ``O_NOFOLLOW`` (a link, even one
        inside the store, is read by :meth:`read`), and read to its end with ``os.read``: no
        ``lstat`` per path component, no buffered file object (a third of :meth:`read`'s cost
        on a small file). Anything else (another name, a link, a folder, a file of 64 KiB or
        more, whose version :meth:`read` remembers, any error) goes to :meth:`read`. Reads
        between other calls of the same thread only: the folders are opened once, so a folder
        replaced by another while the context lasts is still read through the one it replaced.
        ``MEMCORE_BULK_READ=0`` (or a platform without ``dir_fd``) makes every read :meth:`read`.

        Args:
            versions: ``False``: the function gives ``None`` for the version of a file it read
                itself (the version is then ``version_token(data)``, for the caller to compute
                when it needs it: a caller holding many files' bytes need not hold their
                versions too); a file :meth:`read` read still comes with its version.

        Yields:
            ``read(path) -> (bytes, version)``.
        """
        if not bulk_reads():
            yield self.read
            return
        folders: dict[str, int | None] = {}
        try:
            yield functools.partial(self._read_through, folders, version_token if versions else _no_version)
        finally:
            for fd in folders.values():
                if fd is not None:
                    os.close(fd)

    def _folder_fd(self, folders: dict[str, int | None], folder: str) -> int | None:
        """Return an open descriptor of ``folder`` (``None``: read its files with :meth:`read`)."""
        if len(folders) >= _MAX_FOLDERS:
            for old in folders.values():
                if old is not None:
                    os.close(old)
            folders.clear()
        fd: int | None = None
        try:
            if not folder:
                fd = os.open(self._root_text, _OPEN_FOLDER)  # the root itself may be a link
            else:
                text = self._plain_text(folder)  # no component below the root a link, so far
                if text is not None:  # O_NOFOLLOW: the last component is still no link when opened
                    fd = os.open(text, _OPEN_FOLDER | os.O_NOFOLLOW)
        except (OSError, UnsafePathError):
            fd = None
        folders[folder] = fd
        return fd

    def _read_through(
        self, folders: dict[str, int | None], version: Callable[[bytes], str | None], path: str
    ) -> tuple[bytes, str | None]:
        """:meth:`read` of ``path`` through its folder's descriptor where it can (see :meth:`reader`)."""
        folder, _, name = path.rpartition("/")
        fd = folders[folder] if folder in folders else self._folder_fd(folders, folder)
        if fd is None or not _PLAIN_NAME.match(name) or name[-1] in " ." or name[:3].lower() in _DEVICE_HEADS:
            return self.read(path)
        try:
            file_fd = os.open(name, _OPEN_FILE, dir_fd=fd)
        except OSError:
            return self.read(path)  # missing, a link, a loop: read() says (and raises) what it is
        try:
            data = os.read(file_fd, _REMEMBER_FROM_BYTES)
            while data and len(data) < _REMEMBER_FROM_BYTES:
                more = os.read(file_fd, _REMEMBER_FROM_BYTES)  # the end of the file, or a short read
                if not more:
                    return data, version(data)
                data += more
            if not data:
                return data, version(data)
        except OSError:
            pass  # a folder (EISDIR), an I/O error: read() says what it is
        finally:
            os.close(file_fd)
        return self.read(path)  # 64 KiB or more: read() remembers its version

    def write(self, path: str, data: bytes, *, expected_version: str | None) -> Item:
        """Write ``data`` to ``path`` atomically if ``expected_version`` holds (under the lock).

        Raises:
            ConflictError: The precondition failed.
            FileNotFoundError: The folder does not exist.
        """
        if expected_version is None and path and new_file_writes():
            with self.lock():
                found = self._plain_walk(path)
                if found is not None and found[1]:
                    # Nothing at the path, in a folder that exists (one lstat each, just now, under
                    # the lock): the create needs no version read, folder check or mode of an old file.
                    atomic_write(found[0], data, mode=self.file_mode, absent=True)
                    version = version_token(data)
                    if len(data) >= _REMEMBER_FROM_BYTES:
                        with contextlib.suppress(FileNotFoundError):
                            self._remember(Path(found[0]), self._key(os.stat(found[0])), version)
                    return Item(name=path.rpartition("/")[2], is_folder=False, version=version, size=len(data))
        p = self._path(path)
        with self.lock():
            if expected_version != ANY_VERSION:
                current = self._current_version(p)
                if expected_version is None and current is not None:
                    raise ConflictError(f"{self.label}: {p} already exists; refusing to overwrite it")
                if expected_version is not None and current != expected_version:
                    what = "was deleted" if current is None else "changed"
                    raise ConflictError(
                        f"{self.label}: {p} {what} since it was read (expected version {expected_version}); "
                        "re-read it and retry"
                    )
            if not p.parent.is_dir():
                raise FileNotFoundError(f"{p.parent}: folder does not exist; create it first")
            atomic_write(p, data, mode=self.file_mode)
            version = version_token(data)
            if len(data) >= _REMEMBER_FROM_BYTES:  # only large files' versions are remembered
                with contextlib.suppress(FileNotFoundError):
                    self._remember(p, self._key(os.stat(p)), version)
        return Item(name=p.name, is_folder=False, version=version, size=len(data))

    def delete(self, path: str, *, expected_version: str | None = None) -> None:
        """Delete the file at ``path`` (checking ``expected_version`` under the lock if given).

        Raises:
            FileNotFoundError: No file at ``path``.
            ConflictError: The file has another version.
        """
        p = self._path(path)
        with self.lock():
            if expected_version is not None:
                current = self._current_version(p)
                if current is None:
                    raise FileNotFoundError(f"{p}: no such file")
                if current != expected_version:
                    raise ConflictError(
                        f"{self.label}: {p} changed since it was read (expected version {expected_version}); "
                        "re-read it and retry"
                    )
            p.unlink()
            self._known.pop(p, None)

    def make_folder(self, path: str) -> Item:
        """Create ``path`` and its parents; existing folders are fine."""
        p = self._path(path)
        p.mkdir(parents=True, exist_ok=True)
        return Item(name=p.name, is_folder=True)

    def checksum(self, path: str) -> tuple[str, str, int]:
        """Return ``("sha256", hex digest, size)``, streaming the file in 1 MiB blocks.

        Raises:
            FileNotFoundError: No file at ``path``.
        """
        p = self._path(path)
        h = hashlib.sha256()
        size = 0
        with _no_loop(p, self.label), open(p, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
                size += len(block)
        return "sha256", h.hexdigest(), size

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Return the store's cross-process lock (re-entrant within one thread).

        While this storage's thread already holds it (every write inside a provider's
        ``batch()``), entering it again only counts: no lock-file path to resolve, no
        ``filelock`` call per write.
        """
        if self._holder == threading.get_ident():
            return self._nested()
        return self._outer()

    @contextlib.contextmanager
    def _nested(self) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def _outer(self) -> Iterator[None]:
        with file_lock(self.lock_target):
            self._holder = threading.get_ident()
            try:
                yield
            finally:
                self._holder = None


def file_reader(
    storage: Storage, *, versions: bool = True
) -> contextlib.AbstractContextManager[Callable[[str], tuple[bytes, str | None]]]:
    """Return a context giving ``read(path) -> (bytes, version)`` for reading many files of ``storage``.

    :meth:`LocalStorage.reader` for a local folder (same results as :meth:`LocalStorage.read`,
    cheaper per file); ``storage.read`` itself for any other storage.

    Args:
        storage: The storage.
        versions: ``False``: a version may come back as ``None``, meaning ``version_token(data)``
            (see :meth:`LocalStorage.reader`); ``True``: always the version.
    """
    if isinstance(storage, LocalStorage):
        return storage.reader(versions=versions)
    return contextlib.nullcontext(storage.read)


def _conforms(storage: LocalStorage) -> Storage:  # pragma: no cover - mypy checks the protocol
    return storage
