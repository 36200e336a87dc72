"""The codec: a Claude Code memory file <-> :class:`~memcore.models.MemoryEntry` (the table is :mod:`.mapping`).

:func:`decode` reads the native slots, then lets memcore's free data override them.
:func:`encode` writes the native slots, reads the result back with :func:`decode`, and puts in
the free data exactly the fields that did not come back equal, so an entry whose fields all fit
is written without any memcore key; the final text is read back once more and must give the
entry (else :class:`~memcore.errors.InvalidEntryError`, nothing written).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from memcore.errors import InvalidEntryError
from memcore.frontmatter import FLUSH, parse_frontmatter, plain_text, split_frontmatter
from memcore.layout import apply_layout, open_blocks, read_layout
from memcore.mapping import format_utc, parse_iso_time
from memcore.models import Diagnostic, Kind, MemoryEntry, Relation
from memcore.storage import version_token
from memcore_claudecode._parse import Doc, ImportRef, IndexLine, first_heading, parse_doc, wikilinks
from memcore_claudecode.mapping import (
    FORMAT,
    FREE_KEY,
    KIND_OF_TYPE,
    LOCATION_KEYS,
    NATIVE_KEYS,
    RELATION_IMPORTS,
    RELATION_LINK,
    ROLE_KINDS,
    TYPE_OF_KIND,
)

__all__ = ["FREE_FIELDS", "Context", "decode", "encode", "same_content", "written_order"]

#: Core fields the free data may hold (``id`` and ``body`` are always native).
FREE_FIELDS: tuple[str, ...] = tuple(
    "kind title status tags confidence source created_at updated_at date_only scope relations parent expires_at".split()
)
_MISSING = object()


@dataclass
class Context:
    """What reading one file needs to know of the rest of the store.

    Attributes:
        ids: Every entry's id (path).
        names: Topic ``name`` or file stem -> path, for ``[[slug]]`` links.
        index: Target path -> its ``MEMORY.md`` line.
        imports: ``(path, text) -> the file's resolved @imports`` (the store checks each target).
    """

    ids: set[str]
    names: dict[str, str]
    index: dict[str, IndexLine]
    imports: Callable[[str, str], list[ImportRef]]


def _split_native(meta: dict[str, Any], cc: dict[str, Any]) -> dict[str, Any]:
    """Take the native keys out of a topic's frontmatter into ``cc``; return the core fields they give."""
    fields: dict[str, Any] = {}
    rest = dict(meta)
    type_, modified = _MISSING, _MISSING
    nested = rest.get("metadata")
    if isinstance(nested, dict):
        nested = dict(nested)
        type_ = nested.pop("type", _MISSING)
        modified = nested.pop("modified", _MISSING)
        if nested:
            rest["metadata"] = nested
        else:
            del rest["metadata"]
    if "type" in rest and type_ is _MISSING:
        cc["shape"] = "top-level"
        type_ = rest.pop("type")
    if "modified" in rest and modified is _MISSING:
        modified = rest.pop("modified")
    if isinstance(type_, str) and type_ in KIND_OF_TYPE:
        fields["kind"] = KIND_OF_TYPE[type_]
    elif type_ is not _MISSING:
        cc["type"] = type_
    if modified is not _MISSING:
        stamp = (parse_iso_time(modified, naive_utc=False) or (None,))[0] if isinstance(modified, str) else None
        if stamp is None:
            holder = rest.setdefault("metadata", {}) if cc.get("shape") != "top-level" else rest
            holder["modified"] = modified  # not a time: kept as it is
        else:
            fields["updated_at"] = fields["created_at"] = stamp
    name = rest.pop("name", _MISSING)
    if isinstance(name, str):
        fields["title"] = name
    elif name is not _MISSING:
        rest["name"] = name
    if "description" in rest:
        cc["description"] = rest.pop("description")
    if rest:
        cc["frontmatter"] = rest
    return fields


def decode(doc: Doc, role: str, ctx: Context) -> tuple[MemoryEntry, list[Diagnostic]]:
    """Return the entry ``doc`` holds and what decoding found (bad free data).

    Args:
        doc: The parsed file.
        role: Its role (:func:`memcore_claudecode._parse.role_of`, or ``"import"``).
        ctx: The rest of the store.
    """
    cc: dict[str, Any] = {"path": doc.path}
    if role != "topic":
        cc["role"] = role
    fields: dict[str, Any] = {"kind": ROLE_KINDS[role]}
    stem = doc.path.rpartition("/")[2].removesuffix(".md")
    line = ctx.index.get(doc.path)
    if role == "topic":
        fields["title"] = line.title if line is not None else stem
        if doc.meta is not None:
            fields.update(_split_native(doc.meta, cc))
        links = wikilinks(doc.body)
        fields["relations"] = [
            Relation(type=RELATION_LINK, target=ctx.names.get(name, name), resolved=name in ctx.names) for name in links
        ]
        if line is None:
            cc["indexed"] = False
        else:
            if line.title != fields["title"]:
                cc["index_title"] = line.title
            if line.hook != (cc.get("description") if isinstance(cc.get("description"), str) else ""):
                cc["hook"] = line.hook
    else:
        fields["title"] = first_heading(doc.body) or doc.path
        if doc.meta:
            cc["frontmatter"] = dict(doc.meta)
        relations: dict[tuple[str, str], Relation] = {}
        for ref in ctx.imports(doc.path, doc.body):
            target = ref.target if ref.target is not None and ref.problem in (None, "missing") else ref.token
            resolved = ref.problem is None and target in ctx.ids
            relation = Relation(type=RELATION_IMPORTS, target=target, resolved=resolved)
            relations.setdefault((RELATION_IMPORTS, target), relation)
        fields["relations"] = list(relations.values())
    extra: dict[str, Any] = {FORMAT: cc}
    problems: list[Diagnostic] = []
    free = dict(doc.free)
    for key in FREE_FIELDS:
        if key in free:
            fields[key] = free.pop(key)
    more = free.pop("extra", {})
    for ns, values in (more if isinstance(more, dict) else {}).items():
        if isinstance(values, dict):
            extra.setdefault(str(ns), {}).update(values)
    try:
        entry = MemoryEntry.model_validate({"id": doc.path, "body": doc.body, **fields, "extra": extra})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        why = f"memcore's free data holds an invalid {where} ({first['msg']}); it is ignored"
        problems.append(Diagnostic(path=doc.path, line=1, code=f"{FORMAT}.free-data", message=why, entry_id=doc.path))
        base = {k: v for k, v in fields.items() if k not in doc.free}
        entry = MemoryEntry.model_validate({"id": doc.path, "body": doc.body, **base, "extra": {FORMAT: cc}})
    if role == "topic" and doc.meta is not None and not doc.broken:  # how its frontmatter is laid out
        keys, nested = written_order(entry, entry.extra[FORMAT])
        if layout := read_layout(doc.text[: len(doc.text) - len(doc.body)], doc.meta, keys, nested):
            entry.extra[FORMAT]["layout"] = layout
    entry.version = version_token(doc.raw, "" if line is None else f"{line.title}\0{line.target}\0{line.hook}")
    return entry, problems


def written_order(entry: MemoryEntry, cc: dict[str, Any]) -> tuple[list[str], dict[str, list[str]] | None]:
    """The keys and ``{"metadata": its keys}`` (``None``: none) :func:`_native_meta` gives a new topic, in order."""
    found = cc.get("frontmatter")
    rest: dict[str, Any] = found if isinstance(found, dict) else {}
    stamp = ["modified"] if entry.updated_at is not None else []
    keys = ["name", "description", *(["type", *stamp] if cc.get("shape") == "top-level" else ["metadata"])]
    nested: dict[str, Any] = rest["metadata"] if isinstance(rest.get("metadata"), dict) else {}
    inner = None if "type" in keys else {"metadata": ["type", *nested, *(k for k in stamp if k not in nested)]}
    return [*keys, *(k for k in rest if k not in keys)], inner


def _relation_key(relations: list[Relation]) -> list[tuple[str, str, bool]]:
    return sorted((r.type, r.target, r.resolved) for r in relations)


def same_content(written: MemoryEntry, stored: MemoryEntry, *, subset: bool = False) -> bool:
    """Whether ``stored`` holds the content of ``written`` (relations as a set; where-it-is keys of ``extra`` aside).

    With ``subset``, ``stored`` may have ``extra`` keys ``written`` has not (what the store adds on
    its own, e.g. a new topic's ``description``).
    """
    if _relation_key(written.relations) != _relation_key(stored.relations):
        return False
    left, right = written.content_dict(), stored.content_dict()
    for data in (left, right):
        data.pop("relations")
        kept = {
            ns: {k: v for k, v in vs.items() if ns != FORMAT or k not in LOCATION_KEYS | {"layout"}}
            for ns, vs in data["extra"].items()
        }
        data["extra"] = {ns: values for ns, values in kept.items() if values}
    if subset:
        mine, theirs = left.pop("extra"), right.pop("extra")
        if any(theirs.get(ns, {}).get(k, _MISSING) != v for ns, values in mine.items() for k, v in values.items()):
            return False
    return bool(left == right)


def _native_meta(entry: MemoryEntry, cc: dict[str, Any], old: Doc | None, role: str) -> dict[str, Any] | None:
    """Return the frontmatter the native slots give (``None``: the file has no frontmatter)."""
    rest = dict(cc.get("frontmatter") or {}) if isinstance(cc.get("frontmatter"), dict) else {}
    if role != "topic":
        return rest if old is not None and old.meta is not None else rest or None
    if old is not None and old.meta is None:
        return None  # Claude Code never gives a file frontmatter it did not have
    meta: dict[str, Any] = {"name": entry.title}
    description = cc.get("description", _description(entry) if old is None else _MISSING)
    if description is not _MISSING:
        meta["description"] = description
    type_ = cc["type"] if "type" in cc and entry.kind == Kind.NOTE else TYPE_OF_KIND[entry.kind]
    stamp = plain_text(format_utc(entry.updated_at, milliseconds=None)) if entry.updated_at is not None else None
    holder: dict[str, Any] = meta if cc.get("shape") == "top-level" else meta.setdefault("metadata", {})
    nested = rest.pop("metadata", None) if holder is not meta else None
    holder.update({"type": type_, **(nested if isinstance(nested, dict) else {})})
    holder.update({"modified": stamp} if stamp is not None else {})
    meta.update({k: v for k, v in rest.items() if k not in meta})
    if old is not None and old.meta is not None:
        ordered = {k: meta[k] for k in old.meta if k in meta}
        old_nested = old.meta.get("metadata")
        if isinstance(ordered.get("metadata"), dict) and isinstance(old_nested, dict):
            block = ordered["metadata"]
            ordered["metadata"] = {**{k: block[k] for k in old_nested if k in block}, **block}
        meta = {**ordered, **meta}
    return apply_layout(meta, cc.get("layout")) if old is None else meta


def _description(entry: MemoryEntry) -> str:
    """A one-line description for a new topic: the body's first sentence (at most 150 characters), else the title."""
    paragraph: list[str] = []
    for raw in entry.body.split("\n"):
        text = raw.strip().lstrip("#>*- ").strip()
        if text:
            paragraph.append(text)
        elif paragraph:
            break
    text = " ".join(paragraph)
    end = text.find(". ")
    if end >= 20:
        text = text[: end + 1]
    if len(text) > 150:
        text = text[:149].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text or entry.title


def _render(meta: dict[str, Any] | None, body: str, free: dict[str, Any], old: Doc | None, layout: Any = None) -> str:
    if meta is None:
        if not free:
            return body
        blob = json.dumps(free, ensure_ascii=False, separators=(",", ":")).replace("-->", "--\\u003e")
        return f"<!-- {FREE_KEY}: {blob} -->\n{body}"
    wanted = {**meta, FREE_KEY: free} if free else dict(meta)
    yaml_text = open_blocks(FLUSH.dump_mapping(wanted), layout)  # new; an old one: unchanged keys keep their lines
    if old is not None and old.meta is not None and (found := split_frontmatter(old.text)[0]) is not None:
        yaml_text = FLUSH.patch(found, parse_frontmatter(old.text).metadata, wanted, tuple(wanted))
    return f"---\n{yaml_text}---\n{body}"


def encode(entry: MemoryEntry, role: str, old: Doc | None, ctx: Context) -> str:
    """Return the text (``\\n`` line endings) of the file that holds ``entry``.

    Args:
        entry: The entry; its id is the file's path.
        role: The file's role.
        old: The file as it is now (its frontmatter layout and key order are kept), or ``None``.
        ctx: The rest of the store (the entry itself included in ``ctx.ids``).

    Raises:
        InvalidEntryError: The file written would not read back as ``entry``.
    """
    path = str(entry.id)
    cc = {k: v for k, v in (entry.extra.get(FORMAT) or {}).items() if k not in LOCATION_KEYS}
    meta = _native_meta(entry, cc, old, role)
    native = _render(meta, entry.body, {}, old, cc.get("layout"))
    probe, _ = decode(parse_doc(path, native.encode("utf-8")), role, ctx)
    free: dict[str, Any] = {}
    dumped = entry.model_dump(mode="json", include=set(FREE_FIELDS))
    for name in FREE_FIELDS:
        mine, theirs = getattr(entry, name), getattr(probe, name)
        if _relation_key(mine) != _relation_key(theirs) if name == "relations" else mine != theirs:
            free[name] = dumped[name]
    others: dict[str, Any] = {ns: values for ns, values in entry.extra.items() if ns != FORMAT and values}
    unknown = {k: v for k, v in cc.items() if k not in NATIVE_KEYS}
    if unknown:
        others[FORMAT] = unknown
    if others:
        free["extra"] = others
    text = _render(meta, entry.body, free, old, cc.get("layout")) if free else native
    back, problems = decode(parse_doc(path, text.encode("utf-8")), role, ctx)
    if problems or not same_content(entry, back, subset=True):
        got, want = back.content_dict(), entry.content_dict()
        fields = sorted(k for k in want if got.get(k) != want.get(k)) or ["relations"]
        why = f"{', '.join(fields)} would differ"
        raise InvalidEntryError(f"{FORMAT}: {path} would not read back as the entry ({why}); nothing was written")
    return text
