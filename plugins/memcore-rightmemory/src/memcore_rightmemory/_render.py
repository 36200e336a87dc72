"""Byte-preserving edits of RightMemory files: plan line-range splices, never rewrite a file.

A write changes only the lines of the item it touches (the heading line, its memcore comment
and own body; or the node line and its comment): every other byte of every file stays as it
was. The functions here plan those splices into a :class:`Change` (per file: ``(first, last,
new lines)``, 1-based, ``last = first - 1`` inserts) from a parsed graph; the provider applies
and checks them (:mod:`memcore_rightmemory._incremental` or a re-parse) before anything is
staged.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from memcore.errors import InvalidEntryError
from memcore.models import MemoryEntry
from memcore_rightmemory._graph import Graph, ItemRef
from memcore_rightmemory._meta import kept_meta
from memcore_rightmemory._parse import Doc, Heading, Node, Source, fenced_lines, parse_doc
from memcore_rightmemory.codec import (
    FORMAT,
    blank,
    check_text,
    escape_body,
    lead,
    meta_line,
    split_body,
    split_relations,
)

__all__ = [
    "DEFAULT_MEMORY_HEADING",
    "DEFAULT_PURSUIT_HEADING",
    "Chains",
    "Change",
    "detail_of",
    "plain_chain",
    "target",
    "body_lines",
    "closers",
    "drop_edges_to",
    "edge_text",
    "heading_insert",
    "heading_lines",
    "is_plain_chain",
    "last_top",
    "node_insert",
    "node_line",
    "nodes_between",
    "move_in",
    "move_out",
    "remove_item",
    "remove_lines",
    "rewrite_item",
    "scan_plain_chain",
    "set_marker",
]

#: Plain ``#`` heading in MEMORY.md that receives entries added without a parent.
DEFAULT_MEMORY_HEADING = "Memory"
#: Plain ``#`` heading in PURSUITS.md that receives Pursuit entries added without a parent.
DEFAULT_PURSUIT_HEADING = "Pursuits"
#: ``(file, plain titles) -> (heading, its index when last found)``: see :func:`plain_chain`.
Chains = dict[tuple[str, tuple[str, ...]], tuple[Heading, int]]
_ANCHOR_IN_LINE = re.compile(r"\{(F#|M#|S#|MF#|MQ#|#)([A-Za-z0-9_.-]+)\}")
_NODE_LINE_RE = re.compile(r"^\s*-\s+`")
#: A body line that may open a block only its end closes: a code fence or an HTML block start.
_BLOCK_OPENER = re.compile(r"^ {0,3}(?:```|~~~|<)")
#: The opening fence of fenced code (its run of backticks or tildes).
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: Lines that end an HTML block of CommonMark types 2-5 and 1 (comment, processing instruction,
#: declaration, CDATA, ``<pre>``/``<script>``/``<style>``/``<textarea>``).
_HTML_CLOSERS = ("-->", "?>", ">", "]]>", "</pre>", "</script>", "</style>", "</textarea>")


@dataclass
class Change:
    """Edits to one store: line-range splices per file, new files, deleted files."""

    edits: dict[str, list[tuple[int, int, list[str]]]]
    created: dict[str, bytes]
    deleted: set[str]

    @classmethod
    def empty(cls) -> Change:
        return cls({}, {}, set())

    def splice(self, rel: str, start: int, end: int, lines: list[str]) -> None:
        self.edits.setdefault(rel, []).append((start, end, lines))


def edge_text(edges: list[tuple[str, str]]) -> str:
    """Return the inside of an edge list: ``dep:a, rel:b``."""
    return ", ".join(f"{t}:{x}" for t, x in edges)


def _replace_edges(
    line: str, span: tuple[int, int] | None, old: list[tuple[str, str]], new: list[tuple[str, str]]
) -> str:
    if old == new:
        return line
    text = edge_text(new)
    if span is None:
        if not new:
            return line
        stripped = line.rstrip()
        return stripped + f" \u2192 [{text}]" + line[len(stripped) :]
    return line[: span[0]] + text + line[span[1] :]


def set_marker(line: str, ident: str, marker: str) -> str:
    """Return a heading line with the anchor of ``ident`` given ``marker`` (``{#x}`` ⇄ ``{F#x}``)."""

    def swap(match: re.Match[str]) -> str:
        return f"{{{marker}{ident}}}" if match.group(2) == ident else match.group(0)

    return _ANCHOR_IN_LINE.sub(swap, line, count=1)


def remove_lines(change: Change, lines: list[str], rel: str, start: int, end: int) -> None:
    """Plan removing lines ``start..end``, and one blank line when blanks would then double up."""
    before_blank = start == 1 or blank(lines[start - 2])
    if before_blank and end < len(lines) and blank(lines[end]):
        end += 1
    change.splice(rel, start, end, [])


# -- where new items go -------------------------------------------------------------------
def is_plain_chain(doc: Doc, index: int, titles: list[str]) -> bool:
    """Whether heading ``index`` ends the plain-heading chain ``# titles[0]`` > ``## titles[1]`` (and so on)."""
    at: int | None = index
    for depth in range(len(titles), 0, -1):
        if at is None:
            return False
        heading = doc.headings[at]
        if heading.depth != depth or heading.id is not None or heading.title != titles[depth - 1]:
            return False
        at = heading.parent
    return at is None


def scan_plain_chain(doc: Doc, titles: list[str]) -> int | None:
    """Return the index of the first plain-heading chain ``# titles[0]`` > ``## titles[1]``…, scanning."""
    parent: int | None = None
    found: int | None = None
    for depth, title in enumerate(titles, start=1):
        found = next(
            (
                i
                for i, h in enumerate(doc.headings)
                if h.depth == depth and h.id is None and h.title == title and h.parent == parent
            ),
            None,
        )
        if found is None:
            return None
        parent = found
    return found


def nodes_between(doc: Doc, first: int, last: int, parent: int | None) -> list[Node]:
    """Return the last direct nodes of ``parent`` on lines ``first..last``, from its last top-level one.

    The nodes whose parent heading is ``parent``, from the last one written at column 0 (``-``)
    to the end (all of them when none is): what :func:`node_insert` needs to put a node after
    them; empty when ``parent`` has no node there. Found by bisect and a walk back from the end
    that stops at that top-level node, so adding nodes one after another under one heading
    costs O(1) each instead of a pass over all its nodes.
    """
    lo = bisect_left(doc.nodes, first, key=lambda n: n.line)
    hi = bisect_right(doc.nodes, last, key=lambda n: n.line)
    tail: list[Node] = []
    for i in range(hi - 1, lo - 1, -1):
        node = doc.nodes[i]
        if node.parent != parent:
            continue
        tail.append(node)
        if node.prefix.startswith("-"):
            break
    tail.reverse()
    return tail


def last_top(nodes: list[Node]) -> int:
    """Index of the last top-level node (``-`` at column 0); list items before it end before it."""
    for i in range(len(nodes) - 1, -1, -1):
        if nodes[i].prefix.startswith("-"):
            return i
    return 0


def plain_chain(chains: Chains, doc: Doc, titles: list[str]) -> int | None:
    """Return the index of the plain-heading chain ``# titles[0]`` > ``## titles[1]``…, if any.

    The first such chain in the file. The heading found last time for the same titles is
    looked for first, from its old index on (headings inserted before it only move it
    down): adds in a batch that go under the same plain heading cost O(1) each instead of
    a scan of every heading before it. Writes never add a plain heading before an existing
    chain of the same titles (a plain heading is only created when there is none), and a
    file parsed again has new heading objects, so the remembered one is then not found.
    """
    key = (doc.source.rel, tuple(titles))
    hit = chains.get(key)
    if hit is not None:
        heading, start = hit
        headings = doc.headings
        found = next((i for i in range(start, len(headings)) if headings[i] is heading), None)
        if found is not None and is_plain_chain(doc, found, titles):
            chains[key] = (heading, found)
            return found
        del chains[key]
    index = scan_plain_chain(doc, titles)
    if index is not None:
        chains[key] = (doc.headings[index], index)
    return index


def target(
    graph: Graph, entry: MemoryEntry, family: str, as_heading: bool, parent: ItemRef | None, chains: Chains, root: Path
) -> tuple[str, int | None, int, list[str]]:
    """Decide where a new item goes.

    Returns:
        ``(file, heading index whose block receives it or None for the file's top level,
        depth of a new heading, plain container heading lines to create first)``.

    ``parent``: the item ``entry.parent`` names (``None``: none, or no such item).

    Raises:
        InvalidEntryError: The parent is not a heading, or an F# parent has no detail file.
    """
    info = entry.extra.get(FORMAT)
    hint_depth = info.get("depth") if isinstance(info, dict) else None
    sections = info.get("sections") if isinstance(info, dict) else None
    if entry.parent is not None:
        ref = parent
        if ref is None:
            raise InvalidEntryError(f"{FORMAT}: parent {entry.parent!r} is not a heading in {root}")
        if not ref.is_heading:
            raise InvalidEntryError(f"{FORMAT}: parent {entry.parent!r} is a node; only headings contain items")
        heading = graph.docs[ref.rel].headings[ref.index]
        if heading.marker != "F#":
            return ref.rel, ref.index, heading.depth + 1, []
        detail = detail_of(graph, ref.rel, ref.index)
        if detail is None:
            raise InvalidEntryError(
                f"{FORMAT}: F# heading `{heading.id}` has no readable detail file to hold `{entry.id}`"
            )
        depth = hint_depth if isinstance(hint_depth, int) and 1 <= hint_depth <= 6 else heading.depth + 1
        existing = [h.depth for h in graph.docs[detail].headings]
        return detail, None, min([depth, *existing]), []
    rel = "MEMORY.md" if family == "memory" else "PURSUITS.md"
    doc = graph.docs.get(rel)
    if doc is None:
        raise InvalidEntryError(f"{FORMAT}: `{rel}` is missing or unreadable in {root}")
    if isinstance(sections, list) and sections and all(isinstance(t, str) and t.strip() for t in sections):
        titles = [str(t).strip() for t in sections]
        index = plain_chain(chains, doc, titles)
        if index is not None:
            return rel, index, len(titles) + 1, []
        if len(titles) == 1:
            return rel, None, 2, [f"# {titles[0]}"]
    if as_heading and family == "memory":
        return rel, None, 1, []
    title = DEFAULT_MEMORY_HEADING if family == "memory" else DEFAULT_PURSUIT_HEADING
    index = plain_chain(chains, doc, [title])
    if index is not None:
        return rel, index, 2, []
    return rel, None, 2, [f"# {title}"]


def detail_of(graph: Graph, rel: str, index: int) -> str | None:
    """Return the detail file the F# heading ``index`` of ``rel`` attaches, or ``None``."""
    for child, owner in graph.attach.items():
        if owner == (rel, index):
            return child
    return None


def _place(doc: Doc, first: int, last: int, direct: list[Node], new: list[str], change: Change) -> None:
    lines = doc.source.lines
    if direct:
        after = max(max(n.meta_line or n.line, n.end) for n in direct[last_top(direct) :])
    else:
        after = last
        while after >= first and blank(lines[after - 1]):
            after -= 1
        after = max(after, first - 1)
    block = list(new)
    prev = lines[after - 1] if after >= 1 else ""
    if after >= 1 and not blank(prev) and not direct:
        block.insert(0, "")
    nxt = lines[after] if after < len(lines) else None
    if nxt is not None and not blank(nxt) and not _NODE_LINE_RE.match(nxt):
        block.append("")
    change.splice(doc.source.rel, after + 1, after, block)


def _append(graph: Graph, rel: str, new: list[str], change: Change) -> None:
    lines = graph.docs[rel].source.lines
    last = len(lines)
    while last >= 1 and blank(lines[last - 1]):
        last -= 1
    block = ([""] if last >= 1 else []) + new
    change.splice(rel, last + 1, last, block)


def node_insert(graph: Graph, rel: str, index: int | None, create: list[str], new: list[str], change: Change) -> None:
    """Plan inserting node lines ``new`` as the last direct node of a heading (or of a file's top)."""
    if create:
        _append(graph, rel, [*create, "", *new], change)
        return
    doc = graph.docs[rel]
    if index is None:
        first_heading = doc.headings[0].line if doc.headings else len(doc.source.lines) + 1
        direct = nodes_between(doc, 1, first_heading - 1, None)
        _place(doc, 1, first_heading - 1, direct, new, change)
        return
    heading = doc.headings[index]
    region_end = heading.first_child - 1 if heading.first_child is not None else heading.end
    direct = nodes_between(doc, heading.line + 1, region_end, index)
    _place(doc, heading.line + 1, region_end, direct, new, change)


def heading_insert(
    graph: Graph, rel: str, index: int | None, create: list[str], new: list[str], change: Change
) -> None:
    """Plan inserting heading lines ``new`` at the end of a heading's block (or of the file)."""
    if create or index is None:
        _append(graph, rel, [*create, "", *new] if create else new, change)
        return
    heading = graph.docs[rel].headings[index]
    lines = graph.docs[rel].source.lines
    after = _end_of_text(lines, heading)
    block = ["", *new]
    if after < len(lines) and not blank(lines[after]):
        block.append("")
    change.splice(rel, after + 1, after, block)


def _end_of_text(lines: list[str], heading: Heading) -> int:
    """Return the last non-blank line of a heading's block (its own line at least)."""
    after = heading.end
    while after > heading.line and blank(lines[after - 1]):
        after -= 1
    return after


# -- what new items' lines are ----------------------------------------------------------------
def _closed(lines: list[str], family: str, md: MarkdownIt) -> bool:
    """Whether a heading written after body ``lines`` is a heading for both parsers."""
    if [in_code for _number, _line, in_code in fenced_lines([*lines, "# after"])][-1]:
        return False  # RightMemory's fence tracker: still in code
    probe = ["# memcore-probe {#memcore-probe-a}", "", *lines, "", "# memcore-probe {#memcore-probe-b}"]
    doc = parse_doc(Source.from_lines("probe.md", probe), family, md)
    return any(h.id == "memcore-probe-b" and h.line == len(probe) for h in doc.headings)


def closers(lines: list[str], family: str, item_id: str, md: MarkdownIt) -> list[str]:
    """Return the lines that close a code fence or HTML block ``lines`` leave open (often none).

    A heading body that ends inside a fenced code block or an HTML block (``<pre>``,
    ``<!--``, ``<?``, ``<!X``, ``<![CDATA[`` …) would swallow every item written after it
    in the file (the next add would not read back, and RightMemory's own parser, which
    skips fenced code, would lose it). Such a body is written with closing lines after it
    (the fence, ``-->``, ``?>``, ``>``, ``]]>``, ``</pre>`` …) and ``body_close`` in its
    memcore comment, so that the reader drops them and the body reads back as given.
    Checked by parsing the body between two headings with both parsers' views: markdown-it
    and the reference's fence tracker. Only bodies with a line that could open such a
    block (```` ``` ````, ``~~~`` or ``<`` after up to three spaces) are parsed.

    Raises:
        InvalidEntryError: No closing lines close it for both parsers (nothing written).
    """
    if not any(_BLOCK_OPENER.match(line) for line in lines) or _closed(lines, family, md):
        return []
    fence: str | None = None
    for _number, line, in_code in fenced_lines(lines):
        opener = _FENCE_OPEN.match(line)
        if in_code and opener is not None and fence is None:
            fence = opener.group(1)
        elif not in_code:
            fence = None
    tries: list[list[str]] = [[fence]] if fence is not None else []
    tries += [[closer] for closer in _HTML_CLOSERS]
    if fence is not None:
        tries += [[fence, closer] for closer in _HTML_CLOSERS]
    for attempt in tries:
        if _closed([*lines, *attempt], family, md):
            return attempt
    raise InvalidEntryError(
        f"{FORMAT}: the body of `{item_id}` leaves a code fence or an HTML block open at its end (which would "
        "swallow every item written after it in the file) and no closing line closes it for both RightMemory's "
        "and memcore's parsers; close it in the body"
    )


def body_lines(
    entry: MemoryEntry, family: str, marker: str, item_id: str, md: MarkdownIt, keep: dict[str, Any] | None = None
) -> tuple[list[str], str | None]:
    """Return (the body lines written under a heading, escaped and closed; the memcore comment).

    For a node (``marker == "node"``) the lines are empty and the comment has no ``body_pad``.

    Raises:
        InvalidEntryError: The title or body would be misread (see :func:`~memcore_rightmemory.codec.check_text`).
    """
    title = entry.title.strip()
    check_text(title, entry.body, family)
    core, pad = split_body(entry.body)
    core = escape_body(core, family)
    is_heading = marker != "node"
    closing = closers(core, family, item_id, md) if is_heading else []
    core += closing
    meta = meta_line(entry, family, marker, title, pad if is_heading else None, keep, close=len(closing))
    return core, meta


def heading_lines(
    entry: MemoryEntry, ident: str, marker: str, level: int, core: list[str], meta: str | None
) -> list[str]:
    """Return the lines of a new heading: ``## Title {#id} → [edges]``, its comment and body.

    ``core`` and ``meta``: what :func:`body_lines` made of the entry.
    """
    title = entry.title.strip()
    edges, _other = split_relations(entry)
    head = "#" * level + " " + (f"{title} " if title else "") + f"{{{marker}{ident}}}"
    if edges:
        head += f" \u2192 [{edge_text(edges)}]"
    new = [head] + ([meta] if meta else [])
    if core:
        new += ["", *core]
    return new


def node_line(entry: MemoryEntry, ident: str, meta: str | None) -> list[str]:
    """Return the lines of a new node: ``- `id` Title → [edges]`` and its comment."""
    title = entry.title.strip()
    edges, _other = split_relations(entry)
    text = f"- `{ident}` " + (f"{title} " if title else "") + f"\u2192 [{edge_text(edges)}]"
    return [text] + ([f"  {meta}"] if meta else [])


# -- rewriting and removing -----------------------------------------------------------------
def rewrite_item(graph: Graph, ref: ItemRef, entry: MemoryEntry, change: Change, md: MarkdownIt) -> None:
    """Plan rewriting an item's own lines (title, edges, heading body, comment) as ``entry``.

    Raises:
        InvalidEntryError: The item's comment is not JSON, a node was given a body, or the text
            would be misread.
    """
    doc = graph.docs[ref.rel]
    lines = doc.source.lines
    block: Heading | Node = doc.headings[ref.index] if ref.is_heading else doc.nodes[ref.index]
    if block.meta_line is not None and block.meta is None:
        raise InvalidEntryError(
            f"{FORMAT}: `{ref.id}` has a memcore comment that is not JSON ({ref.rel}:{block.meta_line}); "
            "fix or remove that line first (refusing to overwrite text it cannot read)"
        )
    title = entry.title.strip()
    core, meta = body_lines(
        entry, ref.family, ref.marker if ref.is_heading else "node", ref.id, md, kept_meta(block.meta)
    )
    edges, _other = split_relations(entry)
    if ref.is_heading:
        heading = doc.headings[ref.index]
        line = _replace_edges(lines[heading.line - 1], heading.edge_span, heading.edges, edges)
        if title != heading.title:
            a, b = heading.title_span
            line = line[:a] + title + (" " if a == b and title else "") + line[b:]
        first, last, old_body = lead(doc, heading)
        new = [line] + ([meta] if meta else [])
        if old_body == core:
            new += [lines[n - 1] for n in range(first, last + 1) if n != heading.meta_line]
        else:
            new += ["", *core] if core else []
            if last < len(lines):
                new.append("")
        change.splice(ref.rel, heading.line, last, new)
        return
    if entry.body:
        raise InvalidEntryError(f"{FORMAT}: node `{ref.id}` has no body; put the text in the title")
    node = doc.nodes[ref.index]
    line = _replace_edges(lines[node.line - 1], node.edge_span, node.edges, edges)
    if title != node.title:
        a, b = node.title_span
        if a == b:
            # Empty description: the span sits before the arrow's whitespace.
            line = line[:a] + (" " + title if title else "") + line[b:]
        else:
            line = line[:a] + title + line[b:]
    new = [line] + ([" " * len(node.prefix) + meta] if meta else [])
    change.splice(ref.rel, node.line, node.meta_line or node.line, new)


def remove_item(graph: Graph, ref: ItemRef, change: Change) -> None:
    """Plan removing an item: a node's lines, or a heading's whole block (it holds no items)."""
    doc = graph.docs[ref.rel]
    lines = doc.source.lines
    if not ref.is_heading:
        node = doc.nodes[ref.index]
        remove_lines(change, lines, ref.rel, node.line, node.meta_line or node.line)
        return
    heading = doc.headings[ref.index]
    start, end = heading.line, heading.end
    while end > start and blank(lines[end - 1]) and start > 1 and blank(lines[start - 2]):
        end -= 1
    change.splice(ref.rel, start, end, [])


def drop_edges_to(graph: Graph, target: str, change: Change) -> None:
    """Plan removing every edge (and Focus reference) that points at ``target``."""
    for ref in graph.every_ref():
        edges, _ = graph.edges_of(ref)
        if ref.id == target or not any(t == target for _, t in edges):
            continue
        kept = [e for e in edges if e[1] != target]
        doc = graph.docs[ref.rel]
        item: Heading | Node = doc.headings[ref.index] if ref.is_heading else doc.nodes[ref.index]
        line = _replace_edges(doc.source.lines[item.line - 1], item.edge_span, edges, kept)
        change.splice(ref.rel, item.line, item.line, [line])
    for ident, rel, line_no in graph.focus:
        if ident == target:
            remove_lines(change, graph.docs[rel].source.lines, rel, line_no, line_no)


def move_out(doc: Doc, ref: ItemRef, heading: Heading, name: str, change: Change) -> None:
    """Plan turning ``{#id}`` into ``{F#id}``: the heading's child content moves to the new file ``name``.

    Raises:
        InvalidEntryError: The heading has no child content to move.
    """
    lines = doc.source.lines
    start = heading.lead_end + 1
    while start <= heading.end and blank(lines[start - 1]):
        start += 1
    end = heading.end
    while end >= start and blank(lines[end - 1]):
        end -= 1
    if start > end:
        raise InvalidEntryError(f"{FORMAT}: heading `{ref.id}` has no child content to move")
    moved = lines[start - 1 : end]
    cut = start
    while cut - 1 > heading.line and blank(lines[cut - 2]):
        cut -= 1
    change.splice(ref.rel, heading.line, heading.line, [set_marker(lines[heading.line - 1], ref.id, "F#")])
    change.splice(ref.rel, cut, end, [])
    nl = doc.source.newline
    change.created[name] = (nl.join(moved) + nl).encode("utf-8")


def move_in(doc: Doc, ref: ItemRef, heading: Heading, detail: Doc, change: Change) -> None:
    """Plan turning ``{F#id}`` into ``{#id}``: the detail file's content moves to the heading's block end."""
    content = list(detail.source.lines)
    while content and blank(content[0]):
        content.pop(0)
    while content and blank(content[-1]):
        content.pop()
    lines = doc.source.lines
    change.splice(ref.rel, heading.line, heading.line, [set_marker(lines[heading.line - 1], ref.id, "#")])
    after = _end_of_text(lines, heading)
    trailing = [""] if content and after < len(lines) and not blank(lines[after]) else []
    block = (["", *content] if content else []) + trailing
    if block:
        change.splice(ref.rel, after + 1, after, block)
    change.deleted.add(detail.source.rel)
