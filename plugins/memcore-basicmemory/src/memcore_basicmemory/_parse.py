"""Bytes of one basic-memory note -> :class:`Note`, failing open, with line numbers.

Implements basic-memory.md §2.1 (frontmatter detection), §2.2 (key normalisation), §3 (body
grammar: observations, explicit relations, inline links) and §4.2 (``generate_permalink``), the
way basic-memory 0.24.1's own parser does (``markdown/entity_parser.py``, ``markdown/plugins.py``,
``utils.py``). The frontmatter is read twice: with PyYAML ``safe_load`` (YAML 1.1), which is what
basic-memory sees (:attr:`Note.bm_metadata`), and with memcore's YAML 1.2 round-trip loader,
which keeps the written text of every value and the lines a writer patches (:attr:`Note.fm`).
"""

from __future__ import annotations

import datetime as _dt
import mimetypes
import posixpath
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

import yaml
from markdown_it import MarkdownIt
from ruamel.yaml.comments import CommentedMap
from unidecode import unidecode

from memcore.errors import ParseError, UnsafePathError
from memcore.frontmatter import load_plain_yaml, load_yaml
from memcore.models import Diagnostic, Severity, unholdable
from memcore.storage import TextFile, check_component

__all__ = [
    "Note",
    "Observation",
    "ParsedRelation",
    "bm_view",
    "generate_permalink",
    "parse_body",
    "parse_note",
    "parse_tags",
    "title_stem",
]

_FENCE = re.compile(r"---[ \t]*\Z")
_OBSERVATION = re.compile(r"^\[([^\[\]()]+)\]\s+(.+)", re.DOTALL)
_CLOCK = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")
_TASK_PREFIXES = ("[ ]", "[x]", "[X]", "[-]")
_MD_LINK_ONLY = re.compile(r"\[[^\]]*\]\([^)]*\)\Z")
_WIKI_ONLY = re.compile(r"\[\[.*\]\]\Z", re.DOTALL)
_LINKS_TO_MARK = " #bm:links_to"
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_TEMPORAL = re.compile(
    r"@(?:(?P<range_kind>effective)\[(?P<start>[^,\])]*),(?P<end>[^\])]*)[\])]"
    r"|(?P<kind>effective|valid|occurred|due|mentioned):(?:\"(?P<quoted>[^\"]*)\"|(?P<value>\S+))"
    r"|(?P<bare>\d{4}-\d{2}-\d{2}\S*))(?:\s+|\Z)"
)
_MD = MarkdownIt("commonmark")
#: PyYAML's ``safe_load`` loader, libyaml's C one where PyYAML has it (same values, 10x faster).
_SAFE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Observation:
    """One observation line (basic-memory.md §3.1).

    Attributes:
        category: The ``[category]`` text, or ``None`` when none was written.
        content: The text after the category and temporal qualifier, context removed; tags stay.
        tags: The ``#tag`` words (``None`` when there are none, as basic-memory gives).
        context: The last parenthesised group at the end of the line, or ``None``.
        temporal: The qualifier peeled off the front (``{"source": "@due:2026-07-27", ...}``).
        line: 1-based line in the file.
    """

    category: str | None
    content: str
    tags: list[str] | None
    context: str | None
    temporal: list[dict[str, str]] = field(default_factory=list)
    line: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Return the observation as basic-memory's parser gives it (no line)."""
        return {k: v for k, v in asdict(self).items() if k != "line"}


@dataclass(frozen=True)
class ParsedRelation:
    """One relation as written (basic-memory.md §3.2, §3.3).

    Attributes:
        type: The relation type (``links_to`` for inline links).
        target: The link text verbatim (``Target|Alias`` kept, ``a::b`` as ``a/b``) or a path.
        context: The parenthesised group after an explicit relation, or ``None``.
        line: 1-based line in the file.
        explicit: Whether it is a ``- type [[Target]]`` list item.
    """

    type: str
    target: str
    context: str | None = None
    line: int = 0
    explicit: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Return the relation as basic-memory's parser gives it (type, target, context)."""
        return {"type": self.type, "target": self.target, "context": self.context}


@dataclass
class Note:
    """One note file as read.

    Attributes:
        path: Project-relative POSIX path (``notes/Coffee Brewing Methods.md``).
        raw: The file's bytes.
        file: The decoded text (BOM and line endings remembered).
        state: ``present``, ``absent`` or ``malformed`` (basic-memory's ``frontmatter_state``).
        yaml_text: The frontmatter's YAML text (``None`` unless ``present``).
        plain: That YAML read with YAML 1.2 semantics as plain data (``{}`` unless ``present``).
        bm_metadata: The frontmatter as basic-memory normalises it (strings, lists, dicts).
        head: The text up to and including the closing fence line (``""`` without frontmatter).
        body: The rest of the file.
        body_line: 1-based line where ``body`` starts.
        observations: The body's observations.
        relations: The body's relations, explicit and inline, in order.
        problems: What the reader found wrong (file:line diagnostics).
    """

    path: str
    raw: bytes
    file: TextFile
    state: str
    yaml_text: str | None
    plain: dict[str, Any]
    bm_metadata: dict[str, Any]
    head: str
    body: str
    body_line: int
    observations: list[Observation] = field(default_factory=list)
    relations: list[ParsedRelation] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    _fm: CommentedMap | None = field(default=None, repr=False)

    @property
    def fm(self) -> CommentedMap | None:
        """The frontmatter read by memcore's round-trip loader (line numbers, written text), on first use."""
        if self._fm is None and self.state == "present" and self.yaml_text is not None:
            text = self.yaml_text
            self._fm = load_yaml(text, path=self.path, first_line=2) if text.strip() else CommentedMap()
        return self._fm

    def key_line(self, key: str) -> int:
        """The file line of a top-level frontmatter key (1 when unknown)."""
        try:
            return int(self.fm.lc.key(key)[0]) + 2 if self.fm is not None else 1
        except (KeyError, TypeError, AttributeError, ParseError):
            return 1

    @property
    def stem(self) -> str:
        """The file name without ``.md``."""
        name = posixpath.basename(self.path)
        return name[:-3] if name.lower().endswith(".md") else name

    @property
    def folder(self) -> str:
        """The project-relative folder (``""`` for the root)."""
        return posixpath.dirname(self.path)

    @property
    def writable(self) -> bool:
        """Whether a writer may rewrite this file (it parsed, with no error)."""
        return self.state != "malformed" and not any(d.severity == Severity.ERROR for d in self.problems)


# -- frontmatter ---------------------------------------------------------------------------------


def _normalize(value: Any) -> Any:
    """basic-memory's ``normalize_frontmatter_value``: dates -> ISO, numbers -> str, bools -> "True"/"False"."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _normalize(v) for k, v in value.items()}
    return value


def parse_tags(value: Any) -> list[str]:
    """basic-memory's ``parse_tags``: a list, a comma-separated string or a JSON-array string -> tags.

    Each item is split on ``,``, trimmed, a leading ``#`` stripped; empty and ``null`` items dropped.
    """
    if isinstance(value, str) and value.strip().startswith("[") and value.strip().endswith("]"):
        value = [part.strip().strip("'\"") for part in value.strip()[1:-1].split(",")]
    items = list(value) if isinstance(value, list | tuple) else [value]
    parts = (part.strip().lstrip("#").strip() for item in items if item is not None for part in str(item).split(","))
    return [tag for tag in parts if tag]


def _joined(value: Any) -> str | None:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return None if value is None else str(value)


def bm_view(metadata: dict[str, Any], stem: str) -> dict[str, Any]:
    """Return ``metadata`` (PyYAML-loaded) as basic-memory 0.24.1 gives it (§2.1, §2.2).

    Values normalised (:func:`_normalize`); ``title`` from the file stem when missing, empty or
    ``"None"``; ``type`` ``note`` when missing; ``tags`` through :func:`parse_tags` (dropped when empty).
    """
    out = {str(k): _normalize(v) for k, v in metadata.items()}
    title = _joined(out.get("title"))
    out["title"] = stem if not title or title == "None" else title
    kind = _joined(out.get("type"))
    out["type"] = kind or "note"
    if "tags" in out:
        tags = parse_tags(out["tags"])
        if tags:
            out["tags"] = tags
        else:
            del out["tags"]
    return out


def _split(text: str) -> tuple[str, str, str, int] | None:
    """Return ``(head, yaml_text, body, body_line)`` when ``text`` has a fenced block (§2.1), else ``None``."""
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines) or not _FENCE.match(lines[start]):
        return None
    for end in range(start + 1, len(lines)):
        if _FENCE.match(lines[end]):
            head = "\n".join(lines[: end + 1]) + ("\n" if end + 1 < len(lines) else "")
            yaml_text = "\n".join(lines[start + 1 : end]) + ("\n" if end > start + 1 else "")
            return head, yaml_text, text[len(head) :], end + 2
    return None


def parse_note(path: str, data: bytes) -> Note:
    """Read the note at project-relative ``path``; never raises for bad content (problems become diagnostics)."""
    problems: list[Diagnostic] = []
    try:
        file = TextFile.decode(data, path=path)
    except ParseError as exc:
        file = TextFile(text=data.decode("utf-8", "replace"))
        problems.append(problem(path, exc.line, "encoding", str(exc)))
    text = file.text.replace("\x00", "")
    split = _split(text)
    state, yaml_text, plain, meta, head, body, body_line = "absent", None, {}, {}, "", text, 1
    if split is not None:
        head, yaml_text, rest, rest_line = split
        try:
            loaded = yaml.load(yaml_text, Loader=_SAFE) if yaml_text.strip() else {}
        except (yaml.YAMLError, ValueError) as exc:  # ValueError: a timestamp like 2024-13-45
            mark = getattr(exc, "problem_mark", None)
            line = (mark.line + 2) if mark is not None else 2
            problems.append(_malformed(path, line, f"the frontmatter is not YAML ({getattr(exc, 'problem', exc)})"))
            loaded = None
        unfit = unholdable(loaded, "the frontmatter")
        if unfit is not None:
            problems.append(_malformed(path, 2, f"{unfit}; no entry can hold it"))
            loaded = None
        if loaded is not None and not isinstance(loaded, dict):
            problems.append(_malformed(path, 2, f"the frontmatter is a {type(loaded).__name__}, not a mapping"))
            loaded = None
        if loaded is not None:
            state, meta, body, body_line = "present", loaded, rest, rest_line
            try:
                loaded_plain = load_plain_yaml(yaml_text, path=path, first_line=2) if yaml_text.strip() else {}
                if not isinstance(loaded_plain, dict):
                    raise ParseError("not a mapping in YAML 1.2", path=path, line=2)
                plain = loaded_plain
            except ParseError as exc:
                why = f"the frontmatter reads differently in YAML 1.2 ({exc}); memcore will not rewrite it"
                problems.append(problem(path, exc.line or 2, "yaml", why))
        else:
            state, head = "malformed", ""
    note = Note(
        path=path,
        raw=data,
        file=file,
        state=state,
        yaml_text=yaml_text if state == "present" else None,
        plain=plain,
        bm_metadata=bm_view(meta, _stem(path)),
        head=head,
        body=body,
        body_line=body_line,
        problems=problems,
    )
    semantics = str(meta.get("bm_parse_semantics", True)).strip().lower() != "false"
    if semantics:
        note.observations, note.relations = parse_body(body, first_line=body_line)
    return note


def problem(path: str, line: int | None, code: str, message: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    """A diagnostic ``basicmemory.<code>`` at ``path:line``."""
    return Diagnostic(path=path, line=line, code=f"basicmemory.{code}", severity=severity, message=message)


def _malformed(path: str, line: int, why: str) -> Diagnostic:
    fix = "basic-memory reads the whole file as body and neither it nor memcore rewrites it (fix the YAML)"
    return problem(path, line, "malformed-frontmatter", f"{why}; {fix}")


def _stem(path: str) -> str:
    return posixpath.basename(path)[:-3] if path.lower().endswith(".md") else posixpath.basename(path)


# -- body grammar (§3) ---------------------------------------------------------------------------


def _mask_code(text: str) -> str:
    """Replace inline code spans by spaces of the same length (links inside them never count)."""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def _is_category(category: str) -> bool:
    category = category.strip()
    if not category:
        return False
    if len(category) == 1 and (not category.isalnum() or category in "xX"):
        return False
    parts = [p.strip() for p in category.split(" - ")]
    return not all(_CLOCK.fullmatch(p) for p in parts)


def _is_observation(text: str) -> bool:
    if text.startswith(_TASK_PREFIXES) or _MD_LINK_ONLY.match(text) or _WIKI_ONLY.match(text):
        return False
    match = _OBSERVATION.match(text)
    if match and _is_category(match.group(1)):
        return True
    return any(word.startswith("#") for word in text.split())


def _observation(text: str, line: int) -> Observation | None:
    category: str | None = None
    match = _OBSERVATION.match(text)
    if match and _is_category(match.group(1)):
        category, text = match.group(1).strip(), match.group(2).strip()
    elif text.startswith("[] "):
        text = text[3:].strip()
    temporal: list[dict[str, str]] = []
    qualifier = _TEMPORAL.match(text)
    if qualifier:
        source = qualifier.group(0).strip()
        found = {k: v for k, v in qualifier.groupdict().items() if v is not None}
        temporal.append({"source": source, **found})
        text = text[qualifier.end() :].strip()
    context: str | None = None
    if text.endswith(")") and "(" in text:
        cut = text.rfind("(")
        context = text[cut + 1 : -1].strip()
        text = text[:cut].strip()
    tags = [part for word in text.split() if word.startswith("#") for part in word.split("#") if part]
    if not text:
        return None
    return Observation(category, text, tags or None, context, temporal, line)


def _explicit(text: str, line: int) -> ParsedRelation | None:
    if text.endswith(_LINKS_TO_MARK):
        return None
    masked = _mask_code(text)
    start = masked.find("[[")
    if start <= 0:
        return None
    rel_type = text[:start].strip()
    if len(rel_type) >= 2 and rel_type[0] == rel_type[-1] and rel_type[0] in "'\"":
        rel_type = rel_type[1:-1]
    elif not rel_type or any(c.isspace() for c in rel_type):
        return None
    end = masked.find("]]", start + 2)
    if end < 0 or not rel_type:
        return None
    target = text[start + 2 : end].strip().replace("::", "/")
    tail = text[end + 2 :].strip()
    context: str | None = None
    if tail:
        if not (tail.startswith("(") and tail.endswith(")")) or _balanced_groups(tail) != 1:
            return None
        context = tail[1:-1].strip()
    if not target:
        return None
    return ParsedRelation(rel_type, target, context, line, explicit=True)


def _balanced_groups(text: str) -> int:
    depth = groups = 0
    for char in text:
        if char == "(":
            if depth == 0:
                groups += 1
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return -1
    return groups if depth == 0 else -1


def _wikilinks(text: str, line: int) -> list[ParsedRelation]:
    masked = _mask_code(text)
    out: list[ParsedRelation] = []
    i, depth, start = 0, 0, -1
    while i < len(masked) - 1:
        pair = masked[i : i + 2]
        if pair == "[[" and not (i > 0 and masked[i - 1] == "\\"):
            if depth == 0:
                start = i + 2
            depth += 1
            i += 2
        elif pair == "]]" and depth:
            depth -= 1
            if depth == 0:
                target = text[start:i].strip().replace("::", "/")
                if target:
                    out.append(ParsedRelation("links_to", target, None, line))
            i += 2
        else:
            i += 1
    return out


def _path_links(children: list[Any], folder_depth: int, line: int) -> list[ParsedRelation]:
    out: list[ParsedRelation] = []
    for child in children:
        if child.type != "link_open":
            continue
        href = str(child.attrs.get("href", ""))
        if not href or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", href) or href.startswith("#") or href.endswith("/"):
            continue
        href = href.split("#", 1)[0]
        if not href.lower().endswith(".md"):
            continue
        if not href.startswith(("./", "../", "/")):
            href = "./" + href
        if href.count("../") > folder_depth:
            continue
        out.append(ParsedRelation("links_to", href, None, line))
    return out


def parse_body(body: str, *, first_line: int = 1) -> tuple[list[Observation], list[ParsedRelation]]:
    """Return ``(observations, relations)`` of a note body in document order, basic-memory's way (§3).

    ``first_line`` is the file line ``body`` starts on (for each item's ``line``).
    """
    observations: list[Observation] = []
    relations: list[ParsedRelation] = []
    depth = {"list_item": 0, "blockquote": 0}
    for token in _MD.parse(body):
        kind, _, edge = token.type.rpartition("_")
        if kind in depth:
            depth[kind] += 1 if edge == "open" else -1 if edge == "close" else 0
        elif token.type == "inline":
            in_item, in_quote = depth["list_item"], depth["blockquote"]
            line = first_line + (token.map[0] if token.map else 0)
            text = token.content.strip()
            plain = text[: -len(_LINKS_TO_MARK)].strip() if text.endswith(_LINKS_TO_MARK) else text
            explicit = _explicit(text, line) if in_item else None
            if explicit is not None:
                relations.append(explicit)
                continue
            if not in_quote and _is_observation(plain):
                found = _observation(plain, line)
                if found is not None:
                    observations.append(found)
            relations.extend(_wikilinks(plain, line))
            relations.extend(_path_links(token.children or [], 0, line))
    return observations, relations


# -- permalinks (§4.2) ---------------------------------------------------------------------------

_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\u3040-\u30ff\uac00-\ud7af]")
_CJK_RUN = re.compile(r"([\u4e00-\u9fff\u3400-\u4dbf\u3040-\u30ff\uac00-\ud7af]+)")
_FULLWIDTH_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")


def generate_permalink(path: str) -> str:
    """basic-memory's ``generate_permalink``: ``docs/My Feature.md`` -> ``docs/my-feature`` (§4.2)."""
    text = unicodedata.normalize("NFC", path)
    base, ext = posixpath.splitext(text)
    if ext and mimetypes.guess_type("x" + ext)[0] is not None:
        text = base
    if _CJK.search(text):
        text = _FULLWIDTH_PUNCT.sub("", text)
        parts = [p if _CJK.match(p) else unidecode(p) for p in _CJK_RUN.split(text) if p]
        text = "-".join(p.strip("-") if not _CJK.match(p) else p for p in parts)
        allowed = r"a-z0-9/.\-\u4e00-\u9fff\u3400-\u4dbf\u3040-\u30ff\uac00-\ud7af"
    else:
        text = unidecode(text)
        allowed = r"a-z0-9/.\-"
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text).lower().replace("_", "-").replace("'", "")
    text = re.sub(f"[^{allowed}]", "-", text)
    text = re.sub(r"-+", "-", text)
    return "/".join(segment.strip("-") for segment in text.split("/") if segment.strip("-"))


_FILE_NAME_BAD = re.compile(r'[/\\<>:"|?*]')
_DEVICES = {"con", "prn", "aux", "nul", *(f"{d}{i}" for d in ("com", "lpt") for i in range(10))}


def title_stem(title: str, body: str) -> str:
    """The file name (less ``.md``) of a new note: §4.1's, else, where no file system can hold it, its permalink."""
    text = title or " ".join(body.split()[:6]) or "untitled"
    name = _FILE_NAME_BAD.sub("-", unicodedata.normalize("NFC", text))
    name = re.sub(r"-{2,}", "-", re.sub(r"\s+", " ", name)).strip(" .-")[:120].strip(" .-") or "untitled"
    try:
        check_component(name + ".md")
    except UnsafePathError:  # control characters, or a device name (NUL, COM1…) even as a permalink
        name = (p := generate_permalink(name) or "untitled") + ("-note" if p.split(".")[0] in _DEVICES else "")
    return name
