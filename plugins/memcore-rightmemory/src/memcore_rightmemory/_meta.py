"""The ``<!-- memcore: {...} -->`` comment: MemoryEntry fields RightMemory has no slot for.

RightMemory has no place for status, tags, source, timestamps, scope, expiry, non-graph
relations or other formats' ``extra``. memcore keeps them, only when they differ from what the
item itself says, as one compact JSON object in an HTML comment on the line right after the
heading line or node line (indented to the node's content column, so it stays inside the list
item). RightMemory's reference parser reads that line as ordinary text and reports nothing;
markdown-it renders nothing for it. ``-->`` inside JSON strings is written ``--\\u003e``.

Keys: ``kind``, ``status``, ``tags``, ``confidence``, ``source``, ``created_at``, ``updated_at``,
``date_only``, ``scope``, ``expires_at`` (ISO-8601 UTC with ``Z``), ``relations`` (list of
``[type, target]`` or ``[type, target, false]`` for relations that are not RightMemory edges),
``extra`` (other formats' namespaces, and ``extra["rightmemory"]`` keys that are not computed on
read), ``body_pad`` (``[before, after]``: a heading body's exact leading and trailing text when
it is not "lines + one final newline").
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from memcore.models import Kind, MemoryEntry, Relation, Status

__all__ = ["META_FIELDS", "apply_meta", "dump_meta", "meta_for"]

META_FIELDS = (
    "kind", "status", "tags", "confidence", "source", "created_at", "updated_at",
    "date_only", "scope", "expires_at", "relations", "extra",
)  # fmt: skip


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def meta_for(
    entry: MemoryEntry,
    *,
    derived_kind: Kind,
    derived_confidence: float | None,
    other_relations: list[Relation],
    fmt: str,
    computed: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Return the meta object for ``entry``: only what the item's own text does not say.

    Args:
        entry: The entry being written.
        derived_kind: The kind the item reads as without meta.
        derived_confidence: The confidence the item reads as without meta.
        other_relations: Relations that are not written as RightMemory edges.
        fmt: This format's name.
        computed: Keys of ``extra[fmt]`` computed on read (never stored); its other keys are.
    """
    meta: dict[str, Any] = {}
    if entry.kind != derived_kind:
        meta["kind"] = entry.kind.value
    if entry.status != Status.ACTIVE:
        meta["status"] = entry.status.value
    if entry.tags:
        meta["tags"] = list(entry.tags)
    if entry.confidence != derived_confidence:
        meta["confidence"] = entry.confidence
    if entry.source is not None:
        meta["source"] = entry.source
    for key in ("created_at", "updated_at"):
        value = getattr(entry, key)
        if value is not None:
            meta[key] = _iso(value)
    if entry.date_only:
        meta["date_only"] = True
    if entry.scope is not None:
        meta["scope"] = entry.scope
    if entry.expires_at is not None:
        meta["expires_at"] = _iso(entry.expires_at)
    if other_relations:
        meta["relations"] = [[r.type, r.target] if r.resolved else [r.type, r.target, False] for r in other_relations]
    extra = {k: v for k, v in entry.extra.items() if k != fmt}
    own = {k: v for k, v in (entry.extra.get(fmt) or {}).items() if k not in computed}
    if own:
        extra[fmt] = own
    if extra:
        meta["extra"] = extra
    return meta


def dump_meta(meta: dict[str, Any]) -> str:
    """Return the comment text (without indentation) for a meta object."""
    blob = json.dumps(meta, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    blob = blob.replace("-->", "--\\u003e")
    return f"<!-- memcore: {blob} -->"


def apply_meta(entry: MemoryEntry, meta: dict[str, Any]) -> None:
    """Set the fields a meta object holds on ``entry`` (fail open: bad values are skipped)."""
    for key in META_FIELDS:
        if key not in meta:
            continue
        value = meta[key]
        try:
            if key == "kind":
                entry.kind = Kind(value)
            elif key == "status":
                entry.status = Status(value)
            elif key == "relations":
                rels = []
                for item in value:
                    rels.append(
                        Relation(type=item[0], target=item[1], resolved=bool(item[2]) if len(item) > 2 else True)
                    )
                entry.relations = [*entry.relations, *rels]
            elif key == "extra":
                if isinstance(value, dict):
                    entry.extra = {**value, **entry.extra}
            else:
                setattr(entry, key, value)
        except (ValueError, TypeError, IndexError):
            continue
