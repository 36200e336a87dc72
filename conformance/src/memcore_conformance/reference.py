"""The reference provider: the simplest honest provider, which passes the whole suite.

:class:`ReferenceProvider` (format name ``"reference"``) keeps one JSON file per entry::

    <location>/
        memcore-reference.json      store marker: {"format": "reference", "version": 1}
        entries/<id>.json           {"seq": <int>, "entry": <MemoryEntry.content_dict()>}

It exists to show what the suite asks for and to be the base of the suite's self-tests (the
deliberately broken providers in ``conformance/tests`` subclass it). It is **not** registered
through the ``memcore`` entry-point group, so ``memcore formats`` never lists it; use it with
``ProviderConformance`` (``provider_cls = ReferenceProvider``) or with
``--memcore-provider=memcore_conformance.reference:ReferenceProvider``.

What it does on purpose, as a model for real providers:

- every write runs in core's write session (:meth:`~memcore.provider.BaseProvider.session`:
  the store lock held, the file checked unchanged, written atomically), and every path built
  from an id goes through ``safe_join``;
- reading fails open: a file that cannot be decoded or parsed is skipped by ``iter_entries`` and
  reported by ``validate`` with its path and line;
- writing fails closed: ``update``/``delete`` of an entry whose file cannot be parsed raise
  :class:`~memcore.errors.ParseError` and leave the bytes alone; a rewrite keeps the file's BOM
  and line endings (:class:`~memcore.storage.TextFile`);
- entries of kind ``observation`` are append-only (``APPEND_ONLY``): update and delete raise
  :class:`~memcore.errors.ImmutableEntryError`;
- relations are a graph (``GRAPH``): ``validate`` warns (``ref.dangling-edge``) about an edge
  whose target is not in the store;
- order is insertion order: each file records a sequence number (``time.time_ns()`` taken under
  the store lock), and ``iter_entries`` sorts by it, then by id;
- the version token is :func:`memcore.storage.version_token` of the entry file's bytes;
- ``read_only=True`` (or ``"true"``) refuses every write with
  :class:`~memcore.errors.ReadOnlyStoreError` before any I/O, and ``batch()`` is one write
  session owned by one thread, holding the store lock for the whole block: core gives both to
  every provider. Each write flushes the session at once, so reads in a batch see its writes.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from memcore.errors import (
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    ImmutableEntryError,
    InvalidEntryError,
    MemcoreError,
    ParseError,
)
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Severity, utc_now
from memcore.provider import BaseProvider, Capability
from memcore.storage import (
    TextFile,
    WriteSession,
    atomic_write,
    check_component,
    control_char_diagnostics,
    safe_join,
    version_token,
)

__all__ = ["MARKER_FILE", "ReferenceProvider"]

#: Name of the store marker file written by :meth:`ReferenceProvider.init_store`.
MARKER_FILE = "memcore-reference.json"
_ENTRIES = "entries"
_SUFFIX = ".json"


@dataclass
class _Loaded:
    """One entry file as read: the entry (or ``None``) and what went wrong."""

    path: Path
    raw: bytes
    entry: MemoryEntry | None
    seq: int
    text: TextFile | None
    problem: Diagnostic | None


class ReferenceProvider(BaseProvider):
    """One JSON file per entry under ``<location>/entries``; every capability a folder can have.

    Args:
        location: The store folder (created by :meth:`init_store`).
        **options: ``read_only`` (a bool, or ``"true"``/``"false"``; core reads it); others are ignored.

    Raises:
        ConfigError: From :meth:`open`, when ``location`` is not a reference store.
    """

    format_name: ClassVar[str] = "reference"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.DELETE,
            Capability.SUPERSEDE,
            Capability.ARCHIVE,
            Capability.APPEND_ONLY,
            Capability.GRAPH,
            Capability.BATCH,
            Capability.CONCURRENT,
            Capability.REINDEX,
        }
    )

    #: Kinds whose entries can only be appended (never updated or deleted).
    append_only_kinds: ClassVar[frozenset[Kind]] = frozenset({Kind.OBSERVATION})

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        super().__init__(location, **options)
        #: ids plan_ids() handed out, for the next adds without an id (in order)
        self._reserved: deque[str] = deque()

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is a folder holding the reference store marker."""
        try:
            return (Path(path) / MARKER_FILE).is_file()
        except OSError:
            return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create an empty store folder at ``location`` (parents included); idempotent."""
        root = Path(location)
        (root / _ENTRIES).mkdir(parents=True, exist_ok=True)
        marker = root / MARKER_FILE
        if not marker.exists():
            atomic_write(marker, b'{"format": "reference", "version": 1}\n')

    @property
    def root(self) -> Path:
        """The store folder."""
        return Path(self.location)

    def open(self) -> ReferenceProvider:
        """Check that the folder is a reference store.

        Raises:
            ConfigError: The marker file is missing.
        """
        if not (self.root / MARKER_FILE).is_file():
            raise ConfigError(
                f"reference: {self.location} is not a reference store (no {MARKER_FILE}); "
                "create one with ReferenceProvider.init_store()"
            )
        super().open()
        return self

    # -- reading ----------------------------------------------------------------------
    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _path_for(self, entry_id: str) -> Path:
        """``entries/<id>.json``; the id must make one safe file name (no ``/``).

        Raises:
            UnsafePathError: It does not.
        """
        return safe_join(self.root, _ENTRIES, check_component(entry_id + _SUFFIX))

    def _load(self, path: Path, session: WriteSession | None = None) -> _Loaded:
        rel = self._rel(path)
        try:
            raw = path.read_bytes() if session is None else session.read(rel)
            if raw is None:
                raise FileNotFoundError(f"{rel}: no such file")
        except OSError as exc:
            diag = Diagnostic(path=rel, code="ref.unreadable", message=f"cannot read: {exc}")
            return _Loaded(path, b"", None, 0, None, diag)
        try:
            text = TextFile.decode(raw, path=rel)
        except ParseError as exc:
            diag = Diagnostic(path=rel, line=exc.line, code="ref.encoding", message=str(exc))
            return _Loaded(path, raw, None, 0, None, diag)
        try:
            data = json.loads(text.text)
        except json.JSONDecodeError as exc:
            diag = Diagnostic(
                path=rel, line=exc.lineno, column=exc.colno, code="ref.json", message=f"invalid JSON: {exc.msg}"
            )
            return _Loaded(path, raw, None, 0, text, diag)
        try:
            if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
                raise ValueError("expected an object with an integer 'seq' and an 'entry'")
            entry = MemoryEntry.model_validate(data.get("entry"))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            diag = Diagnostic(path=rel, line=1, code="ref.entry", message=f"not a memcore entry: {first}")
            return _Loaded(path, raw, None, 0, text, diag)
        expected_name = (entry.id or "") + _SUFFIX
        if path.name != expected_name:
            diag = Diagnostic(
                path=rel,
                line=1,
                code="ref.id-mismatch",
                message=f"entry id {entry.id!r} does not match the file name; rename the file {expected_name}",
                entry_id=entry.id,
            )
            return _Loaded(path, raw, None, 0, text, diag)
        entry.version = version_token(raw)
        return _Loaded(path, raw, entry, data["seq"], text, None)

    def _scan(self) -> list[_Loaded]:
        folder = self.root / _ENTRIES
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return []
        loaded = [self._load(folder / n) for n in names if n.endswith(_SUFFIX) and not n.startswith(".")]
        return sorted(loaded, key=lambda item: (item.seq, item.path.name))

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield readable entries in insertion order; unreadable files are skipped."""
        entries = (item.entry for item in self._scan() if item.entry is not None)
        yield from (query or Query()).apply(entries)

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry with ``entry_id``.

        Raises:
            EntryNotFoundError: No readable entry with that id (also for ids that cannot be
                file names in this store).
            ParseError: The entry's file exists but cannot be parsed.
        """
        loaded = self._load_existing(entry_id)
        assert loaded.entry is not None
        return loaded.entry

    def _load_existing(self, entry_id: str, session: WriteSession | None = None) -> _Loaded:
        try:
            path = self._path_for(entry_id)
        except (InvalidEntryError, ValueError) as exc:
            raise EntryNotFoundError(f"reference: no entry {entry_id!r} ({exc})") from exc
        if not path.is_file():
            raise EntryNotFoundError(f"reference: no entry {entry_id!r} in {self.location}")
        loaded = self._load(path, session)
        if loaded.entry is None:
            assert loaded.problem is not None
            raise ParseError(
                f"reference: cannot parse the file of entry {entry_id!r}, so it is left untouched: "
                f"{loaded.problem.message}",
                path=str(path),
                line=loaded.problem.line,
            )
        return loaded

    # -- writing ----------------------------------------------------------------------
    def _encode(self, entry: MemoryEntry, seq: int, like: TextFile | None) -> bytes:
        data = {"seq": seq, "entry": entry.content_dict()}
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        return (like or TextFile(text="")).encode(text)

    def _new_id(self) -> str:
        reserved = self._reserved
        while reserved:  # ids handed out by plan_ids(), in order
            planned = reserved.popleft()
            if not self._path_for(planned).exists():
                return planned
        return f"ref-{time.time_ns():x}-{secrets.token_hex(4)}"

    def plan_ids(self, entries: Sequence[MemoryEntry]) -> list[str | None]:
        """Return the ids :meth:`add` will give ``entries`` added in this order; write nothing.

        An entry with an id keeps it (``None`` when that id is taken or cannot be a file
        name: add would refuse it); the others get fresh ids, reserved for the next adds
        without an id, in order.
        """
        reserved = self._reserved
        planned: list[str | None] = []
        seen: set[str] = set()
        for entry in entries:
            if entry.id is None:
                new_id = f"ref-{time.time_ns():x}-{secrets.token_hex(4)}"
                reserved.append(new_id)
                planned.append(new_id)
                continue
            try:
                taken = entry.id in seen or self._path_for(entry.id).exists()
            except MemcoreError:
                taken = True
            planned.append(None if taken else entry.id)
            seen.add(entry.id)
        return planned

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Write a new entry file; assign an id (``ref-<hex time>-<hex>``) when none is given.

        Raises:
            UnsafePathError: The given id cannot be a file name inside the store.
            ConflictError: An entry with the given id exists.
        """
        self.require(Capability.ADD, "add")
        entry = entry.model_copy(deep=True)
        with self.session("add") as session:
            if entry.id is None:
                entry.id = self._new_id()
            rel = self._rel(self._path_for(entry.id))
            if session.read(rel) is not None:
                raise ConflictError(f"reference: entry {entry.id!r} already exists in {self.location}")
            now = utc_now()
            entry.created_at = entry.created_at or now
            entry.updated_at = entry.updated_at or entry.created_at
            raw = self._encode(entry, time.time_ns(), None)
            session.write(rel, raw)
            session.flush()
        entry.version = version_token(raw)
        return entry

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the entry's file, keeping its sequence number, BOM and line endings.

        Raises:
            EntryNotFoundError: No entry with ``entry.id``.
            ParseError: The stored file cannot be parsed (it is left untouched).
            ConflictError: ``expected_version`` is not the stored version.
            ImmutableEntryError: The stored entry is append-only.
        """
        self.require(Capability.UPDATE, "update")
        if entry.id is None:
            raise InvalidEntryError("reference: update needs an entry with an id")
        entry_id = entry.id
        entry = entry.model_copy(deep=True)
        with self.session("update") as session:
            current = self._load_existing(entry_id, session)
            assert current.entry is not None
            self._check_mutable(current.entry, "update")
            if expected_version is not None and expected_version != current.entry.version:
                raise ConflictError(
                    f"reference: entry {entry.id!r} changed since it was read "
                    f"(version {current.entry.version}, expected {expected_version}); read it again"
                )
            raw = self._encode(entry, current.seq, current.text)
            session.write(self._rel(current.path), raw)
            session.flush()
        entry.version = version_token(raw)
        return entry

    def delete(self, entry_id: str) -> None:
        """Remove the entry's file.

        Raises:
            EntryNotFoundError: No such entry.
            ParseError: The file cannot be parsed (it is left in place).
            ImmutableEntryError: The entry is append-only.
        """
        self.require(Capability.DELETE, "delete")
        with self.session("delete") as session:
            current = self._load_existing(entry_id, session)
            assert current.entry is not None
            self._check_mutable(current.entry, "delete")
            session.delete(self._rel(current.path))
            session.flush()

    def _check_mutable(self, entry: MemoryEntry, operation: str) -> None:
        if entry.kind in self.append_only_kinds:
            raise ImmutableEntryError(
                f"reference: entry {entry.id!r} is an append-only {entry.kind.value}; `{operation}` "
                "is refused (add a correction instead)"
            )

    # -- checking ---------------------------------------------------------------------
    def validate(self) -> list[Diagnostic]:
        """Report the marker file if missing, every entry file that cannot be read, and control characters."""
        out: list[Diagnostic] = []
        if not (self.root / MARKER_FILE).is_file():
            out.append(Diagnostic(path=MARKER_FILE, code="ref.no-marker", message="store marker missing"))
        scanned = self._scan()
        known = {item.entry.id for item in scanned if item.entry is not None}
        for item in scanned:
            out.extend(control_char_diagnostics(item.raw, self._rel(item.path), code="ref.control-char"))
            if item.problem is not None:
                out.append(item.problem)
            elif item.entry is not None:
                out.extend(self._dangling(item, known))
        return out

    def _dangling(self, item: _Loaded, known: set[str | None]) -> list[Diagnostic]:
        """Warn about each resolved relation whose target is not in the store (``GRAPH``)."""
        assert item.entry is not None
        return [
            Diagnostic(
                path=self._rel(item.path),
                line=1,
                code="ref.dangling-edge",
                severity=Severity.WARNING,
                message=f"relation {rel.type!r} points at {rel.target!r}, which is not in the store",
                entry_id=item.entry.id,
            )
            for rel in item.entry.relations
            if rel.resolved and rel.target not in known
        ]

    def reindex(self) -> list[Diagnostic]:
        """Nothing is derived; return :meth:`validate`'s findings."""
        self.require(Capability.REINDEX, "reindex")
        return self.validate()
