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
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, NamedTuple, Self

from memcore.contract import Capability, FileBackedProvider, MemoryProvider
from memcore.errors import ConfigError, EntryNotFoundError, UnsupportedOperationError
from memcore.models import Diagnostic, MemoryEntry, Query, Relation, Status, revalidated, utc_now
from memcore.storage._control import check_entry_text, control_char_diagnostics
from memcore.storage._paths import name_twin_diagnostics

__all__ = [
    "CORE_OPTIONS",
    "BaseProvider",
    "Capability",
    "FileBackedProvider",
    "MemoryProvider",
    "StoreSnapshot",
    "read_all",
]


class StoreSnapshot(NamedTuple):
    """A whole store read once: what ``iter_entries()`` and ``validate()`` return.

    Attributes:
        entries: Every entry, in the store's own order (``list(iter_entries())``).
        diagnostics: What ``validate()`` reports for the same files.
    """

    entries: list[MemoryEntry]
    diagnostics: list[Diagnostic]


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
    ``read_all``): :func:`memcore.convert.migrate` asks it for the ids of an append-only
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


#: Options every :class:`BaseProvider` accepts, whatever its :attr:`~BaseProvider.option_names`:
#: ``read_only`` (conversions open every source with it) and ``index`` (``false``: :meth:`BaseProvider.search`
#: scans instead of using a search index).
CORE_OPTIONS: frozenset[str] = frozenset({"read_only", "index"})


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
    #: Options :func:`memcore.convert.migrate` opens this provider with when it is a migration's
    #: target, unless the user sets them (``--dst-option``). WhiteBox: ``as_user=True``, so that
    #: a re-run changes in place the stable files its earlier runs wrote instead of filing a new
    #: proposal each time.
    migration_target_options: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Hold every provider to the core text rules, whatever its own code does.

        ``add`` and ``update`` a subclass defines first validate an entry whose fields were set
        past pydantic's validation (:func:`~memcore.models.revalidated`) and check its text with
        :func:`~memcore.storage._control.check_entry_text` (NUL, C0 controls, DEL are refused
        naming the field and the character); ``validate`` and ``read_all`` add a diagnostic
        (file:line) for each line of a :meth:`FileBackedProvider.source_files` file holding one,
        and, for a store that is a folder, one per group of NFC/NFD twin names in it.
        """
        super().__init_subclass__(**kwargs)
        for name in ("add", "update"):
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "_memcore_checked", False):
                setattr(cls, name, _checked_write(cls.__dict__[name]))
        for name in ("validate", "read_all"):
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "_memcore_checked", False):
                setattr(cls, name, _scanned_check(cls.__dict__[name], name))

    def _control_char_diagnostics(self) -> list[Diagnostic]:
        """Diagnose refused control characters in the store's local source files."""
        source_files = getattr(self, "source_files", None)
        if source_files is None:
            return []
        root = Path(self.location)
        if root.is_file():
            root = root.parent
        if not root.is_dir():
            return []  # a remote store: its files are not local bytes
        out: list[Diagnostic] = []
        try:
            files = list(source_files())
        except Exception:  # noqa: BLE001 - the provider's own validate reports why it cannot list
            return []
        for rel in files:
            try:
                data = (root / rel).read_bytes()
            except OSError:
                continue
            out.extend(control_char_diagnostics(data, rel, code=f"{self.format_name or 'store'}.control-char"))
        if Path(self.location).is_dir():  # a store of many files: names may arrive in NFD
            out.extend(name_twin_diagnostics(root, code=f"{self.format_name or 'store'}.name-twins"))
        return out

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        """Keep the location and options (checked against :attr:`option_names` when set).

        Raises:
            ConfigError: An option is not in :attr:`option_names`.
        """
        self.location = os.fspath(location)
        self.options: dict[str, Any] = dict(options)
        self._is_open = False
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

    @property
    def url(self) -> str:
        """The store URL, ``<format>:<location>``."""
        return f"{self.format_name}:{self.location}"

    def open(self) -> Self:
        """Open the store and return ``self``; opening twice is harmless."""
        self._is_open = True
        return self

    def close(self) -> None:
        """Close the store; closing twice is harmless."""
        self._is_open = False

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
        """Return entries matching ``query``; a string is ``Query(text=...)``.

        Uses the store's :mod:`memcore.index` search index when one exists (``memcore index
        build``) and the provider was not opened with ``index=False``; otherwise a full scan.
        """
        if isinstance(query, str):
            query = Query(text=query)
        if self.options.get("index", True):
            from memcore.index import search_if_indexed

            found = search_if_indexed(self, query)
            if found is not None:
                return found
        return list(query.apply(self.iter_entries()))

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

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes; providers with derived indexes write them once at the end."""
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
        them once: :func:`memcore.convert.migrate` reads both stores this way.

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


def _checked_write(method: Any) -> Any:
    """Wrap a provider's ``add``/``update``: the entry is validated and its text checked first.

    See :func:`~memcore.models.revalidated` and :func:`~memcore.storage._control.check_entry_text`.
    """

    @functools.wraps(method)
    def wrapper(self: BaseProvider, entry: MemoryEntry, *args: Any, **kwargs: Any) -> Any:
        if isinstance(entry, MemoryEntry):
            entry = revalidated(entry, self.format_name or "store")
            check_entry_text(entry)
        return method(self, entry, *args, **kwargs)

    wrapper._memcore_checked = True  # type: ignore[attr-defined]
    return wrapper


def _scanned_check(method: Any, name: str) -> Any:
    """Wrap ``validate``/``read_all`` so the outermost call adds the control-character findings."""

    @functools.wraps(method)
    def wrapper(self: BaseProvider, *args: Any, **kwargs: Any) -> Any:
        depth = getattr(self, "_memcore_scan_depth", 0)
        self._memcore_scan_depth = depth + 1  # type: ignore[attr-defined]
        try:
            result = method(self, *args, **kwargs)
        finally:
            self._memcore_scan_depth = depth  # type: ignore[attr-defined]
        if depth:
            return result
        found = self._control_char_diagnostics()
        if not found:
            return result
        if name == "read_all":
            return StoreSnapshot(result.entries, [*result.diagnostics, *found])
        return [*result, *found]

    wrapper._memcore_checked = True  # type: ignore[attr-defined]
    return wrapper
