"""A memcore provider for the MCP reference memory server's knowledge graph (``mcpmemory:./memory.jsonl``).

One entity is one entry (its ``name`` the id and title, its observations the body as a list, its
``entityType`` the kind and ``extra["mcpmemory"]["entityType"]``), and the relation records from
it are its relations; the table is :mod:`memcore_mcpmemory.mapping`. The server's rules apply to
every write (spec §4): one entity per name (``add`` refuses a name in use, and names an entry
without an id after its title), a relation triple is stored once, an entity's observations are
each stored once, deleting an entity deletes the relations from and to its name, and the file is
laid out as ``saveGraph`` writes it (:mod:`memcore_mcpmemory._render`).

Every write runs in memcore's write session (:meth:`~memcore.provider.BaseProvider.session`):
the store lock is held, the file is read once, and the whole file is replaced atomically when the
outermost session ends, unless it changed on disk meanwhile. The reference server has no lock
(two server processes lose each other's writes); memcore's writers cannot lose each other's.
Reading fails open (:mod:`memcore_mcpmemory._parse`); while a line is unreadable every write
raises :class:`~memcore.errors.ParseError` and the file is left as it is. An update that changes
nothing writes nothing.
"""

from __future__ import annotations

import contextlib
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import ConfigError, ConflictError, EntryNotFoundError, InvalidEntryError, ParseError
from memcore.models import Diagnostic, MemoryEntry, Query
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.storage import WriteSession, atomic_write, version_token
from memcore_mcpmemory._parse import Graph, Record, parse, read_record
from memcore_mcpmemory._render import render
from memcore_mcpmemory.codec import decode_entity, encode_entity, encode_relation, entity_ids, relation_of
from memcore_mcpmemory.mapping import FORMAT
from memcore_mcpmemory.validate import check

__all__ = ["McpMemoryProvider"]

#: Longest entity name made from an entry's body when it has no title (characters).
NAME_MAX = 60


@dataclass
class _View:
    """The entries of one :class:`Graph`, with the lookups the writers need.

    Attributes:
        entries: Every entry, in entity order.
        by_id: Entry id -> (its entity record, its entry).
        first: Entity name -> id of the first entity with that name (relation targets, owners).
        names: Entity id -> exact entity name.
        triples: Every relation ``(from, to, relationType)`` in the file.
        notes: Line -> why the ``memcore`` key of that entity was ignored.
        position: Entry id -> its index in ``entries``.
    """

    entries: list[MemoryEntry] = field(default_factory=list)
    by_id: dict[str, tuple[Record, MemoryEntry]] = field(default_factory=dict)
    first: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    triples: set[tuple[str, str, str]] = field(default_factory=set)
    notes: dict[int, str] = field(default_factory=dict)
    position: dict[str, int] = field(default_factory=dict)

    def put(self, record: Record, entry: MemoryEntry) -> None:
        """Set (or add, last) the entry of ``record``, whose id is ``entry.id``."""
        assert entry.id is not None
        if entry.id in self.position:
            self.entries[self.position[entry.id]] = entry
        else:
            self.position[entry.id] = len(self.entries)
            self.entries.append(entry)
        self.by_id[entry.id] = (record, entry)
        self.names[entry.id] = record.name


def _entry_of(record: Record, entry_id: str, owned: list[Record], view: _View) -> tuple[MemoryEntry, str | None]:
    entry, note = decode_entity(record, entry_id, owned, view.first)
    entry.version = version_token(record.text, *(r.text for r in owned))
    return entry, note


def build_view(graph: Graph) -> _View:
    """Return the entries of ``graph`` (entity order) and the writers' lookups."""
    view = _View()
    entities = graph.entities()
    ids = entity_ids(entities)
    owned: dict[str, list[Record]] = {}
    for rel in graph.relations():
        owned.setdefault(rel.name, []).append(rel)
        view.triples.add(rel.triple)
    for record, entry_id in zip(entities, ids, strict=True):
        view.first.setdefault(record.name, entry_id)
    for record, entry_id in zip(entities, ids, strict=True):
        mine = owned.get(record.name, []) if view.first[record.name] == entry_id else []
        entry, note = _entry_of(record, entry_id, mine, view)
        if note is not None:
            view.notes[record.number] = note
        view.put(record, entry)
    return view


@dataclass
class _State:
    """A graph and its view, computed once and extended by ``add`` (rebuilt after other changes)."""

    graph: Graph
    _view: _View | None = None

    def view(self) -> _View:
        if self._view is None:
            self._view = build_view(self.graph)
        return self._view

    def changed(self) -> None:
        self.graph.dirty = True
        self._view = None


class McpMemoryProvider(BaseProvider):
    """The MCP reference memory server's ``memory.jsonl``: entities, observations, relations.

    Args:
        location: Path of the ``.jsonl`` file (created empty by :meth:`init_store`).
        **options: Only memcore's own (``read_only``, ``index``).
    """

    format_name: ClassVar[str] = FORMAT
    option_names: ClassVar[frozenset[str] | None] = frozenset()
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        map(Capability, ["add", "update", "delete", "archive", "supersede", "graph", "concurrent", "batch"])
    )

    def __init__(self, location: str | Path, **options: Any) -> None:
        super().__init__(location, **options)
        self.path = Path(location)  #: the ``memory.jsonl`` file
        self._pending: _State | None = None  # the write session's copy of the file

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is a ``.jsonl``/``.json`` file whose first record is an entity or relation."""
        path = Path(path)
        if path.suffix not in (".jsonl", ".json") or not path.is_file():
            return False
        try:
            with open(path, "rb") as fh:
                head = fh.read(1 << 16)
        except OSError:
            return False
        graph = parse(head.split(b"\n", 1)[0], path.name)
        return bool(graph.records) and graph.records[0].type in ("entity", "relation")

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create an empty graph (a 0-byte file, as the server writes it) and its folder; leave one that exists."""
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            atomic_write(path, b"")

    def open(self) -> McpMemoryProvider:
        """Check that the store file exists and return ``self``.

        Raises:
            ConfigError: ``location`` is missing or not a file.
        """
        if not self.path.is_file():
            raise ConfigError(
                f"mcpmemory: {self.location} is not a file; "
                f"create it with `memcore init --store mcpmemory:{self.location}`"
            )
        super().open()
        return self

    # -- reading ----------------------------------------------------------------------
    def _state(self) -> _State:
        """Return the file as the caller sees it: inside a write session, with its writes."""
        if self._pending is not None and self.active_session() is not None:
            return self._pending
        try:
            raw, _ = self.storage.read(self.path.name)
        except OSError as exc:
            graph = Graph(raw=b"")
            graph.records.append(
                Record(
                    number=1,
                    text="",
                    type="bad",
                    problem=Diagnostic(path=self.path.name, code="mcpmemory.unreadable", message=f"cannot read: {exc}"),
                )
            )
            return _State(graph)
        return _State(parse(raw, self.path.name))

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield one entry per readable entity, in file order; unreadable lines are skipped."""
        entries = [entry.model_copy(deep=True) for entry in self._state().view().entries]
        yield from (query or Query()).apply(entries)

    def validate(self) -> list[Diagnostic]:
        """Report unreadable lines (errors) and what the server reads otherwise than memcore (warnings)."""
        state = self._state()
        return check(state.graph, self.path.name, state.view().notes)

    def read_all(self) -> StoreSnapshot:
        """Return every entry and the diagnostics from one read of the file."""
        state = self._state()
        view = state.view()
        entries = [entry.model_copy(deep=True) for entry in view.entries]
        return StoreSnapshot(entries, check(state.graph, self.path.name, view.notes))

    # -- writing ----------------------------------------------------------------------
    @contextlib.contextmanager
    def _editing(self, operation: str) -> Iterator[_State]:
        """Run one write in the write session on its copy of the file (read once per session).

        Raises:
            ParseError: The file has an unreadable line; nothing is written until it is fixed.
        """
        with self.session(operation) as session:
            if self._pending is None:
                graph = parse(session.read(self.path.name) or b"", self.path.name)
                if errors := graph.problems():
                    raise ParseError(
                        f"mcpmemory: {self.location} is left untouched: {errors[0]} ({len(errors)} unreadable "
                        "line(s)); fix or remove them, then write again",
                        path=self.location,
                        line=errors[0].line,
                    )
                self._pending = _State(graph)
            yield self._pending

    def _session_ending(self, session: WriteSession) -> None:
        """Stage the whole file once, when the outermost write session ends (only if a record changed)."""
        pending, self._pending = self._pending, None
        if pending is not None and pending.graph.dirty:
            data = render(pending.graph)
            if data != pending.graph.raw:
                session.write(self.path.name, data)

    def _choose_name(self, entry: MemoryEntry, view: _View) -> str:
        """Return a free entity name for an entry without id: its title, else its body's start, else its kind."""
        base = entry.title.strip()
        if not base:
            first = next((line.strip(" -") for line in entry.body.split("\n") if line.strip(" -")), "")
            base = first if len(first) <= NAME_MAX else first[:NAME_MAX].rsplit(" ", 1)[0] + "…"
        base = base or entry.kind.value
        name, n = base, 1
        while unicodedata.normalize("NFC", name) in view.by_id or name in view.first:
            n += 1
            name = f"{base} ({n})"
        return name

    def _relation_records(self, name: str, entry: MemoryEntry, view: _View) -> list[str]:
        """Return the relation lines ``entry`` has, written from entity ``name`` (each triple once)."""
        lines: dict[tuple[str, str, str], str] = {}
        for rel in entry.relations:
            to, relation_type = relation_of(rel, view.names)
            lines.setdefault((name, to, relation_type), encode_relation(name, to, relation_type))
        return list(lines.values())

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Add ``entry`` as a new entity after the others, and its relations after the others (spec §4).

        An entry with an id is the entity of that name; one without gets its title as the name
        (``Title (2)``… when taken; an untitled one the start of its body).

        Raises:
            ConflictError: An entity with that id or name exists (the server's ``create_entities``
                would skip it).
            ParseError: The file has an unreadable line (nothing is written).
        """
        entry = entry.model_copy()  # only its id is set here: the caller's entry stays as given
        with self._editing("add") as state:
            view = state.view()
            if entry.id is not None:
                exact = entry.extra.get(FORMAT, {}).get("name")
                name = exact if isinstance(exact, str) and unicodedata.normalize("NFC", exact) == entry.id else entry.id
                if entry.id in view.by_id or name in view.first:
                    raise ConflictError(f"mcpmemory: entity {name!r} already exists in {self.location}")
            else:
                name = self._choose_name(entry, view)
                entry.id = unicodedata.normalize("NFC", name)
            record = read_record(encode_entity(entry, name), self.path.name)
            rels = [read_record(text, self.path.name) for text in self._relation_records(name, entry, view)]
            rels = [r for r in rels if r.triple not in view.triples]  # create_relations skips a stored triple
            state.graph.records.append(record)
            state.graph.records.extend(rels)
            state.graph.dirty = True
            if name in view.first or any(name in (source, to) for source, to, _ in view.triples):
                state.changed()  # links to or from this name resolve now: read everything again
                return state.view().by_id[entry.id][1].model_copy(deep=True)
            view.first[name] = entry.id
            view.triples.update(r.triple for r in rels)
            stored, _ = _entry_of(record, entry.id, rels, view)
            view.put(record, stored)
            return stored.model_copy(deep=True)

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the entity of ``entry.id`` in place (its name never changes) and its relations.

        Relations still there keep their lines and places; removed ones go, new ones are added
        after the others. An entry equal to the stored one writes nothing.

        Raises:
            InvalidEntryError: ``entry`` has no id, or changes the relations of an entity whose
                name an earlier entity uses (relations from a name belong to its first entity).
            EntryNotFoundError: No entity with that id.
            ConflictError: ``expected_version`` is not the stored version.
            ParseError: The file has an unreadable line (nothing is written).
        """
        if entry.id is None:
            raise InvalidEntryError("mcpmemory: update needs an entry with an id")
        entry_id = entry.id  # ``entry`` is only read: no copy
        with self._editing("update") as state:
            view = state.view()
            record, current = self._find(view, entry_id)
            if expected_version is not None and expected_version != current.version:
                raise ConflictError(
                    f"mcpmemory: entity {record.name!r} changed since it was read "
                    f"(version {current.version}, expected {expected_version}); read it again"
                )
            if entry.content_dict() == current.content_dict():
                return current.model_copy(deep=True)
            name = record.name
            wanted = self._relation_records(name, entry, view)
            owner = view.first[name] == entry_id
            if not owner and wanted:
                raise InvalidEntryError(
                    f"mcpmemory: entity {entry_id!r} shares the name {name!r} with an earlier entity "
                    f"({view.first[name]!r}), which the relations from that name belong to; update that one"
                )
            new = read_record(encode_entity(entry, name), self.path.name)
            graph = state.graph
            graph.records[next(i for i, r in enumerate(graph.records) if r is record)] = new
            graph.dirty = True
            mine: list[Record] = []
            if owner:  # the name stays, so no other entry reads differently: only this one is read again
                self._relink(graph, name, [read_record(t, self.path.name) for t in wanted])
                mine = [r for r in graph.records if r.type == "relation" and r.name == name]
                view.triples = {r.triple for r in graph.relations()}
            stored, _ = _entry_of(new, entry_id, mine, view)
            view.put(new, stored)
            return stored.model_copy(deep=True)

    @staticmethod
    def _relink(graph: Graph, name: str, wanted: list[Record]) -> None:
        """Make the relations from ``name`` be ``wanted``: kept lines stay in place, new ones go last."""
        keep = {r.triple for r in wanted}
        seen: set[tuple[str, str, str]] = set()
        out = []
        for record in graph.records:
            if record.type == "relation" and record.name == name:
                if record.triple not in keep or record.triple in seen:
                    continue
                seen.add(record.triple)
            out.append(record)
        out.extend(r for r in wanted if r.triple not in seen)
        graph.records[:] = out

    @staticmethod
    def _find(view: _View, entry_id: str) -> tuple[Record, MemoryEntry]:
        found = view.by_id.get(entry_id)
        if found is None:
            raise EntryNotFoundError(f"mcpmemory: no entity {entry_id!r}")
        return found

    def delete(self, entry_id: str) -> None:
        """Remove the entity ``entry_id``; when no other entity has its name, the relations from and to it too.

        The reference server's ``delete_entities`` removes every relation whose ``from`` or
        ``to`` is the name (spec §4).

        Raises:
            EntryNotFoundError: No entity with that id.
            ParseError: The file has an unreadable line (nothing is written).
        """
        with self._editing("delete") as state:
            record, _ = self._find(state.view(), entry_id)
            graph = state.graph
            graph.records = [r for r in graph.records if r is not record]
            if not any(r.name == record.name for r in graph.entities()):
                graph.records = [r for r in graph.records if r.type != "relation" or record.name not in (r.name, r.to)]
            state.changed()
