"""The provider contract's types, no behaviour: :class:`Capability` and the provider protocols.

:mod:`memcore.provider` re-exports all three (import them from there); they live here so that a
module the providers use, as :mod:`memcore.index` is, can name them without importing
:mod:`memcore.provider`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from memcore.models import Diagnostic, FidelityNote, MemoryEntry, Query

__all__ = [
    "BulkAdding",
    "Capability",
    "FileBackedProvider",
    "ManyReferenceReading",
    "MemoryProvider",
    "ReferenceReading",
]


class Capability(enum.StrEnum):
    """What a provider can do. The conformance suite runs a test only where its capability is.

    Attributes:
        ADD: ``add`` creates entries.
        UPDATE: ``update`` changes an entry in place (with a version token).
        DELETE: ``delete`` removes an entry.
        SUPERSEDE: ``supersede`` replaces an entry, keeping the old one marked superseded.
        ARCHIVE: ``archive`` marks an entry archived.
        APPEND_ONLY: some entries (e.g. WhiteBox observations) can only be appended.
        GRAPH: entries form a graph with typed edges checked by ``validate``.
        SCOPES: the store restricts reads and writes to an active scope.
        COMPANIONS: entries may describe binary files (Box-memory companions).
        REMOTE: the store lives behind a network API.
        BATCH: ``batch()`` defers index writes to the end of a bulk write.
        CONCURRENT: several processes may write to one store at once without losing entries.
        REINDEX: ``reindex`` rebuilds derived indexes from the files.
    """

    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"
    SUPERSEDE = "supersede"
    ARCHIVE = "archive"
    APPEND_ONLY = "append_only"
    GRAPH = "graph"
    SCOPES = "scopes"
    COMPANIONS = "companions"
    REMOTE = "remote"
    BATCH = "batch"
    CONCURRENT = "concurrent"
    REINDEX = "reindex"


@runtime_checkable
class MemoryProvider(Protocol):
    """What every memcore backend is.

    Attributes:
        format_name: The format's name, used in store URLs (``whitebox:./vault``).
        capabilities: What this provider can do.
        location: Where the store is (a path for file formats, a folder id for Box cloud).
    """

    format_name: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]]
    location: str

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` looks like a store of this format (cheap, never raises)."""

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create a new, empty store at ``location`` (``memcore init``)."""

    def open(self) -> Self:
        """Open the store (read config, check it exists) and return ``self``."""

    def close(self) -> None:
        """Release what ``open`` took. Closing writes nothing that was not written already."""

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield entries in the store's own stable order, filtered by ``query``."""

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry with ``entry_id``; raise :class:`EntryNotFoundError` if none."""

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Store a new entry and return it as stored (id, timestamps and version set)."""

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Replace the stored entry with the same id; :class:`ConflictError` on a stale version."""

    def supersede(self, old_id: str, new: MemoryEntry) -> MemoryEntry:
        """Add ``new`` as the replacement of ``old_id``, marking the old entry superseded."""

    def archive(self, entry_id: str) -> MemoryEntry:
        """Mark an entry archived and return it."""

    def delete(self, entry_id: str) -> None:
        """Remove an entry."""

    def search(self, query: Query | str) -> list[MemoryEntry]:
        """Return entries matching ``query`` (a string is a full-text query)."""

    def validate(self) -> list[Diagnostic]:
        """Check the store against its format's rules; never raises for bad files."""

    def reindex(self) -> list[Diagnostic]:
        """Rebuild derived indexes from the files and return what it found."""


@runtime_checkable
class FileBackedProvider(Protocol):
    """Optional: a provider whose entries can be re-read one source file at a time.

    :class:`memcore.index.SearchIndex` uses it to refresh only the files that changed; a
    provider without it is re-read whole when any file under its location changes. Paths are
    POSIX, relative to the store root (the location, or its folder for a single-file store).
    """

    def source_files(self) -> list[str]:
        """Return every file entries are read from, relative to the store root."""

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the entries read from one source file, as :meth:`iter_entries` would."""

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the source file ``entry`` was read from."""


@runtime_checkable
class ReferenceReading(Protocol):
    """Optional: a provider that can tell what its format's own reader shows differently.

    ``memcore migrate`` asks it about every entry it wrote and lists the answers per entry
    and field in the report (:attr:`memcore.migrate.EntryReport.fidelity`).
    """

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what the format's reference reader shows differently for ``entry`` as stored.

        Args:
            entry: An entry as this provider reads it (its ``id`` names it in the store).

        Returns:
            One note per field the reference reader shows otherwise; empty when it shows every
            field as memcore holds it (or the entry is no longer in the store).
        """


@runtime_checkable
class ManyReferenceReading(ReferenceReading, Protocol):
    """Optional, with :class:`ReferenceReading`: the same answers for many entries in one call.

    ``memcore migrate`` asks a provider that has it once for every entry it wrote, so that a
    format whose entries share a file (WhiteBox's monthly observation logs) reads and parses
    each file once rather than once per entry.
    """

    def reference_reads_differently_many(self, entries: Sequence[MemoryEntry]) -> list[list[FidelityNote]]:
        """Return :meth:`ReferenceReading.reference_reads_differently` of each of ``entries``, in order.

        Args:
            entries: Entries as this provider reads them.

        Returns:
            One list of notes per entry, in the order of ``entries`` (the same lists the
            one-entry method returns).
        """


@runtime_checkable
class BulkAdding(Protocol):
    """Optional: a provider that adds many entries in one call, cheaper than one ``add`` each.

    ``memcore migrate`` sends the entries of its first pass through it (in runs the
    migration's id mapping allows; ``MEMCORE_BULK_ADD=0`` turns that off). The call must
    leave the store, and return, exactly what consecutive ``add`` calls of the same entries
    would (the bytes written, the ids, the entries returned, the errors raised).
    """

    def add_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
        """Add ``entries`` in order, as consecutive :meth:`MemoryProvider.add` calls would.

        Stops after the first entry refused (its error is the last item) and after the first
        entry stored under another id than the one it was given (``entry.id`` not ``None``);
        the entries after it are not written, and the caller sends them again (their ids or
        relations may depend on it).

        Args:
            entries: Entries to add, in order (not modified).

        Returns:
            One item per entry handled, in order, at least one when ``entries`` is not empty:
            the entry as ``add`` returns it (as a read gives it), or the
            :class:`~memcore.errors.MemcoreError`, ``ValueError`` or ``OSError`` that ``add``
            would have raised for it (nothing of that entry written).
        """
