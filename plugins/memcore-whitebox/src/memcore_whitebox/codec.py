"""WhiteBox native records <-> :class:`~memcore.models.MemoryEntry`, with no I/O.

An observation block (its scan and frontmatter fields) or a stable file's bytes become an
entry (:func:`observation_entry`, :func:`file_entry`); an entry becomes the frontmatter lines of
a new block (:func:`observation_lines`), the frontmatter of a stable file (:func:`file_meta`) or
a proposal file (:func:`proposal_text`). The tables are :mod:`memcore_whitebox.mapping`.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from memcore.errors import InvalidEntryError, ParseError, UnsafePathError
from memcore.frontmatter import flow_list, parse_frontmatter, read_frontmatter
from memcore.mapping import CONFIDENCE_LABELS, confidence_from_label, confidence_to_label, format_utc
from memcore.models import Diagnostic, Kind, MemoryEntry, Relation, Severity, Status, _to_utc, utc_now, utf8_text
from memcore.storage import TextFile, check_component, version_token
from memcore_whitebox._blocks import Fields, RawBlock, parse_inline_list, scan_blocks, to_json_value
from memcore_whitebox._fast import fast_enabled, remembered
from memcore_whitebox._fences import decode_fences, encode_fences
from memcore_whitebox._parse import diag as _diag
from memcore_whitebox._render import field_scalar as _render_field_scalar
from memcore_whitebox._render import json_line, render_block, render_tags, yaml_scalar
from memcore_whitebox._scopes import Scope
from memcore_whitebox._tags import registrable
from memcore_whitebox.mapping import SKIPPED_FOLDERS, SPECIAL_ROOT_FILES, STATUS_FROM_WHITEBOX, V11_KEYS, kind_for_path

__all__ = [
    "FORMAT",
    "as_tags",
    "check_name_lengths",
    "edited_file",
    "fact_place",
    "fact_rel",
    "file_entry",
    "file_meta",
    "is_month_path",
    "new_entry",
    "observation_block",
    "observation_date",
    "observation_entry",
    "observation_lines",
    "other_scope",
    "parse_date",
    "proposal_name",
    "proposal_target",
    "proposal_text",
    "truthy",
    "unread_path",
]

FORMAT = "whitebox"
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
#: Observation keys with a place of their own (never written from ``fields``).
_OBS_OWN_KEYS = frozenset({"date", "source", "tags", "confidence", "title", "scope", "memcore", *V11_KEYS})
#: ``extra["whitebox"]`` keys the observation writer handles itself.
_WB_OBS_HANDLED = frozenset({"confidence_label", "fields", "date", "file", "layout", *V11_KEYS})
#: Frontmatter keys of stable files that memcore manages (and may remove).
_FILE_MANAGED = ("title", "tags", "source", "confidence", "scope", "memcore")
_BASE_KEYS = frozenset({"date", "source", "tags", "confidence"})
#: The label written for an observation given no confidence (the spec requires one); with
#: ``memcore: {"no_confidence": true}`` beside it, read back as none.
NO_CONFIDENCE_LABEL = "medium"
_DATE_CACHE: dict[str, datetime] = {}
_OBS_TEMPLATE = MemoryEntry(kind=Kind.OBSERVATION)
#: Every field at its default and none set: a copy updated with keywords is ``MemoryEntry(**keywords)``.
_NO_FIELDS_SET = MemoryEntry.model_construct()


def truthy(value: Any) -> bool:
    """Read an option strictly: on only for ``1``/``true``/``yes``/``on`` (``as_user`` grants rights)."""
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def parse_date(text: str) -> datetime | None:
    """Return a ``YYYY-MM-DD`` date as midnight UTC (cached), or ``None`` for any other text."""
    cached = _DATE_CACHE.get(text)
    if cached is not None:
        return cached
    m = _DATE_RE.match(text)
    if m is None:
        return None
    try:
        value = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    if len(_DATE_CACHE) < 100_000:
        _DATE_CACHE[text] = value
    return value


def _nfc(text: str) -> bool:
    return text.isascii() or unicodedata.is_normalized("NFC", text)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json_line(value)


def as_tags(value: Any) -> list[str]:
    """Return a ``tags`` value as written (an inline list, a YAML list, a scalar) as a list of tags."""
    if value is None:
        return []
    if isinstance(value, str):
        return parse_inline_list(value)
    if isinstance(value, list):
        out = []
        for item in value:
            # a YAML list item is already the exact text (plain ones come trimmed): keep it as is
            text = item if isinstance(item, str) else json_line(item)
            if text.strip():
                out.append(text)
        return out
    return [json_line(value)]


def _kept_tags(tags: list[str]) -> list[str]:
    """``tags`` (text items of a list) without the blank ones, as :func:`as_tags` keeps a list's items.

    A blank tag (``""``, ``"  "``) says nothing and no entry may hold one: it is left out of
    the entry read, as it is from a YAML list of other items, instead of failing the block.
    """
    return tags if all(t.strip() for t in tags) else [t for t in tags if t.strip()]


def _derived_title(body: str, rel: str) -> str:
    m = _H1.search(body)
    if m is not None:
        return m.group(1).strip()
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def _slug(text: str) -> str:
    norm = unicodedata.normalize("NFKD", text)
    ascii_text = norm.encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-")
    return slug[:60].strip("-")


def other_scope(values: dict[str, Any], active: Scope | None) -> bool:
    """Return whether a record whose fields are ``values`` belongs to another scope than ``active``."""
    scope_value = values.get("scope")
    return active is not None and isinstance(scope_value, str) and scope_value != active.name


def observation_entry(
    rel: str,
    number: int,
    text: str,
    blk: RawBlock,
    fields: Fields,
    file_meta: dict[str, Any] | None,
    diags: list[Diagnostic] | None,
    active: Scope | None,
    *,
    fast: bool | None = None,
) -> MemoryEntry:
    """Return the entry of observation block ``blk`` (number ``number`` of ``rel``, file text ``text``).

    The caller has checked the block is of the active scope (:func:`other_scope`); ``diags``
    gets a ``wb.memcore-field`` warning when the ``memcore:`` object cannot be used. ``fast``:
    :func:`~memcore_whitebox._fast.fast_enabled` as the caller read it (``None``: read it now).
    """
    values = fields.values
    entry_id = f"{rel}#{number}"
    scope_value = values.get("scope")
    if fields.fast and file_meta is None and blk.layout == "fenced" and _BASE_KEYS.issuperset(values):
        # The reference writer's own shape: plain values, no extra keys. Every value is
        # already what MemoryEntry's validators would make of it, so the entry is built
        # from a validated template without re-validation.
        date_value = values.get("date")
        created = _DATE_CACHE.get(date_value) if isinstance(date_value, str) else None
        if created is None and isinstance(date_value, str):
            created = parse_date(date_value)
        label = values.get("confidence")
        confidence = CONFIDENCE_LABELS.get(label) if label is not None else None
        found_tags = values.get("tags")
        tags = _kept_tags(found_tags) if isinstance(found_tags, list) else as_tags(found_tags)
        if (
            created is not None
            and (label is None or confidence is not None)
            and ("".join(tags).isascii() or all(_nfc(t) for t in tags))
        ):
            return _OBS_TEMPLATE.model_copy(
                update={
                    "id": entry_id,
                    "body": blk.body.strip(),
                    "tags": tags,
                    "confidence": confidence,
                    "source": values.get("source"),
                    "created_at": created,
                    "date_only": True,
                    "scope": active.name if active is not None else None,
                    "relations": [],
                    "extra": {},
                    "version": version_token(text[blk.start : blk.end].encode("utf-8", "surrogatepass")),
                }
            )
    wb: dict[str, Any] = {}
    simple = True
    date_value = values.get("date")
    created = None
    date_only = False
    if isinstance(date_value, str):
        created = parse_date(date_value)
        date_only = created is not None
    if created is None and date_value is not None:
        wb["date"] = date_value
    source = values.get("source")
    if source is not None and not isinstance(source, str):
        source = json_line(source)
    tags_value = values.get("tags")
    if isinstance(tags_value, list) and all(type(t) is str for t in tags_value):
        tags = _kept_tags(tags_value)
    else:
        tags = as_tags(tags_value)
    if not all(_nfc(t) for t in tags):
        simple = False
    label = values.get("confidence")
    confidence, raw_label = _read_confidence(label)
    if raw_label is not None:
        wb["confidence_label"] = raw_label
    title = values.get("title")
    if not isinstance(title, str):
        title = "" if title is None else json_line(title)
    if title and not _nfc(title):
        simple = False
    if not _BASE_KEYS.issuperset(values) or fields.yaml_error is not None:
        for key, value in values.items():
            if key in V11_KEYS:
                wb[key] = value
            elif key not in _OBS_OWN_KEYS:
                wb.setdefault("fields", {})[key] = value
    if file_meta is not None:
        wb["file"] = file_meta
    if blk.layout != "fenced":
        wb["layout"] = blk.layout
    kw: dict[str, Any] = {
        "id": entry_id,
        "title": title,
        "body": blk.body.strip(),
        "tags": tags,
        "confidence": confidence,
        "source": source,
        "created_at": created,
        "date_only": date_only,
        "scope": scope_value if isinstance(scope_value, str) else (active.name if active else None),
        "relations": [],
        "extra": {FORMAT: wb} if wb else {},
        "version": version_token(text[blk.start : blk.end].encode("utf-8", "surrogatepass")),
    }
    memcore = values.get("memcore")
    plain = dict(kw)  # the entry without the memcore: object, if that object cannot be used
    if memcore is not None:
        simple = False
        if isinstance(memcore, dict):
            _apply_memcore(kw, memcore, written_label=label)
        else:
            wb.setdefault("fields", {})["memcore"] = memcore
            kw["extra"] = {FORMAT: wb}
    if simple:
        return _OBS_TEMPLATE.model_copy(update=kw)
    if fast_enabled() if fast is None else fast:
        checked = _as_validated(kw)
        if checked is not None:
            return _OBS_TEMPLATE.model_copy(update=checked)
    try:
        return MemoryEntry(kind=kw.pop("kind", Kind.OBSERVATION), **kw)
    except ValidationError as exc:
        if diags is not None:
            diags.append(
                _diag(
                    rel,
                    blk.line,
                    "wb.memcore-field",
                    Severity.WARNING,
                    f"memcore fields ignored: {exc.errors()[0]['msg']}",
                    entry_id,
                )
            )
        # As for a stable file: the block's own fields, none of the memcore: object's.
        plain["extra"] = {FORMAT: wb} if wb else {}
        return MemoryEntry(kind=Kind.OBSERVATION, **plain)


class _NotJson(Exception):
    """A value :func:`_json_checked` does not pass (the entry is then validated)."""


#: Deepest ``extra`` :func:`_json_checked` passes (a deeper one is validated).
_JSON_DEPTH = 32


def _json_checked(value: Any, depth: int = 0) -> Any:
    """A copy of JSON data that MemoryEntry's ``extra`` validation passes unchanged, else :class:`_NotJson`.

    Exact dicts (text keys) and lists are copied (as validation copies them); exact ``str``
    (no lone surrogate), ``int``, ``bool``, finite ``float`` and ``None`` are kept.
    """
    kind = type(value)
    if kind is str:
        if not utf8_text(value):
            raise _NotJson
        return value
    if value is None or kind is bool or kind is int:
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _NotJson
        return value
    if depth >= _JSON_DEPTH:
        raise _NotJson
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or utf8_text(key)):
                raise _NotJson
            if type(item) is str and item.isascii():  # the common leaf, without a call
                out[key] = item
            else:
                out[key] = _json_checked(item, depth + 1)
        return out
    if kind is list:
        return [_json_checked(item, depth + 1) for item in value]
    raise _NotJson


def _as_validated(kw: dict[str, Any]) -> dict[str, Any] | None:
    """``kw`` as MemoryEntry's validation would leave it, when it would pass every value unchanged, else ``None``.

    An observation's keywords (:func:`observation_entry`, after its ``memcore:`` object) are
    checked against what the model's validators do: text without lone surrogates; the id and
    ``parent`` non-empty, without NUL and NFC, as the title and tags (non-blank) are; a
    confidence a ``float`` in [0, 1]; timestamps aware datetimes or ISO text (converted to UTC as
    the validator converts it); the kind, status and relations of their types; ``extra`` JSON (a
    copy, as validation makes one). Anything else (``None``): the entry is validated, and a
    value validation refuses gives its diagnostic as before. The entry built from the result
    equals the validated one field by field, with the same fields set
    (``tests/test_whitebox_fast.py``).
    """
    for name in ("id", "parent"):
        value = kw.get(name)
        if value is not None:
            if type(value) is not str or not value or "\x00" in value:
                return None
            if not value.isascii() and not (utf8_text(value) and _nfc(value)):
                return None
    for name in ("title", "body", "source", "scope", "version"):
        value = kw.get(name)
        if value is not None and not (type(value) is str and value.isascii()) and not utf8_text(value):
            return None
    title = kw.get("title")
    if title is not None and not _nfc(title):
        return None
    tags = kw.get("tags")
    if tags is not None:
        if type(tags) is not list:
            return None
        for tag in tags:
            if not utf8_text(tag) or not tag.strip() or not _nfc(tag):
                return None
    confidence = kw.get("confidence")
    if confidence is not None and not (type(confidence) is float and 0.0 <= confidence <= 1.0):
        return None
    if "kind" in kw and not isinstance(kw["kind"], Kind):
        return None
    if "status" in kw and not isinstance(kw["status"], Status):
        return None
    if "date_only" in kw and type(kw["date_only"]) is not bool:
        return None
    relations = kw.get("relations")
    if relations is not None and not (type(relations) is list and all(type(r) is Relation for r in relations)):
        return None
    out = dict(kw)
    for name in ("created_at", "updated_at", "expires_at"):
        value = kw.get(name)
        if value is None:
            continue
        if type(value) is datetime and value.tzinfo is UTC:
            continue
        if type(value) is not str:
            return None
        try:
            out[name] = _to_utc(value)
        except ValueError:
            return None
    extra = kw.get("extra")
    if extra is not None:
        if type(extra) is not dict or not all(type(data) is dict for data in extra.values()):
            return None
        try:
            out["extra"] = _json_checked(extra)
        except _NotJson:
            return None
    return out


def file_entry(
    rel: str,
    data: bytes,
    version: str,
    diags: list[Diagnostic] | None,
    active: Scope | None,
    *,
    fast: bool | None = None,
) -> MemoryEntry | None:
    """Return the entry of the stable file ``rel`` (``None``: another scope's, or unreadable).

    ``fast``: :func:`~memcore_whitebox._fast.fast_enabled` as the caller read it (``None``: read it now).
    """
    try:
        tf = TextFile.decode(data, path=rel)
    except ParseError as exc:
        if diags is not None:
            diags.append(_diag(rel, exc.line, "wb.not-utf8", Severity.ERROR, str(exc)))
        return None
    wb: dict[str, Any] = {}
    try:
        # read-only use: the fast reader (same values and errors as parse_frontmatter)
        front = read_frontmatter(tf.text, path=rel)
        meta: dict[str, Any] = to_json_value(front.metadata)
        body = front.body
    except ParseError as exc:
        if diags is not None:
            diags.append(_diag(rel, exc.line, "wb.frontmatter", Severity.ERROR, str(exc)))
        meta, body = {}, tf.text
        wb["unparsed"] = True
    scope_value = meta.get("scope")
    if other_scope(meta, active):
        return None
    kind = kind_for_path(rel)
    title = meta.get("title")
    title = title if isinstance(title, str) else _derived_title(body, rel)
    status = Status.ACTIVE
    created: Any = None
    relations: list[Relation] = []
    raw_status = meta.get("status")
    if kind is Kind.PROPOSAL:
        status = STATUS_FROM_WHITEBOX.get(str(raw_status), Status.PROPOSED)
        created = meta.get("proposed_at")
        target = meta.get("target")
        if isinstance(target, str) and target:
            relations.append(Relation(type="proposes", target=target))
            wb["target"] = target
        sections = _proposal_sections(body)
        wb.update(sections)
    elif isinstance(raw_status, str) and raw_status in STATUS_FROM_WHITEBOX:
        status = STATUS_FROM_WHITEBOX[raw_status]
    if created is None:
        created = meta.get("synthesized_at") or meta.get("created") or meta.get("date")
    date_only = isinstance(created, str) and _DATE_RE.match(created) is not None
    label = meta.get("confidence")
    confidence, raw_label = _read_confidence(label)
    if raw_label is not None:
        wb["confidence_label"] = raw_label
    for key in ("schema",):
        if key in meta:
            wb[key] = meta[key]
    handled = {"title", "tags", "source", "confidence", "scope", "memcore", "schema"}
    if kind is Kind.PROPOSAL:
        handled |= {"target", "proposed_at", "status"}
    others = {k: v for k, v in meta.items() if k not in handled}
    if others:
        wb["frontmatter"] = others
    if "/" in rel and kind is not Kind.FACT:
        wb["layer"] = rel.split("/", 1)[0]
    derived = meta.get("derived_from")
    if isinstance(derived, list):
        # v1.1 synthesized files (and memcore's promotion proposals) list their sources
        relations.extend(Relation(type="derived_from", target=t) for t in derived if isinstance(t, str) and t)
    kw: dict[str, Any] = {
        "id": rel,
        "kind": kind,
        "title": title,
        "body": body,
        "status": status,
        "tags": as_tags(meta.get("tags")),
        "confidence": confidence,
        "source": _as_text(meta.get("source")),
        "created_at": None,
        "date_only": date_only,
        "scope": scope_value if isinstance(scope_value, str) else (active.name if active else None),
        "relations": relations,
        "extra": {FORMAT: wb} if wb else {},
        "version": version,
    }
    if isinstance(created, str):
        try:
            kw["created_at"] = MemoryEntry(created_at=created).created_at
        except ValidationError:
            wb["created"] = created
            kw["date_only"] = False
    else:
        kw["date_only"] = False
    memcore = meta.get("memcore")
    if isinstance(memcore, dict):
        _apply_memcore(kw, memcore, written_label=label)
    if fast_enabled() if fast is None else fast:
        checked = _as_validated(kw)
        if checked is not None:
            return _NO_FIELDS_SET.model_copy(update=checked)
    try:
        return MemoryEntry(**kw)
    except ValidationError as exc:
        if diags is not None:
            diags.append(
                _diag(
                    rel,
                    1,
                    "wb.memcore-field",
                    Severity.WARNING,
                    f"memcore fields ignored: {exc.errors()[0]['msg']}",
                    rel,
                )
            )
        for key in ("relations", "parent", "expires_at", "updated_at"):
            kw.pop(key, None)
        kw["kind"] = kind
        kw["status"] = status
        kw["created_at"] = None
        try:
            return MemoryEntry(**kw)
        except ValidationError as again:  # e.g. a lone surrogate from a "\ud800" YAML escape
            if diags is not None:
                first = again.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                diags.append(
                    _diag(
                        rel,
                        1,
                        "wb.invalid",
                        Severity.ERROR,
                        f"cannot read as an entry ({where}: {first['msg']}); fix the frontmatter",
                        rel,
                    )
                )
            return None


def _put_links_and_times(entry: MemoryEntry, memcore: dict[str, Any]) -> None:
    """Put ``parent``, ``expires_at`` and ``updated_at`` of ``entry`` (when set) in a ``memcore:`` object."""
    if entry.parent is not None:
        memcore["parent"] = entry.parent
    if entry.expires_at is not None:
        memcore["expires_at"] = format_utc(entry.expires_at)
    if entry.updated_at is not None:
        memcore["updated_at"] = format_utc(entry.updated_at)


def observation_lines(
    entry: MemoryEntry, date: str, default_source: str, active_scope: str | None, fences: dict[str, str] | None = None
) -> list[str]:
    """Return the frontmatter lines of a new observation block dated ``date``.

    ``fences`` is what :func:`memcore_whitebox._fences.encode_fences` changed in the body
    (kept in the ``memcore:`` object so the body reads back exactly).
    """
    wb: dict[str, Any] = dict(entry.extra.get(FORMAT, {}))
    memcore: dict[str, Any] = {}
    source = entry.source
    if source is None:
        source = default_source
        memcore["no_source"] = True
    fast = fast_enabled()
    field_scalar = _field_scalar if fast else _render_field_scalar
    tags = remembered(_TAGS_TEXT, tuple(entry.tags), render_tags) if fast else render_tags(entry.tags)
    lines = [f"date: {date}", f"source: {field_scalar(source)}", f"tags: {tags}"]
    kept_label = wb.get("confidence_label")
    if fast and kept_label is None:
        label = remembered(_LABELS, entry.confidence, _label_to_write)
    else:
        label = _write_confidence(entry.confidence, kept_label)
    if label is None:
        # the spec requires a confidence on every observation: an entry without one is written
        # with the grade the reference tools give a missing one (promotion.ts: .5, medium), and
        # memcore reads it back as none
        label = NO_CONFIDENCE_LABEL
        memcore["no_confidence"] = True
    lines.append(f"confidence: {field_scalar(label)}")
    if entry.confidence is not None and _label_value(label) != entry.confidence:
        memcore["confidence"] = entry.confidence
    for key in V11_KEYS:
        value = wb.get(key)
        if value is not None:
            lines.append(f"{key}: {field_scalar(value) if isinstance(value, str) else _value(value)}")
    if entry.title:
        lines.append(f"title: {_render_field_scalar(entry.title)}")
    if entry.scope is not None and entry.scope != active_scope:
        lines.append(f"scope: {field_scalar(entry.scope)}")
    fields = wb.get("fields")
    if isinstance(fields, dict):
        for key, value in fields.items():
            if _KEY_RE.match(key) and key not in _OBS_OWN_KEYS:
                lines.append(f"{key}: {_value(value)}")
            else:
                memcore.setdefault("fields", {})[key] = value
    rest = {k: v for k, v in wb.items() if k not in _WB_OBS_HANDLED}
    if rest:
        memcore["whitebox"] = rest
    if entry.kind is not Kind.OBSERVATION:
        memcore["kind"] = entry.kind.value
    if entry.status is not Status.ACTIVE:
        memcore["status"] = entry.status.value
    if entry.relations:
        memcore["relations"] = [_relation_json(r) for r in entry.relations]
    _put_links_and_times(entry, memcore)
    if entry.created_at is not None and not entry.date_only:
        memcore["created_at"] = format_utc(entry.created_at)
    others = {ns: data for ns, data in entry.extra.items() if ns != FORMAT}
    if others:
        memcore["extra"] = others
    stripped = entry.body.strip()
    if stripped != entry.body:
        # The block holds the body trimmed (as the reference writer trims it); the
        # whitespace around it is kept here so the entry reads back exactly.
        lead = entry.body[: len(entry.body) - len(entry.body.lstrip())]
        trail = entry.body[len(entry.body.rstrip()) :] if stripped else ""
        if lead:
            memcore["body_lead"] = lead
        if trail:
            memcore["body_trail"] = trail
    if fences:
        memcore["fences"] = fences
    if memcore:
        lines.append(f"memcore: {json_line(memcore)}")
    return lines


#: Memos of observation_lines (:mod:`memcore_whitebox._fast`): tag lists' text, values' text, labels.
_TAGS_TEXT: dict[tuple[str, ...], str] = {}
_SCALARS: dict[str, str] = {}
_LABELS: dict[float | None, str | None] = {}


def _field_scalar(value: str) -> str:
    """:func:`~memcore_whitebox._render.field_scalar`, remembered."""
    return remembered(_SCALARS, value, _render_field_scalar)


def _label_to_write(confidence: float | None) -> str | None:
    return _write_confidence(confidence, None)


def fact_rel(entry: MemoryEntry) -> tuple[str, bool]:
    """Return (vault-relative path, chosen explicitly) for a new stable file."""
    wb = entry.extra.get(FORMAT, {})
    raw_path = wb.get("path")
    explicit = raw_path if isinstance(raw_path, str) else None
    if explicit is None and entry.id and entry.id.endswith(".md") and "#" not in entry.id:
        explicit = entry.id
    if explicit is not None:
        return unicodedata.normalize("NFC", explicit), True
    slug = _slug(entry.title) or _slug(entry.body[:40]) or "fact"
    try:
        check_component(f"{slug}.md")
    except UnsafePathError:  # a Windows device name (con, nul, com1...): not portable
        slug = f"{slug}-fact"
    if f"{slug}.md" in SPECIAL_ROOT_FILES:  # a fact titled "Tags" is not the vault's tags.md
        slug = f"{slug}-fact"
    return f"{slug}.md", False


def file_meta(entry: MemoryEntry, rel: str, *, new: bool, active_scope: str | None) -> dict[str, Any]:
    """Return the frontmatter memcore writes for ``entry`` in the stable file ``rel``."""
    wb = entry.extra.get(FORMAT, {})
    kind = kind_for_path(rel)
    meta: dict[str, Any] = {}
    if new and kind is not Kind.PROPOSAL:
        meta["schema"] = wb.get("schema", "whitebox/1.0")
    if entry.title != _derived_title(entry.body, rel):
        meta["title"] = entry.title  # "" too: an untitled entry must not read back a file name
    if entry.tags:
        meta["tags"] = flow_list(entry.tags)
    if entry.source is not None:
        meta["source"] = entry.source
    label = _write_confidence(entry.confidence, wb.get("confidence_label"))
    if label is not None:
        meta["confidence"] = label
    if entry.scope is not None and entry.scope != active_scope:
        meta["scope"] = entry.scope
    front = wb.get("frontmatter")
    if isinstance(front, dict):
        for key, value in front.items():
            if key not in meta and key != "memcore":
                meta[key] = value
    memcore: dict[str, Any] = {}
    if entry.kind is not kind:
        memcore["kind"] = entry.kind.value
    if entry.status is not Status.ACTIVE and kind is not Kind.PROPOSAL:
        memcore["status"] = entry.status.value
    front_derived = front.get("derived_from") if isinstance(front, dict) else None
    listed = {t for t in front_derived if isinstance(t, str)} if isinstance(front_derived, list) else set()
    relations = [
        r
        for r in entry.relations
        if not (kind is Kind.PROPOSAL and r.type == "proposes")
        and not (r.type == "derived_from" and r.target in listed)
    ]
    if relations:
        memcore["relations"] = [_relation_json(r) for r in relations]
    _put_links_and_times(entry, memcore)
    if entry.created_at is not None:
        memcore["created_at"] = entry.created_at.date().isoformat() if entry.date_only else format_utc(entry.created_at)
    if entry.confidence is not None and _label_value(label) != entry.confidence:
        memcore["confidence"] = entry.confidence
    others = {ns: data for ns, data in entry.extra.items() if ns != FORMAT}
    if others:
        memcore["extra"] = others
    rest = {
        k: v
        for k, v in wb.items()
        if k
        not in {
            "confidence_label",
            "frontmatter",
            "schema",
            "layer",
            "path",
            "unparsed",
            "target",
            "rationale",
            "proposed_content",
            "created",
        }
    }
    if rest:
        memcore["whitebox"] = rest
    if memcore:
        meta["memcore"] = memcore
    return meta


#: Longest file or folder name most file systems take (NAME_MAX), in UTF-8 bytes.
_NAME_MAX = 255


def is_month_path(rel: str) -> bool:
    """Return whether ``rel`` is a monthly observation file (``observations/<name>.md``)."""
    return rel.startswith("observations/") and rel.count("/") == 1 and rel.endswith(".md")


def unread_path(rel: str) -> str | None:
    """Why the vault reader would never read a file at ``rel`` (``None``: it would)."""
    parts = rel.split("/")
    if not rel.endswith(".md"):
        return "a stable fact is a .md file"
    if any(part.startswith(".") for part in parts):
        return "the reader skips hidden files and folders"
    if len(parts) > 1 and parts[0] in SKIPPED_FOLDERS:
        return f"the reader skips the {parts[0]}/ folder"
    return None


def check_name_lengths(rel: str) -> None:
    """Raise :class:`InvalidEntryError` when a component of ``rel`` is over 255 UTF-8 bytes."""
    for part in rel.split("/"):
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > _NAME_MAX:
            raise InvalidEntryError(
                f"whitebox: the name {part[:40]!r}... is {size} bytes; file names are at most "
                f"{_NAME_MAX} bytes (choose a shorter path or title)"
            )


def _read_confidence(label: Any) -> tuple[float | None, str | None]:
    """Return (number, label to keep in ``extra``) for a ``confidence`` value as written.

    The number comes from :func:`memcore.mapping.confidence_from_label` (case and ``_``
    tolerated); the written text is kept when it is not exactly a canonical label, so it is
    written back as it was.
    """
    if label is None:
        return None, None
    if not isinstance(label, str):
        return None, json_line(label)
    number = confidence_from_label(label)
    return number, (None if label in CONFIDENCE_LABELS else label)


def _label_value(label: Any) -> float | None:
    return confidence_from_label(label) if isinstance(label, str) else None


def _write_confidence(confidence: float | None, kept: Any) -> str | None:
    """Return the label to write: the kept spelling when it still says the same, else the nearest."""
    if isinstance(kept, str) and (confidence is None or confidence_from_label(kept) == confidence):
        return kept
    if confidence is None:
        return None
    return confidence_to_label(confidence)


def _value(value: Any) -> str:
    return yaml_scalar(value) if isinstance(value, str) else json_line(value)


def _relation_json(rel: Relation) -> dict[str, Any]:
    data: dict[str, Any] = {"type": rel.type, "target": rel.target}
    if not rel.resolved:
        data["resolved"] = False
    return data


def proposal_target(entry: MemoryEntry) -> str | None:
    """Return the stable file a proposal entry proposes to change, or ``None``."""
    wb = entry.extra.get(FORMAT, {})
    target = wb.get("target")
    if isinstance(target, str) and target:
        return target
    for rel in entry.relations:
        if rel.type == "proposes":
            return rel.target
    return None


def _proposal_sections(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    parts = re.split(r"^## (Rationale|Proposed content)[ \t]*$", body, flags=re.M)
    for i in range(1, len(parts) - 1, 2):
        key = "rationale" if parts[i] == "Rationale" else "proposed_content"
        out[key] = parts[i + 1].strip()
    return out


def _apply_memcore(kw: dict[str, Any], memcore: dict[str, Any], *, written_label: Any) -> None:
    """Apply the ``memcore:`` object (fields WhiteBox has no slot for) to entry keywords."""
    if isinstance(memcore.get("kind"), str) and memcore["kind"] in Kind.__members__.values():
        kw["kind"] = Kind(memcore["kind"])
    if isinstance(memcore.get("status"), str) and memcore["status"] in Status.__members__.values():
        kw["status"] = Status(memcore["status"])
    relations = memcore.get("relations")
    if isinstance(relations, list):
        kw["relations"] = list(kw.get("relations") or []) + [
            Relation(type=r["type"], target=r["target"], resolved=bool(r.get("resolved", True)))
            for r in relations
            if isinstance(r, dict)
            and isinstance(r.get("type"), str)
            and isinstance(r.get("target"), str)
            and r["type"]
            and r["target"]
        ]
    for key in ("parent", "expires_at", "updated_at"):
        if isinstance(memcore.get(key), str):
            kw[key] = memcore[key]
    created = memcore.get("created_at")
    if isinstance(created, str):
        if _DATE_RE.match(created):
            kw["created_at"] = parse_date(created)
            kw["date_only"] = True
        elif kw.get("created_at") is None or created[:10] == kw["created_at"].date().isoformat():
            kw["created_at"] = created
            kw["date_only"] = False
    exact = memcore.get("confidence")
    if isinstance(exact, (int, float)) and not isinstance(exact, bool) and 0 <= exact <= 1:
        if _label_value(written_label) == CONFIDENCE_LABELS[confidence_to_label(float(exact))]:
            kw["confidence"] = float(exact)
    if memcore.get("no_source") is True:
        kw["source"] = None
    if memcore.get("no_confidence") is True and written_label == NO_CONFIDENCE_LABEL:
        kw["confidence"] = None
    extra = memcore.get("extra")
    merged: dict[str, Any] = dict(kw.get("extra") or {})
    if isinstance(extra, dict):
        for ns, data in extra.items():
            if ns != FORMAT and isinstance(data, dict):
                merged[ns] = data
    wb_rest = memcore.get("whitebox")
    if isinstance(wb_rest, dict):
        wb = dict(merged.get(FORMAT, {}))
        for key, value in wb_rest.items():
            wb.setdefault(key, value)
        merged[FORMAT] = wb
    fields = memcore.get("fields")
    if isinstance(fields, dict):
        wb = dict(merged.get(FORMAT, {}))
        wb.setdefault("fields", {}).update(fields)
        merged[FORMAT] = wb
    kw["extra"] = merged
    body = decode_fences(kw.get("body", ""), memcore.get("fences"))
    if isinstance(memcore.get("body_lead"), str):
        body = memcore["body_lead"] + body
    if isinstance(memcore.get("body_trail"), str):
        body = body + memcore["body_trail"]
    kw["body"] = body


def proposal_text(
    target: str, *, source: str, rationale: str, content: str, extra: dict[str, Any], now: datetime
) -> str:
    """Return a proposal file as the reference ``proposeStableEdit`` writes it."""
    lines = [
        "---",
        f"target: {yaml_scalar(target)}",
        f"source: {yaml_scalar(source)}",
        f"proposed_at: {format_utc(now, milliseconds=True)}",
        "status: proposed",
    ]
    for key, value in extra.items():
        lines.append(f"{key}: {_value(value)}")
    lines.append("---")
    return "\n".join(lines) + (f"\n\n## Rationale\n\n{rationale.strip()}\n\n## Proposed content\n\n{content.strip()}\n")


def proposal_name(target: str, now: datetime) -> str:
    """Return the stem of a proposal's file name: ``proposed/<timestamp>-<slug>``."""
    stamp = now.strftime("%Y-%m-%dT%H-%M-%S")
    # capped so that the proposal's file name stays well under NAME_MAX (255 bytes)
    name = target.replace("/", "_").replace("\\", "_").removesuffix(".md")
    name = name.encode("utf-8", "surrogatepass")[:150].decode("utf-8", "ignore")
    return f"proposed/{stamp}-{name}"


def observation_date(entry: MemoryEntry) -> str:
    """Return the ``YYYY-MM-DD`` date of a new observation (of ``created_at``, else kept, else today UTC)."""
    if entry.created_at is not None:
        return entry.created_at.astimezone(UTC).date().isoformat()
    raw = entry.extra.get(FORMAT, {}).get("date")
    return raw if isinstance(raw, str) and _DATE_RE.match(raw) else utc_now().date().isoformat()


def observation_block(
    entry: MemoryEntry, date: str, default_source: str, active_scope: str | None
) -> tuple[str, RawBlock]:
    """Return the text of ``entry``'s new observation block and its scan.

    Raises:
        InvalidEntryError: The body cannot be one block (an unclosed fenced code block).
    """
    body, fences = encode_fences(entry.body.strip())
    block = render_block(observation_lines(entry, date, default_source, active_scope, fences), body)
    blocks = list(scan_blocks(block))
    blk = blocks[0]
    if len(blocks) != 1 or not blk.is_observation or blk.problem is not None or blk.end != len(block):
        # e.g. a body opening a fenced code block it never closes: the block's closing
        # fence would close that code block instead, and the file would end unterminated
        raise InvalidEntryError(
            "whitebox: this body cannot be written as one observation block (it opens a fenced "
            "code block it does not close?); close its fences (nothing was written)"
        )
    return block, blk


def edited_file(data: bytes, rel: str, desired: dict[str, Any], body: str) -> bytes:
    """Return the stable file ``data`` with the frontmatter keys of ``desired`` that changed, and ``body``.

    Managed keys (title, tags, ...) not in ``desired`` are removed; every other byte is kept.

    Raises:
        ParseError: The file's frontmatter cannot be parsed.
    """
    tf = TextFile.decode(data, path=rel)
    doc = parse_frontmatter(tf.text, path=rel)
    for key in _FILE_MANAGED:
        if key in doc.metadata and key not in desired:
            del doc.metadata[key]
    for key, value in desired.items():
        if key not in doc.metadata or to_json_value(doc.metadata[key]) != to_json_value(value):
            doc.metadata[key] = value
    doc.body = body
    return tf.encode(doc.dumps())


def new_entry(entry: MemoryEntry) -> MemoryEntry:
    """Refuse tags tags.md cannot list; return ``entry`` with WhiteBox's default kind (observation) set.

    Raises:
        InvalidEntryError: A tag with a backtick or a line break.
    """
    unlisted = [t for t in entry.tags if not registrable(t)]
    if unlisted:
        raise InvalidEntryError(
            f"whitebox: tag(s) {', '.join(map(repr, unlisted))} cannot be listed in tags.md (no backtick "
            "or line break in a tag); nothing was written"
        )
    if "kind" not in entry.model_fields_set and entry.kind is Kind.NOTE:
        # No kind chosen: WhiteBox's own default is an observation.
        entry = entry.model_copy(update={"kind": Kind.OBSERVATION})
    return entry


def fact_place(entry: MemoryEntry) -> tuple[str, bool]:
    """Return (vault-relative path, chosen explicitly) for a new stable fact, checked on its name.

    Raises:
        InvalidEntryError: Not a place for a fact, or one the vault reader never reads.
    """
    rel, explicit = fact_rel(entry)
    check_name_lengths(rel)
    if is_month_path(rel) or ("/" not in rel and rel in SPECIAL_ROOT_FILES):
        raise InvalidEntryError(f"whitebox: {rel} is not a place for a stable fact")
    unread = unread_path(rel)
    if unread is not None:
        raise InvalidEntryError(f"whitebox: {rel}: {unread}, so the fact could not be read back (nothing written)")
    return rel, explicit
