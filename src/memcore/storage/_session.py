"""The write session: every provider's writes go through one, owned by one thread.

A :class:`WriteSession` is what :meth:`memcore.provider.BaseProvider.session` yields (and what
``batch()`` and every single write run in). While it is open the store's lock is held
(:meth:`memcore.storage.Storage.lock`) and the session:

- reads each file once (:meth:`WriteSession.read`), remembering the version it saw;
- stages writes and deletions in memory (:meth:`WriteSession.write`, :meth:`WriteSession.delete`),
  so reads in the session see them and each file is written once however often it changes;
- on :meth:`WriteSession.flush` (at the end of the outermost block, or earlier when a provider
  asks) first checks that every file it will replace or delete still has the version it saw
  (:class:`~memcore.errors.ConflictError` otherwise, naming the files, with nothing written),
  then writes new files, then replaces files, then deletes: a reader that follows a link from
  a replaced file to a new one never finds it missing, and an interrupted flush leaves at worst
  an extra file, never a dangling reference. Every write is atomic
  (:func:`~memcore.storage.atomic_write` through the storage) and conditional on the version
  seen, so a remote store (Box's ``If-Match``) refuses a concurrent change too.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from memcore.errors import ConflictError
from memcore.storage._interface import CREATE, Item, Storage

__all__ = ["WriteSession"]

_UNSEEN = object()


class WriteSession:
    """Staged file writes over one :class:`~memcore.storage.Storage`, for one thread.

    Paths are store-relative POSIX strings, as everywhere in :mod:`memcore.storage`. A
    session is made by :meth:`memcore.provider.BaseProvider.session`, which holds the lock and
    flushes it; providers call its methods and never the storage's write methods themselves.

    Args:
        storage: Where the store lives.
        label: The prefix of error messages (the format's name).

    Attributes:
        storage: The storage the session writes to.
        thread: ``threading.get_ident()`` of the thread that owns the session.
        writes: How many provider write operations ran in the session (a provider counts them
            with :meth:`count`; the conflict error names the number).
    """

    def __init__(self, storage: Storage, *, label: str = "store") -> None:
        self.storage = storage
        self.label = label
        self.thread = threading.get_ident()
        self.writes = 0
        self._seen: dict[str, str | None] = {}  # path -> version first seen (None: absent)
        self._bytes: dict[str, bytes | None] = {}  # path -> bytes as read (None: absent)
        self._staged: dict[str, bytes | None] = {}  # path -> new bytes (None: delete)
        self._folders: set[str] = set()
        self._assumed: set[str] = set()  # paths taken as absent unread (version_unread)

    # -- reading ----------------------------------------------------------------------
    def read(self, path: str) -> bytes | None:
        """Return the file's bytes as the session sees them, or ``None`` when it does not exist.

        A staged write or deletion wins; otherwise the file is read from storage once per
        session and its version remembered for the check at :meth:`flush`.

        Raises:
            UnsafePathError: ``path`` leaves the store.
        """
        if path in self._staged:
            return self._staged[path]
        if path in self._bytes:
            return self._bytes[path]
        try:
            data, version = self.storage.read(path)
        except FileNotFoundError:
            data, version = None, None
        self._bytes[path] = data
        self._seen.setdefault(path, version)
        return data

    def seen(self, path: str, data: bytes | None, version: str | None) -> None:
        """Record that the provider read ``path`` as ``data`` with ``version`` (outside the session).

        A provider that keeps its own cache of files (parsed once, reused by later sessions)
        tells the session what its copy was, so :meth:`flush` refuses to replace a file that
        changed on disk since that copy was read, and :meth:`read` does not read it again.
        The first record of a path in a session wins.
        """
        if path not in self._seen:
            self._seen[path] = version
            self._bytes.setdefault(path, data)

    def version(self, path: str) -> str | None:
        """Return the version the session first saw of ``path`` (``None``: absent), reading it if unseen."""
        if path not in self._seen:
            self.read(path)
        return self._seen[path]

    def version_unread(self, path: str) -> str | None:
        """Return :meth:`version` of ``path``, taking a path the session has not seen as absent, unread.

        For a writer about to create ``path`` under a name it expects to be free (a new memory
        file): the read that :meth:`version` makes to learn that nothing is there is left out.
        Nothing is lost by that: the write of a path taken as absent is conditional on there being
        no file (:data:`~memcore.storage.CREATE`), so a file that is there after all makes
        :meth:`flush` raise :class:`~memcore.errors.ConflictError` with nothing of it written, as
        a write after :meth:`version` had found the file would be refused; the session then
        forgets what it took, and reads the path the next time it is asked.
        """
        if path not in self._seen:
            self._seen[path] = None
            self._assumed.add(path)
        return self._seen[path]

    @property
    def staged(self) -> Mapping[str, bytes | None]:
        """The writes not flushed yet: path → new bytes (``None``: to delete), in staging order."""
        return self._staged

    # -- writing ----------------------------------------------------------------------
    def write(self, path: str, data: bytes) -> None:
        """Stage ``data`` as the whole new content of ``path`` (written at :meth:`flush`).

        The version the file has now is remembered first when the session has not seen it,
        so a change by someone else between now and the flush is a conflict.
        """
        if path not in self._seen:
            self._seen[path] = self._current(path)
        self._staged[path] = bytes(data)

    def delete(self, path: str) -> None:
        """Stage the deletion of ``path`` (done at :meth:`flush`, after every write)."""
        if path not in self._seen:
            self._seen[path] = self._current(path)
        self._staged[path] = None

    def count(self) -> None:
        """Count one provider write operation (for messages)."""
        self.writes += 1

    def discard(self, path: str) -> None:
        """Drop what is staged for ``path`` (a write the provider rolled back)."""
        self._staged.pop(path, None)

    def flush(self) -> list[Item]:
        """Write what is staged: check, then new files, then replacements, then deletions.

        Files whose staged bytes equal what the session read are not written. After a flush
        the session goes on (a provider may flush mid-session to make files visible to a tool
        that reads the disk); the written versions become the ones seen.

        Returns:
            The :class:`~memcore.storage.Item` of every file written, in write order.

        Raises:
            ConflictError: A file to replace or delete changed (or appeared, or vanished) since
                the session saw it; nothing was written. The message names each file and the
                number of writes (:meth:`count`) that were not saved.
            OSError: Writing failed; files written before stay written (each atomically).
        """
        staged = {path: data for path, data in self._staged.items() if self._bytes.get(path, _UNSEEN) != data}
        self._staged.clear()
        if not staged:
            return []
        self._check(staged)
        created = [p for p, data in staged.items() if data is not None and self._seen.get(p) is None]
        replaced = [p for p, data in staged.items() if data is not None and self._seen.get(p) is not None]
        removed = [p for p, data in staged.items() if data is None and self._seen.get(p) is not None]
        written: list[Item] = []
        for path in [*created, *replaced]:
            data = staged[path]
            assert data is not None
            self._ensure_folder(path)
            try:
                item = self.storage.write(path, data, expected_version=self._seen.get(path) or CREATE)
            except ConflictError as exc:
                if path in self._assumed:  # a file was there: never taken as absent again
                    self._assumed.discard(path)
                    del self._seen[path]
                    self._bytes.pop(path, None)
                if written:
                    raise
                raise self._conflict([self._where(path)]) from exc
            self._seen[path], self._bytes[path] = item.version, data
            self._assumed.discard(path)
            written.append(item)
        for path in removed:
            try:
                self.storage.delete(path, expected_version=self._seen[path])
            except FileNotFoundError:
                pass
            self._seen[path], self._bytes[path] = None, None
        return written

    # -- plumbing ---------------------------------------------------------------------
    def _current(self, path: str) -> str | None:
        try:
            return self.storage.stat(path).version
        except FileNotFoundError:
            return None

    def _check(self, staged: Mapping[str, bytes | None]) -> None:
        if len(staged) == 1:
            return  # its one conditional write checks it (a remote storage may resolve it: Box merges)
        changed = []
        for path, data in staged.items():
            expected = self._seen.get(path)
            if data is None and expected is None:
                continue
            current = self._current(path)
            if current != expected:
                what = " (appeared)" if expected is None else " (deleted)" if current is None else ""
                changed.append(f"{self._where(path)}{what}")
        if changed:
            raise self._conflict(changed)

    def _conflict(self, changed: list[str]) -> ConflictError:
        op = "batch" if self.writes > 1 else "write"
        count = max(self.writes, 1)
        return ConflictError(
            f"{self.label}: {', '.join(changed)} changed on disk during the {op} (another writer); the "
            f"{op}'s {count} write{'s' if count != 1 else ''} were not saved and the files were left as "
            f"they are now; re-run the {op}"
        )

    def _where(self, path: str) -> str:
        description = self.storage.description.rstrip("/")
        return f"{description}/{path}" if description else path

    def _ensure_folder(self, path: str) -> None:
        folder = path.rpartition("/")[0]
        if not folder or folder in self._folders:
            return
        if not self.storage.exists(folder):
            self.storage.make_folder(folder)
        self._folders.add(folder)
