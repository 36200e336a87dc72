"""One memory file's frontmatter <-> :class:`~memcore.models.MemoryEntry` (the table in mapping.py).

Both directions are pure functions; the provider gives them the workspace's title and id
lookups. Reading fails open: a value that cannot be mapped is reported as a
:class:`~memcore.models.Diagnostic` and kept, raw, in ``extra["box"]`` under its own key, so
writing the entry back writes it unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from ruamel.yaml.comments import CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from memcore import frontmatter
from memcore.frontmatter import flow_list, is_scalar, plain_text, text_of
from memcore.frontmatter import to_plain as plain
from memcore.models import (
    Diagnostic,
    Kind,
    MemoryEntry,
    Relation,
    Severity,
    Status,
    json_copy,
    lf_body,
    utf8_text,
)
from memcore.switches import switch_on
from memcore_box.mapping import (
    BOX_KINDS,
    BOX_STATUSES,
    COMPANION_ORDER,
    FIELD_ORDER,
    MEMCORE_KEY,
    box_kind,
    box_status,
    format_timestamp,
    parse_timestamp,
    slugify,
)

__all__ = [
    "ID_PATTERN",
    "entry_from_meta",
    "entry_from_plain",
    "file_stem",
    "meta_from_entry",
    "write_fast",
    "written_entry",
    "plain_diagnostics",
    "related_targets",
    "wikilink_title",
]

#: The id form Box-memory writes: ``mem_`` + 26 base32 characters (the authors' own examples use
#: letters outside Crockford's alphabet, so any uppercase letter is accepted).
ID_PATTERN = re.compile(r"^mem_[0-9A-Z]{26}$")
_WIKILINK = re.compile(r"^\s*\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]\s*$")
#: Frontmatter keys mapped onto MemoryEntry fields: every schema field except the three kept as
#: they are in ``extra["box"]`` (companion_for, links, sources), plus the ``memcore`` key.
_HANDLED = (frozenset(FIELD_ORDER) - {"companion_for", "links", "sources"}) | {MEMCORE_KEY}
_MEMCORE_KNOWN = frozenset({"kind", "status", "title", "date_only", "parent", "relations", "relation_order", "extra"})

Resolver = Callable[[str], str | None]
_KINDS = {kind.value: kind for kind in Kind}
_STATUSES = {status.value: status for status in Status}


def wikilink_title(text: str) -> str:
    """Return the target title of ``"[[Title]]"`` (alias ``|…`` and heading ``#…`` dropped).

    A string that is not a wikilink is its own title.
    """
    match = _WIKILINK.match(text)
    return unicodedata.normalize("NFC", (match.group(1) if match else text).strip())


def related_targets(items: Any, resolve: Resolver) -> list[tuple[str, bool]]:
    """Return ``(target, resolved)`` per ``related`` item: the id, or the title when unresolved."""
    out: list[tuple[str, bool]] = []
    for item in items if isinstance(items, list) else [items]:
        if item is None or not str(item).strip():
            continue
        title = wikilink_title(str(item))
        if not title:
            continue
        target = resolve(title)
        out.append((target, True) if target else (title, False))
    return out


def _diag(
    path: str,
    code: str,
    message: str,
    *,
    line: int | None = None,
    entry_id: str | None = None,
    severity: Severity = Severity.ERROR,
) -> Diagnostic:
    return Diagnostic(path=path, line=line, code=code, severity=severity, message=message, entry_id=entry_id)


def _line_of(meta: Any, key: str) -> int | None:
    try:
        return int(meta.lc.key(key)[0]) + 2
    except (AttributeError, KeyError, TypeError):
        return None


#: The fields every memory's frontmatter must hold (besides ``id`` and ``kind``).
_REQUIRED = ("slug", "title", "status", "created_at", "updated_at")


def _form_diags(meta: Any, entry_id: str | None, path: str) -> list[Diagnostic]:
    """The diagnostics of an id off the ULID form and of each missing required field, in that order."""
    diags: list[Diagnostic] = []
    if not ID_PATTERN.match(entry_id or ""):
        diags.append(
            _diag(
                path,
                "box.id-format",
                f"id {entry_id!r} is not mem_ + a 26-character ULID",
                line=_line_of(meta, "id"),
                entry_id=entry_id,
                severity=Severity.WARNING,
            )
        )
    for key in _REQUIRED:
        if meta.get(key) is None:
            diags.append(
                _diag(
                    path, "box.missing-field", f"required field {key!r} is missing; add it", line=1, entry_id=entry_id
                )
            )
    return diags


def _unresolved_diag(meta: Any, kind: str, target: str, entry_id: str | None, path: str) -> Diagnostic:
    """The warning of an unresolved relation: a ``related`` wikilink no title matches, else an id no file has."""
    if kind == "related":
        code, message = "box.unresolved-wikilink", f"related [[{target}]] matches no memory title in the workspace"
    else:
        code, message = "box.dangling-id", f"{kind} names {target}, which is not in the workspace"
    return _diag(path, code, message, line=_line_of(meta, kind), entry_id=entry_id, severity=Severity.WARNING)


def entry_from_meta(
    meta: Mapping[str, Any],
    body: str,
    *,
    path: str,
    version: str | None,
    resolve: Resolver,
    is_known_id: Callable[[str], bool],
) -> tuple[MemoryEntry, list[Diagnostic]]:
    """Map a memory file's frontmatter and body to a :class:`MemoryEntry`.

    Args:
        meta: The frontmatter (must have ``id`` and ``kind``; the caller orphans files without).
        body: The markdown after the frontmatter, exactly.
        path: Workspace-relative file path, for diagnostics.
        version: The file's storage version (becomes ``entry.version``).
        resolve: Title -> id lookup for ``related`` wikilinks (``None`` when unresolved).
        is_known_id: Whether an id exists in the workspace (for ``supersedes`` targets).

    Returns:
        The entry and the diagnostics met while mapping (unresolved wikilinks are warnings).
    """
    diags: list[Diagnostic] = []
    entry_id = unicodedata.normalize("NFC", str(meta["id"]))
    box: dict[str, Any] = {}
    fields: dict[str, Any] = {"id": entry_id, "body": body, "version": version}

    def bad(key: str, message: str, severity: Severity = Severity.ERROR) -> None:
        diags.append(
            _diag(
                path,
                f"box.bad-{key.replace('_', '-')}",
                message,
                line=_line_of(meta, key),
                entry_id=entry_id,
                severity=severity,
            )
        )
        if key in meta:
            box[key] = plain(meta[key])

    diags.extend(_form_diags(meta, entry_id, path))

    extra_ns: dict[str, Any] = {}
    memcore = meta.get(MEMCORE_KEY)
    if memcore is None:
        pass
    elif isinstance(memcore, Mapping):
        extra_ns = plain(memcore)
    else:
        bad(MEMCORE_KEY, "the 'memcore' key must be a mapping")

    raw_kind = str(meta["kind"])
    if raw_kind in BOX_KINDS:
        kind = _KINDS[raw_kind]
        wanted = extra_ns.get("kind")
        if isinstance(wanted, str) and wanted in Kind.__members__.values() and box_kind(Kind(wanted)) == raw_kind:
            kind = Kind(wanted)
        fields["kind"] = kind
    else:
        bad("kind", f"kind {raw_kind!r} is not one of {', '.join(BOX_KINDS)}; read as note")
        fields["kind"] = Kind.NOTE

    raw_status = meta.get("status")
    if raw_status is not None:
        if str(raw_status) in BOX_STATUSES:
            status = _STATUSES[str(raw_status)]
            wanted = extra_ns.get("status")
            if (
                isinstance(wanted, str)
                and wanted in Status.__members__.values()
                and box_status(Status(wanted)) == str(raw_status)
            ):
                status = Status(wanted)
            fields["status"] = status
        else:
            bad("status", f"status {raw_status!r} is not one of {', '.join(BOX_STATUSES)}; read as unknown")
            fields["status"] = Status.UNKNOWN

    # Text fields: a list or mapping (``title: [a, b]``) is reported and kept as written in
    # extra["box"], never turned into its Python repr; writing the entry back writes it unchanged.
    for key, field_name in (("slug", None), ("title", "title"), ("team", "scope"), ("agent", "source")):
        value = meta.get(key)
        if value is None:
            continue
        if not is_scalar(value):
            shape = "a mapping" if isinstance(value, Mapping) else "a list"
            bad(
                key,
                f"{key} must be a single text value, not {shape} ({plain(value)!r}); write it as "
                f"{key}: <text> (the entry reads it as empty until then)",
            )
            continue
        if field_name is None:
            box[key] = text_of(value)
        else:
            fields[field_name] = text_of(value)
    if fields.get("title") == entry_id and extra_ns.get("title") != entry_id:
        fields["title"] = ""  # an untitled memory, written with its id as the wikilink target

    for key in ("created_at", "updated_at", "expires_at"):
        raw = meta.get(key)
        if raw is None:
            continue
        try:
            fields[key] = parse_timestamp(str(raw))
        except ValueError as exc:
            bad(key, f"{key} {str(raw)!r} is not an ISO-8601 UTC timestamp ({exc})")
    if extra_ns.get("date_only") is True or (
        isinstance(meta.get("created_at"), str) and len(str(meta["created_at"]).strip()) == 10
    ):
        fields["date_only"] = True

    raw_conf = meta.get("confidence")
    if raw_conf is not None:
        if isinstance(raw_conf, (int, float)) and not isinstance(raw_conf, bool) and 0 <= raw_conf <= 1:
            fields["confidence"] = float(raw_conf)
        else:
            bad("confidence", f"confidence {plain(raw_conf)!r} is not a number from 0 to 1")

    tags = meta.get("tags")
    if tags is not None:
        if isinstance(tags, list) and all(type(t) is str for t in tags):
            fields["tags"] = [t for t in tags if t.strip()]  # what the general case below gives
        elif isinstance(tags, list):
            fields["tags"] = [str(text_of(t)) for t in tags if is_scalar(t) and t is not None and str(t).strip()]
            if not all(is_scalar(t) for t in tags):  # never a tag "['a']": the item stays as written
                bad("tags", "a tag must be a single text value, not a list or mapping, e.g. [auth, security]")
        else:
            bad("tags", "tags must be a list, e.g. [auth, security]")

    relations: list[Relation] = []
    related = meta.get("related")
    if related is not None:
        for target, resolved in related_targets(plain(related), resolve):
            relations.append(Relation(type="related", target=target, resolved=resolved))
            if not resolved:
                diags.append(_unresolved_diag(meta, "related", target, entry_id, path))

    def id_edge(kind: str, target: str) -> None:
        known = is_known_id(target)
        relations.append(Relation(type=kind, target=target, resolved=known))
        if not known:
            diags.append(_unresolved_diag(meta, kind, target, entry_id, path))

    supersedes = meta.get("supersedes")
    if supersedes is not None:
        for target in plain(supersedes) if isinstance(supersedes, list) else [plain(supersedes)]:
            if target:
                id_edge("supersedes", str(target))
    superseded_by = meta.get("superseded_by")
    if superseded_by is not None and str(superseded_by).strip():
        id_edge("superseded_by", str(superseded_by).strip())
    extra_relations = extra_ns.get("relations") or []
    if not isinstance(extra_relations, list):
        bad(MEMCORE_KEY, "memcore.relations must be a list of {type, target, resolved}")
        extra_relations = []
    for item in extra_relations:
        try:
            relations.append(Relation.model_validate(item))
        except ValidationError:
            bad(MEMCORE_KEY, "memcore.relations holds an item that is not {type, target, resolved}")
    order = extra_ns.get("relation_order")
    if isinstance(order, list) and sorted(map(str, order)) == sorted(str([r.type, r.target]) for r in relations):
        pending = list(relations)
        ordered: list[Relation] = []
        for pair in order:
            match = next((r for r in pending if [r.type, r.target] == pair), None)
            if match is None:  # e.g. a pair written as a string: keep the file's own order
                ordered = []
                break
            pending.remove(match)
            ordered.append(match)
        relations = ordered or relations
    fields["relations"] = relations

    if isinstance(extra_ns.get("parent"), str) and extra_ns["parent"]:
        fields["parent"] = extra_ns["parent"]
    extra: dict[str, Any] = {}
    shadowed: dict[str, Any] = {}
    other = extra_ns.get("extra")
    if isinstance(other, Mapping):
        for ns, values in other.items():
            if ns == "box" and isinstance(values, Mapping):
                shadowed = dict(values)
            elif isinstance(values, Mapping):
                extra[str(ns)] = dict(values)
    unknown_memcore = {k: v for k, v in extra_ns.items() if k not in _MEMCORE_KNOWN}
    if unknown_memcore:
        box[MEMCORE_KEY] = unknown_memcore

    for key, value in meta.items():
        if str(key) not in _HANDLED:
            box[str(key)] = plain(value)
    box.update(shadowed)
    if box:
        extra["box"] = box
    fields["extra"] = extra
    try:
        return _construct(fields), diags
    except ValidationError as exc:  # pragma: no cover - fields are checked above
        diags.append(_diag(path, "box.invalid", f"cannot read as a memory: {exc}", entry_id=entry_id))
        fields.pop("relations", None)
        return MemoryEntry(id=entry_id, body=body, version=version), diags


#: The keys :func:`entry_from_plain` maps (a file with any other key: :func:`entry_from_meta`):
#: the schema's fields memcore maps and the ``memcore`` key.
_PLAIN_KEYS = _HANDLED
#: The keys of a ``memcore`` mapping :func:`entry_from_plain` maps (what memcore writes for a
#: kind or status Box-memory has no name of its own for, and for a date without a time).
_PLAIN_MEMCORE_KEYS = frozenset({"kind", "status", "date_only"})
_BOX_KIND_OF = {name: _KINDS[name] for name in BOX_KINDS}
_BOX_STATUS_OF = {name: _STATUSES[name] for name in BOX_STATUSES}


def entry_from_plain(
    meta: dict[str, Any],
    body: str,
    *,
    version: str | None,
    resolve: Resolver,
    is_known_id: Callable[[str], bool],
) -> MemoryEntry | None:
    """Return ``entry_from_meta(meta, body, ...)[0]`` for the frontmatter memcore writes, or ``None``.

    The iteration's mapping (no diagnostics): for an exact ``dict`` whose keys are all in
    :data:`_PLAIN_KEYS` and whose values are what such a file holds (text in ASCII, a box
    kind and status, UTC timestamps, a confidence from 0 to 1, lists of text, a ``memcore``
    mapping of at most ``kind``, ``status`` and ``date_only``), the entry
    :func:`entry_from_meta` maps it to, built without its general checks. ``None`` for
    anything else (a value it would report, another key, non-ASCII text, the fast paths off):
    the caller maps the file with :func:`entry_from_meta`. ``plugins/memcore-box/tests/
    test_box_iterate_plain.py`` compares the two.

    Args:
        meta: The frontmatter as plain Python (:func:`memcore_box._scan.flat_meta`).
        body: The markdown after the frontmatter.
        version: The file's storage version.
        resolve: Title -> id lookup for ``related`` wikilinks.
        is_known_id: Whether an id exists in the workspace (for ``supersedes`` targets).
    """
    if type(meta) is not dict or not _PLAIN_KEYS.issuperset(meta) or not frontmatter.FAST_PATHS:
        return None
    entry_id, raw_kind = meta["id"], meta["kind"]
    if type(entry_id) is not str or not entry_id.isascii() or type(raw_kind) is not str:
        return None
    kind = _BOX_KIND_OF.get(raw_kind)
    if kind is None:
        return None
    get = meta.get
    extra_ns = get(MEMCORE_KEY)
    if extra_ns is not None:
        if type(extra_ns) is not dict or not _PLAIN_MEMCORE_KEYS.issuperset(extra_ns):
            return None
        wanted = extra_ns.get("kind")
        if isinstance(wanted, str) and wanted in Kind.__members__.values() and box_kind(Kind(wanted)) == raw_kind:
            kind = Kind(wanted)
    fields: dict[str, Any] = {"id": entry_id, "body": body, "version": version, "kind": kind}
    value = get("status")
    if value is not None:
        status = _BOX_STATUS_OF.get(value) if type(value) is str else None
        if status is None:
            return None
        if extra_ns is not None:
            wanted = extra_ns.get("status")
            if (
                isinstance(wanted, str)
                and wanted in Status.__members__.values()
                and box_status(Status(wanted)) == value
            ):
                status = Status(wanted)
        fields["status"] = status
    box: dict[str, Any] = {}
    for key, name in (("slug", ""), ("title", "title"), ("team", "scope"), ("agent", "source")):
        value = get(key)
        if value is None:
            continue
        if type(value) is not str or not value.isascii():
            return None  # a number, a boolean, a list: entry_from_meta's text rules decide
        if name:
            fields[name] = value
        else:
            box[key] = value
    if fields.get("title") == entry_id:
        fields["title"] = ""  # the untitled spelling (no memcore.title here)
    for key in ("created_at", "updated_at", "expires_at"):
        value = get(key)
        if value is None:
            continue
        if type(value) is not str or len(value.strip()) == 10:
            return None  # a date alone (date_only), or not text
        try:
            fields[key] = parse_timestamp(value)
        except ValueError:
            return None
    if extra_ns is not None and extra_ns.get("date_only") is True:
        fields["date_only"] = True
    value = get("confidence")
    if value is not None:
        if (type(value) is not float and type(value) is not int) or not 0 <= value <= 1:
            return None
        fields["confidence"] = float(value)
    value = get("tags")
    if value is not None:
        if type(value) is not list or not all(type(tag) is str and tag.isascii() for tag in value):
            return None
        fields["tags"] = [tag for tag in value if tag.strip()]
    relations: list[Relation] = []
    value = get("related")
    if value is not None:
        if not _ascii_texts(value):
            return None
        for target, resolved in related_targets(value, resolve):
            relations.append(Relation(type="related", target=target, resolved=resolved))
    value = get("supersedes")
    if value is not None:
        if not _ascii_texts(value):
            return None
        for target in value if type(value) is list else [value]:
            if target:
                relations.append(Relation(type="supersedes", target=target, resolved=is_known_id(target)))
    value = get("superseded_by")
    if value is not None:
        if type(value) is not str or not value.isascii():
            return None
        if value.strip():
            target = value.strip()
            relations.append(Relation(type="superseded_by", target=target, resolved=is_known_id(target)))
    fields["relations"] = relations
    fields["extra"] = {"box": box} if box else {}
    return _copy_blank(fields)


#: The frontmatter keys :func:`written_entry` reads back as fields (every other key: the general path).
_WRITTEN_KEYS = frozenset(
    {"id", "slug", "title", "kind", "status", "team", "agent", "created_at", "updated_at", "confidence", "tags"}
    | {"expires_at", MEMCORE_KEY}
)
_WRITTEN_MEMCORE_KEYS = frozenset({"kind", "status", "date_only", "title", "parent", "extra"})
_TEXT_KEYS = (("slug", ""), ("title", "title"), ("team", "scope"), ("agent", "source"))


def write_fast() -> bool:
    """Whether Box's write fast paths are on (``MEMCORE_BOX_WRITE_FAST``, and the YAML fast paths).

    :func:`written_entry`, and ``add``'s frontmatter, bytes and index row written directly for
    the plain cases; off: everything through the general functions.
    """
    return frontmatter.FAST_PATHS and switch_on("MEMCORE_BOX_WRITE_FAST")


def written_entry(entry: MemoryEntry, meta: Mapping[str, Any]) -> MemoryEntry | None:
    """Return the entry ``meta`` (what :func:`meta_from_entry` gave for ``entry``) reads as, when it holds no error.

    Equal to ``entry_from_meta(meta, entry.body, path=..., version=None, ...)[0]``, fields set
    included, and built from the values :func:`meta_from_entry` took from ``entry`` without its
    general checks, for the frontmatter ``add`` writes for an entry with no relation and no
    ``extra["box"]`` key but ``slug``: such a frontmatter maps through no workspace lookup, and
    each check :func:`entry_from_meta` would report as an error (a missing or non-text field, a
    kind or status Box has no word for, a timestamp that does not parse, a confidence outside
    0..1, a companion without its block, a value the model refuses) is made here, where any
    of them gives ``None``. ``None`` also for anything else (a relation, another key, the fast
    paths off): the caller checks and maps ``meta`` as before. ``plugins/memcore-box/tests/
    test_box_write_fast.py`` compares the two over the benchmarks' corpus and the authors' samples.

    Args:
        entry: The entry ``add`` writes (its working copy: id, ``created_at`` and ``updated_at`` set).
        meta: ``meta_from_entry(entry, slug=..., title_of=...)``, no ``existing``.
    """
    if entry.relations or not _WRITTEN_KEYS.issuperset(meta) or not write_fast():
        return None
    extra: dict[str, Any] = {}
    for ns, values in entry.extra.items():
        if ns == "box":
            if type(values) is not dict or not {"slug"}.issuperset(values):
                return None
        elif type(values) is not dict:
            return None
        else:
            extra[ns] = plain(values)  # what reading memcore.extra back gives: a plain copy
    memcore = meta.get(MEMCORE_KEY) or {}
    if type(memcore) is not dict or not _WRITTEN_MEMCORE_KEYS.issuperset(memcore):
        return None
    raw_id, raw_kind, raw_status = meta.get("id"), meta.get("kind"), meta.get("status")
    if type(raw_id) is not str or raw_kind not in _BOX_KIND_OF or raw_status not in _BOX_STATUS_OF:
        return None
    if raw_kind == "companion":
        return None  # its companion_for block is checked by validate's rules
    entry_id = raw_id if raw_id.isascii() else unicodedata.normalize("NFC", raw_id)
    kind, status = _KINDS[raw_kind], _STATUSES[raw_status]
    wanted = memcore.get("kind")
    if isinstance(wanted, str) and wanted in Kind.__members__.values() and box_kind(Kind(wanted)) == raw_kind:
        kind = Kind(wanted)
    wanted = memcore.get("status")
    if isinstance(wanted, str) and wanted in Status.__members__.values() and box_status(Status(wanted)) == raw_status:
        status = Status(wanted)
    fields: dict[str, Any] = {"id": entry_id, "body": entry.body, "version": None, "kind": kind, "status": status}
    box: dict[str, Any] = {}
    for key, name in _TEXT_KEYS:
        value = meta.get(key)
        if value is None:
            if key in ("slug", "title"):
                return None  # a required field missing: an error
            continue
        if type(value) is not str:
            return None
        if name:
            fields[name] = value
        else:
            box[key] = value
    if fields["title"] == entry_id and memcore.get("title") != entry_id:
        fields["title"] = ""  # an untitled memory, written with its id as the wikilink target
    for key in ("created_at", "updated_at", "expires_at"):
        value = meta.get(key)
        if value is None:
            if key != "expires_at":
                return None
            continue
        try:
            fields[key] = parse_timestamp(str(value))
        except ValueError:
            return None
    if memcore.get("date_only") is True or len(str(meta["created_at"]).strip()) == 10:
        fields["date_only"] = True
    value = meta.get("confidence")
    if value is not None:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
            return None
        fields["confidence"] = float(value)
    if meta.get("tags") is not None:  # flow_list(entry.tags): the same strings, not iterated through ruamel
        tags = entry.tags
        if not all(type(tag) is str for tag in tags):
            return None
        fields["tags"] = [tag for tag in tags if tag.strip()]
    fields["relations"] = []
    parent = memcore.get("parent")
    if parent is not None and type(parent) is not str:
        return None
    if parent:
        fields["parent"] = parent
    if box:
        extra["box"] = box
    fields["extra"] = extra
    try:
        return _construct(fields)
    except ValidationError:
        return None


def plain_diagnostics(meta: Mapping[str, Any], entry: MemoryEntry, *, path: str) -> list[Diagnostic]:
    """Return ``entry_from_meta(meta, ...)[1]`` for a file :func:`entry_from_plain` mapped to ``entry``.

    Such a file has no value :func:`entry_from_meta` reports as an error, so its diagnostics are
    the ones that do not depend on a value's form, in :func:`entry_from_meta`'s order: an id off
    the ULID form, each missing required field, then one per unresolved relation in
    ``entry.relations`` (a ``related`` wikilink no title matches, a ``supersedes`` or
    ``superseded_by`` id no file has), each on the line :func:`entry_from_meta` names.

    Args:
        meta: The frontmatter whose plain copy :func:`entry_from_plain` was given (its key
            lines, when it knows them, as for :func:`entry_from_meta`).
        entry: What :func:`entry_from_plain` returned for it (not ``None``).
        path: Workspace-relative file path, for the diagnostics.
    """
    entry_id = entry.id
    diags = _form_diags(meta, entry_id, path)
    for relation in entry.relations:
        if not relation.resolved:
            diags.append(_unresolved_diag(meta, relation.type, relation.target, entry_id, path))
    return diags


def _ascii_texts(value: Any) -> bool:
    """Whether ``value`` is ASCII text or a list of ASCII texts."""
    if type(value) is str:
        return value.isascii()
    return type(value) is list and all(type(item) is str and item.isascii() for item in value)


_BLANK = MemoryEntry()
_BLANK_VALUES = dict(_BLANK.__dict__)
_new_entry = MemoryEntry.__new__
_set = object.__setattr__
assert _BLANK.__pydantic_extra__ is None and _BLANK.__pydantic_private__ is None  # what _copy_blank sets
_TEXT_FIELDS = ("id", "title", "body", "source", "scope", "parent", "version")


def _json_text(value: Any, depth: int = 0) -> bool:
    """Return whether ``value`` is JSON ``json.dumps(allow_nan=False)`` writes, as UTF-8 text, surely.

    Exact dicts with string keys, lists, strings without lone surrogates, ``None``, booleans,
    integers and finite floats, nested at most 32 deep; ``False`` (let the model decide) for
    anything else.
    """
    kind = type(value)
    if kind is str:
        return utf8_text(value)
    if value is None or kind is bool or kind is int:
        return True
    if kind is float:
        return bool(value - value == 0)  # neither nan nor an infinity
    if depth >= 32:
        return False
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str or not utf8_text(k) or not _json_text(v, depth + 1):
                return False
        return True
    if kind is list:
        for v in value:
            if not _json_text(v, depth + 1):
                return False
        return True
    return False


def _construct(fields: dict[str, Any]) -> MemoryEntry:
    """Return ``MemoryEntry(**fields)`` for the fields :func:`entry_from_meta` built, cheaply where it can.

    ``entry_from_meta`` gives every field its type already: enums, UTC datetimes from
    ``parse_timestamp``, a float in 0..1, tags as non-empty strings, validated relations. What
    the model's validators would still do is refuse lone surrogates and NFC-normalise ``title``
    and ``tags`` (``id`` is already NFC): done here, and the entry is a copy of a blank entry
    with these fields (no validation pass, cheaper than ``model_construct``), equal to the
    validated one, with the same fields set. With an
    ``extra`` that :func:`_json_text` cannot clear (the model's JSON check decides), or with the fast paths off
    (:data:`memcore.frontmatter.FAST_PATHS`, ``MEMCORE_YAML_FAST=0``), the model validates.

    Raises:
        ValidationError: As ``MemoryEntry(**fields)``.
    """
    if not frontmatter.FAST_PATHS or not _json_text(fields.get("extra")):
        return MemoryEntry(**fields)
    try:
        for name in _TEXT_FIELDS:
            value = fields.get(name)
            if value is not None and not value.isascii():
                value.encode("utf-8")  # a lone surrogate raises
        tags = fields.get("tags")
        if tags:
            for tag in tags:
                if not tag.isascii():
                    tag.encode("utf-8")
    except UnicodeEncodeError:
        return MemoryEntry(**fields)  # the model's own error
    title = fields.get("title")
    if title is not None and not title.isascii():
        fields["title"] = unicodedata.normalize("NFC", title)
    if tags and not all(tag.isascii() for tag in tags):
        fields["tags"] = [unicodedata.normalize("NFC", tag) for tag in tags]
    return _copy_blank(fields)


def _copy_blank(fields: dict[str, Any]) -> MemoryEntry:
    """Return a copy of a blank entry with ``fields`` set, as they are (no validation); see :func:`_construct`.

    What ``_BLANK.model_copy()`` with ``fields`` put in its ``__dict__`` gives (pydantic's
    ``__copy__`` sets the same four attributes), without the copy's generic steps.
    """
    values = _BLANK_VALUES.copy()
    values.update(fields)
    if "tags" not in fields:
        values["tags"] = []  # never the blank's own list or dict
    if "relations" not in fields:
        values["relations"] = []
    if "extra" not in fields:
        values["extra"] = {}
    entry = _new_entry(MemoryEntry)
    _set(entry, "__dict__", values)
    _set(entry, "__pydantic_extra__", None)
    _set(entry, "__pydantic_fields_set__", set(fields))
    _set(entry, "__pydantic_private__", None)
    return entry


def _ts(value: datetime, existing: Any) -> Any:
    if existing is not None:
        try:
            if parse_timestamp(str(existing)) == value:
                return existing
        except ValueError:
            pass
    return plain_text(format_timestamp(value))


def _companion(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    ordered = {k: value[k] for k in COMPANION_ORDER if k in value}
    ordered.update({k: v for k, v in value.items() if k not in ordered})
    for key in ("reviewed_at", "extracted_at"):
        if isinstance(ordered.get(key), str):
            ordered[key] = plain_text(ordered[key])
    # A list or mapping stays as it is (never its Python repr): the write refuses it by name.
    if ordered.get("file_id") is not None and is_scalar(ordered["file_id"]):
        ordered["file_id"] = DoubleQuotedScalarString(str(ordered["file_id"]))
    return ordered


# The last datetime _stamp formatted and its text (a new memory's updated_at is mostly its created_at).
_last_stamp: tuple[datetime, str] | None = None


def _stamp(value: datetime) -> Any:
    """``_ts(value, None)``: the timestamp as Box writes it, marked to dump unquoted."""
    global _last_stamp
    last = _last_stamp
    if last is not None and last[0] == value:
        return plain_text(last[1])
    text = format_timestamp(value)
    _last_stamp = (value, text)
    return plain_text(text)


def _plain_meta(entry: MemoryEntry, slug: str) -> dict[str, Any] | None:
    """``meta_from_entry(entry, slug=slug, title_of=...)`` for an entry with no ``extra["box"]`` key but ``slug``.

    For an entry without relations (the caller's condition): the same mapping (keys, order,
    values and their types) built without the general steps, none of which applies to such an
    entry (``title_of`` is only asked for relations); ``None`` for any other entry.
    ``plugins/memcore-box/tests/test_box_write_fast.py`` compares the two.
    """
    box = entry.extra.get("box")
    if box and (type(box) is not dict or not {"slug"}.issuperset(box)):
        return None
    entry_id = entry.id
    assert entry_id is not None and entry.created_at is not None and entry.updated_at is not None
    kind, status = entry.kind.value, entry.status.value
    out: dict[str, Any] = {
        "id": entry_id,
        "slug": slug,
        "title": entry.title or entry_id,
        "kind": kind if kind in BOX_KINDS else box_kind(entry.kind),
        "status": status if status in BOX_STATUSES else box_status(entry.status),
    }
    if entry.scope is not None:
        out["team"] = entry.scope
    if entry.source is not None:
        out["agent"] = entry.source
    out["created_at"] = _stamp(entry.created_at)
    out["updated_at"] = _stamp(entry.updated_at)
    if entry.confidence is not None:
        out["confidence"] = entry.confidence
    if entry.tags:
        out["tags"] = flow_list(entry.tags)
    if entry.expires_at is not None:
        out["expires_at"] = _stamp(entry.expires_at)
    memcore: dict[str, Any] = {}
    if kind not in BOX_KINDS:
        memcore["kind"] = kind
    if status not in BOX_STATUSES:
        memcore["status"] = status
    if entry.date_only:
        memcore["date_only"] = True
    if entry.title and entry.title == entry_id:
        memcore["title"] = entry.title
    if entry.parent is not None:
        memcore["parent"] = entry.parent
    foreign = {ns: values for ns, values in entry.extra.items() if ns != "box"}
    if foreign:
        memcore["extra"] = foreign
    if memcore:
        out[MEMCORE_KEY] = memcore
    return out


def meta_from_entry(
    entry: MemoryEntry,
    *,
    slug: str,
    title_of: Resolver,
    existing: Mapping[str, Any] | None = None,
    resolve: Resolver | None = None,
) -> dict[str, Any]:
    """Return the frontmatter mapping for ``entry``, keys in :data:`FIELD_ORDER` then the rest.

    Absent optional fields are omitted (never null). ``entry.id``, ``created_at`` and
    ``updated_at`` must be set.

    Args:
        entry: The entry to write.
        slug: Its slug (already made unique by the caller).
        title_of: Id -> title, to write ``related`` relations as ``"[[Title]]"``.
        existing: The file's current frontmatter on update: values that mean the same thing
            (a timestamp in another spelling, an aliased wikilink) are kept as written.
        resolve: Title -> id lookup, to tell whether ``existing``'s ``related`` list still says
            what the entry says.
    """
    assert entry.id is not None and entry.created_at is not None and entry.updated_at is not None
    if existing is None and not entry.relations and write_fast():
        quick = _plain_meta(entry, slug)
        if quick is not None:
            return quick
    box: dict[str, Any] = dict(entry.extra.get("box") or {})
    old = existing or {}
    out: dict[str, Any] = {"id": entry.id, "slug": slug, "title": entry.title}
    # A text field the file holds as a list or mapping (read as empty, kept raw in extra["box"]):
    # an update that leaves the field empty writes it back exactly as the file has it; a value
    # set replaces it. Any other such value is no field value: it is kept under memcore.extra.box
    # (read back into extra["box"]), so no write makes a file with a list for a title.
    raw_text: dict[str, Any] = {}
    odd_text: dict[str, Any] = {}
    for key, have in (("title", entry.title), ("team", entry.scope), ("agent", entry.source)):
        if key not in box or is_scalar(box[key]):
            continue
        value = box.pop(key)
        if not have and key in old and plain(old[key]) == plain(value):
            raw_text[key] = old[key]
        else:
            odd_text[key] = value
    if "title" in raw_text:
        out["title"] = raw_text["title"]
    elif not entry.title:
        # The schema's wikilink target is the title: an untitled memory is written with its id
        # as title, so the ``[[<id>]]`` links to it resolve for every reader (read back as "").
        out["title"] = entry.id

    raw_kind = box.pop("kind", None)
    out["kind"] = str(raw_kind) if raw_kind is not None and entry.kind == Kind.NOTE else box_kind(entry.kind)
    raw_status = box.pop("status", None)
    out["status"] = (
        str(raw_status) if raw_status is not None and entry.status == Status.UNKNOWN else box_status(entry.status)
    )
    if entry.scope is not None:
        out["team"] = entry.scope
    elif "team" in raw_text:
        out["team"] = raw_text["team"]
    if entry.source is not None:
        out["agent"] = entry.source
    elif "agent" in raw_text:
        out["agent"] = raw_text["agent"]
    out["created_at"] = _ts(entry.created_at, old.get("created_at"))
    out["updated_at"] = _ts(entry.updated_at, old.get("updated_at"))
    if entry.confidence is not None:
        out["confidence"] = entry.confidence
    if entry.tags:
        out["tags"] = flow_list(entry.tags)
    raw_tags = box.get("tags")
    if isinstance(raw_tags, list) and not all(is_scalar(t) for t in raw_tags):
        # a tags list holding a list (read as its text items only): as the file has it while
        # the entry's tags are those items; else kept under memcore.extra.box
        box.pop("tags")
        items = [str(text_of(t)) for t in raw_tags if is_scalar(t) and t is not None and str(t).strip()]
        if "tags" in old and plain(old["tags"]) == plain(raw_tags) and list(entry.tags) == items:
            out["tags"] = old["tags"]
        else:
            odd_text["tags"] = raw_tags

    related = [r for r in entry.relations if r.type == "related"]
    if related:
        wanted = [(r.target, r.resolved) for r in related]
        old_related = old.get("related")
        if old_related is not None and resolve is not None and related_targets(plain(old_related), resolve) == wanted:
            out["related"] = old_related
        else:
            items = CommentedSeq()
            for rel in related:
                title = title_of(rel.target) if rel.resolved else None
                items.append(DoubleQuotedScalarString(f"[[{title or rel.target}]]"))
            out["related"] = items
    supersedes = [r.target for r in entry.relations if r.type == "supersedes"]
    if supersedes:
        out["supersedes"] = flow_list(supersedes)
    superseded_by = [r.target for r in entry.relations if r.type == "superseded_by"]
    if superseded_by:
        out["superseded_by"] = superseded_by[0]
    if entry.expires_at is not None:
        out["expires_at"] = _ts(entry.expires_at, old.get("expires_at"))

    memcore: dict[str, Any] = dict(box.pop(MEMCORE_KEY, None) or {})
    if entry.kind.value not in BOX_KINDS:
        memcore["kind"] = entry.kind.value
    if entry.status.value not in BOX_STATUSES:
        memcore["status"] = entry.status.value
    if entry.date_only:
        memcore["date_only"] = True
    if entry.title and entry.title == entry.id:
        memcore["title"] = entry.title  # a title equal to the id: not the untitled spelling
    if entry.parent is not None:
        memcore["parent"] = entry.parent
    others = [r for r in entry.relations if r.type not in {"related", "supersedes", "superseded_by"}]
    others += [Relation(type="superseded_by", target=t) for t in superseded_by[1:]]
    if others:
        memcore["relations"] = [r.model_dump(mode="json") for r in others]
    foreign: dict[str, Any] = {ns: values for ns, values in entry.extra.items() if ns != "box"}

    box.pop("slug", None)
    shadowed: dict[str, Any] = dict(odd_text)
    for key, value in box.items():
        if key == MEMCORE_KEY:
            continue
        if key in out:
            # A key of extra["box"] that is also a field written from the entry itself (e.g.
            # "id"): kept under memcore.extra.box so that it survives, read back into extra["box"].
            if plain(out[key]) != plain(value):
                shadowed[key] = value
            continue
        if key == "companion_for":
            value = _companion(value)
        if key in old and plain(old[key]) == plain(value):
            value = old[key]
        out[key] = value

    if shadowed:
        foreign["box"] = shadowed
    if foreign:
        memcore["extra"] = foreign
    canonical = related + [r for r in entry.relations if r.type == "supersedes"]
    canonical += [r for r in entry.relations if r.type == "superseded_by"][:1] + others
    if [(r.type, r.target) for r in canonical] != [(r.type, r.target) for r in entry.relations]:
        memcore["relation_order"] = [[r.type, r.target] for r in entry.relations]
    rank = {k: i for i, k in enumerate(FIELD_ORDER)}
    ordered = {k: out[k] for k in sorted((k for k in out if k in rank), key=rank.__getitem__)}
    ordered.update({k: v for k, v in out.items() if k not in rank})
    if memcore:
        ordered[MEMCORE_KEY] = memcore
    return ordered


def file_stem(entry: MemoryEntry) -> tuple[str, str]:
    """Return the slug ``add`` starts from for ``entry`` (before a ``-2``… suffix) and its file's kind name.

    The slug comes from ``extra["box"]["slug"]``, else the title; an untitled memory (an
    observation from WhiteBox or Maka) is named after the body's first words, or its id, so
    thousands of them never share one slug. The kind name is the Box kind, or for a note
    ``extra["box"]["kind"]`` (a kind Box has no word for, read as note).
    """
    box = entry.extra.get("box") or {}
    requested = box.get("slug")
    if requested:
        base = slugify(str(requested))
    elif entry.title.strip():
        base = slugify(entry.title)
    else:
        words = " ".join(entry.body.split()[:8])
        base = slugify(words) if re.search(r"[A-Za-z0-9]", words) else f"memo-{(entry.id or '')[-10:].lower()}"
    raw_kind = box.get("kind")
    kind_name = slugify(str(raw_kind)) if raw_kind is not None and entry.kind == Kind.NOTE else box_kind(entry.kind)
    return base, kind_name


_EPOCH = datetime(1, 1, 1, tzinfo=UTC)


def _working_copy(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` that a write may change without touching the caller's.

    Field assignments change only the copy; ``extra`` is copied deeply, the only nested data a
    write changes in place (a companion's checksums, quoting while dumping). ``tags`` and
    ``relations`` are shared: writes only read them. Cheaper than a deep copy of everything.
    """
    update: dict[str, Any] = {"extra": json_copy(entry.extra)}
    if "\r" in entry.body:  # the file has its own line breaks: a read gives LF (models.lf_body)
        update["body"] = lf_body(entry).body
    return entry.model_copy(update=update)


def _sort_key(created_at: Any, entry_id: str) -> tuple[datetime, str]:
    try:
        return parse_timestamp(str(created_at)), entry_id
    except (ValueError, TypeError):
        return _EPOCH, entry_id
