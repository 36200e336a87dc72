"""memcore: one Python interface to AI-agent memory kept as human-readable files.

Open a store by URL or configuration and work with :class:`MemoryEntry` objects::

    import memcore

    with memcore.open("whitebox:./vault") as store:
        for entry in store.iter_entries(memcore.Query(kinds=["observation"])):
            print(entry.id, entry.title)
"""

from __future__ import annotations

from memcore.config import open_store as open
from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    DuplicateFormatError,
    EntryNotFoundError,
    ImmutableEntryError,
    InvalidEntryError,
    MemcoreError,
    ParseError,
    ReadOnlyStoreError,
    StoreLimitError,
    UnknownFormatError,
    UnsafePathError,
    UnsupportedOperationError,
)
from memcore.hookspecs import hookimpl
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Relation, Severity, Status
from memcore.provider import BaseProvider, Capability, MemoryProvider

__version__ = "0.1.0"

__all__ = [
    "AmbiguousIdError",
    "BaseProvider",
    "Capability",
    "ConfigError",
    "ConflictError",
    "Diagnostic",
    "DuplicateFormatError",
    "EntryNotFoundError",
    "ImmutableEntryError",
    "InvalidEntryError",
    "Kind",
    "MemcoreError",
    "MemoryEntry",
    "MemoryProvider",
    "ParseError",
    "Query",
    "ReadOnlyStoreError",
    "Relation",
    "Severity",
    "Status",
    "StoreLimitError",
    "UnknownFormatError",
    "UnsafePathError",
    "UnsupportedOperationError",
    "__version__",
    "hookimpl",
    "open",
]
