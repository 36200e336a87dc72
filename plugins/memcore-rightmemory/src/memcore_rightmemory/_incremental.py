"""Re-parse only the part of a graph file a write changed (the write path's fast path).

A write replaces one line range of one file. Instead of re-parsing the whole file, the lines
from the nearest *reset point* before the change to the next reset point after it are parsed
again, with the ancestor heading lines of that point put in front so the parser's heading
stack (depth, F# and terminal ancestors, Pursuit Focus state) is the file's. A reset point is
a line the previous parse recognised as a heading or as a top-level node (``- `id` …`` at
column 0): markdown has no open block there (a fence or HTML block would have swallowed the
line), so parsing from it gives what parsing the whole file gives. The reset point after the
change (the *sentinel*) is parsed too and must be recognised again as the same item; then
everything after it parses as before and only moves by the number of lines added.

:func:`plan` computes the new headings, nodes, order, Focus references and diagnostics of the
window without touching the document; :func:`apply` splices them in (O(window + items after
it); appends at the end of a file touch nothing after). ``None`` from :func:`plan` means "not
sure": the caller re-parses the whole file instead. The result equals
:func:`~memcore_rightmemory._parse.parse_doc` of the new text (the write tests check that
after every write).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

from memcore_rightmemory._graph import Graph, ItemRef
from memcore_rightmemory._header import LineMap, to_file, to_file_mapped, to_inline
from memcore_rightmemory._parse import (
    META_RE,
    Doc,
    Heading,
    Node,
    SettledSource,
    Source,
    keep_split_enabled,
    parse_doc,
    split_lines,
)

__all__ = ["LiveSource", "Patch", "apply", "live", "plan", "reindex", "window_is_current"]

DiagTuple = tuple[str, int, str, str | None]


@dataclass
class Patch:
    """The planned result of replacing lines ``start..end`` (1-based, old numbering) of a doc.

    Attributes:
        start, end: The replaced range (``end = start - 1``: an insertion before ``start``).
        new_lines: The lines put there (no terminators).
        delta: Lines added (negative: removed).
        first, stop: The window in old numbering: ``first`` (reset point) .. ``stop - 1``;
            ``stop`` is the sentinel line, or ``None`` for the end of the file.
        hi0, hi1, ni0, ni1: Old index ranges of the window's headings and nodes.
        headings, nodes: The window's headings and nodes, in new numbering and indices.
        order: The window's ``Doc.order`` entries (new indices).
        focus, diags: The window's Focus references and parse diagnostics (new numbering).
        chain: ``index -> (end, first_child, first_node)`` for the ancestor headings of the window.
        old_of: New heading index -> old index, for the window headings that existed before.
        new_ids: Ids of items the window has that it did not have before.
        introduced: Error diagnostics of the window that it did not have before.
    """

    start: int
    end: int
    new_lines: list[str]
    delta: int
    first: int
    stop: int | None
    hi0: int
    hi1: int
    ni0: int
    ni1: int
    headings: list[Heading] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    order: list[tuple[str, int]] = field(default_factory=list)
    focus: list[tuple[str, int]] = field(default_factory=list)
    diags: list[DiagTuple] = field(default_factory=list)
    chain: dict[int, tuple[int, int | None, int | None]] = field(default_factory=dict)
    old_of: dict[int, int] = field(default_factory=dict)
    new_ids: list[str] = field(default_factory=list)
    introduced: list[DiagTuple] = field(default_factory=list)


class LiveSource(Source):
    """A file's text edited in place by writes: line lists kept, bytes made when asked for.

    Used only by the write path (a batch's changed files); reads get plain :class:`Source`.
    """

    __slots__ = ("_live_data", "_live_lines", "_live_map", "_live_raw")

    def __init__(self, base: Source) -> None:
        self.rel = base.rel
        self.bom = base.bom
        self.newline = base.newline
        self._live_raw: list[str] = list(base.raw)
        self._live_lines: list[str] = list(base.lines)
        self._live_data: bytes | None = None
        self._live_map: LineMap | None = None  # the map of _live_data's file (set with it)
        self.inline = False
        self._map = None

    @property
    def raw(self) -> list[str]:
        """Lines with their terminators (edited in place)."""
        self._live_data = None
        return self._live_raw

    @property
    def lines(self) -> list[str]:
        """Lines without terminators (edited in place)."""
        self._live_data = None
        return self._live_lines

    @property
    def data(self) -> bytes:
        """The bytes the lines make, in the header layout (BOM first when the file had one)."""
        if self._live_data is None:
            lines, self._live_map, _ = to_file_mapped(self._live_raw, self.newline)
            text = ("\ufeff" if self.bom else "") + "".join(lines)
            self._live_data = text.encode("utf-8")
        return self._live_data

    @data.setter
    def data(self, value: bytes) -> None:
        text = value.decode("utf-8")
        self._live_raw, self._live_map = to_inline(split_lines(text[1:] if self.bom else text), self.newline)
        self._live_lines = [line.rstrip("\r\n") for line in self._live_raw]
        self._live_data = value

    def settled(self) -> Source:
        """Return a :class:`~memcore_rightmemory._parse.SettledSource` of these bytes, the lines already split kept."""
        source = SettledSource.from_bytes(self.rel, self.data)
        source._raw = self._live_raw
        source._lines = self._live_lines
        if keep_split_enabled():
            # the map to_file's own check made of these bytes: what Source.raw would make again
            source._map = self._live_map
        return source  # else its line map is made when first asked for (Source.file_line)

    def file_line(self, line: int | None) -> int | None:
        """Return the line of the file the lines make for inline line ``line``."""
        _raw, found = to_inline(to_file(self._live_raw, self.newline), self.newline)
        return line if found is None else found.file_line(line)

    def release(self) -> None:
        """Keep the lines: they are the only copy of the text."""


def live(doc: Doc) -> LiveSource:
    """Return ``doc``'s source as a :class:`LiveSource`, installing one (copying the lines) if needed."""
    source = doc.source
    if not isinstance(source, LiveSource):
        source = LiveSource(source)
        doc.source = source
    return source


_COL0_NODE = re.compile(r"^-\s+`")
_ATX = re.compile(r"^#{1,6}\s")


def _top_node(node: Node) -> bool:
    return node.prefix.startswith("-")


def _reset_before(doc: Doc, line: int, new_first: str | None) -> tuple[int, int | None]:
    """Return the last reset point at or before ``line`` and the heading open there.

    Reset points: a heading line (the heading is parsed again); the line right after a
    heading and its memcore comment (an ATX heading is one line and the comment an HTML block
    that ends on its own line, so nothing is open there; the heading goes into the prefix);
    a top-level node line. And for an insertion of a node or heading line ``new_first``
    right after a top-level Memory node's list item: that point (a column-0 ``-`` item or
    ATX heading closes whatever the item left open; Pursuit files keep ``**Next:**`` state
    across items, so not there).

    Returns:
        ``(line, index of the innermost heading open before that line, or None)``.
    """
    lines = doc.source.lines
    best: tuple[int, int | None] = (1, None)
    hi = bisect_right(doc.headings, line, key=lambda h: h.line) - 1
    while hi >= 0 and doc.headings[hi].depth > 6:
        hi -= 1
    if hi >= 0:
        heading = doc.headings[hi]
        best = (heading.line, heading.parent)
        soft = (heading.meta_line or heading.line) + 1
        if soft <= line and not META_RE.match(lines[soft - 1]):
            best = (soft, hi)
    ni = bisect_right(doc.nodes, line, key=lambda n: n.line) - 1
    while ni >= 0 and not _top_node(doc.nodes[ni]):
        ni -= 1
    if ni >= 0 and doc.nodes[ni].line > best[0]:
        node = doc.nodes[ni]
        best = (node.line, node.parent)
        after = max(node.meta_line or node.line, node.end) + 1
        if (
            after == line + 1
            and new_first is not None
            and doc.family == "memory"
            and (_COL0_NODE.match(new_first) or _ATX.match(new_first))
        ):
            best = (after, node.parent)
    return best


def _reset_after(doc: Doc, line: int) -> tuple[int, str, int] | None:
    """Return (line, kind, index) of the first reset point after ``line``, or ``None``."""
    best: tuple[int, str, int] | None = None
    hi = bisect_right(doc.headings, line, key=lambda h: h.line)
    while hi < len(doc.headings) and doc.headings[hi].depth > 6:
        hi += 1
    if hi < len(doc.headings):
        best = (doc.headings[hi].line, "h", hi)
    ni = bisect_right(doc.nodes, line, key=lambda n: n.line)
    while ni < len(doc.nodes) and not _top_node(doc.nodes[ni]):
        ni += 1
    if ni < len(doc.nodes) and (best is None or doc.nodes[ni].line < best[0]):
        best = (doc.nodes[ni].line, "n", ni)
    return best


def _same_heading(a: Heading, b: Heading) -> bool:
    return (
        a.depth == b.depth
        and a.marker == b.marker
        and a.id == b.id
        and a.title == b.title
        and a.title_span == b.title_span
        and a.edges == b.edges
        and a.malformed == b.malformed
        and a.edge_span == b.edge_span
        and a.meta == b.meta
        and (a.meta_line is None) == (b.meta_line is None)
    )


def _same_node(a: Node, b: Node) -> bool:
    return (
        a.id == b.id
        and a.prefix == b.prefix
        and a.title == b.title
        and a.title_span == b.title_span
        and a.edges == b.edges
        and a.malformed == b.malformed
        and a.edge_span == b.edge_span
        and a.meta == b.meta
        and (a.meta_line is None) == (b.meta_line is None)
    )


def plan(
    doc: Doc,
    start: int,
    end: int,
    new_lines: list[str],
    md: MarkdownIt,
    *,
    keep: int | None = None,
) -> Patch | None:
    """Plan replacing lines ``start..end`` of ``doc`` by ``new_lines``; ``None``: re-parse all.

    Args:
        doc: The parsed file (not modified).
        start: First replaced line (1-based).
        end: Last replaced line (inclusive); ``start - 1`` inserts before ``start``.
        new_lines: Replacement lines without terminators.
        md: The markdown-it parser.
        keep: A line in ``start..end`` holding an item that the new lines rewrite in place
            (an update): the item at ``start`` afterwards is that item, changed.

    Returns:
        The patch, or ``None`` when the window cannot be re-parsed on its own with certainty
        (the caller then re-parses the file).
    """
    lines = doc.source.lines
    headings, nodes = doc.headings, doc.nodes
    delta = len(new_lines) - (end - start + 1)
    # the window starts at a reset point before the change (at it only for an item rewritten
    # in place, whose new first line is again that item)
    upto = start if keep == start else start - 1
    inserted = new_lines[0] if end == start - 1 and new_lines else None
    first, parent = _reset_before(doc, upto, inserted) if upto >= 1 else (1, None)
    after = _reset_after(doc, end)
    stop = after[0] if after is not None else None
    if stop is not None and stop <= end:  # pragma: no cover - _reset_after looks past end
        return None
    # ancestor chain of the reset point (outermost first)
    chain: list[int] = []
    while parent is not None:
        chain.append(parent)
        parent = headings[parent].parent
    chain.reverse()
    prefix = [lines[headings[i].line - 1] for i in chain]
    k = len(prefix)
    body = lines[first - 1 : start - 1] + new_lines + (lines[end:stop] if stop is not None else lines[end:])
    window = prefix + body
    total = len(window)
    parsed = parse_doc(Source.from_lines(doc.source.rel, window), doc.family, md)

    def to_doc(w: int) -> int:
        return w - k - 1 + first

    sentinel_w = total if stop is not None else None
    # the prefix must read as the same headings
    if len(parsed.headings) < k or any(parsed.headings[j].line != j + 1 for j in range(k)):
        return None
    # the sentinel must read as the same item
    if after is not None:
        assert sentinel_w is not None
        if after[1] == "h":
            old_s = headings[after[2]]
            got = next((h for h in parsed.headings[k:] if h.line == sentinel_w), None)
            if got is None or got.depth != old_s.depth or got.id != old_s.id or got.marker != old_s.marker:
                return None
        else:
            old_n = nodes[after[2]]
            got_n = next((n for n in parsed.nodes if n.line == sentinel_w), None)
            if got_n is None or got_n.id != old_n.id:
                return None
    limit = sentinel_w if sentinel_w is not None else total + 1
    w_heads = [h for h in parsed.headings[k:] if h.line < limit]
    w_nodes = [n for n in parsed.nodes if n.line < limit]
    hi0 = bisect_left(headings, first, key=lambda h: h.line)
    hi1 = bisect_left(headings, stop, key=lambda h: h.line) if stop is not None else len(headings)
    ni0 = bisect_left(nodes, first, key=lambda n: n.line)
    ni1 = bisect_left(nodes, stop, key=lambda n: n.line) if stop is not None else len(nodes)

    def old_line(new: int) -> int | None:
        """Old line of an unchanged line in new numbering (None for a new line)."""
        if new < start:
            return new
        if new >= start + len(new_lines):
            return new - delta
        return None

    patch = Patch(start, end, new_lines, delta, first, stop, hi0, hi1, ni0, ni1)
    # match window headings with the old ones
    old_heads = {headings[i].line: i for i in range(hi0, hi1)}
    matched: set[int] = set()
    w_to_new: dict[int, int] = {}  # parsed heading index -> new doc index
    for j, h in enumerate(w_heads):
        new_index = hi0 + j
        w_to_new[k + j] = new_index
        line = to_doc(h.line)
        was = old_line(line)
        if was is None and keep is not None and line == start:
            was = keep
        old_i = old_heads.get(was) if was is not None else None
        if old_i is not None:
            if was != keep and not _same_heading(headings[old_i], h):
                return None
            old_h = headings[old_i]
            if was == keep and (old_h.id != h.id or old_h.depth != h.depth or old_h.marker != h.marker):
                return None
            matched.add(old_i)
            patch.old_of[new_index] = old_i
        elif h.id is not None:
            patch.new_ids.append(h.id)
    if len(matched) != hi1 - hi0:
        return None
    old_nodes = {nodes[i].line: i for i in range(ni0, ni1)}
    matched_n = 0
    for n in w_nodes:
        line = to_doc(n.line)
        was = old_line(line)
        if was is None and keep is not None and line == start:
            was = keep
        old_i = old_nodes.get(was) if was is not None else None
        if old_i is not None:
            if was != keep and not _same_node(nodes[old_i], n):
                return None
            if was == keep and nodes[old_i].id != n.id:
                return None
            matched_n += 1
        else:
            patch.new_ids.append(n.id)
    if matched_n != ni1 - ni0:
        return None

    def index_of(w_index: int | None) -> int | None:
        if w_index is None:
            return None
        if w_index < k:
            return chain[w_index]
        return w_to_new.get(w_index)

    shift = delta
    for j, h in enumerate(w_heads):
        new_index = hi0 + j
        old_i = patch.old_of.get(new_index)
        h.line = to_doc(h.line)
        if h.meta_line is not None:
            h.meta_line = to_doc(h.meta_line)
        h.parent = index_of(h.parent)
        if stop is not None and h.end == total:
            # still open where the window stops: its block goes on past the sentinel
            if old_i is None:
                return None
            old = headings[old_i]
            h.end = old.end + shift
            if h.first_child is None and old.first_child is not None and old.first_child >= stop:
                h.first_child = old.first_child + shift
            elif h.first_child is not None:
                h.first_child = to_doc(h.first_child)
            if h.first_node is None and old.first_node is not None and old.first_node >= stop:
                h.first_node = old.first_node + shift
            elif h.first_node is not None:
                h.first_node = to_doc(h.first_node)
        else:
            h.end = to_doc(h.end)
            if h.first_child is not None:
                h.first_child = to_doc(h.first_child)
            if h.first_node is not None:
                h.first_node = to_doc(h.first_node)
        patch.headings.append(h)
    for n in w_nodes:
        n.line = to_doc(n.line)
        if n.meta_line is not None:
            n.meta_line = to_doc(n.meta_line)
        n.end = to_doc(n.end)
        n.parent = index_of(n.parent)
        patch.nodes.append(n)
    # ancestors: their block goes on (or now stops) inside the window
    for j, index in enumerate(chain):
        copy, old = parsed.headings[j], headings[index]
        if stop is not None and copy.end == total:
            new_end = old.end + shift
        else:
            new_end = to_doc(copy.end)

        def pick(old_value: int | None, got: int | None) -> int | None:
            if old_value is not None and old_value < first:
                return old_value
            if got is not None and got > k:
                return to_doc(got)
            if old_value is not None and stop is not None and old_value >= stop:
                return old_value + shift
            return None

        patch.chain[index] = (new_end, pick(old.first_child, copy.first_child), pick(old.first_node, copy.first_node))
    head_index = {id(h): hi0 + j for j, h in enumerate(w_heads)}
    node_index = {id(n): ni0 + j for j, n in enumerate(w_nodes)}
    for kind, i in parsed.order:
        if kind == "h":
            if i < k:
                continue
            h = parsed.headings[i]
            if id(h) in head_index:
                patch.order.append(("h", head_index[id(h)]))
        else:
            n = parsed.nodes[i]
            if id(n) in node_index:
                patch.order.append(("n", node_index[id(n)]))
    patch.focus = [(ident, to_doc(w)) for ident, w in parsed.focus if k < w < limit]
    patch.diags = [(c, to_doc(w), m, e) for c, w, m, e in parsed.diags if k < w < limit]
    if not any(diag[0] != "rm.bad-meta" for diag in patch.diags):
        return patch  # nothing can be introduced (and the file's other diagnostics need no look)
    end_old = stop if stop is not None else len(lines) + 1
    before = Counter((c, m, e) for c, w, m, e in doc.diags if first <= w < end_old and c != "rm.bad-meta")
    for diag in patch.diags:
        key = (diag[0], diag[2], diag[3])
        if diag[0] == "rm.bad-meta":
            continue
        if before[key] > 0:
            before[key] -= 1
        else:
            patch.introduced.append(diag)
    return patch


def apply(doc: Doc, patch: Patch) -> tuple[int, int]:
    """Splice ``patch`` into ``doc`` in place (text, headings, nodes, order, Focus, diagnostics).

    Returns:
        ``(heading index shift, node index shift)`` for items after the window.
    """
    source = live(doc)
    raw = source.raw
    nl = source.newline
    start, end, delta = patch.start, patch.end, patch.delta
    added = [line + nl for line in patch.new_lines]
    if added:
        if start >= 2 and not raw[start - 2].endswith(("\n", "\r")):
            raw[start - 2] += nl
        if end >= len(raw) and end >= start and not raw[end - 1].endswith(("\n", "\r")):
            added[-1] = added[-1][: -len(nl)]
    raw[start - 1 : end] = added
    source.lines[start - 1 : end] = patch.new_lines
    headings, nodes = doc.headings, doc.nodes
    dh = len(patch.headings) - (patch.hi1 - patch.hi0)
    dn = len(patch.nodes) - (patch.ni1 - patch.ni0)
    new_index_of: dict[int, int] = {old: new for new, old in patch.old_of.items()}
    hi0, hi1 = patch.hi0, patch.hi1

    def remap(index: int | None) -> int | None:
        if index is None or index < hi0:
            return index
        if index >= hi1:
            return index + dh
        return new_index_of[index]

    for index, (new_end, first_child, first_node) in patch.chain.items():
        h = headings[index]
        h.end, h.first_child, h.first_node = new_end, first_child, first_node
    moved = bool(delta or dh or dn)  # an in-place rewrite of the same size moves nothing after it
    tail_h = headings[hi1:] if moved else []
    tail_n = nodes[patch.ni1 :] if moved else []
    for h in tail_h:
        h.line += delta
        h.end += delta
        if h.meta_line is not None:
            h.meta_line += delta
        if h.first_child is not None:
            h.first_child += delta
        if h.first_node is not None:
            h.first_node += delta
        h.parent = remap(h.parent)
    for n in tail_n:
        n.line += delta
        n.end += delta
        if n.meta_line is not None:
            n.meta_line += delta
        n.parent = remap(n.parent)
    headings[hi0:hi1] = patch.headings
    nodes[patch.ni0 : patch.ni1] = patch.nodes
    first, stop = patch.first, patch.stop

    # order: entries before the window keep their indices (all < hi0 / ni0)
    order = doc.order
    lo, hi = 0, len(order)
    while lo < hi:  # first entry whose item index is in or after the window
        mid = (lo + hi) // 2
        kind, i = order[mid]
        if (kind == "h" and i >= hi0) or (kind == "n" and i >= patch.ni0):
            hi = mid
        else:
            lo = mid + 1
    cut = lo
    past = cut
    while past < len(order) and (order[past][1] < hi1 if order[past][0] == "h" else order[past][1] < patch.ni1):
        past += 1
    if dh or dn:
        order[cut:] = patch.order + [("h", i + dh) if kind == "h" else ("n", i + dn) for kind, i in order[past:]]
    else:
        order[cut:past] = patch.order
    end_old = stop
    focus = doc.focus
    if focus or patch.focus:
        doc.focus = (
            [f for f in focus if f[1] < first]
            + patch.focus
            + ([(ident, line + delta) for ident, line in focus if end_old is not None and line >= end_old])
        )
    diags = doc.diags
    if diags or patch.diags:
        doc.diags = (
            [d for d in diags if d[1] < first]
            + patch.diags
            + [(c, w + delta, m, e) for c, w, m, e in diags if end_old is not None and w >= end_old]
        )
    return dh, dn


def _points_at(graph: Graph, ident: str, rel: str, is_heading: bool, index: int) -> bool:
    ref = graph.items.get(ident)
    return ref is not None and ref.rel == rel and ref.is_heading == is_heading and ref.index == index


def window_is_current(graph: Graph, rel: str, doc: Doc, patch: Patch) -> bool:
    """Whether every item of the patch's window is the graph's item of that id (no repeated id there)."""
    for i in range(patch.hi0, patch.hi1):
        ident = doc.headings[i].id
        if ident is not None and not _points_at(graph, ident, rel, True, i):
            return False
    return all(_points_at(graph, doc.nodes[i].id, rel, False, i) for i in range(patch.ni0, patch.ni1))


def reindex(graph: Graph, rel: str, doc: Doc, patch: Patch, dh: int, dn: int) -> None:
    """Bring ``graph``'s item refs, F# attachments and Focus list in line with a patched doc."""
    delta = patch.delta
    # items after the window first, while the window's refs still hold their old indices
    if dh or delta:
        for index in range(patch.hi0 + len(patch.headings), len(doc.headings)):
            heading = doc.headings[index]
            if heading.id is None:
                continue
            ref = graph.items.get(heading.id)
            if ref is not None and ref.rel == rel and ref.is_heading and ref.index == index - dh:
                ref.index, ref.line = index, heading.line
    if dn or delta:
        for index in range(patch.ni0 + len(patch.nodes), len(doc.nodes)):
            node = doc.nodes[index]
            ref = graph.items.get(node.id)
            if ref is not None and ref.rel == rel and not ref.is_heading and ref.index == index - dn:
                ref.index, ref.line = index, node.line
    family = doc.family
    for offset, heading in enumerate(patch.headings):
        if heading.id is None:
            continue
        index = patch.hi0 + offset
        ref = graph.items.get(heading.id)
        if ref is None:
            assert heading.marker is not None
            ref = ItemRef(heading.id, rel, True, index, heading.line, family, heading.marker)
            graph.items[heading.id] = ref
            graph.recorded.append(ref)
        ref.index, ref.line = index, heading.line
    for offset, node in enumerate(patch.nodes):
        index = patch.ni0 + offset
        ref = graph.items.get(node.id)
        if ref is None:
            ref = ItemRef(node.id, rel, False, index, node.line, family, "node")
            graph.items[node.id] = ref
            graph.recorded.append(ref)
        ref.index, ref.line = index, node.line
    if graph.attach:
        new_of = {old: new for new, old in patch.old_of.items()}
        for child, (owner_rel, index) in list(graph.attach.items()):
            if owner_rel != rel or index < patch.hi0:
                continue
            if index >= patch.hi1:
                graph.attach[child] = (rel, index + dh)
            else:
                graph.attach[child] = (rel, new_of[index])
    if doc.focus or any(r == rel for _, r, _ in graph.focus):
        graph.focus = [(ident, name, line) for name, d in graph.docs.items() for ident, line in d.focus]
