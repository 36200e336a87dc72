"""Bytes -> Claude Code memory documents, fail-open, every problem with its file and line.

Invalid frontmatter YAML makes the whole file the body, as Claude Code reads it (B.5 rule 2), and
marks it ``broken``: readable, never rewritten. ``MEMORY.md`` is read as its ``- [Title](file.md) —
hook`` lines (B.3); ``@imports``, ``[[links]]`` and headings are found outside fenced code blocks,
inline code spans and HTML comments (A.2).
"""

from __future__ import annotations

import json
import posixpath
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from memcore.errors import ParseError
from memcore.frontmatter import read_frontmatter
from memcore.models import Diagnostic, Severity, unholdable
from memcore.storage import TextFile, control_char_diagnostics
from memcore_claudecode.mapping import FORMAT, FREE_KEY, INDEX_FILE, INSTRUCTION_NAMES

__all__ = ["Doc", "ImportRef", "Index", "IndexLine", "first_heading", "import_tokens", "parse_doc", "parse_index"]
__all__ += ["problem", "resolve_token", "role_of", "wikilinks"]

_COMMENT = re.compile(r"<!-- memcore: (.*?) -->\n")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:\\ |[^\s])+)")
_TRAILING = ".,;:!?)]}'\""
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:[#|][^\[\]\n]*)?\]\]")
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_INDEX_LINE = re.compile(
    r"^(?P<lead>[ \t]*[-*+][ \t]+)\[(?P<title>(?:\\.|[^\]\\])*)\]\((?P<target><[^>\n]*>|[^)\s]*)\)(?P<rest>.*)$"
)
_HOOK_SEP = re.compile(r"^([ \t]*(?:—|\u2013|-|:)[ \t]*|[ \t]+)")


def problem(
    path: str, code: str, message: str, line: int | None = None, severity: Severity = Severity.ERROR, **more: Any
) -> Diagnostic:
    """Return a :class:`Diagnostic` of code ``claudecode.<code>`` (``more``: other fields, e.g. ``entry_id``)."""
    return Diagnostic(path=path, line=line, code=f"{FORMAT}.{code}", message=message, severity=severity, **more)


def _decode(path: str, raw: bytes, problems: list[Diagnostic]) -> TextFile | None:
    """Decode ``raw``; when it is not UTF-8, report why in ``problems`` and return ``None``."""
    try:
        return TextFile.decode(raw)  # no path: the message is bare, the diagnostic carries file and line
    except ParseError as exc:
        problems.append(problem(path, "encoding", str(exc), exc.line))
        return None


def role_of(path: str) -> str | None:
    """Return the role of the store-relative ``path`` (see :mod:`.mapping`), or ``None``.

    ``"index"`` for the root ``MEMORY.md``; ``None`` for a file that is an entry only when an
    ``@import`` reaches it (a markdown file in a sub-folder) or never (anything else).
    """
    folder, _, name = path.rpartition("/")
    if not name.endswith(".md"):
        return None
    if name in INSTRUCTION_NAMES:
        return INSTRUCTION_NAMES[name]
    if "/.claude/rules/" in f"/{folder}/":
        return "rule"
    if folder:
        return None
    return "index" if name == INDEX_FILE else "topic"


@dataclass
class Doc:
    """One memory file as read.

    Its store-relative ``path`` (NFC, the entry's id), ``raw`` bytes, decoded ``file`` (BOM and line
    endings remembered; ``None``: not UTF-8), ``meta`` (the frontmatter as plain data; ``None``: none
    or invalid), ``body`` (after the frontmatter and memcore's comment line, byte for byte), ``free``
    (memcore's free data: ``memcore:`` key or first-line comment), the ``problems`` found (file:line),
    and whether it is ``broken`` (not read exactly: read as text, never rewritten).
    """

    path: str
    raw: bytes
    file: TextFile | None
    meta: dict[str, Any] | None
    body: str
    free: dict[str, Any] = field(default_factory=dict)
    problems: list[Diagnostic] = field(default_factory=list)
    broken: bool = False

    @property
    def text(self) -> str:
        """The file's text with ``\\n`` line endings (``""`` when not UTF-8)."""
        return self.file.text if self.file is not None else ""


def parse_doc(path: str, raw: bytes, *, frontmatter: bool = True) -> Doc:
    """Read one memory file; never raises for a bad file.

    Args:
        path: Store-relative path, for the id and the diagnostics.
        raw: The file's bytes.
        frontmatter: Whether a leading ``---`` block is frontmatter (markdown memory files: yes).
    """
    problems: list[Diagnostic] = []
    file = _decode(path, raw, problems)
    if file is None:
        return Doc(path, raw, None, None, raw.decode("utf-8", "replace"), problems=problems, broken=True)
    text = file.text
    # core reports each line with a control character; no write may touch such a file
    doc = Doc(path, raw, file, None, text, broken=bool(control_char_diagnostics(raw, path)))
    if frontmatter and text.startswith("---"):
        try:
            found = read_frontmatter(text)  # no path: the message is bare, as above
        except ParseError as exc:
            doc.broken = True
            why = f"{exc}; the file is read as text (as Claude Code does) and not rewritten until fixed"
            doc.problems.append(problem(path, "frontmatter", why, exc.line))
            return doc
        if found.has_frontmatter:
            meta = dict(found.metadata)
            unfit = unholdable(meta, "the frontmatter")
            if unfit is not None:
                doc.broken = True
                why = f"{unfit}; the file is read as text, not rewritten"
                doc.problems.append(problem(path, "frontmatter", why, 1))
                return doc
            doc.meta, doc.body = meta, found.body
            free = doc.meta.pop(FREE_KEY, None)
            if isinstance(free, dict):
                doc.free = free
            elif free is not None:
                doc.broken = True
                doc.problems.append(problem(path, "free-data", f"`{FREE_KEY}:` must be a mapping; fix or remove it"))
            return doc
    match = _COMMENT.match(text)
    if match is not None:
        try:
            data, unfit = json.loads(match.group(1)), None
        except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, a 5,000-digit integer
            data, unfit = None, f"the memcore comment is not readable JSON ({exc})"
        if unfit is None:
            unfit = (
                unholdable(data, "the memcore comment")
                if isinstance(data, dict)
                else "the memcore comment is not a JSON object"
            )
        if unfit is None:
            doc.free, doc.body = data, text[match.end() :]
        else:
            doc.broken = True
            doc.problems.append(problem(path, "free-data", f"{unfit}; fix or remove it", 1))
    return doc


@dataclass
class IndexLine:
    """One ``- [Title](target) — hook`` line of ``MEMORY.md``.

    Its 1-based ``number``, ``lead`` (the list marker and blanks), link ``title`` (unescaped),
    ``target`` (store-relative, normalised), ``sep`` (``""`` without a hook) and ``hook``.
    """

    number: int
    lead: str
    title: str
    target: str
    sep: str
    hook: str


@dataclass
class Index:
    """``MEMORY.md`` as lines, with the index lines found in it.

    Its decoded ``file`` (``None``: absent or not UTF-8, then ``broken``: never rewritten), its
    ``lines`` (no line endings), ``links`` (target -> first index line), the ``problems`` found,
    and whether an edit ``changed`` it.
    """

    file: TextFile | None = None
    lines: list[str] = field(default_factory=list)
    links: dict[str, IndexLine] = field(default_factory=dict)
    problems: list[Diagnostic] = field(default_factory=list)
    broken: bool = False
    changed: bool = False


def _link_target(raw: str) -> tuple[str | None, str | None]:
    """Return ``(store-relative target, None)``, or ``(None, why)`` for a path outside the folder."""
    target = raw[1:-1] if raw.startswith("<") else raw
    target = urllib.parse.unquote(target.partition("#")[0]).strip()
    if not target or "://" in target or target.startswith("mailto:"):
        return None, None
    norm = posixpath.normpath(target)
    if target.startswith(("/", "~")) or norm.split("/", 1)[0] == "..":
        return None, f"links to {target}, outside this memory folder: never read; link a file of the folder"
    return norm, None


def parse_index(raw: bytes | None) -> Index:
    """Read ``MEMORY.md`` (``None``: absent); never raises."""
    index = Index()
    if raw is None:
        return index
    index.file = _decode(INDEX_FILE, raw, index.problems)
    if index.file is None:
        index.broken = True
        return index
    index.lines = index.file.text.removesuffix("\n").split("\n") if index.file.text else []
    for number, text in enumerate(index.lines, start=1):
        match = _INDEX_LINE.match(text)
        target, outside = _link_target(match.group("target")) if match else (None, None)
        if outside is not None:
            index.problems.append(problem(INDEX_FILE, "index-outside-link", outside, number, Severity.WARNING))
        if match is None or target is None:
            continue
        if target in index.links:
            why = f"{target} is listed again (first on line {index.links[target].number})"
            index.problems.append(problem(INDEX_FILE, "index-repeated", why, number, Severity.WARNING))
            continue
        rest = match.group("rest")
        sep_match = _HOOK_SEP.match(rest) if rest.strip() else None
        sep = sep_match.group(1) if sep_match else ""
        title = re.sub(r"\\(.)", r"\1", match.group("title"))
        index.links[target] = IndexLine(number, match.group("lead"), title, target, sep, rest[len(sep) :].rstrip())
    return index


def _prose(text: str) -> list[tuple[int, str]]:
    """Return ``(line number, text)`` of the lines outside code fences and HTML comments, code spans blanked."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    in_comment = False
    for number, line in enumerate(text.split("\n"), start=1):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        out.append((number, _CODE_SPAN.sub(lambda m: " " * len(m.group()), line)))
    return out


def import_tokens(text: str) -> list[tuple[int, str]]:
    """Return ``(line, path)`` of each ``@path`` import in ``text`` (A.2).

    The path ends at the first unescaped space (``\\ `` is a space in it); trailing punctuation
    is not part of it; a quoted path and ``@`` inside a word (an e-mail address) are no import.
    """
    found = [
        (n, m[1].rstrip(_TRAILING).replace("\\ ", " ")) for n, line in _prose(text) for m in _IMPORT.finditer(line)
    ]
    return [(n, token) for n, token in found if token and token[0] not in "\"'"]


def wikilinks(text: str) -> list[str]:
    """Return the targets of ``[[slug]]`` links in ``text``, in order, each once (B.4)."""
    seen = dict.fromkeys(match.group(1).strip() for _, line in _prose(text) for match in _WIKILINK.finditer(line))
    return [name for name in seen if name]


def first_heading(text: str) -> str | None:
    """Return the text of the first ``# `` heading outside code, or ``None``."""
    return next((match.group(1) for _, line in _prose(text) if (match := _HEADING.match(line))), None)


@dataclass(frozen=True)
class ImportRef:
    """One ``@path`` import of a file, resolved.

    Its ``line``, the ``token`` as written, the store-relative ``target`` (``None``: outside the
    store, never read) and the ``problem`` that keeps it from being followed (``None``: followed;
    ``"home"``, ``"absolute"``, ``"outside"``, ``"symlink"``, ``"missing"``).
    """

    line: int
    token: str
    target: str | None
    problem: str | None = None


def resolve_token(importer: str, token: str) -> tuple[str | None, str | None]:
    """Return ``(store-relative target, refusal)`` of ``token`` imported by ``importer``.

    Relative paths resolve against the importing file's folder (A.2). Refused, never read:
    absolute paths, ``~/`` (home) paths, and paths that leave the store.
    """
    if token.startswith("~"):
        return None, "home"
    if token.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", token):
        return None, "absolute"
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), token.replace("\\", "/")))
    if joined == ".." or joined.startswith("../") or joined == ".":
        return None, "outside"
    return joined, None
