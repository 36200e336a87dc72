"""A memcore provider for a JSON Lines file (``jsonl:path/to/memory.jsonl``): one entry per line.

Order is line order: ``add`` appends a line, ``update`` rewrites its line, ``delete`` removes it.
Every write runs in memcore's write session (:meth:`~memcore.provider.BaseProvider.session`:
lock held, file read once, replaced atomically at the end unless it changed on disk meanwhile);
``read_only`` is refused by core. Reading fails open (:mod:`memcore_jsonl._parse`); writing fails
closed: while a line is unreadable every write raises :class:`~memcore.errors.ParseError`. A
rewrite keeps the BOM, the line endings and every line it did not change.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import ConfigError, ConflictError, InvalidEntryError, ParseError
from memcore.models import Diagnostic, MemoryEntry, Query, utc_now
from memcore.provider import BaseProvider, Capability
from memcore.storage import TextFile, WriteSession, atomic_write, version_token
from memcore_jsonl._parse import Line, Snapshot, parse
from memcore_jsonl.codec import encode_entry
from memcore_jsonl.validate import check

__all__ = ["JsonlProvider"]


class JsonlProvider(BaseProvider):
    """A JSON Lines file, one entry per line.

    Args:
        location: Path of the ``.jsonl`` file (created by :meth:`init_store`), a ``str`` or ``Path``.
        **options: Only memcore's own (``read_only``, ``index``).
    """

    format_name: ClassVar[str] = "jsonl"
    option_names: ClassVar[frozenset[str] | None] = frozenset()
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        map(Capability, ["add", "update", "delete", "archive", "supersede", "graph", "concurrent", "batch"])
    )

    def __init__(self, location: str | Path, **options: Any) -> None:
        super().__init__(location, **options)
        self.path = Path(location)  #: the ``.jsonl`` file
        self._pending: Snapshot | None = None  # the write session's copy of the file

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is an existing file named ``*.jsonl``."""
        return Path(path).suffix == ".jsonl" and Path(path).is_file()

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create an empty ``.jsonl`` file (and its folders); leave an existing one alone."""
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            atomic_write(path, b"")

    def open(self) -> JsonlProvider:
        """Check that the store file exists and return ``self``.

        Raises:
            ConfigError: ``location`` is missing or not a file.
        """
        if not self.path.is_file():
            raise ConfigError(f"jsonl: {self.location} is not a file; `memcore init --store jsonl:{self.location}`")
        super().open()
        return self

    # -- reading ----------------------------------------------------------------------
    def _read(self) -> Snapshot:
        """Return the file as the caller sees it: inside a write session, with its writes."""
        if self._pending is not None and self.active_session() is not None:
            return self._pending
        try:
            raw, _ = self.storage.read(self.path.name)
        except OSError as exc:
            problem = Diagnostic(path=self.path.name, code="jsonl.unreadable", message=f"cannot read: {exc}")
            return Snapshot(raw=b"", problems=[problem])
        return parse(raw, self.path.name)

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield the readable entries in line order; unreadable lines are skipped."""
        snapshot = self._read()
        entries = [entry.model_copy(deep=True) for entry in snapshot.entries()]
        yield from (query or Query()).apply(entries)

    def validate(self) -> list[Diagnostic]:
        """Report unreadable lines (errors) and relations to ids not in the file (warnings)."""
        return check(self._read(), self.path.name)

    # -- writing ----------------------------------------------------------------------
    @contextlib.contextmanager
    def _editing(self, operation: str) -> Iterator[Snapshot]:
        """Run one write in the write session on its copy of the file (read once per session).

        Raises:
            ParseError: The file has an error; nothing is written until it is fixed.
        """
        with self.session(operation) as session:
            if self._pending is None:
                snapshot = parse(session.read(self.path.name) or b"", self.path.name)
                if errors := snapshot.errors():
                    message = f"jsonl: {self.location} is left untouched because {errors[0]} ({len(errors)} error(s))"
                    raise ParseError(message, path=self.location, line=errors[0].line)
                self._pending = snapshot
            yield self._pending
            self._pending.dirty = True

    def _session_ending(self, session: WriteSession) -> None:
        """Stage the file once, when the outermost write session ends."""
        pending, self._pending = self._pending, None
        if pending is not None and pending.dirty:
            text = "".join(line.text + "\n" for line in pending.lines)
            session.write(self.path.name, TextFile.decode(pending.raw, path=self.location).encode(text))

    @staticmethod
    def _line_of(entry: MemoryEntry) -> Line:
        """Encode ``entry`` as a new line and set its version token (in place)."""
        text = encode_entry(entry)
        entry.version = version_token(text)
        return Line(number=0, text=text, entry=entry.model_copy(deep=True))

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Append ``entry`` as a new last line; assign an id (``jsonl-<16 hex>``) when it has none.

        Raises:
            ConflictError: An entry with the given id exists.
            ParseError: The file has an error (nothing is written).
        """
        entry = entry.model_copy(deep=True)
        with self._editing("add") as snapshot:
            if entry.id is None:
                entry.id = f"jsonl-{secrets.token_hex(8)}"
            if any(e.id == entry.id for e in snapshot.entries()):
                raise ConflictError(f"jsonl: entry {entry.id!r} already exists in {self.location}")
            entry.created_at = entry.created_at or utc_now()
            entry.updated_at = entry.updated_at or entry.created_at
            snapshot.lines.append(self._line_of(entry))
        return entry

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the line of ``entry.id`` in place.

        Raises:
            InvalidEntryError: ``entry`` has no id.
            EntryNotFoundError: No entry with that id.
            ConflictError: ``expected_version`` is not the stored version.
            ParseError: The file has an error (nothing is written).
        """
        if entry.id is None:
            raise InvalidEntryError("jsonl: update needs an entry with an id")
        entry_id, entry = entry.id, entry.model_copy(deep=True)
        with self._editing("update") as snapshot:
            index = snapshot.index_of(entry_id)
            current = snapshot.lines[index].entry
            assert current is not None
            if expected_version is not None and expected_version != current.version:
                raise ConflictError(
                    f"jsonl: entry {entry_id!r} changed since it was read "
                    f"(version {current.version}, expected {expected_version}); read it again"
                )
            snapshot.lines[index] = self._line_of(entry)
        return entry

    def delete(self, entry_id: str) -> None:
        """Remove the line of ``entry_id``.

        Raises:
            EntryNotFoundError: No entry with that id.
            ParseError: The file has an error (nothing is written).
        """
        with self._editing("delete") as snapshot:
            del snapshot.lines[snapshot.index_of(entry_id)]
