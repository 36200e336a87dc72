"""RightMemory items ⇄ :class:`~memcore.models.MemoryEntry`: the pure codec (no I/O).

Reading: :func:`entry_of` turns one graph item (a heading or node of a parsed file, see
:mod:`memcore_rightmemory._graph`) into an entry; :func:`correction_entries` the ``###``
entries of the Agent Corrections collections. Writing: :func:`split_relations` (edges on the
line, the rest in the comment), :func:`meta_line` (the ``<!-- memcore: {...} -->`` comment,
:mod:`memcore_rightmemory._meta`), :func:`split_body` / :func:`escape_body` (body lines as
written), :func:`check_text` and :func:`verify` (what RightMemory's parser would misread is
refused). docs/formats/rightmemory.md describes the mapping.
"""

from __future__ import annotations

import json
import re
from typing import Any

from anyascii import anyascii

from memcore.errors import InvalidEntryError
from memcore.models import Kind, MemoryEntry, Relation, require_unicode
from memcore.storage import version_token
from memcore_rightmemory._corrections import agent_correction_entries
from memcore_rightmemory._graph import Graph, ItemRef, backing_name
from memcore_rightmemory._meta import apply_meta, body_close_ok, dump_meta, meta_for
from memcore_rightmemory._parse import PURSUIT_FIELD_RE, Doc, Heading, fenced_lines
from memcore_rightmemory.mapping import (
    AGENT_CORRECTION_FILES,
    EDGE_TYPES,
    ITEM_ID_RE,
    UNCERTAIN_CONFIDENCE,
    UNCERTAIN_PREFIX,
    kind_for,
)

__all__ = [
    "COMPUTED_KEYS",
    "FORMAT",
    "check_text",
    "correction_entries",
    "entry_of",
    "escape_body",
    "lead",
    "meta_line",
    "new_id",
    "read_body",
    "require_unicode_fast",
    "split_body",
    "split_relations",
    "unescape_body",
    "verify",
    "want",
]

FORMAT = "rightmemory"
#: Keys of ``extra["rightmemory"]`` computed on read (never stored in the memcore comment).
COMPUTED_KEYS = ("item", "marker", "module", "file", "backing", "depth", "sections", "fields", "uncertain")
_EDGE_TYPES = frozenset(EDGE_TYPES)
_SLUG_RE = re.compile(r"[^a-z0-9_.-]+")
_DASHES_RE = re.compile(r"-{2,}")
_NODE_LINE_RE = re.compile(r"^\s*-\s+`")
_HEADING_LINE = re.compile(r"^#+\s+")
_TITLE_SYNTAX = re.compile(r"\{[A-Za-z]*#|(?:\u2192|->)\s*\[")
_ESCAPED_HEADING = re.compile(r"^\\*#+\s")
_ESCAPED_NODE = re.compile(r"^(\s*-\s+)\\*`")
_NEXT_ACTION = re.compile(r"^\s*-\s+`([^`]+)`\s*(.*)$")


def blank(line: str) -> bool:
    """Whether ``line`` is empty or whitespace only."""
    return not line.strip()


def _trimmed(lines: list[str]) -> list[str]:
    """Return ``lines`` without leading and trailing blank lines."""
    start, end = 0, len(lines)
    while start < end and blank(lines[start]):
        start += 1
    while end > start and blank(lines[end - 1]):
        end -= 1
    return lines[start:end]


def _json_copy(value: Any) -> Any:
    """Return a copy of JSON data (new dicts and lists, the same strings and numbers)."""
    kind = type(value)
    if kind is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    return value


def _with_extra(entry: MemoryEntry, extra: dict[str, Any]) -> MemoryEntry:
    """Set ``entry.extra`` to data that validation would keep as it is, without validating it.

    Only for ``extra`` built by :func:`entry_of`: the item's computed keys (strings read from
    UTF-8 text, ints, lists and dicts of them) and a copy of a comment's ``extra`` that
    :func:`~memcore_rightmemory._meta.meta_values` checked exactly as the entry's own validator
    does (JSON types from ``json.loads``, serialisable, UTF-8). For such data pydantic's
    validation returns an equal copy; it is the costliest part of building an entry (about 20
    of 28 us). The tests compare these entries with fully validated ones.
    """
    entry.__dict__["extra"] = extra
    entry.__pydantic_fields_set__.add("extra")
    return entry


def require_unicode_fast(entry: MemoryEntry) -> None:
    """``require_unicode(entry.model_dump())`` without the dump when every string encodes.

    Every string of the dump (id, title, body, source, scope, parent, version, tags, relation
    types and targets, ``extra`` keys and values) is encoded as UTF-8 where it is; only when
    one fails (or ``extra`` does not serialise) is the entry dumped and walked, so that the
    error names the field exactly as before.

    Raises:
        InvalidEntryError: A string holds a lone surrogate; nothing is written.
    """
    try:
        for text in (entry.id, entry.title, entry.body, entry.source, entry.scope, entry.parent, entry.version):
            if text is not None:
                text.encode("utf-8")
        for tag in entry.tags:
            tag.encode("utf-8")
        for relation in entry.relations:
            relation.type.encode("utf-8")
            relation.target.encode("utf-8")
        if entry.extra:
            json.dumps(entry.extra, ensure_ascii=False).encode("utf-8")
        return
    except (ValueError, TypeError, AttributeError, RecursionError):  # UnicodeEncodeError is a ValueError
        pass
    require_unicode(entry.model_dump(), "entry", prefix=FORMAT)


# -- reading ----------------------------------------------------------------------------
def lead(doc: Doc, heading: Heading) -> tuple[int, int, list[str]]:
    """Return (first, last, body lines) of a heading's own body, without the meta line."""
    first, last = heading.line + 1, heading.lead_end
    lines = [doc.source.lines[n - 1] for n in range(first, last + 1) if n != heading.meta_line]
    return first, last, _trimmed(lines)


def entry_of(graph: Graph, ref: ItemRef) -> MemoryEntry:
    """Return the entry of one graph item (its version: :func:`~memcore.storage.version_token`)."""
    doc = graph.docs[ref.rel]
    lines = doc.source.lines
    info: dict[str, Any] = {
        "item": "heading" if ref.is_heading else "node",
        "marker": ref.marker,
        "module": ref.family,
        "file": ref.rel,
    }
    meta: dict[str, Any] | None
    checked: dict[str, Any] | None
    if ref.is_heading:
        heading = doc.headings[ref.index]
        _first, last, body_lines = lead(doc, heading)
        title, meta, checked = heading.title, heading.meta, heading.fields
        close = meta.get("body_close") if meta else None
        if isinstance(close, int) and body_close_ok(close) and close <= len(body_lines):
            body_lines = body_lines[:-close]  # lines memcore added to close a fence or HTML block
        body_lines = unescape_body(body_lines, ref.family)
        body = read_body(body_lines, meta)
        edges = heading.edges
        own = lines[heading.line - 1 : last]
        while own and blank(own[-1]):
            own.pop()
        info["depth"] = heading.depth
        name = backing_name(ref.family, ref.marker, ref.id)
        if name is not None:
            info["backing"] = name
        if ref.family == "pursuit":
            fields = pursuit_fields(body_lines)
            if fields:
                info["fields"] = fields
        uncertain = body.startswith(UNCERTAIN_PREFIX)
    else:
        node = doc.nodes[ref.index]
        title, body, meta, edges, checked = node.title, "", node.meta, node.edges, node.fields
        own = lines[node.line - 1 : (node.meta_line or node.line)]
        uncertain = title.startswith(UNCERTAIN_PREFIX)
    sections = [graph.heading(k).title for k in graph.ancestors(ref) if graph.heading(k).id is None]
    if sections:
        info["sections"] = sections[::-1]
    if uncertain:
        info["uncertain"] = True
    values: dict[str, Any] = {
        "id": ref.id,
        "kind": kind_for(ref.family, ref.marker),
        "title": title,
        "body": body,
        "confidence": UNCERTAIN_CONFIDENCE if uncertain else None,
        "relations": [Relation(type=t, target=x, resolved=x in graph.items) for t, x in edges],
        "parent": graph.parent_id(ref),
    }
    version = version_token(ref.rel, "\n".join(own))
    if not meta:
        # One validation: every assignment to a built entry validates the whole entry again.
        return _with_extra(MemoryEntry(**values, version=version), {FORMAT: info})
    if checked is not None:
        # The parser found the comment's values plainly valid (meta_values): the same entry
        # as apply_meta gives, with one validation instead of two (the comment's values
        # override the item's own).
        checked = dict(checked)
        extra = _json_copy(checked.pop("extra", {}))
        if "relations" in checked:
            values["relations"] = [*values["relations"], *checked.pop("relations")]
        values.update(checked)
        stored = extra.get(FORMAT)
        own_keys = stored if isinstance(stored, dict) else {}
        return _with_extra(MemoryEntry(**values, version=version), {**extra, FORMAT: {**own_keys, **info}})
    entry = MemoryEntry(**values)
    apply_meta(entry, meta)
    stored = entry.extra.get(FORMAT)
    entry.extra[FORMAT] = {**(stored if isinstance(stored, dict) else {}), **info}
    entry.version = version
    return entry


def correction_entries(graph: Graph) -> list[MemoryEntry]:
    """Return the Agent Corrections entries (kind ``correction``, read-only), collection by collection."""
    out: list[MemoryEntry] = []
    for collection, name in AGENT_CORRECTION_FILES.items():
        lines = graph.extra_files.get(name)
        if lines is None:
            continue
        owner_id = name[len("MEMORY_") : -len(".md")]
        owner = graph.items.get(owner_id)
        for title, start, end in agent_correction_entries(lines):
            out.append(
                MemoryEntry(
                    id=f"{owner_id}#{start}",
                    kind=Kind.CORRECTION,
                    title=title,
                    body="\n".join(_trimmed(lines[start:end])),
                    parent=owner_id if owner is not None else None,
                    extra={FORMAT: {"item": "correction", "collection": collection, "file": name, "line": start}},
                    version=version_token(name, "\n".join(lines[start - 1 : end])),
                )
            )
    return out


def split_body(body: str) -> tuple[list[str], list[str] | None]:
    """Split a body into the lines written under a heading and the padding kept in the comment.

    The lines are the body without leading and trailing blank (whitespace-only) lines. A body
    reads back as those lines joined with ``\\n`` plus one final ``\\n``; when the body given
    differs from that (no final newline, several, leading blank lines, whitespace only), the
    exact text before and after the lines is kept as ``body_pad: [before, after]``.

    Returns:
        (lines, pad or None).
    """
    lines = body.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    core = lines[start:end]
    text = "\n".join(core)
    offset = sum(len(line) + 1 for line in lines[:start]) if core else len(body)
    before, after = body[:offset], body[offset + len(text) :]
    if before == "" and after == ("\n" if core else ""):
        return core, None
    return core, [before, after]


def read_body(lines: list[str], meta: dict[str, Any] | None) -> str:
    """Return a heading's body from its lines and the ``body_pad`` of its comment (if any)."""
    text = "\n".join(lines)
    pad = meta.get("body_pad") if meta else None
    if isinstance(pad, list) and len(pad) == 2 and all(isinstance(x, str) for x in pad):
        return str(pad[0]) + text + str(pad[1])
    return text + "\n" if lines else ""


def _body_walk(lines: list[str], family: str, escape: bool) -> list[str]:
    in_next = False
    out: list[str] = []
    for _, line, in_code in fenced_lines(lines):
        if in_code:
            out.append(line)
            continue
        if family == "pursuit":
            field_match = PURSUIT_FIELD_RE.match(line)
            if field_match:
                in_next = field_match.group(1).casefold() == "next"
                out.append(line)
                continue
        if _ESCAPED_HEADING.match(line):
            if escape:
                line = "\\" + line
            elif line.startswith("\\"):
                line = line[1:]
        elif not in_next and (node := _ESCAPED_NODE.match(line)):
            cut = node.end(1)
            if escape:
                line = line[:cut] + "\\" + line[cut:]
            elif line[cut] == "\\":
                line = line[:cut] + line[cut + 1 :]
        out.append(line)
    return out


def escape_body(lines: list[str], family: str) -> list[str]:
    """Escape body lines RightMemory's parser would take as headings or nodes.

    Outside fenced code, a line starting with ``#…`` + space gets a leading backslash
    (``\\# Identity``), and a bullet starting with a code span gets a backslash before the
    backtick (``- \\`x` …``), except ``**Next:**`` actions in Pursuit bodies. Lines that already
    start that way with backslashes get one more, so :func:`unescape_body` restores any body
    exactly. Markdown renders the escaped lines as the literal text.
    """
    return _body_walk(lines, family, escape=True)


def unescape_body(lines: list[str], family: str) -> list[str]:
    """Undo :func:`escape_body` (one backslash off each escaped line)."""
    return _body_walk(lines, family, escape=False)


def _reference_graph_line(lines: list[str], family: str) -> str | None:
    """Return the first line RightMemory's line-based parser would take as a heading or node."""
    in_next = False
    for _, line, in_code in fenced_lines(lines):
        if in_code:
            continue
        if _HEADING_LINE.match(line):
            return line
        if family == "pursuit":
            field_match = PURSUIT_FIELD_RE.match(line)
            if field_match:
                in_next = field_match.group(1).casefold() == "next"
                continue
            if in_next and _NODE_LINE_RE.match(line):
                continue
        if _NODE_LINE_RE.match(line):
            return line
    return None


def pursuit_fields(lines: list[str]) -> dict[str, Any]:
    """Return a Pursuit heading's ``**State:**``/``**Next:**``/``**Done when:**``/``**Status:**``."""
    fields: dict[str, Any] = {}
    current: str | None = None
    for line in lines:
        match = PURSUIT_FIELD_RE.match(line)
        if match:
            current = match.group(1).casefold().replace(" ", "_")
            rest = line[match.end() :].strip()
            fields[current] = [] if current == "next" else rest
            if current == "next" and rest:
                fields[current] = [{"action": None, "text": rest}]
            continue
        if current is None:
            continue
        if blank(line):
            if current != "next":
                current = None
            continue
        if current == "next":
            action = _NEXT_ACTION.match(line)
            if action:
                fields["next"].append({"action": action.group(1), "text": action.group(2).strip()})
            else:
                current = None
        else:
            fields[current] = (str(fields[current]) + " " + line.strip()).strip()
    return fields


# -- writing ----------------------------------------------------------------------------
def split_relations(entry: MemoryEntry) -> tuple[list[tuple[str, str]], list[Relation]]:
    """Return (the edges written on the item's line, the relations kept in its comment).

    An edge is a resolved relation of one of the fifteen edge types to an item id. The
    schema allows "no duplicate edges on one item" ("Graph Invariants"), so a relation equal
    to an earlier edge (same type and target) is written once: the entry reads back with
    that relation once, and a conversion's read-back compare reports the ``relations``
    change. Relations that are not edges are all kept, duplicates included.
    """
    edges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    other: list[Relation] = []
    for rel in entry.relations:
        if rel.type in _EDGE_TYPES and rel.resolved and ITEM_ID_RE.match(rel.target):
            edge = (rel.type, rel.target)
            if edge not in seen:
                seen.add(edge)
                edges.append(edge)
        else:
            other.append(rel)
    return edges, other


def meta_line(
    entry: MemoryEntry,
    family: str,
    marker: str,
    title: str,
    pad: list[str] | None,
    keep: dict[str, Any] | None = None,
    *,
    close: int = 0,
) -> str | None:
    """Return the memcore comment for ``entry``; ``keep``: old keys not understood, written back.

    ``close``: closing lines written after the body (``body_close``, see
    :func:`memcore_rightmemory._render.closers`).
    """
    _edges, other = split_relations(entry)
    uncertain = (entry.body.lstrip() if marker != "node" else title).startswith(UNCERTAIN_PREFIX)
    meta = meta_for(
        entry,
        derived_kind=kind_for(family, marker),
        derived_confidence=UNCERTAIN_CONFIDENCE if uncertain else None,
        other_relations=other,
        fmt=FORMAT,
        computed=COMPUTED_KEYS,
    )
    if pad is not None:
        meta["body_pad"] = pad
    if close:
        meta["body_close"] = close
    for key, value in (keep or {}).items():
        meta.setdefault(key, value)
    return dump_meta(meta) if meta else None


def _slug(text: str) -> str:
    """Return the id made from ``text`` for a new item (ids already in a file are never changed).

    ``text`` is transliterated to ASCII (anyascii: ``Café préféré — Zürich`` → ``cafe-prefere-zurich``),
    lower-cased, every run of anything but letters, digits, ``_`` and ``.`` made one ``-``,
    and cut to 60 characters.
    """
    slug = _DASHES_RE.sub("-", _SLUG_RE.sub("-", anyascii(text).lower())).strip("-._")
    return slug[:60].strip("-._")


def new_id(graph: Graph, entry: MemoryEntry) -> str:
    """Return ``entry.id`` (checked) or an id made from its title, unique in ``graph``.

    Raises:
        InvalidEntryError: ``entry.id`` is not a RightMemory id.
    """
    if entry.id is not None:
        if not ITEM_ID_RE.match(entry.id):
            raise InvalidEntryError(
                f"{FORMAT}: id {entry.id!r} is not a RightMemory id; use only letters, numbers, dot, underscore or dash"
            )
        return entry.id
    base = _slug(entry.title) or _slug(entry.body.split("\n", 1)[0])[:40] or entry.kind.value
    candidate, n = base, 2
    while candidate in graph.items or candidate.casefold() == "rules":
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def check_text(title: str, body: str, family: str) -> None:
    """Refuse text that RightMemory's own line-based parser would read as graph syntax.

    memcore's parser ignores graph syntax inside code and HTML; the reference parser only
    skips fenced code. What memcore writes must read the same in both, so a title may not
    hold an anchor (``{#x}``, ``{F#x}``…) or an edge list (``→ [``), and a body line outside
    fenced code is escaped (:func:`escape_body`) so that it is neither.

    Raises:
        InvalidEntryError: The title or body would be misread.
    """
    if "\n" in title or "\r" in title:
        raise InvalidEntryError(f"{FORMAT}: a title must be one line, got {title!r}")
    if _TITLE_SYNTAX.search(title):
        raise InvalidEntryError(
            f"{FORMAT}: title {title!r} holds an anchor `{{X#id}}` or an edge list `→ [`, which "
            "RightMemory's parser would read as graph syntax"
        )
    if "<!-- memcore:" in body:
        raise InvalidEntryError(f"{FORMAT}: a body may not contain a `<!-- memcore:` comment")
    bad = _reference_graph_line(escape_body(body.split("\n"), family), family)
    if bad is not None:  # pragma: no cover - escape_body leaves none; kept as a safety net
        raise InvalidEntryError(f"{FORMAT}: body line {bad!r} would be a heading or node for RightMemory's parser")


def want(entry: MemoryEntry) -> tuple[str | None, str | None]:
    """Return (item hint, marker hint) from ``entry.extra["rightmemory"]``."""
    info = entry.extra.get(FORMAT) or {}
    item = info.get("item") if isinstance(info, dict) else None
    marker = info.get("marker") if isinstance(info, dict) else None
    return (item if isinstance(item, str) else None), (marker if isinstance(marker, str) else None)


def verify(new: Graph, item_id: str, expect: MemoryEntry) -> MemoryEntry:
    """Return the item ``item_id`` of ``new`` as read back, checked against what was written.

    Raises:
        InvalidEntryError: It does not read back (title, body, parent or relations differ).
    """
    ref = new.items.get(item_id)
    if ref is None:
        raise InvalidEntryError(f"{FORMAT}: `{item_id}` would not read back as an item; text contains graph syntax")
    got = entry_of(new, ref)
    problems = []
    if got.title != expect.title.strip():
        problems.append(f"title {got.title!r} != {expect.title.strip()!r}")
    if got.body != expect.body:
        problems.append("body")
    if got.parent != expect.parent:
        problems.append(f"parent {got.parent!r} != {expect.parent!r}")
    edges, other = split_relations(expect)
    if [(r.type, r.target) for r in got.relations] != [*edges, *((r.type, r.target) for r in other)]:
        problems.append("relations")
    if problems:
        raise InvalidEntryError(
            f"{FORMAT}: `{item_id}` would not read back as written ({', '.join(problems)}); "
            "the title or body probably contains heading, node or edge syntax"
        )
    return got
