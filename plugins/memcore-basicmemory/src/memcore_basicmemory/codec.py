"""Pure: a parsed basic-memory :class:`~memcore_basicmemory._parse.Note` <-> :class:`MemoryEntry`.

The mapping is the table in :mod:`memcore_basicmemory.mapping`. :func:`entry_from_note` reads;
:func:`fields_for` gives the frontmatter values and body text an entry is written as (the
provider's :mod:`._render` places them in a file, patching an existing one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from memcore.frontmatter import plain_text
from memcore.layout import read_layout
from memcore.mapping import format_utc, parse_iso_time
from memcore.models import Diagnostic, MemoryEntry, Relation, Severity, Status
from memcore_basicmemory._parse import Note, ParsedRelation, parse_body, parse_tags, problem, title_stem
from memcore_basicmemory.mapping import (
    DERIVED_EXTRA,
    FREE_KEY,
    KEY_ORDER,
    LAYOUT,
    NAMESPACE,
    RELATIONS_HEADING,
    kind_of_type,
    status_of,
)

__all__ = ["Resolver", "body_of", "entry_from_note", "fields_for", "format_time", "relations_of"]

#: ``(target text, note folder) -> entry id`` or ``None`` (unresolved).
Resolver = Callable[[str, str], "str | None"]

_RELATION_LINE = re.compile(r"- (?:\S+|\"[^\"]+\") \[\[[^\]]+\]\]\Z")


def format_time(moment: datetime, date_only: bool = False) -> str:
    """Write a UTC time as ``2026-01-15`` (date only) or ``2026-01-15T10:00:00.250Z`` (microseconds when set)."""
    if date_only:
        return moment.astimezone(UTC).date().isoformat()
    return format_utc(moment, milliseconds=bool(moment.microsecond) and not moment.microsecond % 1000)


def body_of(note: Note, free: dict[str, Any]) -> str:
    """Return the entry body of ``note``: after the separator line, less memcore's relation list."""
    body = note.body
    if note.state == "present" and body.startswith("\n"):
        body = body[1:]
    if free.get("relations_section") is True:
        cut = body.rfind(RELATIONS_HEADING + "\n")
        tail = body[cut:].split("\n")[1:] if cut >= 0 else []
        if cut >= 0 and (cut == 0 or body[:cut].endswith("\n\n")) and all(_RELATION_LINE.match(t) for t in tail if t):
            body = body[: max(cut - 2, 0)]
    return body


def relations_of(found: list[ParsedRelation], folder: str, resolve: Resolver) -> list[Relation]:
    """Return the relations ``found`` in a body, resolved to ids where a note answers, deduplicated."""
    out: list[Relation] = []
    seen: set[tuple[str, str, bool]] = set()
    for rel in found:
        target_id = resolve(rel.target, folder)
        key = (rel.type, target_id or rel.target, target_id is not None)
        if key not in seen:
            seen.add(key)
            out.append(Relation(type=key[0], target=key[1], resolved=key[2]))
    return out


def entry_from_note(note: Note, entry_id: str, resolve: Resolver, version: str) -> tuple[MemoryEntry, list[Diagnostic]]:
    """Return the entry of ``note`` (id ``entry_id``, relations through ``resolve``) and its value warnings."""
    problems: list[Diagnostic] = []
    fm = note.plain
    found = fm.get(FREE_KEY)
    free: dict[str, Any] = found if isinstance(found, dict) else {}
    meta = note.bm_metadata
    note_type = str(meta["type"])
    kind = kind_of_type(note_type)
    given = {"type": note_type != kind.value and note_type, "folder": note.folder, "frontmatter": note.state}
    own: dict[str, Any] = {k: v for k, v in given.items() if v and v != "present"}
    times: dict[str, tuple[datetime, bool]] = {}
    for key in ("created", "modified"):
        if key in fm and fm[key] is not None:
            parsed = parse_iso_time(fm[key])
            if parsed is None:
                problems.append(
                    _warn(note, key, f"{key}: {fm[key]!r} is not an ISO 8601 date or time; kept as metadata")
                )
            else:
                times[key] = parsed
    status = status_of(fm.get("status"))
    managed = {"title", "type", "permalink", "tags", FREE_KEY, *times, *(["status"] if status else [])}
    metadata = {k: v for k, v in fm.items() if k not in managed}
    if metadata:
        own["metadata"] = metadata
    if note.observations:
        own["observations"] = [o.as_dict() for o in note.observations]
    if any(r.context for r in note.relations):
        own["relations"] = [r.as_dict() for r in note.relations]
    left = free.get("own")
    if isinstance(left, dict):
        for key, value in left.items():
            if key == "metadata" and isinstance(value, dict) and isinstance(own.get("metadata"), dict):
                own["metadata"] = {**own["metadata"], **value}
            else:
                own[key] = value
    extra: dict[str, Any] = dict(free.get("extra") or {}) if isinstance(free.get("extra"), dict) else {}
    if own:
        extra[NAMESPACE] = own
    relations = relations_of(note.relations, note.folder, resolve)
    kept = [r for r in free.get("relations") or [] if isinstance(r, dict) and r.get("type") and r.get("target")]
    for rel in (Relation(type=str(r["type"]), target=str(r["target"]), resolved=r.get("resolved", True)) for r in kept):
        relations += [] if rel in relations else [rel]
    tags = free.get("tags") if isinstance(free.get("tags"), list) else meta.get("tags", [])
    created = times.get("created")
    modified = times.get("modified")
    values: dict[str, Any] = {
        "id": entry_id,
        "kind": kind,
        "title": str(free["title"]) if isinstance(free.get("title"), str) else str(meta["title"]),
        "body": body_of(note, free),
        "status": status or Status.ACTIVE,
        "tags": [str(t) for t in tags or []],
        "created_at": created[0] if created else None,
        "updated_at": modified[0] if modified else None,
        "date_only": bool(created and created[1]),
        "relations": relations,
        "extra": extra,
        "version": version,
    }
    for name in ("confidence", "source", "scope", "parent", "expires_at"):
        if free.get(name) is not None:
            values[name] = free[name]
    written = ["title", "type", "permalink", *(["tags"] if values["tags"] else []), *times]
    written += [*(["status"] if status not in (None, Status.ACTIVE) else []), *metadata, *([FREE_KEY] if free else [])]
    name = note.path.rpartition("/")[2]  # the file, when it is not the title's; the frontmatter's layout
    layout = {} if name == title_stem(values["title"], values["body"]) + ".md" else {"file": name}
    layout.update(read_layout(note.yaml_text, note.plain, written) if note.state == "present" else {})
    if layout:
        extra[NAMESPACE] = {**extra.get(NAMESPACE, {}), LAYOUT: layout}
    try:
        return MemoryEntry(**values), problems
    except ValueError as exc:
        problems.append(_warn(note, FREE_KEY, f"the memcore: values do not read ({exc}); left out"))
        for name in ("confidence", "source", "scope", "parent", "expires_at"):
            values.pop(name, None)
        return MemoryEntry(**values), problems


def _warn(note: Note, key: str, message: str) -> Diagnostic:
    return problem(note.path, note.key_line(key), "value", message, Severity.WARNING)


def _native_key(key: Any, value: Any, meta: dict[str, Any]) -> bool:
    """Whether a metadata key can be a frontmatter key of its own: reads back as metadata, as itself."""
    return isinstance(key, str) and bool(key) and key not in meta and key not in KEY_ORDER and key != FREE_KEY


def _quoted_type(rel_type: str) -> str | None:
    if not any(c.isspace() for c in rel_type):
        return rel_type
    return None if '"' in rel_type else f'"{rel_type}"'


def fields_for(
    entry: MemoryEntry, *, title_fallback: str, folder: str, resolve: Resolver
) -> tuple[dict[str, Any], str]:
    """Return the frontmatter values (:data:`KEY_ORDER`, metadata, ``memcore:``) and body text of ``entry``.

    Relations the body does not already spell are appended as a ``## Relations`` list when a
    ``- type [[target]]`` line reads back as the same relation, else kept in ``memcore.relations``.

    ``title_fallback`` is the ``title:`` of an entry with an empty title (its file stem); ``folder``
    the note's folder; ``resolve`` maps target text to ids over the store as it will be.
    """
    own = entry.extra.get(NAMESPACE, {})
    free: dict[str, Any] = {}
    left: dict[str, Any] = {k: v for k, v in own.items() if k not in DERIVED_EXTRA | {"type", "folder", "metadata"}}
    note_type = own.get("type")
    if "type" in own and (not isinstance(note_type, str) or not note_type or kind_of_type(note_type) != entry.kind):
        left["type"] = note_type
    if not isinstance(note_type, str) or not note_type or kind_of_type(note_type) != entry.kind:
        note_type = entry.kind.value
    if "folder" in own and own["folder"] != folder:
        left["folder"] = own["folder"]
    meta: dict[str, Any] = {"title": entry.title or title_fallback, "type": note_type, "permalink": entry.id}
    if not entry.title:
        free["title"] = entry.title
    if entry.tags:
        spelled = parse_tags(list(entry.tags))
        meta["tags"] = spelled
        if spelled != list(entry.tags):
            free["tags"] = list(entry.tags)
    if entry.created_at is not None:
        meta["created"] = plain_text(format_time(entry.created_at, entry.date_only))
    if entry.updated_at is not None:
        meta["modified"] = plain_text(format_time(entry.updated_at))
    if entry.status != Status.ACTIVE:
        meta["status"] = entry.status.value
    metadata = own.get("metadata")
    if "metadata" in own and not isinstance(metadata, dict):
        left["metadata"] = metadata
    elif isinstance(metadata, dict):
        aside = {k: v for k, v in metadata.items() if not _native_key(k, v, meta)}
        meta.update({k: v for k, v in metadata.items() if k not in aside})
        if aside:
            left["metadata"] = aside
    if left:
        free["own"] = left
    for name in ("confidence", "source", "scope", "parent"):
        if getattr(entry, name) is not None:
            free[name] = getattr(entry, name)
    if entry.expires_at is not None:
        free["expires_at"] = format_time(entry.expires_at)
    others = {ns: values for ns, values in entry.extra.items() if ns not in (NAMESPACE, "memcore")}
    if "memcore" in entry.extra:
        others["memcore"] = entry.extra["memcore"]
    if others:
        free["extra"] = others
    _, in_body = parse_body(entry.body)
    have = set((r.type, r.target, r.resolved) for r in relations_of(in_body, folder, resolve))
    lines: list[str] = []
    kept: list[dict[str, Any]] = []
    for rel in entry.relations:
        if (rel.type, rel.target, rel.resolved) in have:
            continue
        have.add((rel.type, rel.target, rel.resolved))
        spelled_type = _quoted_type(rel.type)
        line = f"- {spelled_type} [[{rel.target}]]" if spelled_type else ""
        back = parse_body(line)[1] if line else []
        answer = resolve(rel.target, folder)
        ok = (
            len(back) == 1
            and back[0].explicit
            and (back[0].type, back[0].target) == (rel.type, rel.target)
            and (answer in (None, rel.target) if rel.resolved else answer is None)
        )
        if ok:
            lines.append(line)
        else:
            kept.append({"type": rel.type, "target": rel.target, "resolved": rel.resolved})
    body = entry.body
    if lines:
        free["relations_section"] = True
        section = RELATIONS_HEADING + "\n" + "".join(line + "\n" for line in lines)
        body = f"{body}\n\n{section}" if body else section
    if kept:
        free["relations"] = kept
    if free:
        meta[FREE_KEY] = free
    return meta, body
