"""Where a graph file keeps its items' memcore comments on disk: one block before its content.

memcore's parser and writers work on the *inline* layout: an item's ``<!-- memcore: {…} -->``
comment is the line right after its heading line or node line (:mod:`memcore_rightmemory._meta`).
RightMemory's ``graph.py`` reads such a line under a heading as the first line of the heading's
body, and collects nothing before a file's first heading. So on disk the comments of a file's
items are kept in one HTML comment at the top of the file (the *header*), one line per item::

    <!-- memcore: items
    <item id> {…the comment's JSON…}
    -->

followed by one blank line and the file's content, in which no item carries a comment line.
:func:`to_file` turns inline text into that layout when a file is written, :func:`to_inline`
turns a file read back into inline text, so everything between (parsing, the write path's
incremental re-parse, moves, versions) is unchanged. Markdown renders nothing for the header.

The two are exact inverses on what memcore writes: :func:`to_file` checks that
:func:`to_inline` gives the very same lines back and otherwise writes the inline text as it is
(the layout memcore wrote before, which it still reads). A header line whose id names no item
of the file, or an item that already has an inline comment or appears twice, stays in the
header as it is (kept on every rewrite; :func:`to_inline` leaves those lines in a header block
at the top of the inline text, where :func:`~memcore_rightmemory.validate.unread_text` reports
them). ``MEMCORE_RIGHTMEMORY_HEADER=0`` writes the inline layout (reading understands both).

Diagnostics and :meth:`~memcore_rightmemory.provider.RightMemoryProvider.locate` name lines of
the file on disk: :class:`LineMap` maps an inline line number to the file's.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from memcore.switches import switch_on
from memcore_rightmemory._parse import META_RE, NODE_RE, match_anchor, split_lines

__all__ = [
    "HEADER_CLOSE",
    "HEADER_OPEN",
    "LineMap",
    "header_enabled",
    "inline_text",
    "to_file",
    "to_file_mapped",
    "to_inline",
]

HEADER_OPEN = "<!-- memcore: items"
HEADER_CLOSE = "-->"
_ENTRY_RE = re.compile(r"^([A-Za-z0-9_.-]+) (\{.*\})$")


def header_enabled() -> bool:
    """Whether written files keep their memcore comments in the header (read at each write)."""
    return switch_on("MEMCORE_RIGHTMEMORY_HEADER")


def _strip(line: str) -> str:
    return line.rstrip("\r\n")


#: A line either scanner must look at: a fence, a heading, a bullet starting with a backticked id.
_CANDIDATE_RE = re.compile(r"^(?: {0,3}(?:`{3,}|~{3,})[^\n]*|#[^\n]*|[ \t]*-[ \t]+`[^\n]*)$", re.MULTILINE)
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _items(lines: list[str], start: int) -> dict[str, list[tuple[int, int | None]]]:
    """Return ``id -> [(index, node indent or None for a heading)]`` of item lines from ``start`` on.

    Lines in fenced code are skipped, by the rules of :func:`~memcore_rightmemory._parse.fenced_lines`.
    One regular expression over the joined text finds the lines worth a look (fences, headings,
    node bullets); the rest are never visited one by one.
    """
    found: dict[str, list[tuple[int, int | None]]] = {}
    text = "\n".join(lines[start:])
    fence_char: str | None = None
    fence_len = 0
    index, at = start, 0
    for match in _CANDIDATE_RE.finditer(text):
        index += text.count("\n", at, match.start())
        at = match.start()
        line = match.group()
        fence = _FENCE_RE.match(line)
        if fence is not None:
            marker = fence.group(1)
            if fence_char is None:
                fence_char, fence_len = marker[0], len(marker)
            elif marker[0] == fence_char and len(marker) >= fence_len:
                fence_char, fence_len = None, 0
            continue
        if fence_char is not None:
            continue
        if line.startswith("#"):
            anchor = match_anchor(line)
            if anchor is not None:
                found.setdefault(anchor.group(4), []).append((index, None))
        else:
            node = NODE_RE.match(line)
            if node is not None:
                found.setdefault(node.group(2), []).append((index, len(node.group(1))))
    return found


def _comment(blob: str, indent: int | None) -> str:
    return " " * (indent or 0) + f"<!-- memcore: {blob} -->"


def _header_end(lines: list[str]) -> int | None:
    """Index of the header's closing line, when ``lines`` start with a well-formed header."""
    if not lines or _strip(lines[0]) != HEADER_OPEN:
        return None
    for index in range(1, len(lines)):
        text = _strip(lines[index])
        if text == HEADER_CLOSE:
            return index
        if _ENTRY_RE.match(text) is None:
            return None
    return None


@dataclass(frozen=True)
class LineMap:
    """Inline line numbers -> line numbers of the file on disk (1-based).

    Attributes:
        top: File line of each line of the header block left at the top of the inline text
            (the header lines no item took), in order; empty when there is none.
        moved: Inline line numbers of the comment lines kept in the header, ascending.
        header: File line of each of those comments, in the same order.
        shift: Lines the file has above its content that the inline text does not.
    """

    top: tuple[int, ...]
    moved: tuple[int, ...]
    header: tuple[int, ...]
    shift: int

    def file_line(self, line: int | None) -> int | None:
        """Return the file's line number for inline line ``line`` (``None`` stays ``None``)."""
        if line is None:
            return None
        if line <= len(self.top):
            return self.top[line - 1]
        k = bisect_right(self.moved, line)
        if k and self.moved[k - 1] == line:
            return self.header[k - 1]
        return line - k + self.shift


def to_inline(raw: list[str], newline: str) -> tuple[list[str], LineMap | None]:
    """Return the inline lines of a file's lines (terminators kept) and the map back to the file.

    A file that does not start with a well-formed header is returned as it is (``None`` map).
    """
    end = _header_end(raw)
    if end is None:
        return raw, None
    entries = [_ENTRY_RE.match(_strip(line)) for line in raw[1:end]]
    content = end + 1
    if content < len(raw) and not _strip(raw[content]):
        content += 1
    body = [line.rstrip("\r\n") for line in raw]
    items = _items(body, content)
    place: dict[int, tuple[str, int]] = {}  # item line index -> (comment line, header index)
    kept: list[int] = []
    for offset, entry in enumerate(entries, start=1):
        assert entry is not None
        spots = items.get(entry.group(1), [])
        if len(spots) != 1 or spots[0][0] in place:
            kept.append(offset)
            continue
        index, indent = spots[0]
        following = body[index + 1] if index + 1 < len(body) else ""
        if META_RE.match(following):
            kept.append(offset)  # the item already carries a comment inline
            continue
        place[index] = (_comment(entry.group(2), indent), offset)
    if not place:
        return raw, None
    out: list[str] = []
    moved: list[int] = []
    header: list[int] = []
    top: list[int] = []
    if kept:
        out += [raw[0], *(raw[i] for i in kept), raw[end], *raw[end + 1 : content]]
        top = [1, *(i + 1 for i in kept), *range(end + 1, content + 1)]
    for index in range(content, len(raw)):
        line = raw[index]
        if index in place and not line.endswith(("\n", "\r")):
            line += newline
        out.append(line)
        if index in place:
            comment, offset = place[index]
            out.append(comment + newline)
            moved.append(len(out))
            header.append(offset + 1)
    if out and not raw[-1].endswith(("\n", "\r")) and len(raw) - 1 in place:
        out[-1] = out[-1][: -len(newline)]  # the file's last line had no terminator: neither has the comment
    return out, LineMap(tuple(top), tuple(moved), tuple(header), content - len(top))


def to_file(raw: list[str], newline: str) -> list[str]:
    """Return the lines to write for inline lines ``raw`` (terminators kept): the header layout.

    Inline text with no comment to move, or whose header layout would not read back as exactly
    these lines (:func:`to_inline`), is returned as it is.
    """
    return to_file_mapped(raw, newline)[0]


def to_file_mapped(raw: list[str], newline: str) -> tuple[list[str], LineMap | None, bool]:
    """Return :func:`to_file`'s lines, the :class:`LineMap` a read of them makes, and whether it is known.

    The map is the one :func:`to_inline` of the returned lines gives (its self-check computes
    it), known only when the lines are in the header layout; for inline text returned as it is
    the third value is ``False`` (a reader finds the map itself).

    Args:
        raw: Inline lines, terminators kept.
        newline: The file's line ending, for the lines the header adds.

    Returns:
        ``(lines to write, map or None, known)``.
    """
    if not header_enabled() or "<!-- memcore: " not in "".join(raw):
        return raw, None, False
    lines = [line.rstrip("\r\n") for line in raw]
    start = 0
    kept: list[str] = []
    end = _header_end(raw)
    if end is not None:  # header lines no item took, from the file this text was read from
        kept = lines[1:end]
        start = end + 1
        if start < len(lines) and not lines[start]:
            start += 1
    items = _items(lines, start)
    once = {spots[0][0]: ident for ident, spots in items.items() if len(spots) == 1}
    entries: list[str] = []
    drop: set[int] = set()
    for index in sorted(once):
        if index + 1 >= len(lines):
            continue
        meta = META_RE.match(lines[index + 1])
        if meta is None:
            continue
        entries.append(f"{once[index]} {meta.group(1)}")
        drop.add(index + 1)
    if not entries:
        return raw, None, False
    out = [HEADER_OPEN + newline, *(line + newline for line in [*kept, *entries]), HEADER_CLOSE + newline, newline]
    out += [line for index, line in enumerate(raw[start:], start=start) if index not in drop]
    back, line_map = to_inline(out, newline)
    return (out, line_map, True) if back == raw else (raw, None, False)


def inline_text(text: str) -> str:
    """Return a graph file's text with its header's comments put back under their items.

    What memcore's parser reads; for tools and tests that look at an item's comment line.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    return "".join(to_inline(split_lines(text), newline)[0])
