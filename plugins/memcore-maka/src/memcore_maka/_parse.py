"""Maka's MEMORY.md grammar, read exactly as Maka's own parser reads it.

Implements the reading rules of Maka's ``packages/core/src/local-memory.ts`` at HEAD
(``parseLocalMemoryMarkdownRaw``, ``parseMetaComment``, ``slugId``, ``parseTags``,
``parseFiniteNumber``), see ``../shared/specs/reference-notes/maka.md`` and
``docs/formats/maka.md``:

- the 128 KiB limit (131,072 UTF-8 bytes) is checked before anything else;
- lines are split on ``\\r?\\n``; only lines matching ``^##\\s+(.+?)\\s*$`` start sections;
- a metadata line is a line whose trimmed text fully matches
  ``^<!--\\s*maka-memory:\\s*(.*?)\\s*-->$``; the first one in a section is authoritative, later
  ones are removed from the content; anything else (malformed comments included) is content;
- inside a comment, ``key=value`` tokens split on whitespace; keys must match
  ``^[a-zA-Z][a-zA-Z0-9_-]*$`` and values be at most 128 characters, otherwise the pair is
  dropped; unknown keys are kept;
- a section whose trimmed content is empty is not an entry.

Whitespace, ``.`` and ``trim`` follow JavaScript's definitions (not Python's), so that a file reads
the same here as in Maka. This module is pure: no I/O.
"""

from __future__ import annotations

import copy
import math
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_BYTES",
    "META_KEY_RE",
    "Document",
    "IdIndex",
    "MetaComment",
    "Section",
    "dominant_newline",
    "is_meta_key",
    "js_number",
    "js_trim",
    "js_trim_end",
    "looks_like_maka",
    "parse_document",
    "parse_finite_number",
    "parse_meta_comment",
    "parse_tags",
    "section_text",
    "slug_id",
    "split_lines",
]

#: Maka's ``LOCAL_MEMORY_MAX_BYTES``: files larger than this (in UTF-8 bytes) open in safe mode.
MAX_BYTES = 128 * 1024
#: Longest value ``parseMetaComment`` keeps, in UTF-16 code units.
MAX_VALUE_LENGTH = 128

#: JavaScript's ``\s`` / ``String.prototype.trim`` set (WhiteSpace + LineTerminator).
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WS = f"[{_JS_WS}]"
#: JavaScript's ``.`` without the ``s`` flag: anything but a line terminator.
_DOT = "[^\n\r\u2028\u2029]"

#: Maka's heading pattern as the reference writes it (quadratic on a long whitespace run inside
#: a title: ``"## a" + " " * 60000 + "b"`` took 16 s); :data:`HEADING_RE` is the one to use.
HEADING_REFERENCE_RE = re.compile(rf"^##{_WS}+({_DOT}+?){_WS}*\Z")
#: A non-whitespace character (line terminators are whitespace) / whitespace that ``.`` matches.
_NONSPACE = f"[^{_JS_WS}]"
_INLINE_WS = "[\t\v\f \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]"
#: The same matches as the reference when the title has a non-whitespace character, in linear
#: time: the title runs from the first to the last non-whitespace character, with only inline
#: whitespace between (each quantifier possessive, so nothing is tried twice).
_HEADING_TITLE_RE = re.compile(rf"^##{_WS}++({_NONSPACE}(?:{_INLINE_WS}*+{_NONSPACE})*+){_WS}*+\Z")
_ALL_WS_RE = re.compile(rf"^##{_WS}*+\Z")


class _HeadingPattern:
    """``HEADING_RE.match(line)``: Maka's ``## title`` heading pattern, matched in linear time.

    Same matches and group 1 as :data:`HEADING_REFERENCE_RE` (tested against it on generated
    lines): a title with a non-whitespace character goes through a linear pattern; a heading of
    only whitespace (``"##  "``, the title is one whitespace character) through the reference,
    which is linear on such a line.
    """

    pattern = HEADING_REFERENCE_RE.pattern

    def match(self, line: str) -> re.Match[str] | None:
        """Return the match of ``line`` (group 1: the title) or None."""
        found = _HEADING_TITLE_RE.match(line)
        if found is None and _ALL_WS_RE.match(line):
            return HEADING_REFERENCE_RE.match(line)
        return found


HEADING_RE = _HeadingPattern()
META_RE = re.compile(rf"^<!--{_WS}*maka-memory:{_WS}*({_DOT}*?){_WS}*-->\Z")
META_KEY_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*\Z")
_SPLIT_WS = re.compile(f"{_WS}+")
_LINE_SPLIT = re.compile(r"(\r?\n)")
#: The same set as plain characters, for ``str.strip``.
_JS_WS_CHARS = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SLUG_OTHER = re.compile(r"[^a-z0-9\u4e00-\u9fa5]+")
_TAG_OTHER = re.compile(r"[^a-z0-9\u4e00-\u9fa5_-]+")
_EDGE_DASHES = re.compile(r"^-+|-+\Z")
_JS_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\Z")


def js_trim(text: str) -> str:
    """Return ``text`` without leading/trailing whitespace as JavaScript's ``trim()`` defines it."""
    return text.strip(_JS_WS_CHARS)


def js_trim_end(text: str) -> str:
    """Return ``text`` without trailing whitespace as JavaScript's ``trimEnd()`` defines it."""
    return text.rstrip(_JS_WS_CHARS)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def js_number(text: str) -> float:
    """Return ``Number(text)`` as JavaScript computes it (``nan`` when JavaScript gives NaN).

    Handles decimal, exponent, ``0x``/``0o``/``0b`` integers, ``Infinity`` and surrounding
    whitespace; an empty (or all-whitespace) string is 0, as in JavaScript.
    """
    value = js_trim(text)
    if value == "":
        return 0.0
    if value in {"Infinity", "+Infinity"}:
        return math.inf
    if value == "-Infinity":
        return -math.inf
    lowered = value.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if lowered.startswith(prefix):
            try:
                return float(int(value[2:], base))
            except ValueError:
                return math.nan
    if not _JS_NUMBER.match(value):
        return math.nan
    try:
        return float(value)
    except (ValueError, OverflowError):  # pragma: no cover - the regex admits only floats
        return math.nan


def parse_finite_number(raw: str | None) -> float | None:
    """Return Maka's ``parseFiniteNumber(raw)``: a finite number >= 0, else ``None``.

    Missing and empty values are ``None`` (JavaScript's falsy check comes first).
    """
    if not raw:
        return None
    # plain ASCII digits (what writers put there): Number() and float() agree, overflow included
    value = float(raw) if raw.isascii() and raw.isdigit() else js_number(raw)
    if math.isfinite(value) and value >= 0:
        return value
    return None


def slug_id(title: str) -> str:
    """Return Maka's ``slugId(title)``: the fallback id of a section without metadata.

    Lowercase; runs of characters other than a-z, 0-9 and CJK U+4E00-U+9FA5 become ``-``;
    edge dashes trimmed; at most 48 characters; ``memory-entry`` when nothing is left.
    """
    slug = _SLUG_OTHER.sub("-", js_trim(title).lower())
    slug = _EDGE_DASHES.sub("", slug)[:48]
    return slug or "memory-entry"


def parse_tags(raw: str | None) -> list[str]:
    """Return Maka's ``parseTags(raw)``: the tags a ``tags=`` CSV value reads as.

    Each tag trimmed and lowercased; characters other than a-z, 0-9, CJK, ``_`` and ``-``
    become ``-``; edge dashes trimmed; at most 32 characters; empty and repeated tags
    dropped; at most 8 tags.
    """
    if not raw:
        return []
    known = _TAGS_SEEN.get(raw)
    if known is None:
        known = tuple(_parse_tags(raw))
        if len(_TAGS_SEEN) < 4096:  # files repeat a few tag lists: remember them, boundedly
            _TAGS_SEEN[raw] = known
    return list(known)


_TAGS_SEEN: dict[str, tuple[str, ...]] = {}


def _parse_tags(raw: str) -> list[str]:
    tags: list[str] = []
    for part in raw.split(","):
        tag = _TAG_OTHER.sub("-", js_trim(part).lower())
        tag = _EDGE_DASHES.sub("", tag)[:32]
        if not tag or tag in tags:
            continue
        tags.append(tag)
        if len(tags) >= 8:
            break
    return tags


@dataclass(frozen=True)
class MetaComment:
    """One parsed ``<!-- maka-memory: ... -->`` line.

    Attributes:
        meta: ``key -> value`` in written order (a repeated key keeps its last value, as in Maka).
        dropped: Tokens Maka's parser ignores: ``(token, reason)`` pairs.
    """

    meta: dict[str, str]
    dropped: tuple[tuple[str, str], ...] = ()


_PY_ONLY_WS = re.compile("[\x1c-\x1f]")
# With re.ASCII, \s is exactly JavaScript's \s within ASCII: for an ASCII comment whose every
# token is a valid key=value, one C-level match and findall give what the token loop gives.
_KV = rf"[a-zA-Z][a-zA-Z0-9_-]*=\S{{0,{MAX_VALUE_LENGTH}}}"
_ALL_VALID = re.compile(rf"(?:{_KV}(?:\s+{_KV})*)?", re.ASCII)
_PAIR = re.compile(r"([a-zA-Z][a-zA-Z0-9_-]*)=(\S*)", re.ASCII)
_KEYS_SEEN: dict[str, bool] = {}


def is_meta_key(key: str) -> bool:
    """Return whether ``key`` matches ``META_KEY_RE`` (remembered for the few keys files use)."""
    known = _KEYS_SEEN.get(key)
    if known is None:
        known = META_KEY_RE.match(key) is not None
        if len(_KEYS_SEEN) < 4096:
            _KEYS_SEEN[key] = known
    return known


def parse_meta_comment(line: str) -> MetaComment | None:
    """Parse ``line`` as a metadata comment, or return ``None`` when it is content.

    Args:
        line: One line, without its line terminator.

    Returns:
        The comment's key/value map and the tokens dropped, or ``None`` when the trimmed line
        is not exactly one metadata comment (then it stays in the entry's content).
    """
    if "maka-memory:" not in line:
        return None
    # META_RE by hand (the regex's lazy group costs a backtracking step per character):
    # "<!--", whitespace, "maka-memory:", then the trimmed body without a line terminator, "-->".
    trimmed = js_trim(line)
    if not (trimmed.startswith("<!--") and trimmed.endswith("-->")):
        return None
    inner = trimmed[4:-3].lstrip(_JS_WS_CHARS)
    if not inner.startswith("maka-memory:"):
        return None
    body = js_trim(inner[12:])
    if "\r" in body or "\u2028" in body or "\u2029" in body:
        return None
    meta: dict[str, str] = {}
    dropped: list[tuple[str, str]] = []
    if body.isascii() and _ALL_VALID.fullmatch(body):
        # repeated key: first position, last value (as a dict built in order keeps them)
        if _PY_ONLY_WS.search(body) is None:  # then str.split() splits on exactly \s
            return MetaComment({key: value for key, _, value in (part.partition("=") for part in body.split())})
        return MetaComment(dict(_PAIR.findall(body)))
    # For ASCII text without U+001C-U+001F, Python's str.split() splits on exactly JavaScript's \s.
    parts = body.split() if body.isascii() and not _PY_ONLY_WS.search(body) else _SPLIT_WS.split(body)
    for part in parts:
        if not part:
            continue
        idx = part.find("=")
        if idx <= 0:
            dropped.append((part, "no key=value"))
            continue
        key, value = part[:idx], part[idx + 1 :]
        if not is_meta_key(key):
            dropped.append((part, "key must match [a-zA-Z][a-zA-Z0-9_-]*"))
            continue
        if len(value) > MAX_VALUE_LENGTH // 2 and _utf16_len(value) > MAX_VALUE_LENGTH:
            dropped.append((part, f"value longer than {MAX_VALUE_LENGTH} characters"))
            continue
        meta[key] = value  # a repeated key keeps its first position and its last value, as in JS
    return MetaComment(meta, tuple(dropped))


def split_lines(text: str) -> tuple[list[str], list[str]]:
    """Split ``text`` as Maka does (``/\\r?\\n/``), also returning each line's terminator.

    Returns:
        ``(lines, separators)`` with ``len(separators) == len(lines)``; the last separator is
        ``""``. ``"".join(l + s for l, s in zip(lines, separators)) == text``.
    """
    if "\r" not in text:
        lines = text.split("\n")
        return lines, ["\n"] * (len(lines) - 1) + [""]
    parts = _LINE_SPLIT.split(text)
    lines = parts[0::2]
    seps = [*parts[1::2], ""]
    return lines, seps


@dataclass
class Section:
    """One ``## `` section of a Maka file (an entry when its content is not empty).

    Attributes:
        start: Line index (0-based) of the ``## `` heading.
        end: Line index just past the section (the next heading, or the line count).
        title: The heading text as Maka reads it.
        meta: The authoritative (first) comment's map, or ``None`` when there is none.
        meta_index: Line index of that comment.
        shadow_indices: Line indices of later comments (ignored, removed from content).
        dropped: ``(line index, token, reason)`` for comment tokens Maka drops.
        body_lines: The section's lines after the heading, comments removed.
        content: ``body_lines`` joined with ``\\n`` and trimmed (Maka's ``promptContent``).
        views: What the section reads as, filled by the reader (``pending`` flag -> its entry
            view): the section's text never changes (an edit replaces the section object), so
            the entry is built once per section, not once per read. Not compared.
    """

    start: int
    end: int
    title: str
    meta: dict[str, str] | None = None
    meta_index: int | None = None
    shadow_indices: list[int] = field(default_factory=list)
    dropped: list[tuple[int, str, str]] = field(default_factory=list)
    body_lines: list[str] = field(default_factory=list)
    content: str = ""
    views: dict[bool, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def id(self) -> str:
        """The entry id: the comment's ``id`` when non-empty, else the title's slug."""
        return (self.meta or {}).get("id") or slug_id(self.title)

    @property
    def is_entry(self) -> bool:
        """Whether Maka shows this section (its trimmed content is not empty)."""
        return bool(self.content)

    def finish(self, end: int) -> None:
        """Close the section at line ``end`` (exclusive) and compute its ``content``."""
        self.end = end
        self.content = js_trim("\n".join(self.body_lines))

    def clone(self) -> Section:
        """Return a copy whose line indices can move without moving this section's."""
        twin = copy.copy(self)
        twin.views = dict(self.views)
        return twin

    def shift(self, delta: int) -> None:
        """Move every line index of the section by ``delta`` lines."""
        self.start += delta
        self.end += delta
        if self.meta_index is not None:
            self.meta_index += delta
        self.shadow_indices = [index + delta for index in self.shadow_indices]
        self.dropped = [(index + delta, token, why) for index, token, why in self.dropped]


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _byte_len(lines: list[str], seps: list[str]) -> int:
    """UTF-8 size of ``lines`` with their terminators (lone surrogates count as 3 bytes)."""
    return len("".join(lines).encode("utf-8", "surrogatepass")) + sum(map(len, seps))


@dataclass
class IdIndex:
    """Where each id is in a :class:`Document`, kept up to date by :meth:`Document.splice`.

    Attributes:
        entries: NFC id -> the entry sections (non-empty content) with that id (usually one;
            not necessarily in file order after splices).
        taken: How many sections use each NFC id or ``proposalId`` (what a new id must avoid).
    """

    entries: dict[str, list[Section]] = field(default_factory=dict)
    taken: Counter[str] = field(default_factory=Counter)

    def add(self, section: Section) -> None:
        """Count ``section`` in the index."""
        key = _nfc(section.id)
        self.taken[key] += 1
        proposal = (section.meta or {}).get("proposalId")
        if proposal is not None:
            self.taken[proposal] += 1
        if section.is_entry:
            self.entries.setdefault(key, []).append(section)

    def remove(self, section: Section) -> None:
        """Forget ``section`` (the same object :meth:`add` was given)."""
        key = _nfc(section.id)
        self.taken[key] -= 1
        if self.taken[key] <= 0:
            del self.taken[key]
        proposal = (section.meta or {}).get("proposalId")
        if proposal is not None:
            self.taken[proposal] -= 1
            if self.taken[proposal] <= 0:
                del self.taken[proposal]
        if section.is_entry:
            kept = [s for s in self.entries.get(key, []) if s is not section]
            if kept:
                self.entries[key] = kept
            else:
                self.entries.pop(key, None)


@dataclass
class Document:
    """A parsed Maka file.

    Attributes:
        size: Size in UTF-8 bytes.
        safe_mode: True when the file is over :data:`MAX_BYTES` (then nothing else is parsed).
        reason: ``"oversize"``, ``"empty"`` or ``None``, as Maka reports.
        lines: The file's lines (terminators removed; a leading BOM stays on line 0).
        separators: Each line's terminator (``"\\n"``, ``"\\r\\n"`` or ``""`` for the last).
        sections: Every ``## `` section in order, entries and empty ones.
        malformed: Line indices inside sections that mention ``maka-memory`` in an HTML comment
            but are not one whole metadata comment (kept as content, as Maka does).

    Change ``lines`` / ``separators`` only through :meth:`splice`, which keeps the parse, the
    size, the line-terminator counts and the id index in step.
    """

    size: int
    safe_mode: bool = False
    reason: str | None = None
    lines: list[str] = field(default_factory=list)
    separators: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    malformed: list[int] = field(default_factory=list)
    _terminators: Counter[str] | None = field(default=None, init=False, repr=False, compare=False)
    _index: IdIndex | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def entries(self) -> list[Section]:
        """The sections Maka shows as entries (non-empty content), in file order."""
        return [s for s in self.sections if s.is_entry]

    @property
    def newline(self) -> str:
        """The dominant line terminator, used for lines memcore inserts."""
        return dominant_newline(self.terminators())

    def terminators(self) -> Counter[str]:
        """How many lines end with each terminator (kept up to date by :meth:`splice`; do not change it)."""
        if self._terminators is None:
            self._terminators = Counter(self.separators)
        return self._terminators

    def clone(self) -> Document:
        """Return a copy that :meth:`splice` can edit without changing this document.

        Cost: a list copy of the lines and one small copy per section (no parsing); the
        sections' built entries (:attr:`Section.views`) come along.
        """
        twin = Document(
            size=self.size,
            safe_mode=self.safe_mode,
            reason=self.reason,
            lines=list(self.lines),
            separators=list(self.separators),
            sections=[section.clone() for section in self.sections],
            malformed=list(self.malformed),
        )
        if self._terminators is not None:
            twin._terminators = Counter(self._terminators)
        return twin

    def text(self) -> str:
        """Return the document's text (lines and their terminators joined)."""
        return "".join(line + sep for line, sep in zip(self.lines, self.separators, strict=True))

    def index(self) -> IdIndex:
        """Return the id index (built on first use, then kept up to date by :meth:`splice`)."""
        if self._index is None:
            index = IdIndex()
            for section in self.sections:
                index.add(section)
            self._index = index
        return self._index

    def spliced_size(self, start: int, end: int, lines: list[str], seps: list[str]) -> int:
        """Return the size in bytes the file would have after ``splice(start, end, lines, seps)``."""
        removed = _byte_len(self.lines[start:end], self.separators[start:end])
        return self.size - removed + _byte_len(lines, seps)

    def splice(self, start: int, end: int, lines: list[str], seps: list[str]) -> list[Section]:
        """Replace lines ``start:end`` with ``lines`` (terminators ``seps``), parsing only what changed.

        The sections the change touches (the one holding line ``start - 1`` up to the next
        heading at or after ``end``) are parsed again with Maka's rules; later sections are
        moved by the change in line count; ``size``, ``reason``, the terminator counts and the
        id index follow. The result is what :func:`parse_document` gives for the new text.
        Cost: the touched sections plus the number of later sections (none for an append).

        Args:
            start: First line replaced (0-based).
            end: Line just past the last one replaced (``start`` for a pure insertion).
            lines: The new lines, without terminators.
            seps: Their terminators (``len(seps) == len(lines)``; only the file's last line
                may have ``""``).

        Returns:
            The re-parsed sections (in order) that now cover the changed lines.

        Raises:
            ValueError: The document is in safe mode (nothing of it was parsed).
        """
        if self.safe_mode:
            raise ValueError("a document in safe mode cannot be edited")
        if len(lines) != len(seps):
            raise ValueError("every line needs its terminator")
        self.size = self.spliced_size(start, end, lines, seps)
        removed_content = any(js_trim(line) for line in self.lines[start:end])
        added_content = any(js_trim(line) for line in lines)
        if self._terminators is not None:
            self._terminators.subtract(self.separators[start:end])
            self._terminators.update(seps)
        sections = self.sections
        first = bisect_right(sections, start - 1, key=lambda s: s.start) - 1
        lo = sections[first].start if first >= 0 else 0
        first = max(first, 0)
        last = bisect_left(sections, end, lo=first, key=lambda s: s.start)
        hi_old = sections[last].start if last < len(sections) else len(self.lines)
        delta = len(lines) - (end - start)
        # entries already built on a touched section whose text comes back unchanged (the
        # section before an append) are kept on its new parse
        built = {section_text(self.lines, s): s.views for s in sections[first:last] if s.views}
        self.lines[start:end] = lines
        self.separators[start:end] = seps
        fresh, malformed = _parse_region(self.lines, lo, hi_old + delta)
        if built:
            for section in fresh:
                views = built.get(section_text(self.lines, section))
                if views is not None:
                    section.views = dict(views)
        if self._index is not None:
            for section in sections[first:last]:
                self._index.remove(section)
            for section in fresh:
                self._index.add(section)
        sections[first:last] = fresh
        if delta:
            for section in sections[first + len(fresh) :]:
                section.shift(delta)
        m_lo = bisect_left(self.malformed, lo)
        m_hi = bisect_left(self.malformed, hi_old, lo=m_lo)
        tail = [index + delta for index in self.malformed[m_hi:]]
        self.malformed[m_lo:] = [*malformed, *tail]
        if added_content:
            self.reason = None
        elif removed_content:
            self.reason = None if any(js_trim(line) for line in self.lines) else "empty"
        return fresh


def dominant_newline(counts: Counter[str]) -> str:
    """The terminator memcore writes for a file whose lines end as ``counts`` says (``\\r\\n`` only when most do)."""
    return "\r\n" if counts["\r\n"] > counts["\n"] else "\n"


def section_text(lines: list[str], section: Section) -> str:
    """Return ``section``'s lines joined with ``\\n``, trailing blank lines left out.

    Two sections with the same text read the same (title, comment, content): the text is what
    the provider's version token hashes.
    """
    end = section.end
    while end - 1 > section.start and not js_trim(lines[end - 1]):
        end -= 1
    return "\n".join(lines[section.start : end])


def _parse_region(lines: list[str], lo: int, hi: int) -> tuple[list[Section], list[int]]:
    """Parse ``lines[lo:hi]`` (``lo`` is 0 or a heading, ``hi`` a heading or the end).

    Returns:
        ``(sections, malformed line indices)``, with absolute line indices.
    """
    sections: list[Section] = []
    malformed: list[int] = []
    current: Section | None = None
    for index in range(lo, hi):
        line = lines[index]
        if line.startswith("##"):
            heading = HEADING_RE.match(line)
            if heading:
                if current is not None:
                    current.finish(index)
                    sections.append(current)
                current = Section(start=index, end=index + 1, title=heading.group(1))
                continue
        if current is None:
            continue
        if "maka-memory" in line:  # the only lines that can be comments, or malformed ones
            comment = parse_meta_comment(line)
            if comment is not None:
                if current.meta is None:
                    current.meta = comment.meta
                    current.meta_index = index
                    current.dropped.extend((index, token, why) for token, why in comment.dropped)
                else:
                    current.shadow_indices.append(index)
                continue
            if "<!--" in line:
                malformed.append(index)
        current.body_lines.append(line)
    if current is not None:
        current.finish(hi)
        sections.append(current)
    return sections, malformed


def parse_document(text: str, *, size: int | None = None) -> Document:
    """Parse a Maka file's text with Maka's rules.

    Args:
        text: The decoded file (a BOM, if any, still at the start).
        size: The file's size in bytes; computed from ``text`` when omitted.

    Returns:
        The :class:`Document`. Over 131,072 bytes it is in safe mode with no lines parsed.
    """
    if size is None:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return Document(size=size, safe_mode=True, reason="oversize")
    lines, seps = split_lines(text)
    doc = Document(size=size, lines=lines, separators=seps)
    if not js_trim(text):
        doc.reason = "empty"
        return doc
    doc.sections, doc.malformed = _parse_region(lines, 0, len(lines))
    return doc


_SNIFF_COMMENT = re.compile(r"<!--\s*maka-memory:")


def looks_like_maka(head: str) -> bool:
    """Return whether a file starting with ``head`` is a Maka memory file.

    True when it holds a ``<!-- maka-memory:`` comment or its first line with text is the
    ``# Maka Memory`` / ``# Maka Pending Memory`` header Maka's template writes.
    """
    if _SNIFF_COMMENT.search(head):
        return True
    for line in head.lstrip("\ufeff").splitlines():
        if line.strip():
            return line.strip() in ("# Maka Memory", "# Maka Pending Memory")
    return False
