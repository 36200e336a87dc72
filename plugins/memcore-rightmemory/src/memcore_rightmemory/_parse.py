"""Parse one RightMemory graph file from markdown-it-py's token stream.

Spec: rightmemory-schema.md "Addressable Items", "Heading And Placement Rules"; reference
behaviour: reference-notes/rightmemory.md "Exact syntax, as the parser decides it".

The reference parser (RightMemory's ``graph.py``) reads line by line and skips only fenced code.
Here a line yields graph syntax only when markdown-it-py also sees the construct: an ATX
heading, or a ``-`` bullet list item whose paragraph starts with an inline code span, outside
block quotes, fenced or indented code and HTML blocks. Inline code spans and inline HTML are
masked before the anchor, edge-list and node patterns run, so ```{#x}``` or ``<b>→ [dep:y]</b>``
never become graph syntax. Line numbers come from ``token.map``. Everything else (which line
is a heading, node, Focus reference or ``**Next:**`` action, the error each rule raises) follows
the reference parser, rule for rule.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from memcore.storage import TextFile
from memcore.switches import switch_on
from memcore_rightmemory._meta import body_problems, meta_problems, meta_values
from memcore_rightmemory.mapping import MEMORY_ONLY_MARKERS, TERMINAL_MARKERS

if TYPE_CHECKING:
    from memcore_rightmemory._header import LineMap

__all__ = [
    "Doc",
    "Heading",
    "Node",
    "SettledSource",
    "Source",
    "fenced_lines",
    "make_markdown",
    "parse_doc",
    "parse_edges",
    "keep_split_enabled",
    "read_fast_enabled",
    "split_lines",
    "walk_release",
]


def read_fast_enabled() -> bool:
    """Whether ``read_all`` takes its shortcuts (default: yes; ``MEMCORE_RIGHTMEMORY_READ_FAST=0``: no).

    They are: ``read_all`` hands core the bytes it read
    (:meth:`memcore.provider.BaseProvider.source_bytes_read`), and the unread-text check looks
    only at the lines that can hold what it reports (:func:`memcore_rightmemory.validate.unread_in`).
    Off, core reads each file again and the check looks at every line, with the same results.
    """
    return switch_on("MEMCORE_RIGHTMEMORY_READ_FAST")


def keep_split_enabled() -> bool:
    """Whether a read leaves a file's lines split when they were split before it (default: yes).

    A write session's changed files end it with their lines split and, in the header layout,
    the line map made by the write's own check (:meth:`~memcore_rightmemory._incremental.LiveSource.settled`);
    ``read_all`` then keeps those lines instead of dropping them (the reads that follow, such
    as a migration's reference reading, do not split the file and rebuild its map again).
    ``MEMCORE_RIGHTMEMORY_KEEP_SPLIT=0``: the walk drops every file's lines when it leaves
    the file and the map is made when first asked for, with the same results.
    """
    return switch_on("MEMCORE_RIGHTMEMORY_KEEP_SPLIT")


def _keep() -> None:
    """Drop nothing: the lines were split before the walk."""


def walk_release(source: Source) -> Callable[[], None]:
    """Return what drops a file's lines when a read's walk leaves the file.

    ``source.release``, or (:func:`keep_split_enabled`) a call that keeps them for a
    :class:`SettledSource` whose lines are split: a write session split those, and they are
    held by the graph kept for the next session either way, so the read holds no more lines
    than were held before it. Lines a read's own load split are dropped.
    """
    if type(source) is SettledSource and keep_split_enabled() and source._lines is not None:
        return _keep
    return source.release


_ID = r"[A-Za-z0-9_.-]+"
ID_RE = re.compile(rf"^{_ID}$")
HEADING_RE = re.compile(r"^(#+)\s+")
#: Anchored heading (groups: hashes, title, marker, id, edge text).
ANCHOR_RE = re.compile(rf"^(#+)\s+(.*?)\{{(F#|M#|S#|MF#|MQ#|#)({_ID})\}}(?:\s*(?:\u2192|->)\s*\[(.*?)\])?\s*$")
ANCHOR_CANDIDATE_RE = re.compile(r"^(#+)\s+.*?\{(F#|M#|S#|MF#|MQ#|#)([^}]*)\}")
UNSUPPORTED_ANCHOR_RE = re.compile(r"^(#+)\s+.*?\{([A-Za-z]+#)([^}]*)\}")
#: Node line (groups: prefix, id, text, edge text).
NODE_RE = re.compile(r"^(\s*-\s+)`([^`]+)`(.*?)\s(?:\u2192|->)\s*\[(.*?)\]\s*$")
NODE_CANDIDATE_RE = re.compile(r"^\s*-\s+`([^`]+)`(?:\s|$)")
#: The same two patterns with possessive leads, for :func:`match_anchor` / :func:`match_node`.
_ANCHOR_EDGES_RE = re.compile(rf"^(#++)\s++(.*?)\{{(F#|M#|S#|MF#|MQ#|#)({_ID})\}}(?:\s*(?:\u2192|->)\s*\[(.*?)\])?\s*$")
#: An anchored heading with no edge list: group 5 never takes part (``(?!)`` fails at once).
_ANCHOR_BARE_RE = re.compile(rf"^(#++)\s++(.*?)\{{(F#|M#|S#|MF#|MQ#|#)({_ID})\}}(?:(?!)(.*))?\s*$")


def match_anchor(line: str) -> re.Match[str] | None:
    """Match :data:`ANCHOR_RE` on ``line`` in time linear in its length (same groups, spans).

    :data:`ANCHOR_RE` itself is quadratic on a line of many ``{#id} -> [`` without a closing
    ``]`` (each anchor scans to the end for one; 90 KB took 10 s). The line is cut first with
    string methods: a match must end in ``}`` or ``]`` followed only by whitespace, so the
    regex runs on the line up to that last ``]`` (the edge list's end) or, when it ends in
    ``}``, on the line without trailing whitespace and without trying an edge list. Spans
    index ``line`` (the match's ``string`` may be a prefix of it).
    """
    if "\n" in line:
        return ANCHOR_RE.match(line)  # not a line from split_lines; the reference pattern
    head = line.rstrip()
    if head.endswith("]"):
        return _ANCHOR_EDGES_RE.match(head)
    if head.endswith("}"):
        return _ANCHOR_BARE_RE.match(head)
    return None


def match_node(line: str) -> re.Match[str] | None:
    """Match :data:`NODE_RE` on ``line`` in time linear in its length (same groups, spans).

    :data:`NODE_RE` is quadratic on a line of many `` -> [`` without a closing ``]`` (48 KB:
    3.6 s). A node line must end in ``]`` plus whitespace, so the regex runs on the line up to
    that ``]``: each candidate arrow then either fails at once or ends the search.
    """
    if "\n" in line:
        return NODE_RE.match(line)
    head = line.rstrip()
    if not head.endswith("]"):
        return None
    return NODE_RE.match(head)


def match_anchor_candidate(pattern: re.Pattern[str], line: str) -> re.Match[str] | None:
    """Match :data:`ANCHOR_CANDIDATE_RE` or :data:`UNSUPPORTED_ANCHOR_RE` in linear time.

    Both end at a ``}``: the regex runs on the line up to its last ``}`` (none: no match), so
    an anchor start without a closing brace no longer scans to the end of the line.
    """
    if "\n" in line:
        return pattern.match(line)
    last = line.rfind("}")
    return None if last < 0 else pattern.match(line[: last + 1])


PURSUIT_FIELD_RE = re.compile(r"^\s*\*\*(State|Next|Done when|Status):\*\*", re.IGNORECASE)

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def fenced_lines(lines: Iterable[str]) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(1-based line number, line, in_code)`` for RightMemory's line-based readers.

    ``in_code`` is true for a fence line and every line inside fenced code (CommonMark rules: a
    fence closes on the same character, at least as long). The one fence tracker for the
    validators, the foreign-file check and body escaping, which all skip or keep code as is.
    """
    fence_char: str | None = None
    fence_len = 0
    for number, line in enumerate(lines, start=1):
        fence = FENCE_RE.match(line)
        if fence is not None:
            marker = fence.group(1)
            if fence_char is None:
                fence_char, fence_len = marker[0], len(marker)
            elif marker[0] == fence_char and len(marker) >= fence_len:
                fence_char, fence_len = None, 0
            yield number, line, True
            continue
        yield number, line, fence_char is not None


FOCUS_HEADING_RE = re.compile(r"^##\s+Focus\s*$", re.IGNORECASE)
EDGE_RE = re.compile(rf"^\s*([A-Za-z][A-Za-z0-9_-]*):\s*({_ID})\s*$")
META_RE = re.compile(r"^\s*<!-- memcore: (.*) -->\s*$")
_DEEP_HEADING_RE = re.compile(r"^#{7,}\s+")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BACKTICKS = re.compile(r"`+")
NEXT_ACTIONS = frozenset({"do", "ask", "wait"})


_EV_HEADING, _EV_NODE, _EV_TEXT = 0, 1, 2
_SCAN_HEADING = re.compile(r"#{1,6}[ \t]+\S")
_SCAN_FENCE = re.compile(r"(`{3,})[^`]*$|(~{3,})")
_SCAN_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_SCAN_BREAK = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$|=+[ \t]*$|-+[ \t]*$")
_SCAN_ORDERED = re.compile(r"\d{1,9}[.)](?:[ \t]|$)")
_SCAN_REFDEF = re.compile(r"\[[^\]]*\]:")
_SCAN_BULLET_TEXT = re.compile(r"- (?:[A-Za-z(\"']|\d(?!\d*[.)])|\*\*[^\s*]|\[(?![^\]]*\]:))")
_SCAN_BLANK = re.compile(r"[ \t]*$")


def _scan_inline_safe(line: str) -> bool:
    """Whether markdown-it's code spans on ``line`` are exactly the backtick pairs ``_mask`` finds.

    False when the line has raw HTML or an autolink (``<``), a backslash escape near a backtick,
    or a backtick inside a link destination (``](`` before it): there the two could disagree.
    """
    if "<" in line:
        return False
    if "`" not in line:
        return True
    if "\\" in line:
        return False
    link = line.find("](")
    return link < 0 or "`" not in line[link:]


def scan_simple(lines: list[str]) -> list[tuple[int, int, int]] | None:
    """Classify a file's lines without markdown-it, or return ``None`` when the file is not simple.

    The fast path of :func:`parse_doc`. A file is *simple* when, outside fenced code, every line
    is blank or starts at column 0 as one of: an ATX heading (1-6 ``#``), a ``- `` bullet, a
    single-line ``<!-- memcore: … -->`` comment, a fence opener, or paragraph text that starts
    no other block; the one indented line allowed is a node's own ``  <!-- memcore: … -->``
    right under it (an HTML block inside the node's list item). For such a file CommonMark's
    block structure is decided line by line: every heading and bullet starts at the top level,
    a bullet that starts with a code span is a list item of that line (and its comment; a node
    line followed by text is refused: the text would continue its paragraph), and a heading's
    or node's inline code spans are exactly the backtick pairs :func:`_mask` finds
    (:func:`_scan_inline_safe`). Anything else (indentation, block quotes, HTML blocks, ordered
    or ``*``/``+`` lists, thematic breaks, setext underlines, link reference definitions,
    ``#######``, ``#`` not followed by a space) returns ``None`` and the file goes through
    markdown-it.

    Returns:
        ``(event, 0-based line, stop)`` for headings (``_EV_HEADING``), bullets starting with a
        code span (``_EV_NODE``; ``stop``: the list item's last line, 1-based) and paragraph
        lines (``_EV_TEXT``), in order; or ``None``.
    """
    events: list[tuple[int, int, int]] = []
    fence: str | None = None
    after_node = False
    for ln, line in enumerate(lines):
        if fence is not None:
            close = _SCAN_CLOSE.match(line)
            if close is not None and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                fence = None
            continue
        if not line:
            after_node = False
            continue
        first = line[0]
        if first == " " or first == "\t":
            if _SCAN_BLANK.match(line):
                after_node = False
                continue
            if after_node and events[-1][1] == ln - 1 and line.startswith("  <!--") and META_RE.match(line):
                events[-1] = (_EV_NODE, ln - 1, ln + 1)  # the node's own memcore comment, inside its item
                continue
            return None
        if first == "#":
            if not _SCAN_HEADING.match(line) or not _scan_inline_safe(line):
                return None
            events.append((_EV_HEADING, ln, 0))
            after_node = False
            continue
        if first == "-":
            if line.startswith("- `"):
                if not _scan_inline_safe(line):
                    return None
                events.append((_EV_NODE, ln, ln + 1))
                after_node = True
                continue
            if _SCAN_BREAK.match(line):
                return None
            if line.startswith("- "):
                if not _SCAN_BULLET_TEXT.match(line):
                    return None
                events.append((_EV_TEXT, ln, 0))
                after_node = False
                continue
            if line[1:2] == "\t":
                return None
        elif first == "<":
            if META_RE.match(line) is None:
                return None
            after_node = False
            continue
        elif first == "`" or first == "~":
            opener = _SCAN_FENCE.match(line)
            if opener is not None:
                fence = opener.group(1) or opener.group(2)
                after_node = False
                continue
        elif first == ">":
            return None
        elif first in "*+_=":
            if _SCAN_BREAK.match(line) or line[:2] in ("* ", "*\t", "+ ", "+\t") or line in ("*", "+"):
                return None
        elif first == "[":
            if _SCAN_REFDEF.match(line):
                return None
        elif first.isdigit():
            if _SCAN_ORDERED.match(line):
                return None
        if after_node:
            return None  # would continue the node's paragraph (lazy continuation)
        events.append((_EV_TEXT, ln, 0))
    return events


def make_markdown() -> MarkdownIt:
    """Return the markdown-it-py parser every RightMemory read uses (CommonMark preset)."""
    return MarkdownIt("commonmark")


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines that keep their own terminators (``\\r\\n``, ``\\r`` or ``\\n``)."""
    return _LINE_RE.findall(text)


#: How a file whose memcore comments are in its header starts (:mod:`memcore_rightmemory._header`).
HEADER_START = b"<!-- memcore: items"


class Source:
    """One file's text, kept so that any line range can be replaced byte for byte.

    Only the bytes are held for good; the two line lists are split from them on first use and
    can be dropped again with :meth:`release` (a read of a big store keeps the bytes of every
    file, never every file's lines at once).

    The lines are the file's *inline* text: the comments the file keeps in its header are put
    back under their items (:func:`memcore_rightmemory._header.to_inline`), and bytes made from
    lines are in the header layout again (:func:`~memcore_rightmemory._header.to_file`).

    Attributes:
        rel: Path relative to the store root, ``/``-separated.
        data: The file's bytes as read.
        bom: Whether the file starts with a UTF-8 BOM.
        newline: The file's dominant line ending, used for lines memcore writes.
        raw: Inline lines with their original terminators (BOM removed from the first).
        lines: The same lines without terminators.
    """

    __slots__ = ("_lines", "_map", "_raw", "bom", "data", "inline", "newline", "rel")

    def __init__(self, rel: str, data: bytes, bom: bool, newline: str, *, inline: bool = False) -> None:
        self.rel = rel
        self.data = data
        self.bom = bom
        self.newline = newline
        self.inline = inline
        self._raw: list[str] | None = None
        self._lines: list[str] | None = None
        self._map: LineMap | None = None

    @classmethod
    def from_bytes(cls, rel: str, data: bytes) -> Source:
        """Decode UTF-8 ``data``.

        Raises:
            ParseError: Not UTF-8 text.
        """
        tf = TextFile.decode(data, path=rel)
        return cls(rel, data, tf.bom, tf.newline)

    @classmethod
    def from_lines(cls, rel: str, lines: list[str]) -> Source:
        """Return the source of the text ``"\\n".join(lines) + "\\n"`` without splitting it again.

        The same as ``from_bytes(rel, that text encoded)`` (``\\n`` endings, the same
        :attr:`lines`), for text built from lines that hold no line break (the write path's
        windows); when a line holds ``\\r`` or ``\\n``, or the first starts with a BOM
        character, the text is split (and the BOM taken off) exactly as :meth:`from_bytes` does.

        Raises:
            UnicodeEncodeError: A line holds a lone surrogate (as encoding the text would).
        """
        text = "\n".join(lines) + "\n"
        source = cls(rel, text.encode("utf-8"), False, "\n", inline=True)
        if text.startswith("\ufeff") or any("\r" in line or "\n" in line for line in lines):
            tf = TextFile.decode(source.data, path=rel)
            return cls(rel, source.data, tf.bom, tf.newline, inline=True)
        source._lines = list(lines) if lines else [""]
        return source

    @property
    def raw(self) -> list[str]:
        """Lines with their original terminators (split from :attr:`data` on first use)."""
        if self._raw is None:
            text = self.data.decode("utf-8")
            raw = split_lines(text[1:] if self.bom else text)
            if not self.inline:
                from memcore_rightmemory._header import to_inline

                raw, self._map = to_inline(raw, self.newline)
            self._raw = raw
        return self._raw

    def file_line(self, line: int | None) -> int | None:
        """Return the line of the file on disk for inline line ``line`` (``None`` stays ``None``)."""
        if self._map is None and not self.inline and self.data[:32].lstrip(b"\xef\xbb\xbf").startswith(HEADER_START):
            self.release()
            _ = self.raw  # split again: that makes the map
        return line if self._map is None else self._map.file_line(line)

    @property
    def lines(self) -> list[str]:
        """Lines without terminators (split from :attr:`data` on first use)."""
        if self._lines is None:
            self._lines = [line.rstrip("\r\n") for line in self.raw]
            self._raw = None
        return self._lines

    def release(self) -> None:
        """Drop the split lines (they are split again from the bytes when next used)."""
        self._raw = None
        self._lines = None

    def markdown_text(self) -> str:
        """Return the text markdown-it parses (``\\n`` line endings)."""
        return "\n".join(self.lines) + ("\n" if self.lines else "")

    def splice(self, edits: list[tuple[int, int, list[str]]]) -> bytes:
        """Return the file's bytes with line ranges replaced, every other byte as it was.

        Args:
            edits: ``(start, end, new_lines)``: lines ``start..end`` (1-based, inclusive) are
                replaced by ``new_lines``; ``end = start - 1`` inserts before ``start``. Ranges
                must not overlap. New lines get the file's dominant line ending; a final line
                without a terminator gets one only when lines are added after it.
        """
        raw = list(self.raw)
        for start, end, new_lines in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
            head, old, tail = raw[: start - 1], raw[start - 1 : end], raw[end:]
            added = [line + self.newline for line in new_lines]
            if added:
                if head and not head[-1].endswith(("\n", "\r")):
                    head[-1] += self.newline
                if not tail and old and not old[-1].endswith(("\n", "\r")):
                    added[-1] = added[-1][: -len(self.newline)]
            raw = head + added + tail
        if not self.inline:
            from memcore_rightmemory._header import to_file

            raw = to_file(raw, self.newline)
        text = ("\ufeff" if self.bom else "") + "".join(raw)
        return text.encode("utf-8")


class SettledSource(Source):
    """The source of a file a write session changed, as the session left it (lines split).

    The same as :class:`Source`; reads tell it apart to keep its lines (:func:`walk_release`).
    """

    __slots__ = ()


@dataclass(slots=True)
class Heading:
    """A heading line (addressable or plain) and the block it opens in its file."""

    line: int
    depth: int
    parent: int | None
    marker: str | None = None
    id: str | None = None
    title: str = ""
    title_span: tuple[int, int] = (0, 0)
    edges: list[tuple[str, str]] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    edge_span: tuple[int, int] | None = None
    end: int = 0
    first_child: int | None = None
    first_node: int | None = None
    meta_line: int | None = None
    meta: dict[str, Any] | None = None
    #: ``meta``'s entry fields when every key is plainly valid (:func:`meta_values`), else None.
    fields: dict[str, Any] | None = None

    @property
    def lead_end(self) -> int:
        """Last line of the heading's own body: before its first child heading or node."""
        stops = [x - 1 for x in (self.first_child, self.first_node) if x is not None]
        return min([self.end, *stops])


@dataclass(slots=True)
class Node:
    """A node line ``- `id` text → [edges]``."""

    line: int
    id: str
    parent: int | None
    prefix: str
    title: str
    title_span: tuple[int, int]
    edges: list[tuple[str, str]]
    malformed: list[str]
    edge_span: tuple[int, int]
    meta_line: int | None = None
    meta: dict[str, Any] | None = None
    end: int = 0  # last non-blank line of the list item (continuations, nested items)
    #: ``meta``'s entry fields when every key is plainly valid (:func:`meta_values`), else None.
    fields: dict[str, Any] | None = None


@dataclass(slots=True)
class Doc:
    """One parsed graph file.

    Attributes:
        source: The file's text.
        family: ``"memory"`` or ``"pursuit"``.
        headings: Every heading the reference parser sees, in order.
        nodes: Every recorded node, in order.
        order: Items in document order: ``("h", index)`` or ``("n", index)``.
        focus: Focus references ``(id, line)`` (PURSUITS.md ``## Focus``).
        diags: ``(code, line, message, entry_id)`` found while parsing this file.
    """

    source: Source
    family: str
    headings: list[Heading] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    order: list[tuple[str, int]] = field(default_factory=list)
    focus: list[tuple[str, int]] = field(default_factory=list)
    diags: list[tuple[str, int, str, str | None]] = field(default_factory=list)


#: The ``malformed`` list of every item without malformed edge pieces (read, never changed).
_NO_PIECES: list[str] = []
_NODE_KEYS: dict[int, tuple[str, int]] = {}


def _node_key(index: int) -> tuple[str, int]:
    """Return ``("n", index)``, one shared tuple per index (a big graph has one per node)."""
    return _NODE_KEYS.setdefault(index, ("n", index))


def parse_edges(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Split an edge list's inner text into ``(type, target)`` pairs and malformed pieces.

    Types and targets are interned (as are node ids and prefixes): a big graph holds each id
    string once, however many edges point at it. No malformed piece: one shared empty list,
    which callers read and never change.
    """
    edges: list[tuple[str, str]] = []
    malformed: list[str] = []
    for raw in text.split(","):
        value = raw.strip()
        if not value:
            continue
        match = EDGE_RE.match(value)
        if match is None:
            malformed.append(value)
        else:
            edges.append((sys.intern(match.group(1)), sys.intern(match.group(2))))
    return edges, malformed or _NO_PIECES


def _mask(text: str, html: list[str]) -> str:
    """Blank out inline code spans and the given inline HTML pieces, keeping offsets."""
    spans: list[tuple[int, int]] = []
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    j = 0
    while j < len(runs):
        start, end = runs[j]
        if start > 0 and text[start - 1] == "\\":
            start += 1
        width = end - start
        if width == 0:
            j += 1
            continue
        k = j + 1
        while k < len(runs) and runs[k][1] - runs[k][0] != width:
            k += 1
        if k < len(runs):
            spans.append((start, runs[k][1]))
            j = k + 1
        else:
            j += 1
    cursor = 0
    for piece in html:
        at = text.find(piece, cursor)
        if at >= 0:
            spans.append((at, at + len(piece)))
            cursor = at + len(piece)
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = "\x00" * (end - start)
    return "".join(chars)


def _inline_parts(inline: Token | None) -> tuple[int, list[str]]:
    """Return (number of code spans, inline HTML pieces) of an inline token."""
    if inline is None or not inline.children:
        return 0, []
    code = 0
    html: list[str] = []
    for child in inline.children:
        if child.type == "code_inline":
            code += 1
        elif child.type == "html_inline":
            html.append(child.content)
    return code, html


def _meta_at(lines: list[str], index: int) -> tuple[dict[str, Any] | None, bool]:
    """Return (meta dict, whether line ``index`` (0-based) is a memcore comment)."""
    if index >= len(lines):
        return None, False
    match = META_RE.match(lines[index])
    if match is None:
        return None, False
    try:
        value = _DECODER.decode(match.group(1))
    except (ValueError, RecursionError):
        return None, True
    return (value if isinstance(value, dict) else None), True


def _no_constant(name: str) -> Any:
    """Refuse ``NaN``/``Infinity``: not JSON, and memcore could not write them back."""
    raise ValueError(f"{name} is not JSON")


#: ``json.loads(text, parse_constant=_no_constant)`` without building a decoder per comment.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


class _Parser:
    def __init__(self, doc: Doc, tokens: list[Token]) -> None:
        self.doc = doc
        self.tokens = tokens
        self.lines = doc.source.lines
        self.stack: list[int] = []
        self.in_focus = False
        self.in_next = False

    def err(self, code: str, line: int, message: str, entry_id: str | None = None) -> None:
        self.doc.diags.append((code, line, message, entry_id))

    def _check_meta(self, meta: dict[str, Any] | None, line: int, entry_id: str | None) -> dict[str, Any] | None:
        """Report a memcore comment that is not a JSON object, or each key a reader cannot use.

        Returns:
            The comment's entry fields when every key is plainly valid (:func:`meta_values`;
            the item keeps them, so building its entry checks nothing again), else ``None``.
        """
        if meta is None:
            self.err("rm.bad-meta", line, "memcore comment is not a JSON object", entry_id)
            return None
        fields = meta_values(meta)
        if fields is not None and not body_problems(meta):
            return fields
        for key, reason in meta_problems(meta).items():
            self.err(
                "rm.bad-meta",
                line,
                f"memcore comment key `{key}` ignored ({reason}); an update keeps it as written",
                entry_id,
            )
        return fields

    def run(self) -> None:
        tokens = self.tokens
        quote = 0
        lists = 0
        pursuit = self.doc.family == "pursuit"
        for i, tok in enumerate(tokens):
            kind = tok.type
            if kind == "list_item_open":
                if quote == 0 and tok.markup == "-" and tok.map is not None:
                    self.list_item(tok.map[0], tokens, i, tok.map[1])
            elif kind == "paragraph_open":
                if quote == 0 and tok.map is not None:
                    start, stop = tok.map
                    if pursuit:
                        for ln in range(start, stop):
                            self.field_line(ln)
                    if lists == 0 and _DEEP_HEADING_RE.match(self.lines[start]):
                        self.heading(start, *_inline_parts(tokens[i + 1] if i + 1 < len(tokens) else None))
            elif kind == "heading_open":
                if quote == 0 and tok.markup.startswith("#") and tok.map is not None:
                    self.heading(tok.map[0], *_inline_parts(tokens[i + 1]))
            elif kind == "bullet_list_open" or kind == "ordered_list_open":
                lists += 1
            elif kind == "bullet_list_close" or kind == "ordered_list_close":
                lists -= 1
            elif kind == "blockquote_open":
                quote += 1
            elif kind == "blockquote_close":
                quote -= 1
        self.finish()

    def run_scan(self, events: list[tuple[int, int, int]]) -> None:
        """Apply the events of :func:`scan_simple` (the same rules as :meth:`run`)."""
        lines = self.lines
        pursuit = self.doc.family == "pursuit"
        for kind, ln, stop in events:
            raw = lines[ln]
            if kind == _EV_HEADING:
                self.heading(ln, 1 if "`" in raw else 0, [])
            elif kind == _EV_NODE:
                candidate = NODE_CANDIDATE_RE.match(raw)
                if candidate is not None:
                    code = 2 if "`" in raw[candidate.end(1) + 1 :] else 1
                    self.node(ln, candidate, code, [], stop)
            elif pursuit:
                self.field_line(ln)
        self.finish()

    def finish(self) -> None:
        total = len(self.lines)
        for index in self.stack:
            self.doc.headings[index].end = total

    def field_line(self, ln: int) -> None:
        """Track Pursuit ``**Next:**`` state from one paragraph line."""
        field_match = PURSUIT_FIELD_RE.match(self.lines[ln])
        if field_match:
            self.in_next = field_match.group(1).casefold() == "next"

    def _ancestor(self, terminal: bool) -> Heading | None:
        for index in reversed(self.stack):
            block = self.doc.headings[index]
            if terminal:
                if block.depth == 4 and block.marker in TERMINAL_MARKERS:
                    return block
            elif block.marker == "F#":
                return block
        return None

    def _anchor_in_code(self, lineno: int, raw: str) -> None:
        """Report an anchor memcore does not read (inline code or HTML) that graph.py reads as malformed.

        graph.py does not know code spans: ``## Title `{#x}` `` is to it an anchor followed by
        text, which it reports as a malformed heading edge list (or an invalid id, or an
        unsupported marker); memcore reports it too, so both call the file invalid.
        """
        candidate = match_anchor_candidate(ANCHOR_CANDIDATE_RE, raw) or match_anchor_candidate(
            UNSUPPORTED_ANCHOR_RE, raw
        )
        if candidate is not None:
            self.err(
                "rm.anchor-in-code",
                lineno,
                f"`{{{candidate.group(2)}{candidate.group(3)}}}` is inside inline code or HTML: RightMemory's "
                "graph.py does not skip those and reads a malformed anchor; move the anchor out of the "
                "code span (after the title) or write it without the braces",
            )

    def heading(self, ln: int, code: int, html: list[str]) -> None:
        """Record the heading on line ``ln`` (0-based); ``code``/``html``: its inline code spans / HTML."""
        raw = self.lines[ln]
        head = HEADING_RE.match(raw)
        if head is None:
            return
        lineno = ln + 1
        depth = len(head.group(1))
        headings = self.doc.headings
        while self.stack and headings[self.stack[-1]].depth >= depth:
            headings[self.stack.pop()].end = lineno - 1
        parent = self.stack[-1] if self.stack else None
        block = Heading(line=lineno, depth=depth, parent=parent, end=lineno)
        line = _mask(raw, html) if code or html else raw
        anchor = match_anchor(line)
        if anchor is not None:
            block.marker = anchor.group(3)
            block.id = sys.intern(anchor.group(4))
            start, end = anchor.span(2)
            block.title_span = (start, start + len(raw[start:end].rstrip()))
            block.title = raw[block.title_span[0] : block.title_span[1]].strip()
            if anchor.group(5) is not None:
                block.edge_span = anchor.span(5)
                block.edges, block.malformed = parse_edges(raw[slice(*anchor.span(5))])
        else:
            candidate = match_anchor_candidate(ANCHOR_CANDIDATE_RE, line)
            if candidate is not None:
                block.marker = candidate.group(2)
                cid = candidate.group(3)
                if ID_RE.match(cid):
                    block.id = cid
                    brace = line.find("{", head.end())
                    block.title_span = (head.end(), head.end() + len(raw[head.end() : brace].rstrip()))
                    block.title = raw[block.title_span[0] : block.title_span[1]].strip()
                    self.err(
                        "rm.malformed-heading-edges",
                        lineno,
                        f"malformed heading edge list on `{cid}`: after the anchor write nothing "
                        "or `→ [type:target, …]`",
                        cid,
                    )
                else:
                    block.marker = None
                    self.err(
                        "rm.invalid-id",
                        lineno,
                        f"invalid heading id `{cid}`; use only letters, numbers, dot, underscore, or dash",
                    )
            else:
                unsupported = match_anchor_candidate(UNSUPPORTED_ANCHOR_RE, line)
                if unsupported is not None:
                    self.err(
                        "rm.unsupported-marker",
                        lineno,
                        f"unsupported heading marker `{unsupported.group(2)}`; use #, F#, M#, S#, MF# or MQ#",
                    )
        if block.id is None and line is not raw and match_anchor(raw) is None:
            self._anchor_in_code(lineno, raw)
        if block.id is None:
            block.title_span = (head.end(), len(raw.rstrip()))
            block.title = raw[head.end() :].strip()
        if parent is not None and headings[parent].first_child is None:
            headings[parent].first_child = lineno
        f_owner = self._ancestor(terminal=False)
        if f_owner is not None:
            self.err(
                "rm.heading-under-f",
                lineno,
                f"F# heading cannot retain child headings; move them to the backing file for `{f_owner.id}`",
                block.id,
            )
        if self._ancestor(terminal=True) is not None:
            self.err("rm.terminal-children", lineno, "terminal `####` heading cannot contain child headings")
        if depth > 4:
            self.err("rm.heading-too-deep", lineno, "headings deeper than `####` are not allowed", block.id)
        elif depth == 4:
            if block.marker not in TERMINAL_MARKERS or block.id is None:
                self.err(
                    "rm.terminal-marker",
                    lineno,
                    "`####` terminal reference must use `{F#slug}`, `{M#slug}`, `{S#slug}`, "
                    "`{MF#slug}`, or `{MQ#slug}`",
                    block.id,
                )
            parent_depth = headings[parent].depth if parent is not None else 0
            if parent_depth != 3:
                self.err(
                    "rm.terminal-parent", lineno, "`####` terminal reference must be under a `###` heading", block.id
                )
        if self.doc.family == "pursuit":
            if depth <= 2:
                self.in_focus = bool(FOCUS_HEADING_RE.match(raw))
            self.in_next = False
        if block.id is not None:
            meta, is_meta = _meta_at(self.lines, ln + 1)
            if is_meta:
                block.meta_line = lineno + 1
                block.meta = meta
                block.fields = self._check_meta(meta, lineno + 1, block.id)
            if block.marker in MEMORY_ONLY_MARKERS and self.doc.family != "memory":
                self.err(
                    "rm.memory-only-marker",
                    lineno,
                    f"{block.marker} heading `{block.id}` is only valid in Memory",
                    block.id,
                )
            if block.marker == "F#" and self.doc.family == "pursuit" and block.id.casefold() == "rules":
                self.err(
                    "rm.reserved-id",
                    lineno,
                    f"Pursuit F# id `{block.id}` is reserved for the legacy root reference path",
                    block.id,
                )
            self.doc.order.append(("h", len(headings)))
        headings.append(block)
        self.stack.append(len(headings) - 1)

    def list_item(self, ln: int, tokens: list[Token], i: int, stop: int) -> None:
        raw = self.lines[ln]
        candidate = NODE_CANDIDATE_RE.match(raw)
        if candidate is None:
            return
        inline: Token | None = None
        if i + 2 < len(tokens) and tokens[i + 1].type == "paragraph_open":
            pmap = tokens[i + 1].map
            if pmap is not None and pmap[0] == ln:
                inline = tokens[i + 2]
        if inline is None or not inline.children or inline.children[0].type != "code_inline":
            return
        code, html = _inline_parts(inline)
        self.node(ln, candidate, code, html, stop)

    def node(self, ln: int, candidate: re.Match[str], code: int, html: list[str], stop: int) -> None:
        """Record the list item on line ``ln`` whose paragraph starts with a code span.

        ``code``/``html``: the paragraph's inline code spans / HTML; ``stop``: the item's end.
        """
        raw = self.lines[ln]
        lineno = ln + 1
        ident = sys.intern(candidate.group(1))
        if self.in_focus:
            if not ID_RE.match(ident):
                self.err("rm.focus-invalid-id", lineno, f"invalid Focus reference id `{ident}`")
            else:
                self.doc.focus.append((ident, lineno))
            return
        if self.doc.family == "pursuit" and self.in_next:
            if ident not in NEXT_ACTIONS:
                self.err(
                    "rm.invalid-next-action",
                    lineno,
                    f"invalid Pursuit Next action `{ident}`; use `do`, `ask`, or `wait`",
                )
            return
        if self._ancestor(terminal=True) is not None:
            self.err("rm.terminal-children", lineno, "terminal `####` heading cannot contain node lines")
        f_owner = self._ancestor(terminal=False)
        if f_owner is not None:
            self.err(
                "rm.node-under-f",
                lineno,
                f"F# heading cannot retain child node lines; move them to the backing file for `{f_owner.id}`",
                ident if ID_RE.match(ident) else None,
            )
        if not ID_RE.match(ident):
            self.err(
                "rm.invalid-id",
                lineno,
                f"invalid node id `{ident}`; use only letters, numbers, dot, underscore, or dash",
            )
            return
        line = raw
        if code > 1 or html:
            cut = candidate.end(1) + 1
            line = raw[:cut] + _mask(raw[cut:], html)
        match = match_node(line)
        if match is None:
            self.err(
                "rm.node-missing-edges",
                lineno,
                f"node `{ident}` must include an edge list such as `\u2192 []`",
                ident,
            )
            return
        start, end = match.span(3)
        text = raw[start:end]
        lead = len(text) - len(text.lstrip())
        title_span = (start + lead, start + len(text.rstrip()))
        edges, malformed = parse_edges(raw[slice(*match.span(4))])
        parent = self.stack[-1] if self.stack else None
        node = Node(
            line=lineno,
            id=ident,
            parent=parent,
            prefix=sys.intern(match.group(1)),
            title=text.strip(),
            title_span=title_span,
            edges=edges,
            malformed=malformed,
            edge_span=match.span(4),
        )
        end = max(stop, lineno)
        while end > lineno and not self.lines[end - 1].strip():
            end -= 1
        node.end = end
        meta, is_meta = _meta_at(self.lines, ln + 1)
        if is_meta:
            node.meta_line = lineno + 1
            node.meta = meta
            node.fields = self._check_meta(meta, lineno + 1, ident)
        if parent is not None and self.doc.headings[parent].first_node is None:
            self.doc.headings[parent].first_node = lineno
        self.doc.order.append(_node_key(len(self.doc.nodes)))
        self.doc.nodes.append(node)


def parse_doc(source: Source, family: str, md: MarkdownIt, *, scan: bool = True) -> Doc:
    """Parse one graph file.

    Args:
        source: The file's text.
        family: ``"memory"`` or ``"pursuit"``: the tree the file belongs to.
        md: A parser from :func:`make_markdown`.
        scan: Use the line scanner (:func:`scan_simple`) when the file is simple; markdown-it
            parses every other file. ``False``: always markdown-it (the tests compare both).

    Returns:
        The file's headings, nodes, Focus references and per-file diagnostics. The source's
        split lines are released (see :meth:`Source.release`); only its bytes stay.
    """
    doc = Doc(source=source, family=family)
    events = scan_simple(source.lines) if scan else None
    if events is not None:
        _Parser(doc, []).run_scan(events)
    else:
        _Parser(doc, md.parse(source.markdown_text())).run()
    source.release()
    return doc
