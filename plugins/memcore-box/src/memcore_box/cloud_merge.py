"""Three-way merge of Box-memory JSON files after a lost ``If-Match`` race (a 412).

On Box there is no cross-process lock: two writers that both read ``_index.json`` at etag ``e0``
and both upload a new version with ``If-Match: e0`` cannot both win. The loser re-reads the
winner's bytes (``theirs``) and merges them with its own new bytes (``ours``) against what it
last knew (``base``), then retries with the new etag. The merge is by entry id, so every entry
either writer added survives:

- an entry only ``ours`` changed (added, edited, deleted) takes ``ours``; otherwise ``theirs``;
- an entry ``ours`` deleted that ``theirs`` edited is kept (an edit beats a stale delete);
- other keys: ``ours`` where ``ours`` changed the value, else ``theirs``; nested objects are
  merged the same way, key by key; lists (the rollup's ``child_indexes``, the tombstones in
  ``_box-memory.json``) are merged as sets, keeping ``theirs``' order;
- the derived maps (``by_id``, ``by_slug``, ``by_wikilink``, ``by_kind``, ``by_tag``,
  ``by_status``, ``by_companion_for``), ``entry_count`` and ``updated_at`` are recomputed from
  the merged entries, exactly as the schema defines them (box-memory-schema.md, "Index file").

Other ``_*.json`` files (``_box-memory.json``) get the key-by-key merge only.
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

    Uses the provider's own map builder (:mod:`memcore_box.index`), so a merged index is
    byte-for-byte what the provider would have written for those entries. Only maps already
    present in ``index`` are replaced, so a reduced index stays reduced.
    """
    from memcore_box.index import _maps

    entries = [e for e in index.get("entries") or [] if isinstance(e, dict) and isinstance(e.get("id"), str)]
    maps = _maps(entries)
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


def _merge_dict(
    b: dict[str, Any] | None, o: dict[str, Any], t: dict[str, Any], *, entries: bool = False
) -> dict[str, Any]:
    """Merge objects key by key; nested objects recursively, lists as sets."""
    merged: dict[str, Any] = {}
    for key in [*t, *(k for k in o if k not in t)]:
        if entries and key == "entries":
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
        elif isinstance(o[key], dict) and isinstance(t[key], dict):
            base = (b or {}).get(key)
            merged[key] = _merge_dict(base if isinstance(base, dict) else None, o[key], t[key])
        elif isinstance(o[key], list) and isinstance(t[key], list):
            base = (b or {}).get(key)
            merged[key] = _merge_list(base if isinstance(base, list) else None, o[key], t[key])
        elif b is not None and b.get(key) == o[key]:
            merged[key] = t[key]
        else:
            merged[key] = o[key]
    return merged


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
    merged = _merge_dict(b, o, t, entries=index)
    if index:
        stamps = [s for s in (o.get("updated_at"), t.get("updated_at")) if isinstance(s, str)]
        if stamps and "updated_at" in merged:
            merged["updated_at"] = max(stamps)
        rebuild_maps(merged)
    return dump_like(merged, ours)


def dump_like(value: Any, model: bytes) -> bytes:
    """Serialise ``value`` as JSON the way ``model`` was written.

    Box-memory's own writer (:func:`memcore_box._json.dumps_json`) when ``model`` looks like
    its output (starts with ``{`` and a newline), else compact JSON, with ``model``'s final
    newline kept or left out.
    """
    from memcore_box._json import dumps_json

    text = model.decode("utf-8-sig", errors="replace")
    if text.startswith("{\n"):
        out = dumps_json(value)
        return out if text.endswith("\n") or not out.endswith(b"\n") else out[:-1]
    compact = json.dumps(value, ensure_ascii=False)
    return (compact + ("\n" if text.endswith("\n") else "")).encode("utf-8")
