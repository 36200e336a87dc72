"""Maka's native record ⇄ :class:`~memcore.models.MemoryEntry`: pure, no I/O.

A section of a parsed file (:class:`memcore_maka._parse.Section`) reads as an
:class:`EntryView` (:func:`entry_from_section`, :func:`view` keeps the entry built on the
section); an entry renders as a section (:func:`render_section`), keeping every raw value that
did not change. The field table is :mod:`memcore_maka.mapping`; comment values, Maka's stable
ids and unix-millisecond times are here too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import unicodedata
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.errors import AmbiguousIdError, ConflictError, EntryNotFoundError, InvalidEntryError
from memcore.models import Kind, MemoryEntry, Relation, Status, json_copy, require_unicode
from memcore.redact import holds_secret, may_hold_secret, redact_entry
from memcore.storage import version_token
from memcore.switches import switch_on
from memcore_maka._parse import (
    HEADING_RE,
    META_KEY_RE,
    Document,
    Section,
    is_meta_key,
    js_trim,
    parse_finite_number,
    parse_meta_comment,
    parse_tags,
    section_text,
)
from memcore_maka.mapping import (
    FORMAT,
    KEY_ORDER,
    KEY_ORDER_SET,
    MC_CONFIDENCE,
    MC_DATA,
    MC_DATA_RE,
    MC_KEYS,
    MC_KIND,
    NATIVE_KEYS,
    ORIGINS,
    PASSTHROUGH_STATUSES,
    STATUS_FROM_MAKA,
)

__all__ = [
    "EntryView",
    "RenderedSection",
    "ambiguous_error",
    "approved_entry",
    "entry_from_section",
    "entry_texts",
    "entry_version",
    "fresh",
    "find",
    "from_ms",
    "is_safe_value",
    "meta_line",
    "new_entry",
    "new_entry_among",
    "normalize_meta_value",
    "one_line",
    "only_text",
    "prepare",
    "proposed_entry",
    "render_section",
    "serialize_meta",
    "stable_entry_id",
    "stable_proposal_id",
    "to_ms",
    "view",
]

_JS_WS_RUN = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")
_UNSAFE_RUN = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff<>]+")
_EDGE_DASHES = re.compile(r"^-+|-+\Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_ZWSP = "\u200b"
_CHUNK = 128


# -- small helpers ----------------------------------------------------------------------
def normalize_meta_value(value: str) -> str:
    """Return Maka's ``normalizeMetaValue(value)``: whitespace/``<``/``>`` runs -> ``-``, edges trimmed, <= 128."""
    if value and value[0] != "-" and value[-1] != "-" and _UNSAFE_RUN.search(value) is None:
        return value[:128]  # nothing to replace or trim (the usual case)
    return _EDGE_DASHES.sub("", _UNSAFE_RUN.sub("-", value))[:128]


def is_safe_value(value: str) -> bool:
    """Return whether memcore may write ``value`` as a comment value unchanged.

    Safe: non-empty, unchanged by :func:`normalize_meta_value` (no whitespace, ``<``, ``>``, no
    edge ``-``, at most 128 characters) and without ``--`` (which HTML comments should not hold).
    """
    return bool(value) and normalize_meta_value(value) == value and "--" not in value


def one_line(title: str) -> str:
    """Return ``title`` as one heading line: whitespace runs (newlines too) -> one space, trimmed."""
    return js_trim(_JS_WS_RUN.sub(" ", title))


def to_ms(value: datetime) -> int:
    """Return unix milliseconds (floored) of a timezone-aware datetime."""
    return (value - _EPOCH) // _MS


def from_ms(value: float) -> datetime | None:
    """Return the UTC datetime of unix milliseconds ``value``, or ``None`` when out of range."""
    try:
        return _EPOCH + timedelta(milliseconds=value)
    except (OverflowError, ValueError):
        return None


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def stable_entry_id(content: str, created_ms: float) -> str:
    """Return Maka's ``stableLocalMemoryEntryId``: ``mem-`` + 16 hex of sha256(trim(content) + "\\n" + ms).

    Args:
        content: The entry's content (trimmed here, as Maka does).
        created_ms: Creation time in unix ms; floored, negatives become 0.
    """
    ms = max(0, int(created_ms // 1)) if created_ms == created_ms else 0
    return "mem-" + _sha256_hex(f"{js_trim(content)}\n{ms}")[:16]


def stable_proposal_id(content: str, proposed_ms: float) -> str:
    """Return Maka's ``stableLocalMemoryProposalId``: ``proposal-`` + 16 hex (same material)."""
    ms = max(0, int(proposed_ms // 1)) if proposed_ms == proposed_ms else 0
    return "proposal-" + _sha256_hex(f"{js_trim(content)}\n{ms}")[:16]


def serialize_meta(meta: dict[str, str], extra_tokens: tuple[str, ...] = (), raw: dict[str, str] | None = None) -> str:
    """Return the inside of a metadata comment, as Maka's ``serializeMetaComment`` writes it.

    Known keys in :data:`KEY_ORDER`, then the others sorted; every value through
    :func:`normalize_meta_value` except those left as they were read (``raw``); pairs whose
    value ends up empty are left out.

    Args:
        meta: ``key -> value``.
        extra_tokens: Tokens Maka's parser ignored in the comment being rewritten (bad keys,
            over-long values): appended verbatim so no text is lost.
        raw: The comment being rewritten as it was read (``key -> value``): a value still equal
            to its raw one is written byte for byte (a hand-written ``k=-->`` or ``a>b`` stays;
            a token never holds whitespace, so Maka reads it back the same).
    """
    parts: list[str] = []
    known = [key for key in KEY_ORDER if key in meta]  # KEY_ORDER's keys are all valid
    others = sorted(key for key in meta if key not in KEY_ORDER_SET and is_meta_key(key))
    for key, value in _written(meta, raw or {}, (*known, *others)):
        parts.append(f"{key}={value}")
    parts.extend(extra_tokens)
    return " ".join(parts)


def _written(meta: dict[str, str], raw: dict[str, str], keys: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Yield ``(key, value as written)`` for ``keys``: a value as read kept, any other normalised."""
    for key in keys:
        value = meta[key]
        if raw.get(key) != value:
            value = normalize_meta_value(value)
            if not value:
                continue
        yield key, value


def meta_line(meta: dict[str, str], extra_tokens: tuple[str, ...] = (), raw: dict[str, str] | None = None) -> str:
    """Return a full ``<!-- maka-memory: ... -->`` line for ``meta`` (``raw``: see :func:`serialize_meta`)."""
    return f"<!-- maka-memory: {serialize_meta(meta, extra_tokens, raw)} -->"


def _encode_data(data: dict[str, Any]) -> dict[str, str]:
    if not data:
        return {}
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    text = base64.b64encode(blob.encode("utf-8")).decode("ascii")
    if len(text) <= _CHUNK:
        return {MC_DATA: text}
    return {f"{MC_DATA}_{i}": text[pos : pos + _CHUNK] for i, pos in enumerate(range(0, len(text), _CHUNK))}


def _decode_data(meta: dict[str, str]) -> tuple[dict[str, Any], str | None]:
    chunks: list[tuple[int, str]] = []
    for key, value in meta.items():
        match = MC_DATA_RE.match(key) if key.startswith(MC_DATA) else None
        if match:
            chunks.append((int(match.group(1)) if match.group(1) else -1, value))
    if not chunks:
        return {}, None
    text = "".join(v for _, v in sorted(chunks))
    try:
        data = json.loads(base64.b64decode(text, validate=True).decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        return {}, f"mcData is not base64 JSON ({exc}); ignored"
    if not isinstance(data, dict):
        return {}, "mcData is not a JSON object; ignored"
    return data, None


def _hash12(text: str) -> str:
    return _sha256_hex(text)[:12]


# -- reading -----------------------------------------------------------------------------
@dataclass
class EntryView:
    """A section read as a :class:`MemoryEntry`, with what the writer needs to keep raw values.

    Attributes:
        entry: The entry (``version`` not set; the provider sets it).
        section: The section it came from.
        meta: The authoritative comment's raw map (empty when there is none).
        applied: The ``mcData`` overrides that applied (their native value still matched).
        problems: Human-readable notes about values that could not be read (for diagnostics).
    """

    entry: MemoryEntry
    section: Section
    meta: dict[str, str]
    applied: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _fingerprint(data: dict[str, Any], key: str, native: Any, applied: dict[str, Any]) -> tuple[bool, Any]:
    """Return ``(True, value)`` when override ``key`` was written next to the current native value."""
    item = data.get(key)
    if isinstance(item, list) and len(item) == 2 and item[0] == native:
        applied[key] = item
        return True, item[1]
    return False, None


def _unescape_body(content: str, spec: Any) -> str | None:
    if not isinstance(spec, dict) or spec.get("h") != _hash12(content):
        return None
    if isinstance(spec.get("z"), str):
        return str(spec["z"])
    lines = content.split("\n")
    for item in spec.get("e", []):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
            return None
        index, kinds = item
        if not 0 <= index < len(lines) or not isinstance(kinds, str):
            return None
        line = lines[index]
        if "h" in kinds and line.startswith(" "):
            line = line[1:]
        if "m" in kinds and line.endswith(_ZWSP):
            line = line[: -len(_ZWSP)]
        if "r" in kinds:
            line += "\r"
        lines[index] = line
    lead, trail = spec.get("l", ""), spec.get("t", "")
    if not isinstance(lead, str) or not isinstance(trail, str):
        return None
    return lead + "\n".join(lines) + trail


def entry_from_section(section: Section, *, pending: bool = False, version: str | None = None) -> EntryView:
    """Read one section into a :class:`MemoryEntry` with Maka's rules plus memcore's keys.

    Args:
        section: A section with non-empty content.
        pending: True for PENDING.md, where a missing status means ``review_required``.
        version: The version token to set on the entry.

    Returns:
        The :class:`EntryView`; never raises for odd values (they are kept raw in
        ``extra["maka"]`` and noted in ``problems``).
    """
    meta = dict(section.meta or {})
    data, data_problem = _decode_data(meta)
    problems = [data_problem] if data_problem else []
    applied: dict[str, Any] = {}
    maka: dict[str, Any] = {}
    fields: dict[str, Any] = {"id": section.id, "version": version}

    ok, value = _fingerprint(data, "t", section.title, applied)
    fields["title"] = value if ok and isinstance(value, str) else section.title

    body = _unescape_body(section.content, data.get("b")) if "b" in data else None
    if body is not None:
        applied["b"] = data["b"]
    elif data.get("n") == 1:
        applied["n"] = 1
        body = section.content + "\n"
    fields["body"] = section.content if body is None else body

    raw_status = meta.get("status")
    if raw_status is None:
        fields["status"] = Status.REVIEW_REQUIRED if pending else Status.ACTIVE
    elif raw_status in STATUS_FROM_MAKA:
        fields["status"] = STATUS_FROM_MAKA[raw_status]
    elif raw_status in PASSTHROUGH_STATUSES:
        fields["status"] = Status(raw_status)
    else:
        fields["status"] = Status.UNKNOWN
        maka["status"] = raw_status

    raw_origin = meta.get("origin")
    source: str | None = raw_origin if raw_origin in ORIGINS else "unknown"
    if raw_origin is not None and raw_origin not in ORIGINS and raw_origin != "unknown":
        maka["origin"] = raw_origin
    ok, value = _fingerprint(data, "s", raw_origin, applied)
    if ok and (value is None or isinstance(value, str)):
        source = value
        maka.pop("origin", None)
    fields["source"] = source

    raw_scope = meta.get("scope")
    ok, value = _fingerprint(data, "c", raw_scope, applied)
    fields["scope"] = value if ok and (value is None or isinstance(value, str)) else raw_scope

    raw_tags = meta.get("tags")
    ok, value = _fingerprint(data, "g", raw_tags, applied)
    if ok and isinstance(value, list) and all(isinstance(t, str) and t.strip() for t in value):
        fields["tags"] = value
    else:
        fields["tags"] = parse_tags(raw_tags)

    times: dict[str, datetime | None] = {}
    for key, name, fp in (("createdAt", "created_at", "ca"), ("updatedAt", "updated_at", "ua")):
        raw = meta.get(key)
        number = parse_finite_number(raw)
        when = from_ms(number) if number is not None else None
        ok, value = _fingerprint(data, fp, raw, applied)
        if ok and isinstance(value, str):
            when = _parse_iso(value) or when
        elif raw is not None and when is None:
            maka[key] = raw
            problems.append(f"{key}={raw!r} is not a unix-ms timestamp >= 0; kept raw")
        times[name] = when
        fields[name] = when

    raw_ttl = meta.get("decayTtlMs")
    ttl = parse_finite_number(raw_ttl)
    created = times["created_at"]
    expires: datetime | None = None
    if ttl is not None and created is not None:
        try:
            expires = created + timedelta(milliseconds=ttl)
        except (OverflowError, ValueError):
            problems.append(f"decayTtlMs={raw_ttl!r} puts the expiry past year 9999; read as unset, kept raw")
    if raw_ttl is not None and expires is None:
        maka["decayTtlMs"] = raw_ttl
    ok, value = _fingerprint(data, "x", [meta.get("createdAt"), raw_ttl], applied)
    if ok and (value is None or isinstance(value, str)):
        expires = _parse_iso(value) if value else None
    fields["expires_at"] = expires

    kind_raw = meta.get(MC_KIND)
    if kind_raw is not None:
        try:
            fields["kind"] = Kind(kind_raw)
        except ValueError:
            maka[MC_KIND] = kind_raw
            problems.append(f"{MC_KIND}={kind_raw!r} is not a memcore kind; kept raw")
    conf_raw = meta.get(MC_CONFIDENCE)
    if conf_raw is not None:
        number = parse_finite_number(conf_raw)
        if number is not None and number <= 1:
            fields["confidence"] = number
        else:
            maka[MC_CONFIDENCE] = conf_raw
            problems.append(f"{MC_CONFIDENCE}={conf_raw!r} is not a number in 0..1; kept raw")

    if data.get("d") is True:
        fields["date_only"] = True
    if isinstance(data.get("p"), str) and data["p"]:
        fields["parent"] = data["p"]
    relations = data.get("r")
    if isinstance(relations, list):
        try:
            fields["relations"] = [Relation(type=r[0], target=r[1], resolved=bool(r[2])) for r in relations]
        except (IndexError, TypeError, ValueError):
            problems.append("mcData relations unreadable; ignored")
    extra: dict[str, Any] = {}
    if isinstance(data.get("e"), dict):
        extra.update({k: v for k, v in data["e"].items() if isinstance(v, dict) and k != FORMAT})
    for key, raw in meta.items():
        if key in NATIVE_KEYS or (key.startswith(MC_DATA) and MC_DATA_RE.match(key)):
            continue
        maka[key] = raw
    stashed = data.get("m")
    if isinstance(stashed, dict):
        for key, item in stashed.items():
            if isinstance(item, list) and len(item) == 2 and (item[0] is None or meta.get(key) == item[0]):
                applied.setdefault("m", {})[key] = item
                maka[key] = item[1]
    if maka:
        extra[FORMAT] = maka
    fields["extra"] = extra
    try:
        entry = MemoryEntry(**fields)
    except ValueError as exc:  # pragma: no cover - defensive: the fields above are validated
        problems.append(f"could not build the entry ({exc}); read without memcore keys")
        entry = MemoryEntry(
            id=section.id, title=section.title, body=section.content, status=fields["status"], source=source
        )
    return EntryView(entry=entry, section=section, meta=meta, applied=applied, problems=problems)


def _parse_iso(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else None


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


# -- writing -----------------------------------------------------------------------------
@dataclass
class RenderedSection:
    """What the writer puts in the file for one entry.

    Attributes:
        title: The heading text (one line).
        meta: The comment's key/value map.
        meta_text: The full comment line.
        content_lines: The content lines (escaped so Maka reads them as this entry's content).
        title_changed: Whether the heading must be rewritten.
        meta_changed: Whether the comment must be rewritten (or inserted).
        body_changed: Whether the content must be rewritten.
    """

    title: str
    meta: dict[str, str]
    meta_text: str
    content_lines: list[str]
    title_changed: bool = True
    meta_changed: bool = True
    body_changed: bool = True


def _encode_body(body: str, placeholder: str) -> tuple[list[str], dict[str, Any] | None]:
    trimmed = js_trim(body)
    if not trimmed:
        # Maka drops a section whose content is empty: write the title as visible content and
        # keep the exact (empty or blank) body in mcData.
        lines, _ = _encode_body(placeholder, placeholder)
        return lines, {"h": _hash12(js_trim("\n".join(lines))), "z": body}
    start = body.find(trimmed)
    lead, trail = body[:start], body[start + len(trimmed) :]
    lines = trimmed.split("\n")
    escapes: list[list[Any]] = []
    for index, line in enumerate(lines):
        kinds = ""
        if line.endswith("\r"):
            line = line[:-1]
            kinds += "r"
        if HEADING_RE.match(line):
            line = " " + line
            kinds += "h"
        elif parse_meta_comment(line) is not None:
            line += _ZWSP
            kinds += "m"
        if kinds:
            escapes.append([index, kinds])
        lines[index] = line
    if not (lead or trail or escapes):
        return lines, None
    if not lead and not escapes and trail == "\n":
        return lines, {"n": 1}
    native = js_trim("\n".join(lines))
    spec: dict[str, Any] = {"h": _hash12(native)}
    if lead:
        spec["l"] = lead
    if trail:
        spec["t"] = trail
    if escapes:
        spec["e"] = escapes
    return lines, spec


def _tags_value(tags: list[str]) -> str:
    written: list[str] = []
    for tag in tags:
        for candidate in parse_tags(tag.replace(",", "-")):
            if candidate not in written and len(written) < 8:
                written.append(candidate)
    value = ",".join(written)
    while len(value) > 128 and written:
        written.pop()
        value = ",".join(written)
    return value


def render_section(
    entry: MemoryEntry,
    old: EntryView | None = None,
    *,
    fallback_title: str = "Untitled memory",
) -> RenderedSection:
    """Turn ``entry`` into a section's heading, comment and content lines.

    Values that did not change since ``old`` was read keep their raw text (a touched entry
    changes only what was touched). ``entry.id`` must be set and comment-safe.

    Args:
        entry: The entry to write (already redacted).
        old: The entry's current section as read, for an update; ``None`` for a new entry.
        fallback_title: Heading used when the title is empty.

    Raises:
        InvalidEntryError: An id that cannot be written.
    """
    if entry.id is None or (not is_safe_value(entry.id) and not (old is not None and entry.id == old.entry.id)):
        raise InvalidEntryError(
            f"maka: id {entry.id!r} cannot be written in a metadata comment (no whitespace, '<', '>', "
            "'--' or leading/trailing '-', at most 128 characters)"
        )
    prev = old.entry if old is not None else None
    old_meta = old.meta if old is not None else {}
    applied = old.applied if old is not None else {}
    data: dict[str, Any] = {}
    meta: dict[str, str] = {}

    def same(name: str) -> bool:
        return prev is not None and getattr(entry, name) == getattr(prev, name)

    def keep(*keys: str) -> None:
        for key in keys:
            if key in old_meta:
                meta[key] = old_meta[key]

    def keep_fp(key: str) -> None:
        if key in applied:
            data[key] = applied[key]

    # extra["maka"]: raw comment keys first; native fields override below.
    maka_extra = dict(entry.extra.get(FORMAT, {}))
    raw_of: dict[str, str] = {k: v for k, v in maka_extra.items() if isinstance(v, str)}
    stash: dict[str, Any] = {}
    for key, value in maka_extra.items():
        if key in NATIVE_KEYS and _consumed_natively(key, value, entry, old_meta):
            continue  # written with its native field below
        raw_unchanged = isinstance(value, str) and old_meta.get(key) == value
        if (
            isinstance(value, str)
            and META_KEY_RE.match(key)
            and key not in MC_KEYS
            and key not in NATIVE_KEYS
            and not MC_DATA_RE.match(key)
            and (raw_unchanged or is_safe_value(value))
        ):
            meta[key] = value
            continue
        native = None
        if isinstance(value, str) and META_KEY_RE.match(key) and key not in NATIVE_KEYS and key not in MC_KEYS:
            native = _EDGE_DASHES.sub("", re.sub("-{2,}", "-", normalize_meta_value(value))) or None
            if native is not None and not MC_DATA_RE.match(key):
                meta[key] = native  # what Maka's own writer would store; the exact value goes to mcData
            else:
                native = None
        stash[key] = [native, value]

    meta["id"] = entry.id

    # status
    if same("status"):
        keep("status")
    elif entry.status is Status.UNKNOWN:
        raw = maka_extra.get("status")
        meta["status"] = raw if isinstance(raw, str) and is_safe_value(raw) else "unknown"
        if isinstance(raw, str) and not is_safe_value(raw):
            stash["status"] = [None, raw]
    else:
        meta["status"] = entry.status.value

    # source <-> origin
    if same("source"):
        keep("origin")
        keep_fp("s")
    else:
        raw_origin = maka_extra.get("origin")
        if entry.source in ORIGINS:
            meta["origin"] = entry.source
        elif entry.source == "unknown":
            if isinstance(raw_origin, str) and is_safe_value(raw_origin):
                meta["origin"] = raw_origin
            else:
                meta["origin"] = "unknown"
        else:
            meta["origin"] = "imported" if entry.source else "manual"
            data["s"] = [meta["origin"], entry.source]

    # scope
    if same("scope"):
        keep("scope")
        keep_fp("c")
    elif entry.scope is not None:
        if is_safe_value(entry.scope):
            meta["scope"] = entry.scope
        else:
            safe = normalize_meta_value(entry.scope).replace("--", "-")
            if safe:
                meta["scope"] = safe
            data["c"] = [meta.get("scope"), entry.scope]

    # tags
    if same("tags"):
        keep("tags")
        keep_fp("g")
    elif entry.tags:
        value = _tags_value(entry.tags)
        if value:
            meta["tags"] = value
        if parse_tags(value or None) != entry.tags:
            data["g"] = [meta.get("tags"), entry.tags]

    # timestamps
    for key, name, fp in (("createdAt", "created_at", "ca"), ("updatedAt", "updated_at", "ua")):
        when = getattr(entry, name)
        if same(name):
            keep(key)
            keep_fp(fp)
        elif when is not None:
            ms = to_ms(when)
            if ms >= 0:  # Maka reads only finite numbers >= 0; earlier times live in mcData alone
                meta[key] = str(ms)
            if ms < 0 or from_ms(ms) != when:
                data[fp] = [meta.get(key), _iso(when)]
        elif key in raw_of and raw_of[key] == old_meta.get(key):
            meta[key] = raw_of[key]

    # expires_at <-> createdAt + decayTtlMs
    if same("expires_at") and same("created_at"):
        keep("decayTtlMs")
        keep_fp("x")
    elif entry.expires_at is not None:
        if entry.created_at is not None and entry.expires_at >= entry.created_at and "createdAt" in meta:
            ttl_ms = (entry.expires_at - entry.created_at) // _MS
            meta["decayTtlMs"] = str(ttl_ms)
            created_ms = to_ms(entry.created_at)
            if from_ms(created_ms + ttl_ms) != entry.expires_at or from_ms(created_ms) != entry.created_at:
                data["x"] = [[meta.get("createdAt"), meta["decayTtlMs"]], _iso(entry.expires_at)]
        else:
            data["x"] = [[meta.get("createdAt"), None], _iso(entry.expires_at)]
    elif "decayTtlMs" in raw_of and raw_of["decayTtlMs"] == old_meta.get("decayTtlMs"):
        meta["decayTtlMs"] = raw_of["decayTtlMs"]

    # memcore-only fields
    if entry.kind is not Kind.NOTE:
        meta[MC_KIND] = entry.kind.value
    elif MC_KIND in raw_of and is_safe_value(raw_of[MC_KIND]):
        meta[MC_KIND] = raw_of[MC_KIND]
    if entry.confidence is not None:
        meta[MC_CONFIDENCE] = repr(float(entry.confidence))
    elif MC_CONFIDENCE in raw_of and is_safe_value(raw_of[MC_CONFIDENCE]):
        meta[MC_CONFIDENCE] = raw_of[MC_CONFIDENCE]
    if entry.date_only:
        data["d"] = True
    if entry.parent is not None:
        data["p"] = entry.parent
    if entry.relations:
        data["r"] = [[r.type, r.target, r.resolved] for r in entry.relations]
    others = {k: v for k, v in entry.extra.items() if k != FORMAT}
    if others:
        data["e"] = others
    if stash:
        data["m"] = stash

    # title
    title_changed = not same("title")
    if not title_changed and old is not None:
        title = old.section.title
        keep_fp("t")
    else:
        title = one_line(entry.title) or one_line(fallback_title)
        if title != entry.title:
            data["t"] = [title, entry.title]

    # body
    body_changed = not same("body")
    content_lines: list[str] = []
    if body_changed or old is None:
        content_lines, spec = _encode_body(entry.body, title if js_trim(title) else "(empty)")
        if spec is not None and "n" in spec:
            data["n"] = 1
        elif spec is not None:
            data["b"] = spec
    else:
        keep_fp("b")
        keep_fp("n")

    meta.update(_encode_data(data))
    dropped = tuple(token for _, token, _ in old.section.dropped) if old is not None else ()
    if old is None:
        meta_changed = True
    elif old.section.meta is None:
        meta_changed = meta != {"id": old.entry.id}
    else:
        meta_changed = _normalized(meta, old_meta) != _normalized(old_meta, old_meta)
    return RenderedSection(
        title=title,
        meta=meta,
        meta_text=meta_line(meta, dropped, old_meta),
        content_lines=content_lines,
        title_changed=title_changed or old is None,
        meta_changed=meta_changed,
        body_changed=body_changed or old is None,
    )


def _consumed_natively(key: str, value: Any, entry: MemoryEntry, old_meta: dict[str, str]) -> bool:
    """Whether ``extra["maka"][key]`` is written by its native field's logic (else it is stashed)."""
    if not isinstance(value, str):
        return False
    if key == "status":
        return entry.status is Status.UNKNOWN
    if key == "origin":
        return entry.source == "unknown"
    if key in ("createdAt", "updatedAt", "decayTtlMs"):
        field_name = {"createdAt": "created_at", "updatedAt": "updated_at", "decayTtlMs": "expires_at"}[key]
        return getattr(entry, field_name) is None and old_meta.get(key) == value
    if key == MC_KIND:
        return entry.kind is Kind.NOTE and is_safe_value(value)
    if key == MC_CONFIDENCE:
        return entry.confidence is None and is_safe_value(value)
    return False


def _normalized(meta: dict[str, str], raw: dict[str, str]) -> dict[str, str]:
    """What :func:`serialize_meta` writes for ``meta`` (values as read in ``raw`` kept), as a map."""
    return dict(_written(meta, raw, (key for key in meta if META_KEY_RE.match(key))))


def entry_version(doc: Document, section: Section) -> str:
    """Return the version of ``section``'s entry: :func:`memcore.storage.version_token` of its text."""
    return version_token(section_text(doc.lines, section))


def view(doc: Document, section: Section, pending: bool) -> EntryView:
    """Return ``section`` read as an entry: built once per section, then copied.

    A section's text never changes (an edit re-parses what it touches into new sections), so
    the entry built the first time is kept on it (:attr:`Section.views`) and each later read
    gets a copy of it (its own lists and ``extra``), as if built again.
    """
    built: EntryView | None = section.views.get(pending)
    if built is None:
        built = entry_from_section(section, pending=pending, version=entry_version(doc, section))
        section.views[pending] = built
    return EntryView(
        entry=fresh(built.entry),
        section=section,
        meta=built.meta,
        applied=built.applied,
        problems=built.problems,
    )


def fresh(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` sharing nothing a caller can change (lists, ``extra``)."""
    twin = entry.__copy__()
    fields = twin.__dict__
    fields["tags"] = list(entry.tags)
    fields["relations"] = list(entry.relations)  # Relation is frozen
    fields["extra"] = json_copy(entry.extra)
    return twin


# -- entries about to be written --------------------------------------------------------
def prepare(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` with secrets redacted from every string it holds.

    :func:`memcore.redact.redact_entry`: title, body, tags, source, scope, parent, relation
    types and targets, every key and string of ``extra`` (so no secret reaches the file,
    neither as text nor base64 inside ``mcData``).

    Raises:
        InvalidEntryError: A string of the entry has a lone surrogate (not UTF-8; one can
            get past the model's validation through ``model_copy(update=...)`` or list
            mutation), or the id holds a secret (an id is never rewritten); nothing is written.
    """
    texts = entry_texts(entry)
    if not only_text(texts):
        # the full walk names the place of the bad character (or finds nothing to refuse)
        require_unicode(entry.model_dump(), "entry", prefix="maka")
    elif fast_redaction_enabled() and not may_hold_secret("\n".join(texts)):
        # no string of the entry (keys, relation types and the id included) holds a word or
        # mark any redaction pattern needs: redact_entry would copy every value as it is
        return _unredacted_copy(entry)
    if entry.id is not None and holds_secret(entry.id):
        raise InvalidEntryError(
            "maka: the entry's id looks like a secret (a token, key or password); memcore never writes "
            "one and never changes an id: give the entry another id (or none, for a new one)"
        )
    return redact_entry(entry)


def fast_redaction_enabled() -> bool:
    """Whether :func:`prepare` checks an entry's strings for secrets in one pass (default: yes).

    The one pass joins every string of the entry and asks :func:`memcore.redact.may_hold_secret`
    once: each redaction pattern (and each secret-naming key or relation type) needs a hint word
    or mark, which the joined text holds whenever one of its strings does. Without any, the
    entry is copied as :func:`~memcore.redact.redact_entry` would return it; with one, or with
    ``MEMCORE_MAKA_FAST_REDACT=0``, every string goes through ``redact_entry``.
    """
    return switch_on("MEMCORE_MAKA_FAST_REDACT")


def _unredacted_copy(entry: MemoryEntry) -> MemoryEntry:
    """Return what :func:`~memcore.redact.redact_entry` returns for an entry holding no secret.

    The same fields marked set, new lists and relations, ``extra`` rebuilt as ``redact_tree``
    rebuilds it (plain dicts and lists, every other value shared).
    """
    return entry.model_copy(
        update={
            "title": entry.title,
            "body": entry.body,
            "tags": list(entry.tags),
            "source": entry.source,
            "scope": entry.scope,
            "parent": entry.parent,
            "relations": [rel.model_copy(update={"type": rel.type, "target": rel.target}) for rel in entry.relations],
            "extra": _tree_copy(entry.extra),
        }
    )


def _tree_copy(value: Any) -> Any:
    """Copy JSON data as :func:`~memcore.redact.redact_tree` does when no string changes."""
    if isinstance(value, dict):
        return {key: _tree_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_tree_copy(item) for item in value]
    return value


def new_entry(entry: MemoryEntry, doc: Document, where: Path, now: int, *, proposal: bool = False) -> MemoryEntry:
    """Return ``entry`` prepared for appending to ``doc``: redacted, times and a free id set.

    Raises:
        ConflictError: The entry's id is taken.
        InvalidEntryError: See :func:`prepare`; a session proposal without a ``sessionId``.
    """
    index = doc.index()
    return new_entry_among(entry, index.taken, index.entries, where, now, proposal=proposal)


def new_entry_among(
    entry: MemoryEntry,
    taken: Container[str],
    entries: Container[str],
    where: Path,
    now: int,
    *,
    proposal: bool = False,
) -> MemoryEntry:
    """:func:`new_entry` against the ids of a document: ``taken`` (a new id avoids) and ``entries`` (a given id).

    Args:
        entry: The entry to add.
        taken: Every NFC id and ``proposalId`` a section of the file uses (``IdIndex.taken``).
        entries: The NFC ids of the file's entries (``IdIndex.entries``).
        where: The file, for the message.
        now: Unix milliseconds now (the default ``created_at``).
        proposal: Whether the entry is a PENDING.md proposal (its id is ``proposal-…``).

    Raises:
        ConflictError, InvalidEntryError: As :func:`new_entry`.
    """
    given = entry.model_fields_set
    entry = prepare(entry)
    # a time the caller left unset is now; one given as None (a copy of an entry without one,
    # as Maka's best-effort metadata allows) stays absent
    if entry.created_at is None and "created_at" not in given:
        entry.created_at = from_ms(now)
    if entry.updated_at is None and "updated_at" not in given:
        entry.updated_at = entry.created_at
    if entry.id is None:
        ms = to_ms(entry.created_at) if entry.created_at is not None else now
        base = stable_proposal_id(entry.body, ms) if proposal else stable_entry_id(entry.body, ms)
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        entry.id = candidate
    elif entry.id in entries:
        raise ConflictError(f"maka: an entry with id {entry.id!r} already exists in {where}")
    unowned = not normalize_meta_value(str(entry.extra.get(FORMAT, {}).get("sessionId", "")))
    if proposal and entry.scope == "session" and unowned:
        raise InvalidEntryError(
            "maka: scope 'session' needs extra['maka']['sessionId'] (Maka refuses session entries "
            "without an owning session)"
        )
    return entry


def proposed_entry(entry: MemoryEntry, doc: Document, where: Path, now: int) -> MemoryEntry:
    """Return ``entry`` as Maka's ``appendLocalMemoryProposalDraft`` writes it into PENDING.md."""
    draft = entry.model_copy(deep=True)
    draft.status = Status.REVIEW_REQUIRED
    draft.source = "extracted"
    if draft.scope != "session":
        draft.scope = "workspace"
    new = new_entry(draft, doc, where, now, proposal=True)
    assert new.id is not None
    proposed_at = to_ms(new.created_at) if new.created_at is not None else now
    maka = dict(new.extra.get(FORMAT, {}))
    maka.update(proposalId=new.id, source="chat_extracted", proposedAt=str(proposed_at))
    new.extra = {**new.extra, FORMAT: maka}
    new.created_at = None
    new.updated_at = None
    return new


def approved_entry(proposal: EntryView, pid: str, entry_id: str | None, now: int, asked: str) -> MemoryEntry:
    """Return the MEMORY.md entry Maka's ``approveLocalMemoryProposalDraft`` makes of ``proposal``.

    Raises:
        InvalidEntryError: The id cannot be written, or a session proposal has no ``sessionId``.
    """
    new = proposal.entry.model_copy(deep=True)
    new.id = entry_id or stable_entry_id(proposal.section.content, now)
    if not is_safe_value(new.id):
        raise InvalidEntryError(f"maka: entry id {new.id!r} cannot be written in a comment")
    new.status = Status.ACTIVE
    new.source = "extracted"
    new.scope = "session" if proposal.meta.get("scope") == "session" else "workspace"
    if new.scope == "session" and not normalize_meta_value(proposal.meta.get("sessionId", "")):
        raise InvalidEntryError(
            f"maka: proposal {asked!r} is session-scoped without a sessionId; Maka refuses "
            "to approve it (invalid_session_id)"
        )
    new.created_at = new.updated_at = from_ms(now)
    maka = {k: v for k, v in new.extra.get(FORMAT, {}).items() if k not in ("proposedAt", "status")}
    maka.update(
        source="chat_extracted",
        confirmedAt=str(now),
        approvedBy="user",
        approvalSurface="settings_review_queue",
        proposalId=pid,
    )
    new.extra = {**new.extra, FORMAT: maka}
    new.version = None
    return new


def find(doc: Document, where: Path, entry_id: str, *, pending: bool = False, by_proposal: bool = False) -> EntryView:
    """Return the one entry of ``doc`` whose id (or, ``by_proposal``, ``proposalId``) is ``entry_id``.

    Raises:
        EntryNotFoundError: No such entry.
        AmbiguousIdError: Two or more sections read under this id (each named by file:line).
    """
    wanted = unicodedata.normalize("NFC", entry_id)
    if by_proposal:
        found = [
            s
            for s in doc.entries
            if unicodedata.normalize("NFC", s.id) == wanted
            or unicodedata.normalize("NFC", (s.meta or {}).get("proposalId", "")) == wanted
        ]
    else:
        found = sorted(doc.index().entries.get(wanted, []), key=lambda s: s.start)
    if not found:
        raise EntryNotFoundError(f"maka: no entry {entry_id!r} in {where}")
    if len(found) > 1:
        raise ambiguous_error(where, entry_id, found)
    return view(doc, found[0], pending)


def ambiguous_error(where: Path, entry_id: str, sections: list[Section]) -> AmbiguousIdError:
    """Return the error for an id that ``sections`` (two or more, in file order) all read as."""
    places = tuple(f"{where}:{s.start + 1}" for s in sections)
    return AmbiguousIdError(
        f"maka: id {entry_id!r} names {len(sections)} sections ({', '.join(places)}); memcore acts on "
        "neither: give each its own id (add `<!-- maka-memory: id=<unique-id> -->` under one heading, "
        "or retitle it)",
        entry_id=entry_id,
        places=places,
    )


def entry_texts(entry: MemoryEntry) -> list[Any]:
    """Return every string of ``entry`` that :func:`prepare` checks at once, in one list.

    The id, title, body, source, scope, parent, version, each relation's type and target, the
    tags, and every key and string of ``extra`` (a value of ``extra`` that is not JSON, such as a
    tuple, is in the list as it is: :func:`only_text` is then False).
    """
    texts = [entry.id or "", entry.title, entry.body, entry.source or "", entry.scope or "", entry.parent or ""]
    texts.append(entry.version or "")
    for relation in entry.relations:
        texts += (relation.type, relation.target)
    texts += entry.tags
    _collect_texts(entry.extra, texts)
    return texts


def only_text(texts: list[Any]) -> bool:
    """Return True when ``texts`` are all strings that encode as UTF-8 (no lone surrogate).

    One join and one encode for every string of an entry; False also for anything that is
    not a string, which the full check (:func:`~memcore.models.require_unicode`) then walks.
    """
    try:
        "\n".join(texts).encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return False
    return True


def _collect_texts(value: Any, texts: list[Any]) -> None:
    """Add every key and string of JSON data to ``texts`` (for the one surrogate check).

    A value of another type (a tuple, a set: not JSON) goes to ``texts`` as is, so that the
    surrogate check walks the entry in full.
    """
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, dict):
        texts.extend(value)
        for item in value.values():
            _collect_texts(item, texts)
    elif isinstance(value, list):
        for item in value:
            _collect_texts(item, texts)
    elif isinstance(value, tuple | set | frozenset):
        texts.append(value)
