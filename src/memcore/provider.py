"""The provider contract: one :class:`MemoryProvider` protocol every backend implements.

A provider reads a store of one format into :class:`~memcore.models.MemoryEntry` objects and
writes entries back. :class:`BaseProvider` gives the contract's sensible defaults so a new
provider implements only what its format needs; an operation the format forbids raises
:class:`~memcore.errors.UnsupportedOperationError`, never silently does something else.
"""

from __future__ import annotations

import abc
import contextlib
import difflib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, NamedTuple, Self

from memcore.collector import paused_gc
from memcore.contract import (
    BulkAdding,
    Capability,
    FileBackedProvider,
    ManyReferenceReading,
    MemoryProvider,
    ReferenceReading,
)
from memcore.errors import (
    ConfigError,
    EntryNotFoundError,
    MemcoreError,
    ReadOnlyStoreError,
    UnsupportedOperationError,
)
from memcore.models import Diagnostic, MemoryEntry, Query, Relation, Severity, Status, revalidated, utc_now
from memcore.storage._control import check_entry_text, control_char_diagnostics
from memcore.storage._interface import Storage
from memcore.storage._local import LocalStorage
from memcore.storage._paths import name_twin_diagnostics
from memcore.storage._session import WriteSession
from memcore.storage._temps import TempSweeper, temp_file_diagnostics
from memcore.switches import switch_on

__all__ = [
    "CORE_OPTIONS",
    "BulkAdding",
    "add_in_turn",
    "add_many",
    "checked_for_write",
    "option_flag",
    "BaseProvider",
    "Capability",
    "FileBackedProvider",
    "ManyReferenceReading",
    "ReferenceReading",
    "MemoryProvider",
    "StoreSnapshot",
    "read_all",
    "unchanged_by",
]


class StoreSnapshot(NamedTuple):
    """A whole store read once: what ``iter_entries()`` and ``validate()`` return.

    Attributes:
        entries: Every entry, in the store's own order (``list(iter_entries())``).
        diagnostics: What ``validate()`` reports for the same files.
    """

    entries: list[MemoryEntry]
    diagnostics: list[Diagnostic]


def unchanged_by(current: MemoryEntry, entry: MemoryEntry) -> bool:
    """Whether updating ``current`` with ``entry`` would change nothing the store holds.

    The provider contract's no-change rule: an update whose entry equals the stored one in
    every field but ``updated_at`` and ``version`` (a ``created_at`` left ``None`` meaning
    "keep it") writes no byte and returns the stored entry. Without the rule every
    same-content update would stamp ``updated_at`` and rewrite the entry's file and indexes.

    Args:
        current: The entry as stored (read by the provider under its write lock).
        entry: The entry given to ``update``, after the provider's own normalisation.
    """
    if entry.created_at is None and current.created_at is not None:
        entry = entry.model_copy(update={"created_at": current.created_at})
    mine, theirs = current.content_dict(), entry.content_dict()
    mine.pop("updated_at", None)
    theirs.pop("updated_at", None)
    return mine == theirs


def read_all(provider: MemoryProvider) -> StoreSnapshot:
    """Return every entry of an open store and its diagnostics, from one pass where possible.

    Uses the provider's own ``read_all()`` when it has one (every :class:`BaseProvider`
    does), else ``iter_entries()`` then ``validate()``: the method is optional, so providers
    written against the bare :class:`MemoryProvider` protocol work unchanged.

    Args:
        provider: An open store.

    Returns:
        ``StoreSnapshot(entries, diagnostics)``.
    """
    method = getattr(provider, "read_all", None)
    if callable(method):
        result = method()
        if isinstance(result, StoreSnapshot):
            return result
        entries, diagnostics = result
        return StoreSnapshot(list(entries), list(diagnostics))
    return StoreSnapshot(list(provider.iter_entries()), provider.validate())


def plan_ids(provider: MemoryProvider, entries: Sequence[MemoryEntry]) -> list[str | None] | None:
    """Return the ids ``add`` would give ``entries``, added in this order now, writing nothing.

    Uses the provider's own ``plan_ids()`` when it has one (the method is optional, like
    ``read_all``): :func:`memcore.migrate.migrate` asks it for the ids of an append-only
    target, whose entries cannot be updated with their forward links afterwards.

    Args:
        provider: An open store.
        entries: Entries about to be added, in order.

    Returns:
        One id (or ``None``: this entry's id cannot be told, e.g. its add would fail) per
        entry, in order; ``None`` when the provider cannot plan ids without writing.
    """
    method = getattr(provider, "plan_ids", None)
    if not callable(method):
        return None
    planned = method(entries)
    if planned is None:
        return None
    planned = list(planned)
    if len(planned) != len(entries):
        raise ValueError(f"{provider.format_name}: plan_ids returned {len(planned)} ids for {len(entries)} entries")
    return planned


def add_many(provider: MemoryProvider, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
    """Add ``entries`` in order with the provider's :meth:`~memcore.contract.BulkAdding.add_many`, or one ``add`` each.

    Either way the semantics of :class:`~memcore.contract.BulkAdding`: the result is a prefix
    of ``entries`` handled, ending at the first refusal (the error, nothing of that entry
    written) or at the first entry stored under another id than the one it was given.

    Args:
        provider: An open, writable store.
        entries: Entries to add, in order.

    Returns:
        One stored entry or error per entry handled, at least one when ``entries`` is not empty.

    Raises:
        ValueError: The provider's ``add_many`` returned more items than entries, or none.
    """
    if not entries:
        return []
    bulk = getattr(provider, "add_many", None)
    if callable(bulk):  # isinstance(provider, BulkAdding), without the protocol check's cost per call
        results = list(bulk(entries))
        if not 1 <= len(results) <= len(entries):
            raise ValueError(
                f"{provider.format_name}: add_many returned {len(results)} items for {len(entries)} entries"
            )
        for entry, result in zip(entries, results[:-1], strict=False):
            if isinstance(result, Exception) or (entry.id is not None and result.id != entry.id):
                raise ValueError(f"{provider.format_name}: add_many went on after a refusal or a changed id")
        return results
    out: list[MemoryEntry | Exception] = []
    for entry in entries:
        if not add_in_turn(provider.add, entry, out):
            break
    return out


def add_in_turn(
    add: Callable[[MemoryEntry], MemoryEntry], entry: MemoryEntry, out: list[MemoryEntry | Exception]
) -> bool:
    """Add one entry of an ``add_many`` call with ``add``; say whether the call goes on.

    Appends what ``add`` returned, or the error it raised (:class:`~memcore.errors.MemcoreError`,
    ``ValueError``, ``OSError``), to ``out``. The call stops (``False``) after a refusal and after
    an entry stored under another id than the one it was given, as
    :class:`~memcore.contract.BulkAdding` says.
    """
    try:
        stored = add(entry)
    except (MemcoreError, ValueError, OSError) as exc:
        out.append(exc)
        return False
    out.append(stored)
    return entry.id is None or stored.id == entry.id


#: Options every :class:`BaseProvider` accepts, whatever its :attr:`~BaseProvider.option_names`:
#: ``read_only`` (conversions open every source with it) and ``index`` (``false``: :meth:`BaseProvider.search`
#: scans instead of using a search index).
CORE_OPTIONS: frozenset[str] = frozenset({"read_only", "index"})

#: Option values that mean "off" (case-insensitive for text); any other value turns a flag on.
_OFF_VALUES = frozenset({"", "0", "false", "no", "off", "none"})


def option_flag(value: Any) -> bool:
    """Read a boolean option fail-closed: off only for a recognised false value.

    ``None``, ``False``, ``0`` and the texts ``""``, ``"0"``, ``"false"``, ``"no"``, ``"off"``,
    ``"none"`` (any case, surrounding blanks ignored) are off; every other value is on, so a
    misspelt value of a safety flag (``read_only=ture``, ``incognito=yes please``) turns the
    protection on rather than silently off.

    Args:
        value: The option's value as given (``-o name=value`` gives text; Python callers bools).

    Returns:
        Whether the flag is on.
    """
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value.strip().lower() not in _OFF_VALUES
    if isinstance(value, (int, float)):
        return bool(value)
    return True


class BaseProvider(abc.ABC):
    """Defaults for the :class:`MemoryProvider` contract.

    Subclasses set ``format_name`` and ``capabilities`` and implement :meth:`iter_entries`
    plus the write operations their capabilities declare. Everything a subclass does not
    override either works through the others (``get``, ``search``, ``archive``,
    ``supersede``) or raises :class:`UnsupportedOperationError` naming the format.

    Args:
        location: Where the store is: a path, or a remote folder id.
        **options: Provider-specific options (``scope``, ``read_only``, ``as_user``…).
    """

    format_name: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    #: Distribution that ships this provider; filled in by the registry when known.
    distribution: ClassVar[str | None] = None
    #: The options this provider understands; ``None`` (the default) checks nothing. When set,
    #: an unknown option is a :class:`~memcore.errors.ConfigError` naming the closest known one,
    #: so a typo (``-o scoep=work``) fails instead of silently opening an unscoped store.
    #: :data:`CORE_OPTIONS` are always accepted.
    option_names: ClassVar[frozenset[str] | None] = None
    #: Options :func:`memcore.migrate.migrate` opens this provider with when it is a migration's
    #: target, unless the user sets them (``--dst-option``). WhiteBox: ``as_user=True``, so that
    #: a re-run changes in place the stable files its earlier runs wrote instead of filing a new
    #: proposal each time.
    migration_target_options: ClassVar[dict[str, Any]] = {}
    #: The format's native relation type -> memcore pivot type (RightMemory: ``{"rel": "related"}``);
    #: empty: the format names relations as memcore does. Read by :func:`memcore.mapping.relation_types`.
    relation_types: ClassVar[dict[str, str]] = {}
    #: The methods that write: a store opened ``read_only`` refuses each with
    #: :class:`~memcore.errors.ReadOnlyStoreError` before any I/O (:meth:`check_writable`). A
    #: provider with more write operations (WhiteBox's ``promote``, RightMemory's ``add_edge``)
    #: extends it: ``write_operations = BaseProvider.write_operations | {"promote"}``.
    write_operations: ClassVar[frozenset[str]] = frozenset({"add", "update", "delete", "archive", "supersede"})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Hold every provider to the core text rules, whatever its own code does.

        ``add`` and ``update`` a subclass defines first validate an entry whose fields were set
        past pydantic's validation (:func:`~memcore.models.revalidated`) and check its text with
        :func:`~memcore.storage._control.check_entry_text` (NUL, C0 controls, DEL are refused
        naming the field and the character); ``validate`` and ``read_all`` add a diagnostic
        (file:line) for each line of a :meth:`FileBackedProvider.source_files` file holding one,
        and, for a store that is a folder, one per group of NFC/NFD twin names in it, and one per
        temp file an interrupted write left (swept by the next write session). Every
        method named in :attr:`write_operations` a subclass defines first checks
        :meth:`check_writable`.
        """
        super().__init_subclass__(**kwargs)
        for name in ("add", "update"):
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "_memcore_checked", False):
                setattr(cls, name, _checked_write(cls.__dict__[name]))
        for name in ("validate", "read_all"):
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "_memcore_checked", False):
                setattr(cls, name, _scanned_check(cls.__dict__[name], name))
        for name in cls.write_operations:  # outermost: refused before any other check
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_memcore_writable", False):
                setattr(cls, name, _refused_when_read_only(method, name))

    def source_bytes_read(self, rel: str, data: bytes) -> None:
        """Hand core's checks the bytes of a source file the running ``read_all``/``validate`` read.

        A provider's checking pass calls it for each file it read, with the path as
        ``source_files()`` names it (store-relative, ``/``-separated): core then checks those
        bytes for refused control characters at once and does not read the file a second time
        after the pass. Outside a ``read_all``/``validate`` call of this provider it does
        nothing; a file never handed over is read from disk as before.

        Args:
            rel: The file's store-relative path.
            data: Its bytes, as the pass read them.
        """
        held = _SOURCE_BYTES.get()
        if held is not None and held[0] is self:
            held[1][rel] = control_char_diagnostics(data, rel, code=f"{self.format_name or 'store'}.control-char")

    def _core_diagnostics(
        self, found: Sequence[Diagnostic], checked: dict[str, list[Diagnostic]] | None = None
    ) -> list[Diagnostic]:
        """Diagnose what core checks in every local store, beside the provider's ``found``.

        Refused control characters in the store's source files (file:line), NFC/NFD twin names
        in a store that is a folder, temp files of interrupted writes and symbolic links the
        local storage left out (loops, broken, leading outside the store: ``<format>.skipped-link``);
        one warning each, unless the provider already reported that path. ``checked`` holds the
        control-character findings of files the pass handed over (:meth:`source_bytes_read`).
        """
        root = Path(self.location)
        if not root.exists():
            return []  # a remote store: its files are not local bytes
        label = self.format_name or "store"
        reported = {d.path for d in found}
        out = [d for d in temp_file_diagnostics(root, label) if d.path not in reported]
        for path, reason in getattr(getattr(self, "storage", None), "skipped", ()):
            if path not in reported:
                why = f"{reason}; left out of the store, never read or written"
                out.append(Diagnostic(path=path, code=f"{label}.skipped-link", severity=Severity.WARNING, message=why))
        base = root.parent if root.is_file() else root
        source_files = getattr(self, "source_files", None)
        try:
            files = list(source_files()) if source_files is not None else [root.name] if root.is_file() else []
        except Exception:  # noqa: BLE001 - the provider's own validate reports why it cannot list
            files = []
        checked = checked or {}
        for rel in files:
            if rel in checked:
                out.extend(checked[rel])
                continue
            try:
                data = (base / rel).read_bytes()
            except OSError:
                continue
            out.extend(control_char_diagnostics(data, rel, code=f"{label}.control-char"))
        if root.is_dir():  # a store of many files: names may arrive in NFD
            out.extend(name_twin_diagnostics(root, code=f"{label}.name-twins"))
        return out

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        """Keep the location and options (checked against :attr:`option_names` when set).

        Raises:
            ConfigError: An option is not in :attr:`option_names`.
        """
        self.location = os.fspath(location)
        self.options: dict[str, Any] = dict(options)
        #: Whether the store was opened ``read_only`` (:func:`option_flag`: fail-closed).
        self.read_only: bool = option_flag(options.get("read_only"))
        self._is_open = False
        self._storage: Storage | None = None
        self._session: WriteSession | None = None
        self._session_guard = threading.Lock()
        self._temps: TempSweeper | None = None
        if self.option_names is not None:
            self._check_option_names()

    def _check_option_names(self) -> None:
        known = set(self.option_names or ()) | CORE_OPTIONS
        for name in self.options:
            if name in known:
                continue
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"{self.format_name}: unknown option {name!r}; {hint}known options: {', '.join(sorted(known))}"
            )

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` looks like a store of this format. Default: never."""
        return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create a new, empty store. Default: refuse.

        Raises:
            UnsupportedOperationError: Always, unless overridden.
        """
        raise UnsupportedOperationError(f"{cls.format_name}: `init` is not supported by this format")

    @classmethod
    def init_store_like(cls, location: str, source: MemoryProvider, **options: Any) -> list[str]:
        """Create a new store at ``location`` for a migration from ``source``, a store of this format.

        Optional. A same-format migration into a new store calls it instead of
        :meth:`init_store`, so that the new store's store-level files (those that hold no
        entry: a vault's ``AGENTS.md``, a workspace config) are the source's own rather than
        memcore's scaffold; the entries are written afterwards, by ``add``. The default is
        :meth:`init_store`.

        Args:
            location: Where the new store goes (nothing there yet, or an empty folder).
            source: The open source store, only read.
            **options: As :meth:`init_store`.

        Returns:
            One sentence per store-level file that is not the source's (and why), for the
            migration report's notes; ``[]`` when every such file was carried over.
        """
        cls.init_store(location, **options)
        return []

    @property
    def url(self) -> str:
        """The store URL, ``<format>:<location>``."""
        return f"{self.format_name}:{self.location}"

    def open(self) -> Self:
        """Open the store and return ``self``; opening twice is harmless."""
        self._is_open = True
        return self

    def close(self) -> None:
        """Close the store (and the search index kept open for it); closing twice is harmless."""
        self._is_open = False
        index = sys.modules.get("memcore.index")
        if index is not None:
            index.release(self)

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url!r}>"

    # -- reading ----------------------------------------------------------------------
    @abc.abstractmethod
    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield the store's entries in a stable order, filtered by ``query``."""

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry with ``entry_id``.

        Raises:
            EntryNotFoundError: No such entry.
        """
        for entry in self.iter_entries(Query(ids=[entry_id])):
            return entry
        raise EntryNotFoundError(f"{self.format_name}: no entry {entry_id!r} in {self.location}")

    def search(self, query: Query | str) -> list[MemoryEntry]:
        """Return entries matching ``query``, best first; a string is ``Query(text=...)``.

        The text is memcore's search syntax (docs/search.md). Uses the store's
        :mod:`memcore.index` search index when one exists (``memcore index build``) and the
        provider was not opened with ``index=false``; otherwise a scan with the same tokenizer
        (:func:`memcore.index.search_hits`). The list is a :class:`memcore.index.SearchResults`:
        its ``note`` says why it is empty when the text has no searchable term.

        Raises:
            QuerySyntaxError: The text does not follow the query syntax.
        """
        from memcore.index import SearchResults, search_hits

        hits = search_hits(self, query, snippets=False)
        return SearchResults((hit.entry for hit in hits), note=hits.note)

    def search_candidates(self, query: Query) -> Iterable[MemoryEntry] | None:
        """Return the entries a scan search must read for ``query``, or ``None`` for all of them.

        :func:`memcore.index.search_hits` calls this when it searches without an index (every
        remote store, and a local store with no index built). The entries returned are ranked,
        filtered and highlighted there against the whole ``query``, so a store may return more
        than match but never fewer. A store that can narrow cheaply (Box cloud: one metadata
        query on kind, status and tags) overrides this; the default reads every entry.

        Args:
            query: The search, with ``limit`` cleared.

        Returns:
            Candidate entries, or ``None``: read every entry with :meth:`iter_entries`.
        """
        return None

    # -- writing ----------------------------------------------------------------------
    def require(self, capability: Capability, operation: str) -> None:
        """Raise :class:`UnsupportedOperationError` unless this provider has ``capability``.

        Args:
            capability: The capability the operation needs.
            operation: The operation's name, for the message.
        """
        if capability not in self.capabilities:
            raise UnsupportedOperationError(
                f"{self.format_name}: `{operation}` is not supported by this format "
                f"(provider {type(self).__name__} lacks the {capability.value!r} capability)"
            )

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Store a new entry. Default: unsupported."""
        self.require(Capability.ADD, "add")
        raise NotImplementedError  # pragma: no cover - a provider declaring ADD overrides this

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Replace an entry in place. Default: unsupported."""
        self.require(Capability.UPDATE, "update")
        raise NotImplementedError  # pragma: no cover

    def delete(self, entry_id: str) -> None:
        """Remove an entry. Default: unsupported."""
        self.require(Capability.DELETE, "delete")
        raise NotImplementedError  # pragma: no cover

    def archive(self, entry_id: str) -> MemoryEntry:
        """Mark an entry archived through :meth:`update`."""
        self.require(Capability.ARCHIVE, "archive")
        entry = self.get(entry_id)
        entry.status = Status.ARCHIVED
        entry.updated_at = utc_now()
        return self.update(entry, expected_version=entry.version)

    def supersede(self, old_id: str, new: MemoryEntry) -> MemoryEntry:
        """Add ``new`` with a ``supersedes`` relation and mark ``old_id`` superseded.

        Returns:
            The new entry as stored.

        Raises:
            EntryNotFoundError: ``old_id`` does not exist (checked before anything is written).
        """
        self.require(Capability.SUPERSEDE, "supersede")
        old = self.get(old_id)
        new = new.model_copy(deep=True)
        if not any(r.type == "supersedes" and r.target == old_id for r in new.relations):
            new.relations = [*new.relations, Relation(type="supersedes", target=old_id)]
        stored = self.add(new)
        assert stored.id is not None
        old.status = Status.SUPERSEDED
        old.updated_at = utc_now()
        old.relations = [
            *[r for r in old.relations if r.type != "superseded_by"],
            Relation(type="superseded_by", target=stored.id),
        ]
        self.update(old, expected_version=old.version)
        return stored

    def check_writable(self, operation: str) -> None:
        """Refuse a write on a store opened ``read_only``, before any I/O.

        Args:
            operation: The operation's name, for the message (``"add"``, ``"promote"``…).

        Raises:
            ReadOnlyStoreError: The store was opened with ``read_only`` on.
        """
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self.format_name or 'store'}: store {self.location} was opened read-only; `{operation}` refused "
                "(open it without read_only: no -o read_only=true, no read_only = true in memcore.toml, "
                "no read_only=True in Python)"
            )

    # -- storage and sessions ---------------------------------------------------------
    @property
    def storage(self) -> Storage:
        """Where the store's files live; every file I/O of the provider goes through it.

        Made on first use by :meth:`make_storage` (a provider that needs its storage earlier, or
        is given one, sets ``self.storage``).
        """
        if self._storage is None:
            self._storage = self.make_storage()
        return self._storage

    @storage.setter
    def storage(self, storage: Storage) -> None:
        self._storage = storage

    def make_storage(self) -> Storage:
        """Return the :class:`~memcore.storage.Storage` of this store; default a local folder.

        The folder is :attr:`location` (a store of many files) or its parent (a store that is
        one file, e.g. Maka's ``MEMORY.md``: the lock is then taken on the file itself).
        """
        path = Path(self.location)
        if path.suffix and not path.is_dir():
            return LocalStorage(path.parent, label=self.format_name or "store", lock_target=path)
        return LocalStorage(path, label=self.format_name or "store")

    def active_session(self) -> WriteSession | None:
        """Return the write session the calling thread has open on this provider, or ``None``."""
        session = self._session
        if session is not None and session.thread == threading.get_ident():
            return session
        return None

    @contextlib.contextmanager
    def session(self, operation: str = "write") -> Iterator[WriteSession]:
        """Open (or join) this thread's write session: every write of a provider runs in one.

        The outermost ``with`` takes the store's lock (:meth:`~memcore.storage.Storage.lock`;
        another thread or process waits), calls :meth:`_session_started`, runs the block, then
        :meth:`_session_ending` (where a provider stages its derived files, such as indexes) and
        :meth:`~memcore.storage.WriteSession.flush`, also when the block raised: what the writes
        that returned applied is saved, then the exception propagates. A nested ``with`` in the
        same thread joins the open session (re-entrant); the session belongs to the thread that
        opened it.

        Args:
            operation: The write's name, for the read-only refusal.

        Yields:
            The :class:`~memcore.storage.WriteSession`.

        Raises:
            ReadOnlyStoreError: The store was opened ``read_only`` (before any I/O).
            ConflictError: At the end: a file the session replaces changed since it was read.
        """
        self.check_writable(operation)
        active = self.active_session()
        if active is not None:
            yield active
            return
        storage = self.storage
        with storage.lock(), self._session_guard:
            if isinstance(storage, LocalStorage):
                if self._temps is None:
                    self._temps = TempSweeper(self.location)
                self._temps.sweep()  # temp files of interrupted writes: no writer is between them now
            session = WriteSession(storage, label=self.format_name or "store")
            self._session = session
            ok = False
            try:
                self._session_started(session)
                try:
                    yield session
                finally:
                    self._session_ending(session)
                    session.flush()
                ok = True
            finally:
                self._session = None
                self._session_ended(session, ok)

    def _session_started(self, session: WriteSession) -> None:  # noqa: B027 - an optional hook
        """Hook: a session began (the lock is held). Default: nothing."""

    def _session_ending(self, session: WriteSession) -> None:  # noqa: B027 - an optional hook
        """Hook: the outermost block ended; stage derived files before the flush. Default: nothing."""

    def _session_ended(self, session: WriteSession, ok: bool) -> None:  # noqa: B027 - an optional hook
        """Hook: the session was flushed (``ok``) or failed; the lock is still held. Default: nothing."""

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes in one write session: each touched file is written once, at the end.

        On a store opened ``read_only`` the block runs without a session (each write in it
        raises :class:`~memcore.errors.ReadOnlyStoreError` as usual).

        Yields:
            None.
        """
        if self.read_only:
            yield
            return
        with self.session("batch"):
            yield

    # -- checking ---------------------------------------------------------------------
    def validate(self) -> list[Diagnostic]:
        """Check the store; default: nothing to report."""
        return []

    def read_all(self) -> StoreSnapshot:
        """Read every entry and check the store, in one pass where the provider can.

        The result must equal ``StoreSnapshot(list(self.iter_entries()), self.validate())``
        (the conformance suite checks it). This default makes those two calls; a provider
        whose ``validate`` parses the same files as ``iter_entries`` overrides it to parse
        them once: :func:`memcore.migrate.migrate` reads both stores this way.

        Returns:
            A :class:`StoreSnapshot` of every entry (store order) and every diagnostic.
        """
        return StoreSnapshot(list(self.iter_entries()), self.validate())

    def plan_ids(self, entries: Sequence[MemoryEntry]) -> list[str | None] | None:
        """Return the ids :meth:`add` would give ``entries`` added in this order now; write nothing.

        Optional. A provider whose ids are assigned by position or by name (WhiteBox's
        ``observations/2026-03.md#4``) can tell them in advance; the conformance suite checks
        that adding the same entries, in order, in one :meth:`batch`, gives exactly the ids
        planned (an item may be ``None``: that id cannot be told, e.g. the add would fail).
        A provider that plans ids accepts, in :meth:`add`, a relation to a planned id before
        its entry exists (a migration writes forward relations so); a graph that refuses such
        an edge does not plan.
        The default returns ``None``: cannot plan (a migration then learns the ids of an
        append-only target by a trial run into a scratch copy).

        Args:
            entries: Entries about to be added, in order.

        Returns:
            One id or ``None`` per entry, or ``None`` for all.
        """
        return None

    def reindex(self) -> list[Diagnostic]:
        """Rebuild derived indexes; default: nothing to rebuild."""
        return []


def _refused_when_read_only(method: Any, name: str) -> Any:
    """Wrap a write method: :meth:`BaseProvider.check_writable` runs before it."""

    @functools.wraps(method)
    def wrapper(self: BaseProvider, *args: Any, **kwargs: Any) -> Any:
        self.check_writable(name)
        return method(self, *args, **kwargs)

    wrapper._memcore_writable = True  # type: ignore[attr-defined]
    return wrapper


def checked_for_write(provider: object, entry: MemoryEntry) -> MemoryEntry:
    """Return ``entry`` as a provider's ``add``/``update`` receives it: validated again, its text checked.

    The checks every :class:`BaseProvider`'s ``add`` and ``update`` run first; a provider's
    ``add_many`` that does ``add``'s steps itself runs them on each entry with this.

    Raises:
        InvalidEntryError: A field fails validation (:func:`~memcore.models.revalidated`) or
            holds a refused control character (:func:`~memcore.storage._control.check_entry_text`).
    """
    entry = revalidated(entry, getattr(provider, "format_name", "") or "store")
    check_entry_text(entry)
    return entry


def _checked_write(method: Any) -> Any:
    """Wrap a provider's ``add``/``update``: the entry is validated and its text checked first.

    See :func:`~memcore.models.revalidated` and :func:`~memcore.storage._control.check_entry_text`.
    """

    @functools.wraps(method)
    def wrapper(self: BaseProvider, entry: MemoryEntry, *args: Any, **kwargs: Any) -> Any:
        if isinstance(entry, MemoryEntry):
            entry = checked_for_write(self, entry)
        return method(self, entry, *args, **kwargs)

    wrapper._memcore_checked = True  # type: ignore[attr-defined]
    return wrapper


#: The provider whose outermost ``read_all``/``validate`` runs in this context, and the
#: control-character findings of the files its pass handed over (:meth:`BaseProvider.source_bytes_read`).
_SOURCE_BYTES: ContextVar[tuple[object, dict[str, list[Diagnostic]]] | None] = ContextVar(
    "memcore_source_bytes", default=None
)


def _scanned_check(method: Any, name: str) -> Any:
    """Wrap ``validate``/``read_all`` so the outermost call adds the control-character findings.

    The outermost call runs with the cyclic garbage collector paused
    (:func:`memcore.collector.paused_gc`; ``MEMCORE_READ_GC_PAUSE=0`` leaves it running): a
    whole-store pass builds and keeps an entry per memory, and the collections that growing
    heap sets off cost ~30 % of RightMemory's ``read_all`` at 10,000 entries.
    """

    @functools.wraps(method)
    def wrapper(self: BaseProvider, *args: Any, **kwargs: Any) -> Any:
        depth = getattr(self, "_memcore_scan_depth", 0)
        if depth or not switch_on("MEMCORE_READ_GC_PAUSE"):
            return scanned(self, depth, args, kwargs)
        with paused_gc():
            return scanned(self, depth, args, kwargs)

    def scanned(self: BaseProvider, depth: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self._memcore_scan_depth = depth + 1  # type: ignore[attr-defined]
        checked: dict[str, list[Diagnostic]] = {}
        token = _SOURCE_BYTES.set((self, checked)) if not depth else None
        try:
            result = method(self, *args, **kwargs)
        finally:
            self._memcore_scan_depth = depth  # type: ignore[attr-defined]
            if token is not None:
                _SOURCE_BYTES.reset(token)
        if depth:
            return result
        found = self._core_diagnostics(result.diagnostics if name == "read_all" else result, checked)
        if not found:
            return result
        if name == "read_all":
            return StoreSnapshot(result.entries, [*result.diagnostics, *found])
        return [*result, *found]

    wrapper._memcore_checked = True  # type: ignore[attr-defined]
    return wrapper
