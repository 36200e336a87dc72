"""The exceptions memcore raises.

Every class ends in ``Error`` and inherits :class:`MemcoreError`; where a caller would
naturally catch a builtin (``LookupError``, ``ValueError``, ``NotImplementedError``) the class
inherits that too. Messages name the format, the path and the fix.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousIdError",
    "ConfigError",
    "ConflictError",
    "DuplicateFormatError",
    "EntryNotFoundError",
    "ImmutableEntryError",
    "MemcoreError",
    "ParseError",
    "PluginLoadError",
    "QuerySyntaxError",
    "ReadOnlyStoreError",
    "StoreBusyError",
    "StoreLimitError",
    "UnknownFormatError",
    "UnsafePathError",
    "UnsupportedOperationError",
    "InvalidEntryError",
    "LockPathError",
]


class MemcoreError(Exception):
    """Base class of every error memcore raises on purpose."""


class ConfigError(MemcoreError, ValueError):
    """A store URL, environment variable or ``memcore.toml`` could not be used."""


class PluginLoadError(ConfigError):
    """A plugin of the ``memcore`` entry-point group failed to import or register.

    The message names the entry point, its distribution, the error, and how to block the plugin
    (``MEMCORE_DISABLE_PLUGINS``) until it is fixed.

    Attributes:
        plugin: The entry-point name.
        distribution: The distribution that ships it, or ``None``.
    """

    def __init__(self, plugin: str, distribution: str | None, error: BaseException) -> None:
        self.plugin = plugin
        self.distribution = distribution
        shipped = f" (distribution {distribution!r})" if distribution else ""
        first_line = (str(error).strip().splitlines() or [""])[0]
        super().__init__(
            f"plugin {plugin!r}{shipped} failed to load: {type(error).__name__}: {first_line}; "
            f"fix or uninstall it, or block it with MEMCORE_DISABLE_PLUGINS={distribution or plugin}"
        )


class UnknownFormatError(MemcoreError, LookupError):
    """No installed provider serves the requested format name.

    The message names the distribution to install when the format is a known built-in.
    """


class DuplicateFormatError(MemcoreError):
    """Two plugins registered providers with the same format name; the message names both."""


class EntryNotFoundError(MemcoreError, LookupError):
    """No entry with the requested id exists in the store."""


class StoreBusyError(MemcoreError, TimeoutError):
    """Another process held the store's lock for longer than the wait allowed (60 s by default)."""


class LockPathError(MemcoreError, PermissionError):
    """A lock cannot be taken where it must live; the message names the path and the fix.

    Raised when the lock folder is not ours or not private (mode 0700), or when something other
    than a lock file (a symlink, a folder) is at the lock's path.
    """


class ConflictError(MemcoreError):
    """A write was refused because the store changed since the caller read it.

    Raised for a stale version token, and for deletes that other entries still point at.
    """


class AmbiguousIdError(ConflictError):
    """One id names two or more entries of the store (e.g. Maka sections with the same title).

    Raised by ``get``, ``update`` and ``delete`` instead of acting on one of them; nothing is
    read or written. The message names every place (``file:line``) and how to make the ids
    distinct.

    Attributes:
        entry_id: The ambiguous id.
        places: Where each entry using it is (``"path:line"``), in file order.
    """

    def __init__(self, message: str, *, entry_id: str, places: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.entry_id = entry_id
        self.places = places


class UnsupportedOperationError(MemcoreError, NotImplementedError):
    """The format forbids the operation (for example editing an append-only observation)."""


class ImmutableEntryError(UnsupportedOperationError):
    """The entry may not be changed (for example a Box-memory ``held`` memory)."""


class ReadOnlyStoreError(UnsupportedOperationError):
    """The store was opened read-only, or a gate (incognito, safe mode) forbids writing."""


class ParseError(MemcoreError, ValueError):
    """A file could not be parsed, so memcore refuses to rewrite it.

    Attributes:
        path: The file, as a string, or ``None`` when not file-backed.
        line: 1-based line number of the problem, or ``None``.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = path or ""
        if path and line:
            where = f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.line = line


class InvalidEntryError(MemcoreError, ValueError):
    """An entry given to a write cannot be stored in this format as it is."""


class StoreLimitError(InvalidEntryError):
    """A write would break a size or count limit of the format (e.g. Maka's 128 KiB)."""


class QuerySyntaxError(MemcoreError, ValueError):
    """A search query does not follow the query syntax (docs/search.md); names the column and the fix."""


class UnsafePathError(MemcoreError, ValueError):
    """A path built from an id, slug, title or tag would leave the store, or is not portable."""


class EditMatchError(InvalidEntryError):
    """The string an :func:`edit` replaces does not occur exactly once in the entry's body.

    Attributes:
        entry_id: The entry edited.
        occurrences: How often the old string occurs (0, or 2 and more).
    """

    def __init__(self, message: str, *, entry_id: str, occurrences: int) -> None:
        super().__init__(message)
        self.entry_id = entry_id
        self.occurrences = occurrences
