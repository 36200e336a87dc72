"""The one frontmatter splitter and YAML 1.2 round-trip codec every provider uses.

python-frontmatter is the frontmatter library, but not with its defaults (they sort keys on
write, strip the body, use YAML 1.1 and pass metadata as keyword arguments). Here it gets a
ruamel.yaml round-trip handler, a precise splitter that keeps the body's bytes as they were,
and YAML 1.2 semantics with dates kept as the text they were: ``no`` stays ``"no"``, ``10:00``
stays ``"10:00"``, ``2025-10-24`` stays ``"2025-10-24"``.

An untouched document re-serialises byte for byte (the original YAML text is reused); a touched
one is re-dumped by ruamel.yaml's round-trip dumper, which keeps key order, comments and quoting
of the keys that were not touched.
"""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import frontmatter.default_handlers as fm_handlers
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, PlainScalarString, ScalarString

from memcore.errors import ParseError

__all__ = [
    "FrontmatterDocument",
    "RoundTripYAMLHandler",
    "dump_yaml",
    "flow_list",
    "load_yaml",
    "parse_frontmatter",
    "plain_text",
    "quote_ambiguous",
    "split_frontmatter",
]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_OPEN = re.compile(r"\A---[ \t]*\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$\n?", re.MULTILINE)
# Plain scalars that YAML 1.1 readers (PyYAML, older js-yaml) would not read back as the same
# string: booleans, sexagesimal numbers, dates, nulls, numbers. memcore quotes new values like
# these so that the formats' own tools read them as text.
_YAML11_AMBIGUOUS = re.compile(
    r"""^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    |~|null|Null|NULL|
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    |[-+]?(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?0x[0-9a-fA-F_]+|[-+]?0b[01_]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?)$""",
    re.X,
)


class _DatesAsTextResolver(VersionedResolver):
    """YAML 1.2 resolver that leaves timestamps as plain strings."""

    _filtered: dict[Any, Any]

    @property
    def versioned_resolver(self) -> Any:
        # Called for every scalar: filter the version's table once per version, not per value.
        table = super().versioned_resolver
        cache = self.__dict__.setdefault("_filtered", {})
        key = id(table)
        if key not in cache:
            cache[key] = {
                first: [(tag, rx) for tag, rx in rules if str(tag) != _TIMESTAMP_TAG]
                for first, rules in table.items()
            }
        return cache[key]


def _new_yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Resolver = _DatesAsTextResolver
    yaml.version = None  # YAML 1.2 semantics, no %YAML directive written
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.allow_unicode = True
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


_YAML = _new_yaml()


def load_yaml(text: str, *, path: str | None = None, first_line: int = 1) -> Any:
    """Load YAML 1.2 text round-trip (comments and quoting kept; dates stay strings).

    Args:
        text: YAML source.
        path: File name for error messages.
        first_line: Line number of ``text``'s first line in the file (for messages).

    Raises:
        ParseError: The YAML is malformed; names the file and line.
    """
    try:
        data = _YAML.load(text)
    except RecursionError as exc:
        raise ParseError(
            "invalid YAML frontmatter: nested too deeply to read; flatten it", path=path, line=first_line
        ) from exc
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + (mark.line if mark is not None else 0)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ParseError(f"invalid YAML frontmatter: {problem}; fix the YAML", path=path, line=line) from exc
    except YAMLError as exc:
        raise ParseError(f"invalid YAML frontmatter: {exc}", path=path, line=first_line) from exc
    _check_size(data, path=path, line=first_line)
    return data


#: Frontmatter of a memory holds tens of values; these bounds only stop hostile input (YAML alias
#: "billion laughs" bombs expand exponentially; deep nesting exhausts the stack downstream).
MAX_VALUES = 100_000
MAX_DEPTH = 64


def _check_size(data: Any, *, path: str | None, line: int) -> None:
    """Raise :class:`ParseError` for hostile sizes.

    That is, when ``data`` expands to more than :data:`MAX_VALUES` values (counting every alias
    expansion) or nests deeper than :data:`MAX_DEPTH`.
    """
    stack: list[tuple[Any, int]] = [(data, 0)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise ParseError(
                f"YAML frontmatter expands to more than {MAX_VALUES:,} values (YAML aliases?); "
                "memcore refuses it as hostile input",
                path=path,
                line=line,
            )
        if depth > MAX_DEPTH:
            raise ParseError(
                f"YAML frontmatter nests deeper than {MAX_DEPTH} levels; flatten it", path=path, line=line
            )
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def quote_ambiguous(value: Any) -> Any:
    """Return ``value`` with every plain string a YAML 1.1 reader would misread double-quoted.

    Strings already carrying a style from the source (ruamel ``ScalarString``) are left alone.
    Recurses into lists and mappings (in place for ruamel containers).
    """
    if isinstance(value, str) and not isinstance(value, ScalarString):
        return DoubleQuotedScalarString(value) if _YAML11_AMBIGUOUS.match(value) else value
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = quote_ambiguous(item)
    elif isinstance(value, dict):
        for key in list(value):
            value[key] = quote_ambiguous(value[key])
    return value


def dump_yaml(data: Any) -> str:
    """Dump ``data`` as YAML 1.2 block style, ending with a newline.

    Strings that would read back as another type are quoted by ruamel.yaml; call
    :func:`quote_ambiguous` first to also quote what a YAML 1.1 reader would misread.
    """
    buf = io.StringIO()
    _YAML.dump(data, buf)
    return buf.getvalue()


def plain_text(value: str) -> PlainScalarString:
    """Return ``value`` marked to dump unquoted (e.g. an ISO timestamp ``2026-04-19T10:00:00Z``).

    Only for values that read back as the same string under YAML 1.2 with dates as text.
    """
    scalar: PlainScalarString = PlainScalarString(value)
    return scalar


def flow_list(items: Iterable[Any]) -> CommentedSeq:
    """Return a YAML sequence that dumps in flow style: ``[a, b]``."""
    seq = CommentedSeq(list(items))
    seq.fa.set_flow_style()
    return seq


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Split ``text`` into (frontmatter YAML, body, body's first line number).

    Frontmatter exists only when the text starts with a ``---`` line; it ends at the next
    line that is exactly ``---`` or ``...`` (trailing blanks allowed). The body is returned
    byte for byte, leading and trailing whitespace included.

    Returns:
        ``(None, text, 1)`` when there is no frontmatter.

    Raises:
        ParseError: The frontmatter is opened but never closed (line 1).
    """
    opening = _OPEN.match(text)
    if opening is None:
        return None, text, 1
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        raise ParseError(
            "frontmatter opened with '---' on line 1 is never closed; add a '---' line after it",
            line=1,
        )
    yaml_text = text[opening.end() : closing.start()]
    body = text[closing.end() :]
    body_line = text.count("\n", 0, closing.end()) + 1
    return yaml_text, body, body_line


@dataclass
class FrontmatterDocument:
    """A markdown document with optional YAML frontmatter.

    Attributes:
        metadata: The frontmatter mapping (ruamel ``CommentedMap``; empty when absent).
        body: The text after the frontmatter, exactly as in the file.
        has_frontmatter: Whether the file had a frontmatter block.
        body_line: 1-based line where ``body`` starts in the file.
        path: File name, for messages.
    """

    metadata: CommentedMap
    body: str
    has_frontmatter: bool = False
    body_line: int = 1
    path: str | None = None
    _raw_yaml: str | None = field(default=None, repr=False)
    _snapshot: Any = field(default=None, repr=False)

    def is_metadata_touched(self) -> bool:
        """Return whether ``metadata`` differs from what was parsed."""
        return bool(self._raw_yaml is None or _plain(self.metadata) != self._snapshot)

    def dumps(self) -> str:
        """Serialise back to text; byte-identical when nothing was touched.

        A document that had no frontmatter and still has empty metadata is written as the
        bare body.
        """
        if not self.has_frontmatter and not self.metadata:
            return self.body
        if self._raw_yaml is not None and not self.is_metadata_touched():
            yaml_text = self._raw_yaml
        else:
            before = dict(self._snapshot or [])
            for key in list(self.metadata):
                if before.get(str(key)) != _plain(self.metadata[key]):
                    self.metadata[key] = quote_ambiguous(self.metadata[key])
            yaml_text = dump_yaml(self.metadata) if self.metadata else ""
        return f"---\n{yaml_text}---\n{self.body}"

    @classmethod
    def new(cls, metadata: Mapping[str, Any], body: str) -> FrontmatterDocument:
        """Build a new document with ``metadata`` in the given key order."""
        return cls(metadata=CommentedMap(metadata), body=body, has_frontmatter=True)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return [(str(k), _plain(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return (type(value).__name__, copy.copy(value))


def parse_frontmatter(text: str, *, path: str | None = None) -> FrontmatterDocument:
    """Parse a markdown document with optional YAML frontmatter (YAML 1.2, dates as text).

    Args:
        text: Document text with ``\\n`` line endings (see :class:`memcore.storage.TextFile`).
        path: File name for messages.

    Raises:
        ParseError: Unterminated frontmatter, malformed YAML, or frontmatter that is not a
            mapping; the message names the file and line.
    """
    try:
        yaml_text, body, body_line = split_frontmatter(text)
    except ParseError as exc:
        raise ParseError(str(exc).removeprefix(":1: "), path=path, line=1) from exc
    if yaml_text is None:
        return FrontmatterDocument(metadata=CommentedMap(), body=body, path=path)
    data = load_yaml(yaml_text, path=path, first_line=2) if yaml_text.strip() else CommentedMap()
    if data is None:
        data = CommentedMap()
    if not isinstance(data, CommentedMap):
        raise ParseError(
            f"frontmatter must be a YAML mapping (key: value lines), not {type(data).__name__}",
            path=path,
            line=2,
        )
    return FrontmatterDocument(
        metadata=data,
        body=body,
        has_frontmatter=True,
        body_line=body_line,
        path=path,
        _raw_yaml=yaml_text,
        _snapshot=_plain(data),
    )


class RoundTripYAMLHandler(fm_handlers.YAMLHandler):
    """A python-frontmatter handler with memcore's splitter and YAML 1.2 round-trip codec.

    Use it wherever python-frontmatter's API is wanted: ``frontmatter.loads(text,
    handler=RoundTripYAMLHandler())`` then reads YAML 1.2 with dates as text. Note that
    ``frontmatter.loads`` still strips the body; memcore's own code uses
    :func:`parse_frontmatter`, which does not.
    """

    def split(self, text: str) -> tuple[str, str]:
        """Split into (YAML text, body) with memcore's precise splitter."""
        yaml_text, body, _ = split_frontmatter(text)
        return yaml_text or "", body

    def load(self, fm: str, **kwargs: object) -> Any:
        """Load YAML 1.2 round-trip."""
        return load_yaml(fm) or {}

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        """Dump YAML 1.2 block style without sorting keys."""
        return dump_yaml(metadata).rstrip("\n")
