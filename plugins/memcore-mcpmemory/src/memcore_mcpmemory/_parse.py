"""Bytes -> the knowledge graph as records: fail-open, every problem named with its line number.

The reader rules are the reference server's ``loadGraph`` (spec §3): the file is split on
``"\\n"`` only (``str.splitlines`` would also split on U+2028, U+2029, ``\\x85``…, which the
server writes raw inside strings), a trailing ``"\\r"`` is JSON whitespace, blank lines are
skipped, each other line is one JSON object. Unlike the server, one bad line does not make the
whole file unreadable: it becomes a record with a ``problem`` (an error), the rest reads, and
every writer refuses the file until it is fixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memcore.models import Diagnostic, Severity, unholdable
from memcore_mcpmemory.mapping import ENTITY_KEYS, LEGACY_KEYS, MEMCORE_KEY, RELATION_KEYS

__all__ = ["Graph", "Record", "parse", "read_record"]

_BOM = b"\xef\xbb\xbf"


@dataclass
class Record:
    """One non-blank line of the file.

    Attributes:
        number: 1-based line number (0: written in this session, not read).
        text: The line without its ``\\r\\n`` / ``\\n`` ending: an untouched record is written
            back as this exact text.
        type: ``"entity"``, ``"relation"``, ``"other"`` (a ``type`` the server ignores, or none)
            or ``"bad"`` (not readable: see ``problem``).
        name: Entity name, or a relation's ``from``.
        entity_type: An entity's ``entityType``.
        observations: An entity's ``observations``, in file order.
        to: A relation's ``to``.
        relation_type: A relation's ``relationType``.
        meta: An entity's ``memcore`` object (fields without a native slot), or ``None``.
        fields: Keys beyond the format's own and ``memcore`` (forks' ``createdAt``…), in order.
        problem: Why a ``"bad"`` record could not be read (an error diagnostic).
        notes: Warnings about a readable record (legacy keys, ignored types).
        used: The legacy keys read in place of the format's own (``from_id``…).
    """

    number: int
    text: str
    type: str
    name: str = ""
    entity_type: str = ""
    observations: list[str] = field(default_factory=list)
    to: str = ""
    relation_type: str = ""
    meta: dict[str, Any] | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    problem: Diagnostic | None = None
    notes: list[Diagnostic] = field(default_factory=list)
    used: set[str] = field(default_factory=set)  # legacy keys read in place of the format's own

    @property
    def triple(self) -> tuple[str, str, str]:
        """A relation's identity ``(from, to, relationType)`` (spec §4: exact string equality)."""
        return (self.name, self.to, self.relation_type)


@dataclass
class Graph:
    """The file as read.

    Attributes:
        raw: The file's bytes.
        records: Every non-blank line, in file order.
        crlf: Whether lines end in ``\\r\\n`` (kept on rewrite; the server reads both).
        bom: Whether the file starts with a UTF-8 BOM (the server cannot parse that line; a
            rewrite drops it).
        dirty: Whether a write of this session changed a record.
    """

    raw: bytes
    records: list[Record] = field(default_factory=list)
    crlf: bool = False
    bom: bool = False
    dirty: bool = False

    def entities(self) -> list[Record]:
        """Return the entity records, in file order."""
        return [r for r in self.records if r.type == "entity"]

    def relations(self) -> list[Record]:
        """Return the relation records, in file order."""
        return [r for r in self.records if r.type == "relation"]

    def problems(self) -> list[Diagnostic]:
        """Return every error, one per unreadable line."""
        return [r.problem for r in self.records if r.problem is not None]


def parse(raw: bytes, name: str) -> Graph:
    """Split ``raw`` into records and read each; never raises for a bad file.

    Args:
        raw: The file's bytes (empty: an empty graph, as the server reads a missing file).
        name: The file's name, for diagnostics.

    Returns:
        The :class:`Graph`; unreadable lines are records of type ``"bad"`` with a ``problem``.
    """
    graph = Graph(raw=raw, bom=raw.startswith(_BOM))
    for number, chunk in enumerate(raw.removeprefix(_BOM).split(b"\n"), start=1):
        if chunk.endswith(b"\r"):
            graph.crlf = graph.crlf or not graph.records
            chunk = chunk[:-1]
        if not chunk.strip():
            continue
        graph.records.append(_read_line(number, chunk, name))
    return graph


def read_record(text: str, name: str, number: int = 0) -> Record:
    """Return the record of one line of text (a line memcore just encoded: ``number`` 0)."""
    return _read_line(number, text.encode("utf-8"), name)


def _bad(number: int, text: str, name: str, message: str, column: int | None = None) -> Record:
    problem = Diagnostic(path=name, line=number, column=column, code="mcpmemory.syntax", message=message)
    return Record(number=number, text=text, type="bad", problem=problem)


def _refuse_constant(token: str) -> Any:
    """Refuse ``NaN`` / ``Infinity`` / ``-Infinity``: Python's ``json`` reads them, JSON (and the server) does not."""
    raise ValueError(f"{token} is not a JSON value")


def _read_line(number: int, chunk: bytes, name: str) -> Record:
    """Read one non-blank line into a record (``"bad"`` with a problem when it cannot be read)."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = chunk.decode("utf-8", errors="replace")
        return _bad(number, bad, name, "not UTF-8; re-save the file as UTF-8", exc.start + 1)
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        fix = "every line must be one JSON object; fix or remove this line (the reference server fails on it too)"
        return _bad(number, text, name, f"not JSON ({exc.msg}); {fix}", exc.colno)
    except RecursionError:
        return _bad(number, text, name, "JSON nested too deeply to read; fix or remove this line")
    except ValueError as exc:  # NaN/Infinity (not JSON), or an integer past Python's digit limit
        return _bad(number, text, name, f"not readable JSON ({exc}); fix or remove this line")
    unfit = unholdable(data, "the record")
    if unfit is not None:
        return _bad(number, text, name, f"{unfit}; fix or remove this line")
    if not isinstance(data, dict):
        return _bad(number, text, name, f"a JSON {type(data).__name__}, not an object; fix or remove this line")
    kind = data.get("type")
    if kind == "entity":
        return _entity(number, text, data, name)
    if kind == "relation":
        return _relation(number, text, data, name)
    note = Diagnostic(
        path=name,
        line=number,
        code="mcpmemory.ignored-record",
        severity=Severity.WARNING,
        message=f"record type {kind!r} is neither 'entity' nor 'relation': the reference server ignores it "
        "(memcore keeps the line as it is)",
    )
    return Record(number=number, text=text, type="other", notes=[note])


def _text_value(data: dict[str, Any], key: str, record: Record, name: str) -> str | None:
    """Return ``data[key]`` (or a legacy spelling of it, noted), or ``None`` when missing or not a string."""
    if key in data:
        value = data[key]
        return value if isinstance(value, str) else None
    for legacy in LEGACY_KEYS.get(key, ()):
        if isinstance(data.get(legacy), str):
            record.notes.append(
                Diagnostic(
                    path=name,
                    line=record.number,
                    code="mcpmemory.legacy-key",
                    severity=Severity.WARNING,
                    message=f"{legacy!r} read as {key!r} (basic-memory's importer does so); the reference server "
                    f"reads no {key!r} on this record: rename the key to {key!r}",
                )
            )
            record.used.add(legacy)
            return str(data[legacy])
    return None


def _entity(number: int, text: str, data: dict[str, Any], name: str) -> Record:
    record = Record(number=number, text=text, type="entity")
    entity_name = _text_value(data, "name", record, name)
    entity_type = data.get("entityType")
    observations = data.get("observations")
    meta = data.get(MEMCORE_KEY)
    wrong = [
        *(["'name'"] if entity_name is None else []),
        *(["'entityType'"] if not isinstance(entity_type, str) else []),
        *(
            ["'observations'"]
            if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations)
            else []
        ),
        *(["'memcore'"] if meta is not None and not isinstance(meta, dict) else []),
    ]
    if wrong:
        return _bad(
            number,
            text,
            name,
            f"entity record without a valid {', '.join(wrong)} (name and entityType are strings, observations a "
            "list of strings); the reference server fails on such a record once a tool touches it",
        )
    assert entity_name is not None and isinstance(entity_type, str) and isinstance(observations, list)
    record.name, record.entity_type, record.observations = entity_name, entity_type, list(observations)
    record.meta = meta
    skip = {*ENTITY_KEYS, MEMCORE_KEY, *record.used}
    record.fields = {k: v for k, v in data.items() if k not in skip}
    return record


def _relation(number: int, text: str, data: dict[str, Any], name: str) -> Record:
    record = Record(number=number, text=text, type="relation")
    values = [_text_value(data, key, record, name) for key in RELATION_KEYS[1:]]
    missing = [key for key, value in zip(RELATION_KEYS[1:], values, strict=True) if value is None]
    if missing:
        return _bad(
            number,
            text,
            name,
            f"relation record without a string {', '.join(map(repr, missing))}; fix or remove this line",
        )
    record.name, record.to, record.relation_type = (str(v) for v in values)
    return record
