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

A key memcore cannot use (an unknown key, or a value of the wrong type or out of range, e.g.
``"status": 5`` or a naive ``created_at``) is skipped on read and reported by :func:`meta_problems`
(the parser turns each into an ``rm.bad-meta`` warning); :func:`kept_meta` returns those keys so
an update writes them back unchanged unless the caller set that field itself.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from memcore.models import Kind, MemoryEntry, Relation, Status

__all__ = ["META_FIELDS", "apply_meta", "dump_meta", "kept_meta", "meta_for", "meta_problems"]

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


def _relations(value: Any) -> list[Relation]:
    if not isinstance(value, list):
        raise TypeError("expected a list of [type, target] or [type, target, false]")
    rels = []
    for item in value:
        if not isinstance(item, list) or len(item) not in (2, 3) or (len(item) == 3 and not isinstance(item[2], bool)):
            raise TypeError(f"expected [type, target] or [type, target, false], got {json.dumps(item)[:60]}")
        rels.append(Relation(type=item[0], target=item[1], resolved=item[2] if len(item) == 3 else True))
    return rels


def _body_pad_ok(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(x, str) for x in value)


def apply_meta(entry: MemoryEntry, meta: dict[str, Any]) -> dict[str, str]:
    """Set the fields a meta object holds on ``entry`` (fail open: bad values are skipped).

    Args:
        entry: The entry read from the item's own text; changed in place.
        meta: The comment's JSON object.

    Returns:
        ``{key: reason}`` for every key not used: unknown keys and values of the wrong type or
        out of range (``body_pad`` is checked here but applied by the body reader).
    """
    problems: dict[str, str] = {}
    known: dict[str, Any] = {}
    for key, value in meta.items():
        if key == "body_pad":
            if not _body_pad_ok(value):
                problems[key] = "expected [before, after] strings"
            continue
        if key not in META_FIELDS:
            problems[key] = "unknown key"
            continue
        known[key] = value
    if _apply_all(entry, known):
        return problems
    for key, value in known.items():
        try:
            if key == "kind":
                entry.kind = Kind(value)
            elif key == "status":
                entry.status = Status(value)
            elif key == "relations":
                entry.relations = [*entry.relations, *_relations(value)]
            elif key == "extra":
                if not isinstance(value, dict):
                    raise TypeError("expected an object of format namespaces")
                entry.extra = {**value, **entry.extra}
            else:
                setattr(entry, key, value)
        except (ValueError, TypeError, IndexError) as exc:
            problems[key] = _reason(exc)
    return problems


def _apply_all(entry: MemoryEntry, known: dict[str, Any]) -> bool:
    """Set every key of ``known`` with one validation of the whole entry; False if any is bad.

    Same result as setting the keys one by one (each assignment would re-run the entry's
    model validators, e.g. the JSON check of ``extra``, once per key); on any bad value
    nothing is changed and the caller sets the keys one by one to find which.
    """
    if not known:
        return True
    merged = dict(entry.__dict__)
    try:
        for key, value in known.items():
            if key == "kind":
                merged["kind"] = Kind(value)
            elif key == "status":
                merged["status"] = Status(value)
            elif key == "relations":
                merged["relations"] = [*entry.relations, *_relations(value)]
            elif key == "extra":
                if not isinstance(value, dict):
                    return False
                merged["extra"] = {**value, **entry.extra}
            else:
                merged[key] = value
        checked = MemoryEntry.model_validate(merged)
    except (ValueError, TypeError, IndexError):
        return False
    entry.__dict__.update(checked.__dict__)
    entry.__pydantic_fields_set__.update(known)
    return True


def _reason(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return str(first.get("msg", exc))
        except (IndexError, TypeError, AttributeError):
            pass
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def meta_problems(meta: dict[str, Any]) -> dict[str, str]:
    """Return ``{key: reason}`` for the keys of ``meta`` that a reader cannot use.

    Applies ``meta`` to a scratch entry, so it reports exactly what :func:`apply_meta` skips.
    """
    return apply_meta(MemoryEntry(), meta)


def kept_meta(meta: dict[str, Any] | None) -> dict[str, Any]:
    """Return the keys of an existing comment that an update must write back unchanged.

    These are the keys :func:`apply_meta` skipped (memcore did not understand them, so it
    never drops them); a key the new entry sets itself replaces the old value.
    """
    if not meta:
        return {}
    return {key: meta[key] for key in meta_problems(meta)}
