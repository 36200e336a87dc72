"""Compare what a reference reader shows with what memcore reads back, field by field.

:func:`compare_store` reads a store twice: with memcore (read-only, the entries every caller
sees) and with the format's reference reader (:mod:`.whitebox`, :mod:`.maka`,
:mod:`.rightmemory`, :mod:`.box`). Each memcore entry is matched to the reference record with
its id and each field the format holds is put in the format's own terms on both sides (a
confidence as WhiteBox's label, a time as Maka's milliseconds, a relation as a RightMemory edge);
a field memcore leaves unset agrees with the reference's default (Maka's ``workspace`` scope, a
missing Box ``team``). An entry the reference does not read at all disagrees on every field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memcore.models import MemoryEntry
from memcore.registry import get_registry
from reference_readers import box, maka, rightmemory, whitebox


@dataclass(frozen=True)
class Row:
    """One field of one entry: what memcore reads back and what the reference reader shows."""

    entry: str
    field: str
    memcore: Any
    reference: Any

    @property
    def agrees(self) -> bool:
        """Both sides are the same value."""
        return bool(self.memcore == self.reference)


_Fields = Callable[[MemoryEntry], Iterator[tuple[str, Any, Any]]]


def _instant(value: object) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _body(value: str | None) -> str:
    return (value or "").strip()


# --- WhiteBox ---------------------------------------------------------------------------------

_LABELS = {0.1: "very-low", 0.3: "low", 0.5: "medium", 0.7: "high", 0.9: "very-high"}
_V11 = ("source_ref", "context")


def _wb_kind(rel: str) -> str:
    """The entry type WhiteBox's layers give a file (spec v1.0 / v1.1)."""
    top = rel.split("/", 1)[0] if "/" in rel else ""
    if top == "observations":
        return "observation"
    if top in ("", "relationships", "projects", "sensitive"):
        return "fact"
    return {"proposed": "proposal", "sources": "reference"}.get(top, "note")


def _wb_label(confidence: float | None, default: str | None) -> str | None:
    return default if confidence is None else _LABELS.get(round(confidence, 3), repr(confidence))


def whitebox_fields(root: Path) -> _Fields:
    """Fields of a vault's entries: observations by ``observation-parser.ts``, stable files by their frontmatter."""
    cache: dict[str, list[whitebox.Observation]] = {}

    def fields(entry: MemoryEntry) -> Iterator[tuple[str, Any, Any]]:
        rel, sep, number = (entry.id or "").rpartition("#")
        wb = entry.extra.get("whitebox", {})
        if sep and number.isdigit():
            if rel not in cache:
                cache[rel] = whitebox.parse_observations((root / rel).read_text(encoding="utf-8"))
            found = cache[rel]
            obs = found[int(number) - 1] if int(number) <= len(found) else None
            if obs is None:
                yield "*", entry.id, None
                return
            yield "kind", entry.kind.value, _wb_kind(rel)
            yield "body", _body(entry.body), obs.body
            yield "source", entry.source, obs.fields.get("source")
            yield "tags", entry.tags, obs.tags
            yield "confidence", _wb_label(entry.confidence, "medium"), obs.fields.get("confidence")
            day = entry.created_at.date().isoformat() if entry.created_at is not None else None
            yield "created_at", day, obs.fields.get("date")
            yield "extra.whitebox.kind", wb.get("kind"), obs.kind
            for key in _V11:
                yield f"extra.whitebox.{key}", wb.get(key), obs.fields.get(key)
            return
        path = root / (entry.id or "")
        if not path.is_file():
            yield "*", entry.id, None
            return
        front, body = whitebox.parse_stable(path.read_text(encoding="utf-8"))
        yield "kind", entry.kind.value, _wb_kind(entry.id or "")
        yield "title", entry.title, front.get("title", entry.title)  # a title: key is what a reader shows
        yield "body", _body(entry.body), _body(body)
        yield "source", entry.source, front.get("source")
        yield "tags", entry.tags, list(front.get("tags") or [])
        yield "confidence", _wb_label(entry.confidence, None), front.get("confidence")
        yield "status", entry.status.value, front.get("status", "active")
        yield "scope", entry.scope, front.get("scope", entry.scope)  # no scope: key, the vault's active scope

    return fields


# --- Maka ---------------------------------------------------------------------------------------


def _ms(value: datetime | None) -> float | None:
    return None if value is None else round(value.timestamp() * 1000, 3)


def maka_fields(path: Path) -> tuple[_Fields, set[str]]:
    """Fields of a memory file's entries as ``local-memory.ts`` shows them, and the ids it shows."""
    shown = {e.id: e for e in maka.parse(path.read_text(encoding="utf-8"))}

    def fields(entry: MemoryEntry) -> Iterator[tuple[str, Any, Any]]:
        found = shown.get(entry.id or "")
        if found is None:
            yield "*", entry.id, None
            return
        yield "title", entry.title, found.title
        yield "body", _body(entry.body), found.content
        yield "tags", entry.tags, found.tags
        yield "source", entry.source, found.origin
        yield "status", entry.status.value, found.status
        yield "scope", entry.scope or "workspace", found.scope
        yield "created_at", _ms(entry.created_at), found.time("createdAt")
        yield "updated_at", _ms(entry.updated_at), found.time("updatedAt")

    return fields, set(shown)


# --- RightMemory ----------------------------------------------------------------------------------


def _rm_kind(item: rightmemory.Item) -> str:
    if item.module == "pursuit":
        return "pursuit"
    return {"S#": "skill", "M#": "reference", "MF#": "reference", "MQ#": "reference"}.get(item.marker, "fact")


def rightmemory_fields(root: Path) -> _Fields:
    """Fields of a graph's items as ``graph.py`` reads them."""
    items = {i.id: i for i in rightmemory.parse_graph(root)}

    def fields(entry: MemoryEntry) -> Iterator[tuple[str, Any, Any]]:
        item = items.get(entry.id or "")
        if item is None:
            yield "*", entry.id, None
            return
        yield "kind", entry.kind.value, _rm_kind(item)
        yield "title", entry.title.strip(), item.title
        yield "body", _body(entry.body), _body(item.body)
        yield "parent", entry.parent, item.parent
        yield "relations", [(r.type, r.target) for r in entry.relations], item.edges

    return fields


# --- Box-memory -----------------------------------------------------------------------------------

_BOX_RELATIONS = ("related", "supersedes", "superseded_by")


def _box_relations(memory: box.BoxMemory) -> list[tuple[str, str]]:
    out = [("related", target) for target in memory.related]
    supersedes = memory.frontmatter.get("supersedes") or []
    out += [("supersedes", str(t)) for t in (supersedes if isinstance(supersedes, list) else [supersedes])]
    if memory.frontmatter.get("superseded_by"):
        out.append(("superseded_by", str(memory.frontmatter["superseded_by"])))
    return sorted(out)


def box_fields(root: Path) -> _Fields:
    """Fields of a workspace's memories as the schema reads them."""
    memories = {str(m.frontmatter["id"]): m for m in box.read_workspace(root)}

    def fields(entry: MemoryEntry) -> Iterator[tuple[str, Any, Any]]:
        memory = memories.get(entry.id or "")
        if memory is None:
            yield "*", entry.id, None
            return
        fm = memory.frontmatter
        yield "title", entry.title, fm.get("title")
        yield "kind", entry.kind.value, fm.get("kind")
        yield "status", entry.status.value, fm.get("status")
        yield "body", _body(entry.body), _body(memory.body)
        yield "tags", entry.tags, [str(t) for t in fm.get("tags") or []]
        yield "source", entry.source, fm.get("agent")
        yield "confidence", entry.confidence, fm.get("confidence")
        # the schema's default team is what an unscoped entry means in a workspace
        yield "scope", entry.scope, fm.get("team", entry.scope if entry.scope in (None, "default") else None)
        if entry.parent is not None:
            yield "parent", entry.parent, None  # not a schema field: kept under memcore.parent
        for name in ("created_at", "updated_at", "expires_at"):
            yield name, getattr(entry, name), _instant(fm.get(name))
        yield "relations", sorted((r.type, r.target) for r in entry.relations), _box_relations(memory)

    return fields


# --- what each format has a place for ------------------------------------------------------------

#: Entry kinds each format's own files give. WhiteBox: its two entry types (observation, stable
#: fact) and the layers of its v1.1 reader (``proposed/``, ``sources/``); memcore's ``note`` for a
#: file in another folder is no WhiteBox type. Box-memory: the schema's ``kind`` enum.
#: RightMemory: a Memory or Pursuit item; ``skill`` and ``reference`` are its typed headings
#: (``S#``, ``M#``, ``MF#``, ``MQ#``), each of which needs its backing resource, so only an item
#: that has one holds them (:func:`native`). Maka has no kind field.
FORMAT_KINDS: dict[str, frozenset[str]] = {
    "whitebox": frozenset({"observation", "fact", "proposal", "reference"}),
    "box": frozenset({"decision", "fact", "task", "observation", "reference", "note", "companion"}),
    "rightmemory": frozenset({"fact", "pursuit"}),
}
_RM_TYPED = frozenset({"skill", "reference"})

#: Relation types each format's own files have a place for: Box-memory's ``related``,
#: ``supersedes`` and ``superseded_by`` keys; RightMemory's fifteen edge types (schema "Edge Types").
FORMAT_RELATIONS: dict[str, frozenset[str]] = {
    "box": frozenset(_BOX_RELATIONS),
    "rightmemory": frozenset(rightmemory.EDGE_TYPES),
}


def native(fmt: str, entry: MemoryEntry, row: Row) -> Row | None:
    """``row`` restricted to what the format's own files have a place for, or ``None`` when nothing is.

    A value outside the format's vocabulary (a kind it has no kind for, a Maka source that is
    not an origin, a status outside Maka's five, tags ``parseTags`` would rewrite, an empty
    title where the format's reader shows a placeholder, a RightMemory skill or reference kind on an
    item written as a plain heading, with no backing resource) cannot be read back by the format's
    own reader whatever memcore writes: memcore keeps it in its own metadata and the migration
    report lists it per entry and field. Relations keep the types the format has.
    """
    value = row.memcore
    if row.field == "kind" and fmt == "rightmemory" and value in _RM_TYPED:
        info = entry.extra.get("rightmemory", {})
        return row if isinstance(info, dict) and info.get("marker", "#") not in ("#", "F#") else None
    if row.field == "kind" and fmt in FORMAT_KINDS:
        return row if value in FORMAT_KINDS[fmt] else None
    if row.field == "relations" and fmt in FORMAT_RELATIONS:
        held = [pair for pair in value if pair[0] in FORMAT_RELATIONS[fmt]]
        return row if held == value else Row(row.entry, row.field, held, row.reference)
    if row.field == "title" and fmt in ("box", "maka"):
        return row if value else None
    if fmt == "maka":
        if row.field == "source":
            return row if value in maka.ORIGINS else None
        if row.field == "status":
            return row if value in maka.STATUSES else None
        if row.field == "tags":
            return row if maka.parse_tags(",".join(value)) == value else None
    return row


# --- all formats ------------------------------------------------------------------------------------


def compare_store(fmt: str, location: str) -> list[tuple[Row, Row | None]]:
    """Return one :class:`Row` per field of every entry memcore reads from the store at ``location``.

    Each row comes with its :func:`native` restriction (``None``: the format has no place for
    the value memcore holds).

    Args:
        fmt: ``whitebox``, ``box``, ``rightmemory`` or ``maka``.
        location: The store (a folder; Maka: its MEMORY.md).

    Raises:
        ValueError: For another format.
    """
    path = Path(location)
    shown: set[str] | None = None
    if fmt == "whitebox":
        fields = whitebox_fields(path)
    elif fmt == "maka":
        fields, shown = maka_fields(path)
    elif fmt == "rightmemory":
        fields = rightmemory_fields(path)
    elif fmt == "box":
        fields = box_fields(path)
    else:
        raise ValueError(f"no reference reader for format {fmt!r}")
    with get_registry().get(fmt)(location, read_only=True) as store:
        entries = [e for e in store.iter_entries() if fmt != "rightmemory" or e.kind.value != "correction"]
    rows: list[tuple[Row, Row | None]] = []
    for entry in entries:
        for name, mine, theirs in fields(entry):
            row = Row(entry.id or "", name, mine, theirs)
            rows.append((row, native(fmt, entry, row)))
    if shown is not None:  # an entry Maka shows that memcore does not read
        read = {e.id for e in entries}
        rows += [(row, row) for row in (Row(i, "*", None, i) for i in sorted(shown - read))]
    return rows
