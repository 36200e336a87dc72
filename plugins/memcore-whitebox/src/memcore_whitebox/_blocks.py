"""Scanning monthly observation files into blocks, and reading a block's frontmatter.

WhiteBox observations come in two layouts (spec v1.0 "Observations", reference notes 1-4):

- **fenced** (what the reference writer produces and its parser reads): a line of three or more
  backticks with no info string, then ``---``, ``key: value`` lines, ``---``, the body, and a
  closing fence at least as long as the opening one. A body may itself hold fenced code: an
  inner fence with an info string (```` ```python ````) opens a nested block whose closing fence
  does not end the observation (the reference parser truncates such bodies; memcore reads them
  whole).
- **bare** (what the spec draws): a ``---`` line directly followed by ``key: value`` lines, a
  ``---`` line, then the body up to the next ``---`` line, the next fence or the end of file.

Text outside blocks (the month header, ``---`` separators) is ignored, as the reference parser
ignores it. Frontmatter is read with a fast line reader for the plain values the reference
writer produces, and with memcore's YAML 1.2 reader (:func:`memcore.frontmatter.load_plain_yaml`)
for anything else; when YAML fails, the reference parser's line-based rule (``key: value``, quotes
kept) is used and a problem is recorded, so reading never fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import memcore.frontmatter as _yaml
from memcore.errors import ParseError
from memcore.frontmatter import load_plain_yaml, read_flow_list, read_scalar
from memcore_whitebox._render import reference_reads_differently

__all__ = ["Fields", "RawBlock", "parse_fields", "parse_inline_list", "scan_blocks", "to_json_value"]

_BARE_OPEN = re.compile(r"^---[ \t]*\n(?=[A-Za-z_][A-Za-z0-9_-]*[ \t]*:)", re.M)
_HR_LINE = re.compile(r"^---[ \t]*$", re.M)
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Fields:
    """The frontmatter of one observation block, read.

    Attributes:
        values: Key -> value (str, list, dict, number, bool or None), in written order.
        yaml_error: The YAML error message when the line-based fallback had to be used.
        fast: Whether every line was a plain ``key: value`` read without YAML (values are
            then strings, ``None``, string lists or the ``memcore`` object).
    """

    __slots__ = ("_lines", "fast", "text", "values", "yaml_error")

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.values: dict[str, Any] = {}
        self.yaml_error: str | None = None
        self.fast = False
        self._lines: dict[str, int] | None = None

    @property
    def lines(self) -> dict[str, int]:
        """Key -> 1-based line of the key within the frontmatter text (computed on first use)."""
        if self._lines is None:
            found: dict[str, int] = {}
            for i, line in enumerate(self.text.split("\n"), start=1):
                key = line.partition(":")[0].strip()
                if key in self.values:
                    found.setdefault(key, i)
            self._lines = found
        return self._lines


@dataclass(slots=True)
class RawBlock:
    """One block found in an observation file.

    Attributes:
        layout: ``"fenced"`` or ``"bare"``.
        start: Offset of the block's first character (the fence or the opening ``---``).
        end: Offset just past the block (past the closing fence line / the body).
        line: 1-based line of the block's first line.
        frontmatter: The text between the two ``---`` lines, or ``None`` when the block has no
            frontmatter (then it is not an observation).
        fm_line: 1-based file line of the frontmatter's first line.
        body: The text after the closing ``---`` line, untrimmed.
        fence: The fence (```` ``` ```` or longer) for fenced blocks, else ``""``.
        info: The info string after the opening fence (``""`` for observations).
        problem: Why the block is malformed, or ``None``.
    """

    layout: str
    start: int
    end: int
    line: int
    frontmatter: str | None
    fm_line: int
    body: str
    fence: str = ""
    info: str = ""
    problem: str | None = None

    @property
    def is_observation(self) -> bool:
        """Whether this block is an observation (it has a frontmatter section)."""
        return self.frontmatter is not None and not self.info


class _Lines:
    """Incremental offset -> line number converter (linear over one text)."""

    __slots__ = ("_line", "_pos", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def at(self, pos: int) -> int:
        if pos < self._pos:
            return self._text.count("\n", 0, pos) + 1
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line


def _fence_line(line: str) -> tuple[int, str] | None:
    """Return (backtick count, info string) when ``line`` is a fence line, else ``None``."""
    if line == "```":
        return 3, ""
    ticks = len(line) - len(line.lstrip("`"))
    if ticks < 3:
        return None
    info = line[ticks:].strip(" \t")
    if "`" in info:
        return None
    return ticks, info


def _split_content(content: str) -> tuple[str | None, str]:
    """Split a block's content into (frontmatter, body); frontmatter ``None`` when absent."""
    if not content.startswith("---"):
        return None, content
    first = content.find("\n")
    if first == -1 or content[3:first].strip(" \t"):
        return None, content
    j = first
    size = len(content)
    while True:
        j = content.find("\n---", j)
        if j == -1:
            return None, content
        end = content.find("\n", j + 1)
        if end == -1:
            end = size
        if not content[j + 4 : end].strip(" \t"):
            return content[first + 1 : j], content[end + 1 :]
        j = end


def _find_close(text: str, start: int, length: int) -> tuple[int, int] | None:
    """Find the fence closing a block opened with ``length`` backticks; content starts at ``start``.

    A fence line with an info string inside the block opens a nested code block whose own
    closing fence does not end the block.

    Returns:
        ``(start, end)`` offsets of the closing fence line, or ``None`` when unterminated.
    """
    nested = 0
    size = len(text)
    i = start - 1
    find = text.find
    while True:
        i = find("\n`", i)
        if i == -1:
            return None
        begin = i + 1
        end = find("\n", begin)
        if end == -1:
            end = size
        fence = _fence_line(text[begin:end])
        i = end
        if fence is None:
            continue
        ticks, info = fence
        if nested:
            if not info and ticks >= nested:
                nested = 0
        elif info:
            nested = ticks
        elif ticks >= length:
            return begin, end


def _scan_bare(text: str, start: int, stop: int, lines: _Lines) -> Iterator[RawBlock]:
    pos = start
    while pos < stop:
        m = _BARE_OPEN.search(text, pos, stop)
        if m is None:
            return
        close = _HR_LINE.search(text, m.end(), stop)
        if close is None:
            yield RawBlock(
                "bare",
                m.start(),
                stop,
                lines.at(m.start()),
                None,
                lines.at(m.end()),
                text[m.end() : stop],
                problem="frontmatter opened with '---' is never closed",
            )
            return
        fm = text[m.end() : close.start()]
        if fm.endswith("\n"):
            fm = fm[:-1]
        body_start = min(close.end() + 1, stop)
        nxt = _HR_LINE.search(text, body_start, stop)
        body_end = nxt.start() if nxt is not None else stop
        yield RawBlock(
            "bare", m.start(), body_end, lines.at(m.start()), fm, lines.at(m.end()), text[body_start:body_end]
        )
        pos = body_end


def _next_fence(text: str, pos: int) -> tuple[int, int, int, str] | None:
    """Find the next fence line at or after ``pos``: (start, end of line, ticks, info)."""
    find = text.find
    size = len(text)
    f = find("```", pos)
    while f != -1:
        if f == 0 or text[f - 1] == "\n":
            end = find("\n", f)
            if end == -1:
                end = size
            fence = _fence_line(text[f:end])
            if fence is not None:
                return f, end, fence[0], fence[1]
            f = find("```", end)
        else:
            nl = find("\n", f)
            if nl == -1:
                return None
            f = find("```", nl)
    return None


def scan_blocks(text: str) -> Iterator[RawBlock]:
    """Yield the blocks of an observation file in document order.

    Args:
        text: The file's text with ``\\n`` line endings.

    Yields:
        Every fenced block (observations, and other fenced code with ``is_observation`` false)
        and every bare ``---`` observation, with 1-based line numbers. An unterminated fence
        yields one block with ``problem`` set and ends the scan.
    """
    lines = _Lines(text)
    pos = 0
    size = len(text)
    while pos <= size:
        found = _next_fence(text, pos)
        gap_end = found[0] if found is not None else size
        if _BARE_OPEN.search(text, pos, gap_end) is not None:
            yield from _scan_bare(text, pos, gap_end, lines)
        if found is None:
            return
        start, eol, ticks, info = found
        fence = "`" * ticks
        content_start = eol + 1
        close = _find_close(text, content_start, ticks) if content_start <= size else None
        line = lines.at(start)
        if close is None:
            yield RawBlock(
                "fenced",
                start,
                size,
                line,
                None,
                line + 1,
                text[min(content_start, size) :],
                fence,
                info,
                f"fence {fence} opened on line {line} is never closed",
            )
            return
        content = text[content_start : max(content_start, close[0] - 1)]
        if info:
            yield RawBlock("fenced", start, close[1], line, None, line + 1, content, fence, info, None)
        else:
            fm, body = _split_content(content)
            problem = None if fm is not None else "fenced block has no '---' frontmatter section"
            yield RawBlock("fenced", start, close[1], line, fm, line + 2, body, fence, info, problem)
        pos = close[1] + 1


def parse_inline_list(raw: str) -> list[str]:
    """Read a tag list the way the reference parser does (``[a, "b", 'c']`` or ``a, b``).

    Quotes are stripped, control characters removed and empty items dropped.
    """
    inner = raw.strip()
    if inner.startswith("["):
        inner = inner[1:]
    if inner.endswith("]"):
        inner = inner[:-1]
    out = []
    for item in inner.split(","):
        item = item.strip()
        if len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'":
            item = item[1:-1]
        item = _CONTROL.sub("", item).strip()
        if item:
            out.append(item)
    return out


def to_json_value(value: Any) -> Any:
    """Convert a value loaded by ruamel (CommentedMap, ScalarString…) to plain JSON data."""
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if value == value and value not in (float("inf"), float("-inf")) else str(value)
    return str(value)


def _line_fallback(frontmatter: str) -> Fields:
    """The reference parser's rule: ``key: value`` lines, values trimmed, quotes kept."""
    out = Fields(frontmatter)
    for line in frontmatter.split("\n"):
        m = re.match(r"^([a-zA-Z_]+):\s*(.*)$", line)
        if m is None:
            continue
        key, value = m.group(1), m.group(2).strip()
        out.values[key] = parse_inline_list(value) if key == "tags" else value
    return out


_SLOW = object()

#: Observation fields that are text to the reference parser (and to memcore's writer, which
#: writes them raw where YAML allows): an unquoted value is the text written, even where YAML
#: would type it (``source: yes``, ``context: 10:00``, ``date: 2026-04-12``).
TEXT_FIELDS = frozenset({"date", "source", "source_ref", "context", "kind", "title", "scope"})


def _as_written(key: str, raw: str, parsed: Any) -> Any:
    """``raw`` for an unquoted text field YAML would type (as :func:`field_scalar` writes it), else ``parsed``."""
    if key in TEXT_FIELDS and not isinstance(parsed, str | list | dict) and not reference_reads_differently(raw):
        return raw
    return parsed


_LINE_CACHE: dict[str, tuple[str, Any]] = {}
_LINE_CACHE_MAX = 50_000


def _read_line(line: str) -> tuple[str, Any]:
    """Read one ``key: value`` line the fast way; value ``_SLOW`` when YAML must decide.

    Tag lists come back as tuples (callers copy them into lists).
    """
    key, sep, raw = line.partition(":")
    if not sep or not _KEY.match(key) or (raw and not raw.startswith((" ", "\t"))):
        return key, _SLOW
    value = raw.strip(" \t")
    if key == "tags":
        # the fast loader's flow-list reader; only lists of non-blank text stay on this path
        tags = [] if value == "[]" else read_flow_list(value)
        if tags is None or not all(type(t) is str and t.strip() for t in tags):
            return key, _SLOW
        return key, tuple(tags)
    if key == "memcore" and value.startswith("{"):
        try:
            return key, json.loads(value)
        except ValueError:
            return key, _SLOW
    if not value:
        return key, None
    parsed = _as_written(key, value, read_scalar(value))  # the fast loader's scalar reader
    return key, (parsed if type(parsed) is str else _SLOW)


def parse_fields(frontmatter: str) -> Fields:
    """Read an observation's frontmatter text (the lines between the two ``---``).

    Plain ``key: value`` lines as the reference writer writes them are read directly (and
    remembered: sources, dates and tag lists repeat across a vault); any other shape is read
    as YAML 1.2 (dates stay text). When the YAML is invalid, the reference parser's line rule
    is used instead and ``yaml_error`` says why.

    Returns:
        The fields; never raises.
    """
    out = Fields(frontmatter)
    values = out.values
    slow = not _yaml.FAST_PATHS
    cache = _LINE_CACHE
    # with the YAML fast paths off (memcore.frontmatter.FAST_PATHS) every block is read as YAML
    for line in () if slow else frontmatter.split("\n"):
        if not line or line[0] == "#":
            continue
        hit = cache.get(line)
        if hit is None:
            hit = _read_line(line)
            if hit[0] != "memcore":
                if len(cache) >= _LINE_CACHE_MAX:
                    cache.clear()
                cache[line] = hit
        key, value = hit
        if value is _SLOW or key in values:
            slow = True
            break
        if type(value) is tuple:
            value = list(value)
        values[key] = value
    if not slow:
        out.fast = True
        return out
    try:
        data = load_plain_yaml(frontmatter) if frontmatter.strip() else {}
    except ParseError as exc:
        fallback = _line_fallback(frontmatter)
        fallback.yaml_error = str(exc)
        return fallback
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fallback = _line_fallback(frontmatter)
        fallback.yaml_error = f"frontmatter is a YAML {type(data).__name__}, not a mapping"
        return fallback
    result = Fields(frontmatter)
    written: dict[str, Any] | None = None
    for key, value in data.items():
        name = str(key)
        if name in TEXT_FIELDS and not isinstance(value, str | list | dict):
            written = written if written is not None else _line_fallback(frontmatter).values
            value = _as_written(name, str(written.get(name) or ""), value)
        result.values[name] = to_json_value(value)
    return result
