"""A memcore provider for a JSON Lines file: one entry per line.

The store is one UTF-8 file, conventionally ``memory.jsonl``; the store URL is
``jsonl:path/to/memory.jsonl``. Each non-blank line is one JSON object, the entry's
:meth:`~memcore.models.MemoryEntry.content_dict` (every field but ``version``)::

    {"id": "jsonl-5f0c…", "kind": "note", "title": "Deploys", "body": "Use the blue pool.\\n", …}

- Order is line order: ``add`` appends a line, ``update`` rewrites its line in place,
  ``delete`` removes it. Every write (or every :meth:`JsonlProvider.batch` of writes)
  rewrites the file with :func:`memcore.storage.atomic_write` while holding
  :func:`memcore.storage.file_lock`, so concurrent writers in several processes lose nothing
  and a crash leaves the old file or the new one, never a mix.
- The version token of an entry is the first 16 hex digits of the sha256 of its line, so an
  update of one entry does not invalidate the tokens of the others.
- Reading fails open: a line that is not UTF-8, not JSON or not an entry, or whose id repeats
  an earlier line's, is skipped by :meth:`JsonlProvider.iter_entries` and reported by
  :meth:`JsonlProvider.validate` with its line number. Writing fails closed: while the file
  has such a line, every write raises :class:`~memcore.errors.ParseError` and leaves the
  bytes alone.
- A rewrite keeps the file's BOM and line endings (:class:`memcore.storage.TextFile`) and the
  exact text of every line it did not change. Blank lines are dropped.
- No path is ever built from an id, title or tag: the whole store is the one file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from memcore.errors import ConfigError, ConflictError, EntryNotFoundError, InvalidEntryError, ParseError
from memcore.models import Diagnostic, MemoryEntry, Query, Severity, utc_now
from memcore.provider import BaseProvider, Capability
from memcore.storage import TextFile, atomic_write, file_lock

__all__ = ["JsonlProvider"]

_BOM = b"\xef\xbb\xbf"
#: Characters JSON allows raw inside a string that some line splitters treat as line breaks.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def encode_entry(entry: MemoryEntry) -> str:
    """Return ``entry`` as one line of JSON (no newline, no ``version``).

    Non-ASCII text stays readable; U+2028, U+2029 and U+0085 are escaped so that no line
    splitter can cut the line in two.
    """
    text = json.dumps(entry.content_dict(), ensure_ascii=False, separators=(", ", ": "))
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def version_of(line: str) -> str:
    """Return the version token of a line: the first 16 hex digits of its sha256."""
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]


@dataclass
class Line:
    """One non-blank line of the file as read.

    Attributes:
        number: 1-based line number.
        text: The line's text, without its line ending.
        entry: The entry it holds, or ``None`` when it could not be read.
        problem: What is wrong with it, or ``None``.
    """

    number: int
    text: str
    entry: MemoryEntry | None = None
    problem: Diagnostic | None = None


@dataclass
class Snapshot:
    """The whole file as read at one moment.

    Attributes:
        raw: The file's bytes.
        lines: Its non-blank lines, in order.
        problems: File-level findings (missing or unreadable file).
        dirty: Inside :meth:`JsonlProvider.batch`: ``lines`` changed and are not written yet.
    """

    raw: bytes
    lines: list[Line] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    dirty: bool = False

    def entries(self) -> list[MemoryEntry]:
        """Return the entries of the readable lines, in line order."""
        return [line.entry for line in self.lines if line.entry is not None]

    def errors(self) -> list[Diagnostic]:
        """Return every error: file-level ones, then one per unreadable line."""
        line_problems = [line.problem for line in self.lines if line.problem is not None]
        return [d for d in [*self.problems, *line_problems] if d.severity == Severity.ERROR]

    def index_of(self, entry_id: str) -> int:
        """Return the position in :attr:`lines` of the entry ``entry_id``.

        Raises:
            EntryNotFoundError: No readable line holds that id.
        """
        for index, line in enumerate(self.lines):
            if line.entry is not None and line.entry.id == entry_id:
                return index
        raise EntryNotFoundError(f"jsonl: no entry {entry_id!r}")


class JsonlProvider(BaseProvider):
    """A JSON Lines file, one entry per line.

    Args:
        location: Path of the ``.jsonl`` file (created by :meth:`init_store`), a ``str`` or ``Path``.
        **options: Accepted for the contract; none is used.

    Raises:
        ConfigError: From :meth:`open`, when ``location`` is not a file.
    """

    format_name: ClassVar[str] = "jsonl"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.DELETE,
            Capability.ARCHIVE,
            Capability.SUPERSEDE,
            Capability.GRAPH,
            Capability.CONCURRENT,
            Capability.BATCH,
        }
    )

    def __init__(self, location: str | Path, **options: Any) -> None:
        super().__init__(location, **options)
        self._pending: Snapshot | None = None

    @property
    def path(self) -> Path:
        """The ``.jsonl`` file."""
        return Path(self.location)

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is an existing file named ``*.jsonl``."""
        try:
            return Path(path).suffix == ".jsonl" and Path(path).is_file()
        except OSError:
            return False

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
            raise ConfigError(
                f"jsonl: {self.location} is not a file; create the store with "
                f"`memcore init --store jsonl:{self.location}`"
            )
        super().open()
        return self

    def _read(self) -> Snapshot:
        """Read and parse the whole file; never raises for a bad file."""
        if self._pending is not None:
            return self._pending
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            problem = Diagnostic(path=self.path.name, code="jsonl.unreadable", message=f"cannot read: {exc}")
            return Snapshot(raw=b"", problems=[problem])
        snapshot = Snapshot(raw=raw)
        seen: set[str] = set()
        body = raw.removeprefix(_BOM)
        for number, chunk in enumerate(body.split(b"\n"), start=1):
            chunk = chunk.removesuffix(b"\r")
            if chunk.strip():
                line = self._parse_line(number, chunk)
                if line.entry is not None and line.entry.id in seen:
                    line.problem = self._problem(
                        line, "jsonl.duplicate-id", f"id {line.entry.id!r} is already used by an earlier line"
                    )
                    line.entry = None
                elif line.entry is not None:
                    seen.add(str(line.entry.id))
                snapshot.lines.append(line)
        return snapshot

    def _problem(self, line: Line, code: str, message: str, column: int | None = None) -> Diagnostic:
        """An error about ``line``, naming the file and the line number."""
        return Diagnostic(path=self.path.name, line=line.number, column=column, code=code, message=message)

    def _parse_line(self, number: int, chunk: bytes) -> Line:
        """Parse one non-blank line into an entry, or a line with a problem."""
        line = Line(number=number, text=chunk.decode("utf-8", errors="replace"))
        try:
            line.text = chunk.decode("utf-8")
            data = json.loads(line.text)
            if not isinstance(data, dict) or not data.get("id"):
                raise ValueError("expected a JSON object with an 'id'")
            entry = MemoryEntry.model_validate(data)
        except UnicodeDecodeError as exc:
            line.problem = self._problem(line, "jsonl.encoding", "not UTF-8; re-save the file as UTF-8", exc.start + 1)
        except json.JSONDecodeError as exc:
            line.problem = self._problem(line, "jsonl.json", f"not JSON: {exc.msg}", exc.colno)
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            line.problem = self._problem(line, "jsonl.entry", f"not a memcore entry: {first}")
        else:
            entry.version = version_of(line.text)
            line.entry = entry
        return line

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield the readable entries in line order; unreadable lines are skipped."""
        snapshot = self._read()
        entries = snapshot.entries()
        if snapshot is self._pending:  # inside a batch: hand out copies, not the batch's own
            entries = [entry.model_copy(deep=True) for entry in entries]
        yield from (query or Query()).apply(entries)

    def _read_for_write(self) -> Snapshot:
        """Read the file for a write: call only while holding the store lock.

        Raises:
            ParseError: The file has an error; nothing is written until it is fixed.
        """
        snapshot = self._read()
        errors = snapshot.errors()
        if errors:
            first = errors[0]
            raise ParseError(
                f"jsonl: {self.location} is left untouched because {first} "
                f"({len(errors)} error(s); see `memcore validate`)",
                path=self.location,
                line=first.line,
            )
        return snapshot

    def _write(self, snapshot: Snapshot, lines: list[Line]) -> None:
        """Replace the file with ``lines``, keeping its BOM and line endings.

        Inside :meth:`batch` the lines are kept in memory and written when the batch ends.
        """
        if snapshot is self._pending:
            snapshot.lines, snapshot.dirty = lines, True
            return
        like = TextFile.decode(snapshot.raw, path=self.location)
        atomic_write(self.path, like.encode("".join(line.text + "\n" for line in lines)))

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the store lock and write the file once, when the outermost batch ends.

        Without a batch every write rewrites the whole file, so adding *n* entries costs
        O(n²) bytes written; inside one it costs O(n). Reads inside the batch see its writes.
        The writes that returned are written even when the block raises.

        Raises:
            ParseError: The file has an error (nothing is written).
        """
        if self._pending is not None:
            yield
            return
        with file_lock(self.path):
            self._pending = self._read_for_write()
            try:
                yield
            finally:
                pending, self._pending = self._pending, None
                if pending.dirty:
                    self._write(pending, pending.lines)

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Append ``entry`` as a new last line; assign an id (``jsonl-<16 hex>``) when it has none.

        Raises:
            ConflictError: An entry with the given id exists.
            ParseError: The file has an error (nothing is written).
        """
        self.require(Capability.ADD, "add")
        entry = entry.model_copy(deep=True)
        with file_lock(self.path):
            snapshot = self._read_for_write()
            taken = {e.id for e in snapshot.entries()}
            if entry.id is None:
                entry.id = f"jsonl-{secrets.token_hex(8)}"
            if entry.id in taken:
                raise ConflictError(f"jsonl: entry {entry.id!r} already exists in {self.location}")
            entry.created_at = entry.created_at or utc_now()
            entry.updated_at = entry.updated_at or entry.created_at
            line = self._line_of(entry)
            self._write(snapshot, [*snapshot.lines, line])
        return entry

    def _line_of(self, entry: MemoryEntry) -> Line:
        """Encode ``entry`` as a new line and set its version token (in place)."""
        line = Line(number=0, text=encode_entry(entry))
        entry.version = version_of(line.text)
        line.entry = entry.model_copy(deep=True)
        return line

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the line of ``entry.id`` in place.

        Raises:
            InvalidEntryError: ``entry`` has no id.
            EntryNotFoundError: No entry with that id.
            ConflictError: ``expected_version`` is not the stored version.
            ParseError: The file has an error (nothing is written).
        """
        self.require(Capability.UPDATE, "update")
        if entry.id is None:
            raise InvalidEntryError("jsonl: update needs an entry with an id")
        entry_id, entry = entry.id, entry.model_copy(deep=True)
        with file_lock(self.path):
            snapshot = self._read_for_write()
            index = snapshot.index_of(entry_id)
            current = snapshot.lines[index].entry
            assert current is not None
            if expected_version is not None and expected_version != current.version:
                raise ConflictError(
                    f"jsonl: entry {entry_id!r} changed since it was read "
                    f"(version {current.version}, expected {expected_version}); read it again"
                )
            lines = list(snapshot.lines)
            lines[index] = self._line_of(entry)
            self._write(snapshot, lines)
        return entry

    def delete(self, entry_id: str) -> None:
        """Remove the line of ``entry_id``.

        Raises:
            EntryNotFoundError: No entry with that id.
            ParseError: The file has an error (nothing is written).
        """
        self.require(Capability.DELETE, "delete")
        with file_lock(self.path):
            snapshot = self._read_for_write()
            index = snapshot.index_of(entry_id)
            self._write(snapshot, snapshot.lines[:index] + snapshot.lines[index + 1 :])

    def validate(self) -> list[Diagnostic]:
        """Report unreadable lines (errors) and relations to ids not in the file (warnings)."""
        snapshot = self._read()
        found = [*snapshot.problems, *(line.problem for line in snapshot.lines if line.problem)]
        known = {entry.id for entry in snapshot.entries()}
        for line in snapshot.lines:
            entry = line.entry
            for relation in entry.relations if entry is not None else []:
                if relation.resolved and relation.target not in known:
                    message = f"relation {relation.type!r} points at {relation.target!r}, which is not in the file"
                    found.append(
                        Diagnostic(
                            path=self.path.name,
                            line=line.number,
                            code="jsonl.dangling-edge",
                            severity=Severity.WARNING,
                            message=message,
                            entry_id=entry.id if entry is not None else None,
                        )
                    )
        return found
