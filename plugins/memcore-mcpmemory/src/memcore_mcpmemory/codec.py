"""The codec (pure): entity and relation records <-> :class:`~memcore.models.MemoryEntry`.

The table is :mod:`memcore_mcpmemory.mapping`. Observations become the body as a markdown list,
one item per observation (:func:`render_observations`); a body in exactly that form goes back
as its items (:func:`observations_of`), any other body as one observation per paragraph, its
exact text kept in the record's ``memcore`` key. What has no native slot is kept there too
(:func:`meta_for`); a kept value is applied on read only while the native values it was written
beside are unchanged, so an edit by the reference server (an ``add_observations``) wins over it.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from pydantic import ValidationError

from memcore.models import MemoryEntry, Relation
from memcore_mcpmemory._parse import Record
from memcore_mcpmemory.mapping import ENTITY_KEYS, FORMAT, MEMCORE_KEY, kind_for_entity_type

__all__ = [
    "decode_entity",
    "encode_entity",
    "encode_relation",
    "entity_ids",
    "entity_type_for",
    "meta_for",
    "observations_of",
    "relation_of",
    "render_observations",
]

#: ``extra["mcpmemory"]`` keys the codec reads and writes itself (never kept in ``memcore``).
_OWN_KEYS = frozenset({"entityType", "name", "fields"})
#: Fields without a native slot: compared with a blank entry's to decide what ``memcore`` keeps.
_KEPT_FIELDS = tuple(
    name
    for name in MemoryEntry.model_fields
    if name not in {"id", "kind", "title", "body", "relations", "extra", "version"}
)
_BLANK = MemoryEntry().content_dict()


def render_observations(observations: list[str]) -> str:
    """Return the body for ``observations``: ``- text\\n`` per item, later lines indented two spaces.

    An empty observation is ``-\\n``; no observations is the empty body.
    """
    out = []
    for text in observations:
        first, *rest = text.split("\n")
        out.append(f"- {first}\n" if first else "-\n")
        out.extend(f"  {line}\n" for line in rest)
    return "".join(out)


def _list_items(body: str) -> list[str] | None:
    """Return the items of a body in :func:`render_observations`' form, or ``None``."""
    if not body.endswith("\n"):
        return None
    items: list[list[str]] = []
    for line in body[:-1].split("\n"):
        if line == "-" or line.startswith("- "):
            items.append([line[2:]])
        elif line.startswith("  ") and items:
            items[-1].append(line[2:])
        else:
            return None
    observations = ["\n".join(lines) for lines in items]
    return observations if render_observations(observations) == body else None


def observations_of(body: str) -> tuple[list[str], bool]:
    """Return ``(observations, exact)`` for a body.

    A body in :func:`render_observations`' form gives its items (the first of repeated items
    only: the server's ``add_observations`` adds a text an entity has once); ``exact`` tells
    whether rendering them gives the body back. Any other body gives one observation per
    paragraph (blank-line separated, hard-wrapped lines joined by a space), ``exact`` false.
    """
    items = _list_items(body) if body else []
    if items is None:
        paragraphs = [" ".join(line.strip() for line in p.strip().split("\n")) for p in body.split("\n\n")]
        items = [p for p in paragraphs if p]
        return list(dict.fromkeys(items)), False
    unique = list(dict.fromkeys(items))
    return unique, len(unique) == len(items)


def entity_ids(records: list[Record]) -> list[str]:
    """Return the memcore id of each entity record: its name, ``<name>#2``… for a name used before.

    Ids are NFC (memcore's rule), so two names that differ only in Unicode normalisation get
    ``x`` and ``x#2``; a name that cannot be an id (empty, or holding NUL) gets ``#1``, ``#2``….
    """
    used: set[str] = set()
    out = []
    for record in records:
        base = unicodedata.normalize("NFC", record.name) if record.name and "\x00" not in record.name else ""
        candidate = base
        if not base or base in used:
            n = 2 if base else 1
            while f"{base}#{n}" in used:
                n += 1
            candidate = f"{base}#{n}"
        used.add(candidate)
        out.append(candidate)
    return out


def entity_type_for(entry: MemoryEntry) -> str:
    """Return the ``entityType`` to write: the one read in, unless the entry's kind was changed since."""
    read = entry.extra.get(FORMAT, {}).get("entityType")
    if isinstance(read, str) and kind_for_entity_type(read) is entry.kind:
        return read
    return entry.kind.value


def decode_entity(
    record: Record, entry_id: str, relations: list[Record], id_of_name: dict[str, str]
) -> tuple[MemoryEntry, str | None]:
    """Return the entry of one entity record and a note when its ``memcore`` key was not usable.

    Args:
        record: The entity record.
        entry_id: Its id (:func:`entity_ids`).
        relations: The relation records whose ``from`` is this entity, in file order.
        id_of_name: Entity name -> id of the first entity with that name (relation targets).

    Returns:
        ``(entry, note)``; ``note`` says why the ``memcore`` key was ignored, else ``None``.
    """
    ns: dict[str, Any] = {"entityType": record.entity_type}
    if record.name != entry_id:
        ns["name"] = record.name
    if record.fields:
        ns["fields"] = dict(record.fields)
    seen: set[tuple[str, str]] = set()
    links = []
    for rel in relations:
        key = (rel.relation_type, rel.to)
        if key in seen or not rel.relation_type or not rel.to:
            continue
        seen.add(key)
        target = id_of_name.get(rel.to)
        links.append({"type": rel.relation_type, "target": target or rel.to, "resolved": target is not None})
    data: dict[str, Any] = {
        "id": entry_id,
        "kind": kind_for_entity_type(record.entity_type).value,
        "title": record.name,
        "body": render_observations(record.observations),
        "relations": links,
        "extra": {FORMAT: ns},
    }
    base = MemoryEntry.model_validate(data)
    meta = record.meta
    if not meta:
        return base, None
    kept = {k: v for k, v in meta.items() if k in (*_KEPT_FIELDS, "title")}
    body = meta.get("body")
    if isinstance(body, str) and observations_of(body)[0] == record.observations:
        kept["body"] = body  # else: the observations changed since memcore wrote them
    extra = meta.get("extra")
    if isinstance(extra, dict):
        merged = {k: v for k, v in extra.items() if isinstance(v, dict)}
        merged[FORMAT] = {**merged.get(FORMAT, {}), **ns}
        kept["extra"] = merged
    try:
        return MemoryEntry.model_validate({**data, **kept}), None
    except ValidationError as exc:
        return base, f"the 'memcore' key holds a value memcore cannot use ({exc.errors()[0]['msg']}); it is ignored"


def meta_for(entry: MemoryEntry, name: str) -> dict[str, Any]:
    """Return what the ``memcore`` key must keep for ``entry`` written as entity ``name`` (maybe nothing)."""
    data = entry.content_dict()
    meta: dict[str, Any] = {}
    if entry.title != name:
        meta["title"] = entry.title
    if not observations_of(entry.body)[1]:
        meta["body"] = entry.body
    for key in _KEPT_FIELDS:
        if data[key] != _BLANK[key]:
            meta[key] = data[key]
    extra = {ns: dict(values) for ns, values in data["extra"].items()}
    own = {k: v for k, v in extra.pop(FORMAT, {}).items() if k not in _OWN_KEYS}
    if own:
        extra[FORMAT] = own
    if extra:
        meta["extra"] = extra
    return meta


def encode_entity(entry: MemoryEntry, name: str) -> str:
    """Return the entity record line for ``entry`` written as entity ``name`` (no newline).

    Compact JSON with the server's key order (spec §2: ``JSON.stringify``, non-ASCII and
    U+2028/U+2029 raw); a fork's extra keys read in are written after the native ones, then
    ``memcore`` when something has no native slot.
    """
    fields = entry.extra.get(FORMAT, {}).get("fields")
    record: dict[str, Any] = {
        "type": "entity",
        "name": name,
        "entityType": entity_type_for(entry),
        "observations": observations_of(entry.body)[0],
    }
    if isinstance(fields, dict):
        record.update({k: v for k, v in fields.items() if k not in ENTITY_KEYS and k != MEMCORE_KEY})
    meta = meta_for(entry, name)
    if meta:
        record[MEMCORE_KEY] = meta
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_relation(source: str, target: str, relation_type: str) -> str:
    """Return the relation record line ``{"type":"relation","from":…,"to":…,"relationType":…}``."""
    record = {"type": "relation", "from": source, "to": target, "relationType": relation_type}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def relation_of(rel: Relation, name_of_id: dict[str, str]) -> tuple[str, str]:
    """Return ``(to, relationType)`` for a memcore relation: a resolved target's entity name, else its text."""
    return (name_of_id.get(rel.target, rel.target) if rel.resolved else rel.target), rel.type
