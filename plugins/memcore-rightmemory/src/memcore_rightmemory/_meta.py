"""The ``<!-- memcore: {...} -->`` comment: MemoryEntry fields RightMemory has no slot for.

RightMemory has no place for status, tags, source, timestamps, scope, expiry, non-graph
relations or other formats' ``extra``. memcore keeps them, only when they differ from what the
item itself says, as one compact JSON object in an HTML comment on the line right after the
heading line or node line (indented to the node's content column, so it stays inside the list
item): that is the *inline* text memcore's parser and writers work on. On disk the comments are
kept in the file's header instead, where RightMemory's reference parser reads nothing
(:mod:`memcore_rightmemory._header`); markdown-it renders nothing for either. ``-->`` inside
JSON strings is written ``--\\u003e``.

Keys: ``kind``, ``status``, ``tags``, ``confidence``, ``source``, ``created_at``, ``updated_at``,
``date_only``, ``scope``, ``expires_at`` (ISO-8601 UTC with ``Z``), ``relations`` (list of
``[type, target]`` or ``[type, target, false]`` for relations that are not RightMemory edges),
``extra`` (other formats' namespaces, and ``extra["rightmemory"]`` keys that are not computed on
read), ``body_pad`` (``[before, after]``: a heading body's exact leading and trailing text when
it is not "lines + one final newline"), ``body_close`` (a positive int: the heading's last body
lines were added by memcore to close a code fence or an HTML block the body leaves open, so
that it does not swallow what follows; the reader drops them).

A key memcore cannot use (an unknown key, or a value of the wrong type or out of range, e.g.
``"status": 5`` or a naive ``created_at``) is skipped on read and reported by :func:`meta_problems`
(the parser turns each into an ``rm.bad-meta`` warning); :func:`kept_meta` returns those keys so
an update writes them back unchanged unless the caller set that field itself.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from memcore.models import Kind, MemoryEntry, Relation, Status, utf8_text

__all__ = [
    "META_FIELDS",
    "apply_meta",
    "body_close_ok",
    "body_pad_ok",
    "body_problems",
    "dump_meta",
    "kept_meta",
    "meta_for",
    "meta_problems",
    "meta_values",
]

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


#: ``json.dumps(..., ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, built once.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
#: ``json.dumps(..., ensure_ascii=False, allow_nan=False)``: the entry's own check of ``extra``.
_CHECKER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def dump_meta(meta: dict[str, Any]) -> str:
    """Return the comment text (without indentation) for a meta object."""
    blob = _ENCODER.encode(meta)
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


def body_pad_ok(value: Any) -> bool:
    """Whether ``value`` is a usable ``body_pad``: ``[before, after]``, two strings."""
    return isinstance(value, list) and len(value) == 2 and all(isinstance(x, str) for x in value)


def body_close_ok(value: Any) -> bool:
    """Whether ``value`` is a usable ``body_close``: a positive number of lines (not a bool)."""
    return type(value) is int and value >= 1


#: Keys the body reader applies (checked here, never entry fields), with their problem text.
_BODY_KEYS = {
    "body_pad": (body_pad_ok, "expected [before, after] strings"),
    "body_close": (body_close_ok, "expected a positive number of lines"),
}


def body_problems(meta: dict[str, Any]) -> dict[str, str]:
    """Return ``{key: reason}`` for a bad ``body_pad`` or ``body_close`` of ``meta`` (in its key order)."""
    return {key: _BODY_KEYS[key][1] for key in meta if key in _BODY_KEYS and not _BODY_KEYS[key][0](meta[key])}


def apply_meta(entry: MemoryEntry, meta: dict[str, Any]) -> dict[str, str]:
    """Set the fields a meta object holds on ``entry`` (fail open: bad values are skipped).

    Args:
        entry: The entry read from the item's own text; changed in place.
        meta: The comment's JSON object.

    Returns:
        ``{key: reason}`` for every key not used: unknown keys and values of the wrong type or
        out of range (``body_pad`` and ``body_close`` are checked here but applied by the body
        reader).
    """
    problems: dict[str, str] = {}
    known: dict[str, Any] = {}
    for key, value in meta.items():
        if key in _BODY_KEYS:
            ok, reason = _BODY_KEYS[key]
            if not ok(value):
                problems[key] = reason
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


_KIND_VALUES = frozenset(kind.value for kind in Kind)
_STATUS_VALUES = frozenset(status.value for status in Status)
_DATE_KEYS = frozenset({"created_at", "updated_at", "expires_at"})
#: The UTC timestamps memcore writes (``_iso``): read here as the entry's validator reads them.
_UTC_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z\Z")


_text = utf8_text


def _plain_relations(value: Any) -> list[Relation] | None:
    if type(value) is not list:
        return None
    rels = []
    for item in value:
        if type(item) is not list or len(item) not in (2, 3) or not (_text(item[0]) and _text(item[1])):
            return None
        if not item[0] or not item[1] or (len(item) == 3 and type(item[2]) is not bool):
            return None
        rels.append(Relation(type=item[0], target=item[1], resolved=item[2] if len(item) == 3 else True))
    return rels


def _plain_extra(value: Any) -> bool:
    if type(value) is not dict or not all(type(k) is str and type(v) is dict for k, v in value.items()):
        return False
    try:
        _CHECKER.encode(value).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
        return False
    return True


def meta_values(meta: dict[str, Any]) -> dict[str, Any] | None:
    """Return the entry fields a meta object sets, when every key is plainly valid; else ``None``.

    The fast path of :func:`apply_meta` and :func:`meta_problems` for what memcore itself
    writes: each value is checked with plain type tests that accept only values the entry's
    own validation accepts unchanged in meaning (a known kind or status string, non-blank tags,
    a number in 0..1, a UTC timestamp ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``, ``[type, target]``
    lists, ``extra`` of format namespaces that serialise to UTF-8 JSON). Anything else (an
    unknown key, ``true`` as a confidence, a date as a number…) gives ``None`` and the caller
    takes the pydantic path, which decides and names the problem. ``body_pad`` and
    ``body_close`` are ignored (the body reader applies them).

    Args:
        meta: The comment's JSON object, as ``json.loads`` returns it.

    Returns:
        ``{field: value}``, a new dict: values ready for ``MemoryEntry(**fields)`` (relations
        as :class:`~memcore.models.Relation`, dates as UTC datetimes), or ``None``.
    """
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if key in _BODY_KEYS:
            continue
        if key in _DATE_KEYS:
            if value is None:
                out[key] = None
                continue
            if type(value) is not str or not _UTC_TEXT.match(value):
                return None
            try:
                out[key] = datetime.fromisoformat(value[:-1] + "+00:00").astimezone(UTC)
            except ValueError:
                return None
        elif key == "kind":
            if type(value) is not str or value not in _KIND_VALUES:
                return None
            out[key] = Kind(value)
        elif key == "status":
            if type(value) is not str or value not in _STATUS_VALUES:
                return None
            out[key] = Status(value)
        elif key == "tags":
            if type(value) is not list or not all(_text(tag) and tag.strip() for tag in value):
                return None
            out[key] = value
        elif key == "confidence":
            if value is not None and (type(value) not in (int, float) or not 0.0 <= value <= 1.0):
                return None
            out[key] = value
        elif key in ("source", "scope"):
            if value is not None and not _text(value):
                return None
            out[key] = value
        elif key == "date_only":
            if type(value) is not bool:
                return None
            out[key] = value
        elif key == "relations":
            rels = _plain_relations(value)
            if rels is None:
                return None
            out[key] = rels
        elif key == "extra":
            if not _plain_extra(value):
                return None
            out[key] = value
        else:
            return None
    return out


def meta_problems(meta: dict[str, Any]) -> dict[str, str]:
    """Return ``{key: reason}`` for the keys of ``meta`` that a reader cannot use.

    When :func:`meta_values` accepts every key there is none (but a bad ``body_pad`` or
    ``body_close``);
    otherwise ``meta`` is applied to a scratch entry, so this reports exactly what
    :func:`apply_meta` skips.
    """
    if meta_values(meta) is not None:
        return body_problems(meta)
    return apply_meta(MemoryEntry(), meta)


def kept_meta(meta: dict[str, Any] | None) -> dict[str, Any]:
    """Return the keys of an existing comment that an update must write back unchanged.

    These are the keys :func:`apply_meta` skipped (memcore did not understand them, so it
    never drops them); a key the new entry sets itself replaces the old value.
    """
    if not meta:
        return {}
    return {key: meta[key] for key in meta_problems(meta)}
