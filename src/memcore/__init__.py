"""memcore: one Python interface to AI-agent memory kept as human-readable files.

Open a store by URL or configuration and work with :class:`MemoryEntry` objects::

    import memcore

    with memcore.open("whitebox:./vault") as store:
        for entry in store.iter_entries(memcore.Query(kinds=["observation"])):
            print(entry.id, entry.title)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
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

#: Where each public name lives. ``import memcore`` (which every ``memcore.*`` import runs first)
#: imports none of them: a name's module is imported on first access, so ``memcore --version``
#: does not pay for pydantic, the providers or the plugins.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "open": "memcore.config:open_store",
        **dict.fromkeys(
            (
                "AmbiguousIdError",
                "ConfigError",
                "ConflictError",
                "DuplicateFormatError",
                "EntryNotFoundError",
                "ImmutableEntryError",
                "InvalidEntryError",
                "MemcoreError",
                "ParseError",
                "ReadOnlyStoreError",
                "StoreLimitError",
                "UnknownFormatError",
                "UnsafePathError",
                "UnsupportedOperationError",
            ),
            "memcore.errors",
        ),
        "hookimpl": "memcore.hookspecs",
        **dict.fromkeys(
            ("Diagnostic", "Kind", "MemoryEntry", "Query", "Relation", "Severity", "Status"), "memcore.models"
        ),
        **dict.fromkeys(("BaseProvider", "Capability", "MemoryProvider"), "memcore.provider"),
    },
)
