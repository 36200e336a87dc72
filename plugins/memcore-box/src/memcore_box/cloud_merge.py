"""Three-way merge of Box-memory JSON files after a lost ``If-Match`` race (a 412).

On Box there is no cross-process lock: two writers that both read ``_index.json`` at etag ``e0``
and both upload a new version with ``If-Match: e0`` cannot both win. The loser re-reads the
winner's bytes (``theirs``) and merges them with its own new bytes (``ours``) against what it
last knew (``base``), then retries with the new etag. The merge is by entry id, so every entry
either writer added survives:

- an entry only ``ours`` changed (added, edited, deleted) takes ``ours``; otherwise ``theirs``;
- an entry ``ours`` deleted that ``theirs`` edited is kept (an edit beats a stale delete);
- other top-level keys: ``ours`` where ``ours`` changed the value, else ``theirs``; top-level
  lists (e.g. the rollup's ``child_indexes``) are merged as sets, keeping ``theirs``' order;
- the derived maps (``by_id``, ``by_slug``, ``by_wikilink``, ``by_kind``, ``by_tag``,
  ``by_status``, ``by_companion_for``), ``entry_count`` and ``updated_at`` are recomputed from
  the merged entries, exactly as the schema defines them (box-memory-schema.md, "Index file").

Other ``_*.json`` files (``_box-memory.json``) get the top-level key merge only.
"""

from __future__ import annotations

import json
from typing import Any

from memcore.errors import ConflictError

__all__ = ["INDEX_MAPS", "dump_like", "merge_json", "rebuild_maps"]

#: The index's derived maps, in the schema's order.
INDEX_MAPS = ("by_id", "by_slug", "by_wikilink", "by_kind", "by_tag", "by_status", "by_companion_for")


def _load(data: bytes | None, what: str) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConflictError(
            f"box+cloud: cannot merge {what}: it is not valid JSON ({exc}); refusing to overwrite it. "
            "Run `memcore reindex` to rebuild it"
        ) from exc
    if not isinstance(value, dict):
        raise ConflictError(f"box+cloud: cannot merge {what}: not a JSON object; run `memcore reindex`")
    return value


def rebuild_maps(index: dict[str, Any]) -> None:
    """Recompute ``entry_count`` and the maps of ``index`` (in place) from ``index["entries"]``.

    Only maps already present in ``index`` are rebuilt, so a reduced index stays reduced.
    Shapes: ``by_id`` {id: position}, ``by_slug`` {slug: id}, ``by_wikilink`` {title: id},
    ``by_kind``/``by_tag``/``by_status`` {key: [ids]}, ``by_companion_for`` {file_id: id}.
    """
    entries = [e for e in index.get("entries") or [] if isinstance(e, dict)]
    maps: dict[str, dict[str, Any]] = {name: {} for name in INDEX_MAPS}
    for pos, entry in enumerate(entries):
        eid = entry.get("id")
        if not isinstance(eid, str):
            continue
        maps["by_id"][eid] = pos
        if isinstance(entry.get("slug"), str):
            maps["by_slug"][entry["slug"]] = eid
        if isinstance(entry.get("title"), str):
            maps["by_wikilink"][entry["title"]] = eid
        for name, key in (("by_kind", "kind"), ("by_status", "status")):
            if isinstance(entry.get(key), str):
                maps[name].setdefault(entry[key], []).append(eid)
        for tag in entry.get("tags") or []:
            if isinstance(tag, str):
                maps["by_tag"].setdefault(tag, []).append(eid)
        if isinstance(entry.get("companion_for"), str):
            maps["by_companion_for"][entry["companion_for"]] = eid
    if "entry_count" in index:
        index["entry_count"] = len(entries)
    for name in INDEX_MAPS:
        if name in index:
            index[name] = maps[name]


def _merge_list(base: list[Any] | None, ours: list[Any], theirs: list[Any]) -> list[Any]:
    base = base or []
    removed = [x for x in base if x not in ours]
    out = [x for x in theirs if x not in removed]
    out += [x for x in ours if x not in out and x not in base]
    return out


def _merge_entries(base: list[Any] | None, ours: list[Any], theirs: list[Any]) -> list[Any]:
    def by_id(items: list[Any] | None) -> dict[str, Any]:
        return {e["id"]: e for e in items or [] if isinstance(e, dict) and isinstance(e.get("id"), str)}

    b, o, t = by_id(base), by_id(ours), by_id(theirs)
    out: list[Any] = []
    for eid, mine in ((eid, o.get(eid)) for eid in t):
        if mine is not None and (eid not in b or mine != b[eid]):
            out.append(mine)  # we added or changed it
        elif mine is None and eid in b and t[eid] == b[eid]:
            continue  # we deleted it and they did not touch it
        else:
            out.append(t[eid])
    seen = set(t)
    for eid, mine in o.items():
        if eid in seen:
            continue
        if eid in b and mine == b[eid]:
            continue  # they deleted it and we did not touch it
        out.append(mine)
    return out


def merge_json(base: bytes | None, ours: bytes, theirs: bytes, *, what: str, index: bool) -> bytes:
    """Return ``ours`` merged into ``theirs`` against ``base`` (see the module docstring).

    Args:
        base: The bytes the writer last knew (read or wrote), or ``None`` when it never saw the
            file (then nothing counts as deleted by either side).
        ours: The bytes the writer wants to write.
        theirs: The bytes now on Box.
        what: The file, for messages.
        index: Whether the file is an ``_index.json`` (entries merged by id, maps rebuilt).

    Returns:
        The merged file, serialised like ``ours`` (indent, trailing newline).

    Raises:
        ConflictError: ``ours`` or ``theirs`` is not a JSON object (never overwritten blindly).
    """
    b = _load(base, what) if base is not None else None
    o = _load(ours, what)
    t = _load(theirs, what)
    assert o is not None and t is not None
    merged: dict[str, Any] = {}
    for key in [*t, *(k for k in o if k not in t)]:
        if index and key == "entries":
            merged[key] = _merge_entries((b or {}).get(key), o.get(key) or [], t.get(key) or [])
            continue
        if key not in o:
            if b is not None and key in b:
                continue  # we removed the key
            merged[key] = t[key]
        elif key not in t:
            if b is not None and key in b and b[key] == o[key]:
                continue  # they removed the key
            merged[key] = o[key]
        elif isinstance(o[key], list) and isinstance(t[key], list):
            merged[key] = _merge_list((b or {}).get(key), o[key], t[key])
        elif b is not None and b.get(key) == o[key]:
            merged[key] = t[key]
        else:
            merged[key] = o[key]
    if index:
        stamps = [s for s in (o.get("updated_at"), t.get("updated_at")) if isinstance(s, str)]
        if stamps and "updated_at" in merged:
            merged["updated_at"] = max(stamps)
        rebuild_maps(merged)
    return dump_like(merged, ours)


def dump_like(value: Any, model: bytes) -> bytes:
    """Serialise ``value`` as JSON formatted like ``model`` (its indent and final newline)."""
    text = model.decode("utf-8-sig", errors="replace")
    indent: int | None = None
    if text.startswith("{\n"):
        second = text[2:].split("\n", 1)[0]
        indent = len(second) - len(second.lstrip(" ")) or 2
    out = json.dumps(value, indent=indent, ensure_ascii=False)
    if text.endswith("\n"):
        out += "\n"
    return out.encode("utf-8")
