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
from typing import Any, ClassVar, NamedTuple

import frontmatter.default_handlers as fm_handlers
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.resolver import implicit_resolvers as _RUAMEL_IMPLICIT
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, PlainScalarString, ScalarString

try:  # libyaml through PyYAML (a declared memcore dependency; types-PyYAML types it for mypy)
    from yaml import YAMLError as _LibYAMLError
    from yaml._yaml import CParser as _CParser
    from yaml.resolver import BaseResolver as _BaseResolver
except ImportError:  # pragma: no cover - no libyaml: every read takes the round-trip path
    _CParser = None  # type: ignore[misc,assignment]

from memcore.errors import InvalidEntryError, ParseError

__all__ = [
    "FrontmatterData",
    "FrontmatterDocument",
    "LIBYAML",
    "RoundTripYAMLHandler",
    "dump_yaml",
    "flow_list",
    "load_plain_yaml",
    "load_yaml",
    "parse_frontmatter",
    "plain_text",
    "quote_ambiguous",
    "read_frontmatter",
    "split_frontmatter",
    "to_plain",
    "try_load_plain_yaml",
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
    finally:
        _forget_directives()
    _check_size(data, path=path, line=first_line)
    return data


def _forget_directives() -> None:
    """Undo what a ``%YAML``/``%TAG`` directive left on the shared codec.

    ruamel.yaml keeps a document's ``%YAML 1.1`` directive on the YAML object (and its
    scanner) for the loads that follow, so one odd file would make every later ``no`` a
    boolean; each load starts from YAML 1.2 again.
    """
    _YAML.version = None
    _YAML.tags = None
    scanner = getattr(_YAML, "_scanner", None)
    if scanner is not None:
        scanner.yaml_version = None


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


#: Items of a flow list (``[a, b]``) that ruamel.yaml's emitter writes plain although they do
#: not read back the same (checked over every YAML indicator): ``: x`` (unparseable) and
#: ``?x`` / ``? x`` (read as a mapping).
_FLOW_UNSAFE = re.compile(r"^(?:\?|:\s)")


def _needs_double_quotes(value: str, *, flow: bool) -> bool:
    if _YAML11_AMBIGUOUS.match(value) or (flow and _FLOW_UNSAFE.search(value)):
        return True
    # U+0085 (NEL), U+2028, U+2029 and other non-printables: a single-quoted scalar folds them
    return not value.replace("\n", "").isprintable()


def quote_ambiguous(value: Any) -> Any:
    """Return ``value`` with every plain string that could read back differently double-quoted.

    Quoted: what a YAML 1.1 reader would misread (``yes``, ``1:30``, ``2026-01-01``), text with
    non-printable characters like U+0085 (a single-quoted scalar folds them into a space), and
    in flow lists (:func:`flow_list`) the items ruamel.yaml's emitter would write plain although
    they read back differently (a leading ``?`` or ``: ``); double quotes escape all of them
    (``"\\N"``); :meth:`FrontmatterDocument.dumps` then checks the result reads back the same.
    Strings already carrying a style from the source (ruamel ``ScalarString``) are left alone.
    Recurses into lists and mappings (in place for ruamel containers).
    """
    if isinstance(value, str) and not isinstance(value, ScalarString):
        return DoubleQuotedScalarString(value) if _needs_double_quotes(value, flow=False) else value
    if isinstance(value, list):
        flow = isinstance(value, CommentedSeq) and bool(value.fa.flow_style())
        for i, item in enumerate(value):
            if flow and isinstance(item, str) and not isinstance(item, ScalarString):
                value[i] = DoubleQuotedScalarString(item) if _needs_double_quotes(item, flow=True) else item
            else:
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


def split_frontmatter(text: str, *, path: str | None = None) -> tuple[str | None, str, int]:
    """Split ``text`` into (frontmatter YAML, body, body's first line number).

    Frontmatter exists only when the text starts with a ``---`` line; it ends at the next
    line that is exactly ``---`` or ``...`` (trailing blanks allowed). The body is returned
    byte for byte, leading and trailing whitespace included.

    Args:
        text: Document text with ``\\n`` line endings.
        path: File name for the error message.

    Returns:
        ``(None, text, 1)`` when there is no frontmatter.

    Raises:
        ParseError: The frontmatter is opened but never closed (line 1 of ``path``).
    """
    opening = _OPEN.match(text)
    if opening is None:
        return None, text, 1
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        raise ParseError(
            "frontmatter opened with '---' on line 1 is never closed; add a '---' line after it",
            path=path,
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
            fast = _dump_simple(self.metadata) if self._raw_yaml is None and self.metadata else None
            yaml_text = fast if fast is not None else (dump_yaml(self.metadata) if self.metadata else "")
            self._check_reads_back(yaml_text)
        return f"---\n{yaml_text}---\n{self.body}"

    def _check_reads_back(self, yaml_text: str) -> None:
        """Raise unless ``yaml_text`` reads back as the metadata it was dumped from.

        The guard behind :func:`quote_ambiguous`: a value the emitter writes in a form that
        parses differently (or not at all) is refused before any file is written.

        Raises:
            InvalidEntryError: The dumped frontmatter would not read back the same.
        """
        wanted = to_plain(self.metadata)
        try:
            got = load_plain_yaml(yaml_text, path=self.path) if yaml_text.strip() else {}
        except ParseError as exc:
            raise InvalidEntryError(
                f"{self.path or 'frontmatter'}: the YAML written for these values would not parse ({exc}); "
                "nothing was written"
            ) from None
        if got != wanted:
            keys = sorted(k for k in set(wanted) | set(got) if wanted.get(k) != got.get(k))
            raise InvalidEntryError(
                f"{self.path or 'frontmatter'}: the YAML written for {', '.join(keys)} would read back "
                "differently; nothing was written"
            )

    @classmethod
    def new(cls, metadata: Mapping[str, Any], body: str) -> FrontmatterDocument:
        """Build a new document with ``metadata`` in the given key order."""
        return cls(metadata=CommentedMap(metadata), body=body, has_frontmatter=True)


# -- fast dump of new documents -----------------------------------------------------------
# A new document's frontmatter (FrontmatterDocument.new) is usually a few plain strings, a flow
# list of tags and a small nested object. ruamel.yaml's emitter takes ~5-10 ms for that; this
# writes the same text directly, for a subset where ruamel's output is beyond doubt: keys and
# plain strings of "safe" characters (no indicator, no ambiguity, nothing that would resolve to
# another type), double-quoted strings (quote_ambiguous) of printable ASCII without escapes,
# bool, int, floats written as digits.digits, non-empty block mappings and sequences (2-space
# indent, sequence dashes at the key's column), flow lists of scalars. Anything else (None,
# empty containers, comments or anchors, other scalar styles, non-ASCII text...) returns None
# and ruamel dumps the document. tests/test_frontmatter_fast.py compares the two.
_SAFE_PLAIN = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_ ./+@()#-]*")
_SAFE_DQ = re.compile(r'[\x20-\x21\x23-\x5b\x5d-\x7e]*')
# a string opening with an indicator no plain scalar may start with, then printable ASCII
# without quotes or backslash: ruamel writes it single-quoted (in block context)
_SAFE_SQ = re.compile(r"[#\[\]{}&*!|>%@`,][\x20\x21\x23-\x26\x28-\x5b\x5d-\x7e]*")
_SAFE_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
# every YAML 1.2 implicit type a plain scalar could take other than str (timestamps included),
# by first character, as ruamel's resolver looks them up
def _implicit_12_by_first() -> dict[str, tuple[Any, ...]]:
    table: dict[str, tuple[Any, ...]] = {}
    for versions, _tag, regexp, firsts in _RUAMEL_IMPLICIT:
        if (1, 2) in versions:
            for first in firsts:
                table[first] = (*table.get(first, ()), regexp)
    return table


_IMPLICIT_12 = _implicit_12_by_first()


class _NotSimple(Exception):
    """The value is outside what :func:`_dump_simple` writes."""


def _simple_scalar(value: Any, *, key: bool = False, flow: bool = False) -> str:
    kind = type(value)
    if kind is str or kind is PlainScalarString:
        if (
            _SAFE_PLAIN.fullmatch(value)
            and value[-1] != " "
            and "  " not in value
            and " #" not in value
            and not _YAML11_AMBIGUOUS.match(value)
            and not any(rx.match(value) for rx in _IMPLICIT_12.get(value[0], ()))
        ):
            return str(value)
        if kind is str and not key and not flow and _SAFE_SQ.fullmatch(value) and value[-1] != " ":
            return f"'{value}'"
        raise _NotSimple
    if key:
        raise _NotSimple
    if kind is DoubleQuotedScalarString:
        if _SAFE_DQ.fullmatch(value):
            return f'"{value}"'
        raise _NotSimple
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        text = repr(value)
        if _SAFE_FLOAT.fullmatch(text):
            return text
    raise _NotSimple


def _is_plain_container(value: Any) -> bool:
    if type(value) in (dict, list):
        return True
    if type(value) is CommentedMap and value.fa.flow_style():
        return False  # a mapping marked flow style ({a: 1}) is dumped so by ruamel
    if type(value) in (CommentedMap, CommentedSeq):
        ca = value.ca
        return not ca.items and ca.comment is None and not ca.end and value.anchor.value is None
    return False


def _emit(value: Any, indent: int, out: list[str]) -> None:
    """Append the block lines of a non-empty mapping at column ``indent``."""
    pad = " " * indent
    for key, item in value.items():
        name = _simple_scalar(key, key=True)
        if isinstance(item, (dict, list)):
            if not item or not _is_plain_container(item):
                raise _NotSimple
            if isinstance(item, dict):
                out.append(f"{pad}{name}:\n")
                _emit(item, indent + 2, out)
            elif isinstance(item, CommentedSeq) and item.fa.flow_style():
                out.append(f"{pad}{name}: [{', '.join(_simple_scalar(v, flow=True) for v in item)}]\n")
            else:
                out.append(f"{pad}{name}:\n")
                _emit_seq(item, indent, out)
        else:
            out.append(f"{pad}{name}: {_simple_scalar(item)}\n")


def _emit_seq(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict):
            if not item or not _is_plain_container(item):
                raise _NotSimple
            lines: list[str] = []
            _emit(item, indent + 2, lines)
            lines[0] = f"{pad}- " + lines[0][indent + 2 :]
            out.extend(lines)
        elif isinstance(item, list):
            raise _NotSimple
        else:
            out.append(f"{pad}- {_simple_scalar(item)}\n")


def _dump_simple(mapping: CommentedMap) -> str | None:
    """Return ``dump_yaml(mapping)`` written directly, or ``None`` outside the simple subset."""
    if not _is_plain_container(mapping):
        return None
    out: list[str] = []
    try:
        _emit(mapping, 0, out)
    except _NotSimple:
        return None
    if any(len(line) > 1000 for line in out):
        return None  # far below ruamel's line width (64 Ki), where it would fold
    return "".join(out)


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
    yaml_text, body, body_line = split_frontmatter(text, path=path)
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


# -- fast read path ------------------------------------------------------------------------
# Reading needs plain values, not ruamel's round-trip objects (those are for byte-preserving
# writes). libyaml (PyYAML's C parser) composes the node tree about ten times faster than
# ruamel's pure-Python loader; tags are then resolved with ruamel's own YAML 1.2 implicit
# rules (timestamps excluded: dates stay text) and values are built here only where the value
# is beyond doubt: strings, true/false, null, decimal integers, plain decimal floats, block and
# flow sequences, mappings with unique string keys. Anything else -- a tag, an anchor or alias,
# a merge key, a duplicate or non-string key, an octal/hex/underscored/special number, a
# character or marker YAML 1.1 (libyaml) and 1.2 (ruamel) may read differently, hostile sizes,
# any libyaml error -- sends the text to the round-trip loader, so what comes back (values, or
# the ParseError and its line) is always the round-trip path's.

#: Whether libyaml is available (without it every read takes the round-trip path).
LIBYAML = _CParser is not None

_T_STR = "tag:yaml.org,2002:str"
_T_BOOL = "tag:yaml.org,2002:bool"
_T_NULL = "tag:yaml.org,2002:null"
_T_INT = "tag:yaml.org,2002:int"
_T_FLOAT = "tag:yaml.org,2002:float"
_T_SEQ = "tag:yaml.org,2002:seq"
_T_MAP = "tag:yaml.org,2002:map"
_DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_DECIMAL_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+)")
# Line breaks YAML 1.1 has and 1.2 has not (NEL, LS, PS), a BOM, tabs, the tag indicator,
# directives and document markers: such texts take the round-trip path. (Aliases are found
# on the composed tree: an aliased node is met twice.)
_UNSURE = re.compile(r"[\x85\u2028\u2029\ufeff\t!]|^(?:%|---|\.\.\.)", re.MULTILINE)


class _Unsure(Exception):
    """The text is outside the subset the fast path reads exactly."""


if _CParser is not None:

    class _FastLoader(_CParser, _BaseResolver):
        """libyaml parser and composer with ruamel's YAML 1.2 implicit tag rules, no timestamps."""

        yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {}  # type: ignore[misc]

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _BaseResolver.__init__(self)

    for _versions, _tag, _regexp, _firsts in _RUAMEL_IMPLICIT:
        if (1, 2) in _versions and _tag != _TIMESTAMP_TAG:
            for _first in _firsts:
                _FastLoader.yaml_implicit_resolvers.setdefault(_first, []).append((_tag, _regexp))


def _build(node: Any, depth: int, seen: set[int]) -> Any:
    """Return the plain value of a composed libyaml node; raise :class:`_Unsure` when in doubt."""
    if id(node) in seen or depth > MAX_DEPTH or len(seen) >= MAX_VALUES:
        raise _Unsure  # an alias, or hostile sizes: the round-trip path decides
    seen.add(id(node))
    tag = node.tag
    value = node.value
    if tag == _T_STR:
        if not isinstance(value, str):
            raise _Unsure
        return value
    if tag == _T_MAP:
        out: dict[str, Any] = {}
        for key_node, value_node in value:
            if key_node.tag != _T_STR or not isinstance(key_node.value, str) or id(key_node) in seen:
                raise _Unsure  # merge keys, complex, tagged, aliased or non-string keys
            seen.add(id(key_node))
            key = key_node.value
            if key in out:
                raise _Unsure  # a duplicate key: the round-trip loader refuses the text
            out[key] = _build(value_node, depth + 1, seen)
        return out
    if tag == _T_SEQ:
        return [_build(item, depth + 1, seen) for item in value]
    if tag == _T_NULL and value in ("", "~", "null", "Null", "NULL"):
        return None
    if tag == _T_BOOL and value in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return value[0] in "tT"
    if tag == _T_INT and _DECIMAL_INT.fullmatch(value):
        return int(value)
    if tag == _T_FLOAT and _DECIMAL_FLOAT.fullmatch(value):
        return float(value)
    raise _Unsure


def _load_fast(text: str) -> Any:
    """Return the plain value of ``text`` read by libyaml, or raise :class:`_Unsure`."""
    if _CParser is None or _UNSURE.search(text):
        raise _Unsure
    loader = _FastLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise _Unsure
        return _build(node, 0, set())
    except (_LibYAMLError, ValueError, TypeError, RecursionError) as exc:
        raise _Unsure from exc
    finally:
        loader.dispose()


def try_load_plain_yaml(text: str) -> dict[str, Any] | None:
    """Return the plain mapping libyaml reads from ``text``, or ``None`` when unsure.

    The fast half of :func:`load_plain_yaml` for callers with their own fallback (Box-memory
    decides orphans with the round-trip parse): whenever the result is not ``None`` it equals
    ``to_plain(load_yaml(text))``. ``None``: libyaml is unavailable, the text is outside the
    subset the two parsers agree on (see the comment above), blank, or not a mapping.
    """
    try:
        value = _load_fast(text)
    except _Unsure:
        return None
    return value if isinstance(value, dict) else None


def to_plain(value: Any) -> Any:
    """Return ``value`` (as :func:`load_yaml` returns it) as plain Python data.

    Mappings become ``dict`` with ``str`` keys (``str(key)``), sequences ``list``, ruamel's
    scalar types ``str`` / ``bool`` / ``int`` / ``float``; ``None`` stays ``None``. Anything
    else (dates are text already) becomes ``str(value)``.
    """
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, (bool, ScalarBoolean)):
        return bool(value)
    if value is None:
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def load_plain_yaml(text: str, *, path: str | None = None, first_line: int = 1) -> Any:
    """Load YAML 1.2 text as plain Python data, for reading only (dates stay text).

    The result always equals ``to_plain(load_yaml(text, ...))``: libyaml reads the text when it
    is in the subset whose meaning the two parsers agree on (see the comment above), the
    round-trip loader reads everything else. Use :func:`parse_frontmatter` for documents that
    will be written back.

    Args:
        text: YAML source.
        path: File name for error messages.
        first_line: Line number of ``text``'s first line in the file (for messages).

    Returns:
        ``dict`` / ``list`` / ``str`` / ``int`` / ``float`` / ``bool`` / ``None``.

    Raises:
        ParseError: The YAML is malformed or hostile (as :func:`load_yaml`).
    """
    try:
        return _load_fast(text)
    except _Unsure:
        return to_plain(load_yaml(text, path=path, first_line=first_line))


class FrontmatterData(NamedTuple):
    """A document's frontmatter read for reading only (:func:`read_frontmatter`).

    Attributes:
        metadata: The frontmatter as a plain ``dict`` (``str`` keys, plain values; empty when
            absent).
        body: The text after the frontmatter, exactly as in the file.
        has_frontmatter: Whether the document had a frontmatter block.
        body_line: 1-based line where ``body`` starts.
    """

    metadata: dict[str, Any]
    body: str
    has_frontmatter: bool
    body_line: int


def read_frontmatter(text: str, *, path: str | None = None) -> FrontmatterData:
    """Read a markdown document's frontmatter as plain data, fast (for reads, not writes).

    Same splitter, same values and same errors as :func:`parse_frontmatter` (``metadata``
    equals ``to_plain(parse_frontmatter(text).metadata)``), but the YAML goes through libyaml
    when that gives the same result (:func:`load_plain_yaml`). Dates stay text.

    Args:
        text: Document text with ``\\n`` line endings.
        path: File name for messages.

    Raises:
        ParseError: Unterminated frontmatter, malformed YAML, or frontmatter that is not a
            mapping; the message names the file and line.
    """
    yaml_text, body, body_line = split_frontmatter(text, path=path)
    if yaml_text is None:
        return FrontmatterData({}, body, False, 1)
    if not yaml_text.strip():
        return FrontmatterData({}, body, True, body_line)
    try:
        data = _load_fast(yaml_text)
    except _Unsure:
        return _read_slow(yaml_text, body, body_line, path)
    if data is None:
        return FrontmatterData({}, body, True, body_line)
    if not isinstance(data, dict):
        return _read_slow(yaml_text, body, body_line, path)  # the round-trip path words the error
    return FrontmatterData(data, body, True, body_line)


def _read_slow(yaml_text: str, body: str, body_line: int, path: str | None) -> FrontmatterData:
    data = load_yaml(yaml_text, path=path, first_line=2)
    if data is None:
        data = CommentedMap()
    if not isinstance(data, CommentedMap):
        raise ParseError(
            f"frontmatter must be a YAML mapping (key: value lines), not {type(data).__name__}",
            path=path,
            line=2,
        )
    return FrontmatterData(to_plain(data), body, True, body_line)


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
