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
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple, overload

import frontmatter
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
from memcore.switches import switch_on

__all__ = [
    "FAST_PATHS",
    "FLUSH",
    "INDENTED",
    "LIBYAML",
    "UNSURE",
    "HANDLER",
    "FrontmatterData",
    "FrontmatterDocument",
    "RoundTripYAMLHandler",
    "YAMLWriter",
    "dump_yaml",
    "flow_list",
    "is_scalar",
    "load_fast",
    "load_own",
    "load_plain_yaml",
    "load_yaml",
    "parse_frontmatter",
    "plain_text",
    "quote_ambiguous",
    "read_flow_list",
    "read_frontmatter",
    "read_scalar",
    "set_fast_paths",
    "split_frontmatter",
    "text_of",
    "to_plain",
    "try_load_plain_yaml",
]

#: Whether the fast paths are on: the fast emitter (:meth:`YAMLWriter.fast_dump`), the fast
#: loader (:func:`load_fast`, :func:`load_own`, :func:`read_scalar`, libyaml in
#: :func:`load_plain_yaml` and :func:`read_frontmatter`) and the plugins' readers built on them.
#: Each is an optimisation of the general path (ruamel.yaml round trip) that gives the same
#: bytes and values; switched off, everything takes the general path. Set from the
#: environment variable ``MEMCORE_YAML_FAST`` at import (``0``, ``false``, ``no`` or ``off``:
#: off); change it at run time with :func:`set_fast_paths`.
FAST_PATHS = switch_on("MEMCORE_YAML_FAST")


def set_fast_paths(enabled: bool) -> None:
    """Switch the YAML fast paths on or off (:data:`FAST_PATHS`), here and in child processes.

    Also sets ``MEMCORE_YAML_FAST`` in ``os.environ`` so that processes started afterwards
    (benchmark workers) take the same path.
    """
    global FAST_PATHS
    FAST_PATHS = enabled
    os.environ["MEMCORE_YAML_FAST"] = "1" if enabled else "0"


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
                first: [(tag, rx) for tag, rx in rules if str(tag) != _TIMESTAMP_TAG] for first, rules in table.items()
            }
        return cache[key]


def _new_yaml(*, indent_sequences: bool = False) -> YAML:
    """Return the one ruamel.yaml configuration, with the sequence layout as its option.

    Round trip, YAML 1.2 with dates as text, no ``%YAML`` directive written, quotes kept, no
    line folding (width 64 Ki), unicode written as is, mappings indented two columns; block
    sequences' dashes at the key's column, or two columns in with ``indent_sequences``.
    """
    yaml = YAML(typ="rt")
    yaml.Resolver = _DatesAsTextResolver
    yaml.version = None  # YAML 1.2 semantics, no %YAML directive written
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.allow_unicode = True
    if indent_sequences:
        yaml.indent(mapping=2, sequence=4, offset=2)
    else:
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
    except TypeError as exc:
        # ruamel fails this way on a mapping or list used as a key (``? [a]`` / ``- ?\n  - ?``)
        raise ParseError(
            f"invalid YAML frontmatter: a key that is a mapping or list ({exc}); use plain keys",
            path=path,
            line=first_line,
        ) from exc
    except ValueError as exc:
        # a value Python cannot build: an integer past its 4,300-digit limit, an impossible date
        raise ParseError(f"invalid YAML frontmatter: {exc}; fix the value", path=path, line=first_line) from exc
    except (IndexError, KeyError, AttributeError) as exc:
        # ruamel.yaml's constructors fail this way on some plain scalars (``-_`` as an integer)
        raise ParseError(
            f"invalid YAML frontmatter: a value ruamel.yaml cannot read ({type(exc).__name__}: {exc}); quote the value",
            path=path,
            line=first_line,
        ) from exc
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
            raise ParseError(f"YAML frontmatter nests deeper than {MAX_DEPTH} levels; flatten it", path=path, line=line)
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
                # nothing parsed before (a new document): every value is new, none to compare
                if not before or before.get(str(key)) != _plain(self.metadata[key]):
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

    def to_post(self) -> frontmatter.Post:
        """Return this document as a python-frontmatter ``Post`` with memcore's handler.

        The ``Post`` shares ``metadata`` (changes to either are seen by both) and holds the body
        as it is in the file. python-frontmatter's own ``dumps`` strips the body; write with
        :meth:`dumps` (byte for byte) or ``FrontmatterDocument.from_post(post).dumps()``.
        """
        post = frontmatter.Post(self.body, handler=HANDLER)
        post.metadata = self.metadata  # not as keyword arguments: a "content:" key would break them
        return post

    @classmethod
    def from_post(cls, post: frontmatter.Post) -> FrontmatterDocument:
        """Build a new document from a python-frontmatter ``Post`` (its metadata in their order)."""
        return cls.new(post.metadata, post.content)

    @classmethod
    def new(cls, metadata: Mapping[str, Any], body: str) -> FrontmatterDocument:
        """Build a new document with ``metadata`` in the given key order."""
        return cls(metadata=CommentedMap(metadata), body=body, has_frontmatter=True)


# -- the fast emitter -----------------------------------------------------------------------
# A new document's frontmatter is usually a few plain strings, ISO timestamps, a flow list of
# tags and a small nested object. ruamel.yaml's emitter takes ~5-10 ms for that; the fast
# emitter writes the same bytes directly, in either layout (YAMLWriter), for a subset where
# ruamel's output is beyond doubt: keys of plain text that read back as strings; plain ASCII text
# that ruamel writes unquoted in block context (no leading indicator, no trailing blank, no ': '
# or ' #', no trailing ':', read back as a string by ruamel's own resolver and by a YAML 1.1
# reader: quote_ambiguous); flow-list items also without ',' '[' ']'; double-quoted strings with
# nothing to escape (the "[[Title]]" wikilinks, what quote_ambiguous quotes); in block context,
# printable ASCII that surely cannot be plain (': ', ' #', a leading indicator, edge blanks)
# single-quoted; ISO timestamps marked plain; booleans, integers, decimals; non-empty nested
# mappings and block lists of those. Anything else (None, empty containers, comments or anchors,
# other scalar styles, non-ASCII text...) gives None and ruamel dumps the mapping.
# tests/test_yaml_equivalence.py compares the two in both layouts.
_BLOCK_TEXT = re.compile(
    r"(?!.*(?:: | #|:\Z))[A-Za-z0-9_/](?:[A-Za-z0-9 _.,/()+'#:=@%-]{0,998}[A-Za-z0-9_.,/()+'#=@%-])?\Z"
)
_FLOW_TEXT = re.compile(r"(?!.* #)[A-Za-z0-9_/](?:[A-Za-z0-9 _./()+'#=@%-]{0,198}[A-Za-z0-9_./()+'#=@%-])?\Z")
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z\Z")
_DECIMAL = re.compile(r"-?[0-9]+\.[0-9]+\Z")
_PRINTABLE = re.compile(r"[ -~]{0,1000}\Z")
_SIMPLE_QUOTED = re.compile(r"[ !#-\[\]-~]{0,1000}\Z")  # printable ASCII but '"' and '\'
_ALWAYS_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
#: ruamel writes a key longer than this as an explicit ``? key`` (its simple-key limit is 128).
_MAX_KEY = 100

# First character -> ((is the str tag, the rule's match function), ...): ruamel's implicit
# resolver rules for plain scalars starting with it, then its rules for any character.
_RULES: dict[str, tuple[tuple[bool, Callable[[str], Any]], ...]] = {}
# Text -> the answer (bounded, cleared when full): keys and many values repeat in every file.
_STR_ANSWERS: dict[str, bool] = {}
_MEMO_MAX = 4096


def _reads_as_str(text: str) -> bool:
    """Return whether ruamel's resolver (YAML 1.2, dates as text) reads plain ``text`` as a string.

    The same answer as ``_YAML.resolver.resolve(ScalarNode, text, (True, False))`` being the
    ``str`` tag: the implicit rules for the text's first character (then those for any
    character) are tried in order, the first whose regular expression matches decides, and
    no match means ``str``. The rules are taken from the resolver once per first character
    (the version is fixed), not looked up through ruamel's properties per scalar, and each
    text's answer is remembered.
    """
    known = _STR_ANSWERS.get(text)
    if known is not None:
        return known
    first = text[0] if text else ""
    rules = _RULES.get(first)
    if rules is None:
        table = _YAML.resolver.versioned_resolver
        rules = tuple(
            (str(tag) == _T_STR, regexp.match) for tag, regexp in (*table.get(first, ()), *table.get(None, ()))
        )
        if len(_RULES) >= 1024:
            _RULES.clear()
        _RULES[first] = rules
    answer = True
    for is_str, match in rules:
        if match(text):
            answer = is_str
            break
    if len(_STR_ANSWERS) >= _MEMO_MAX:
        _STR_ANSWERS.clear()
    _STR_ANSWERS[text] = answer
    return answer


def _plain_text(value: Any, pattern: re.Pattern[str]) -> str | None:
    kind = type(value)
    if kind is str:
        if _needs_double_quotes(value, flow=False):  # what quote_ambiguous double-quotes
            return _double_quoted(value)
        # ruamel quotes what its YAML 1.2 resolver would read as another type (0o17, 1e5…).
        if pattern.match(value) and _reads_as_str(value):
            return str(value)
        return None
    if kind is PlainScalarString:
        if _STAMP.match(value) or (
            pattern.match(value) and _reads_as_str(value) and not _YAML11_AMBIGUOUS.match(value)
        ):
            return str(value)
        return None
    if kind is DoubleQuotedScalarString:
        return _double_quoted(value)
    return None


def _double_quoted(value: str) -> str | None:
    """``"value"`` for printable ASCII without quotes or backslashes (nothing to escape)."""
    return f'"{value}"' if _SIMPLE_QUOTED.match(value) else None


def _single_quoted(value: str) -> str | None:
    """``'value'`` (``"value"`` if it holds ``'``) where ruamel surely cannot write it plain, else ``None``.

    Sure: printable ASCII (no line break) that holds ``': '`` or ``' #'``, ends with ``':'``,
    starts or ends with a blank, or starts with an indicator that is one whatever follows.
    """
    if (
        not _PRINTABLE.match(value)
        or not value
        or not (
            ": " in value
            or " #" in value
            or value.endswith(":")
            or value[0] in _ALWAYS_INDICATORS
            or value[0] == " "
            or value[-1] == " "
            or value.startswith(("---", "..."))
        )
    ):
        return None
    if "'" in value:  # ruamel then prefers double quotes
        return _double_quoted(value)
    return "'" + value + "'"


# Text -> what _scalar gives for it (a str of exactly type str): memory frontmatter repeats
# many values (kinds, statuses, agents, tags, format names). Bounded; cleared when full.
_TEXT_SCALARS: dict[str, str | None] = {}
_FLOW_ITEMS: dict[str, str | None] = {}
_KEYS: dict[str, bool] = {}


def _text_scalar(value: str) -> str | None:
    found = _TEXT_SCALARS.get(value, _TEXT_SCALARS)
    if found is not _TEXT_SCALARS:
        return found  # type: ignore[return-value]
    text = _plain_text(value, _BLOCK_TEXT)
    if text is None:
        text = _single_quoted(value)
    if len(_TEXT_SCALARS) >= _MEMO_MAX:
        _TEXT_SCALARS.clear()
    _TEXT_SCALARS[value] = text
    return text


def _number(value: Any) -> str | None:
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        text = repr(value)
        return text if _DECIMAL.match(text) else None
    return None


def _flow_item(value: Any) -> str | None:
    if type(value) is not str:
        found = _plain_text(value, _FLOW_TEXT)
        return found if found is not None else _number(value)
    memo = _FLOW_ITEMS.get(value, _FLOW_ITEMS)
    if memo is not _FLOW_ITEMS:
        return memo  # type: ignore[return-value]
    text = _plain_text(value, _FLOW_TEXT)
    if len(_FLOW_ITEMS) >= _MEMO_MAX:
        _FLOW_ITEMS.clear()
    _FLOW_ITEMS[value] = text
    return text


def _scalar(value: Any) -> str | None:
    if type(value) is str:
        return _text_scalar(value)
    found = _number(value)
    return found if found is not None else _plain_text(value, _BLOCK_TEXT)


def _plain_key(key: Any) -> bool:
    if type(key) is not str:
        return False
    known = _KEYS.get(key)
    if known is None:
        known = len(key) <= _MAX_KEY and bool(_BLOCK_TEXT.match(key)) and _reads_as_str(key)
        if len(_KEYS) >= _MEMO_MAX:
            _KEYS.clear()
        _KEYS[key] = known
    return known


def _is_plain_container(value: Any) -> bool:
    kind = type(value)
    if kind is dict or kind is list:
        return bool(value)
    if kind is CommentedMap and value.fa.flow_style():
        return False  # a mapping marked flow style ({a: 1}) is dumped so by ruamel
    if kind is CommentedMap or kind is CommentedSeq:
        ca = value.ca
        return bool(value) and not ca.items and ca.comment is None and not ca.end and value.anchor.value is None
    return False


def _block(mapping: Any, indent: str, dash: str, out: list[str]) -> bool:
    """Append ``mapping``'s lines at ``indent``; return ``False`` for anything unusual.

    ``dash`` is what goes before a block sequence's ``- `` (the layout's sequence offset).
    """
    if not _is_plain_container(mapping) or not isinstance(mapping, dict):
        return False
    for key, value in mapping.items():
        if not _plain_key(key):
            return False
        if isinstance(value, dict):
            out.append(f"{indent}{key}:\n")
            if not _block(value, indent + "  ", dash, out):
                return False
        elif isinstance(value, list):
            if not _is_plain_container(value):
                return False
            if type(value) is CommentedSeq and value.fa.flow_style():
                items: list[str] = []
                for item in list.__iter__(value):  # a CommentedSeq's own __iter__ indexes item by item
                    item_text = _flow_item(item)
                    if item_text is None:
                        return False
                    items.append(item_text)
                out.append(f"{indent}{key}: [" + ", ".join(items) + "]\n")
                continue
            out.append(f"{indent}{key}:\n")
            lead = indent + dash
            for item in list.__iter__(value):
                if isinstance(item, dict):
                    inner: list[str] = []
                    if not _block(item, lead + "  ", dash, inner):
                        return False
                    out.append(f"{lead}- " + inner[0][len(lead) + 2 :])
                    out.extend(inner[1:])
                elif isinstance(item, list):
                    return False
                else:
                    text = _scalar(item)
                    if text is None:
                        return False
                    out.append(f"{lead}- {text}\n")
        else:
            text = _scalar(value)
            if text is None:
                return False
            out.append(f"{indent}{key}: {text}\n")
    return True


class YAMLWriter:
    """Writing YAML in one layout: ruamel's round-trip dumper, the fast emitter, key-by-key patches.

    The one ruamel configuration (:func:`_new_yaml`: YAML 1.2, dates as text, quotes kept, no
    line folding, unicode as is, mappings indented two columns) with the sequence layout as the
    style option. :data:`FLUSH` (memcore's, WhiteBox's: ``key:\\n- item``) and :data:`INDENTED`
    (the Box-memory authors': ``key:\\n  - item``) are the two instances.

    Attributes:
        indent_sequences: Whether block-sequence dashes sit two columns in from their key.
        yaml: The ruamel.yaml round-trip instance that dumps in this layout.
    """

    def __init__(self, *, indent_sequences: bool) -> None:
        """Configure the layout (see the class docstring)."""
        self.indent_sequences = indent_sequences
        self.yaml = _new_yaml(indent_sequences=indent_sequences)
        self._dash = "  " if indent_sequences else ""

    def dump(self, data: Any) -> str:
        """Dump ``data`` with ruamel.yaml (the general path), ending with a newline.

        Strings that would read back as another type are quoted by ruamel.yaml; call
        :func:`quote_ambiguous` first to also quote what a YAML 1.1 reader would misread.
        """
        buf = io.StringIO()
        self.yaml.dump(data, buf)
        return buf.getvalue()

    def fast_dump(self, mapping: Mapping[Any, Any]) -> str | None:
        """Return ``self.dump(quote_ambiguous(mapping))`` written directly, or ``None``.

        ``None``: the mapping holds anything outside the fast emitter's subset (see the
        comment above :func:`_reads_as_str`), or the fast paths are off (:data:`FAST_PATHS`).
        ``mapping`` is not changed.
        """
        if not FAST_PATHS:
            return None
        out: list[str] = []
        if not _block(mapping, "", self._dash, out):
            return None
        if any(len(line) > 1000 for line in out):
            return None  # far below ruamel's line width (64 Ki), where it would fold
        return "".join(out)

    def dump_mapping(self, mapping: Mapping[str, Any]) -> str:
        """Dump a mapping as block YAML in this layout, ending with a newline (``""`` if empty).

        Plain strings a YAML 1.1 reader would misread (``yes``, ``0.5``, ``2026-01-01``…) are
        double-quoted (:func:`quote_ambiguous`, on a copy of the top level; nested lists and
        mappings are quoted in place). The fast emitter writes what it can; ruamel the rest.
        """
        fast = self.fast_dump(mapping)
        return fast if fast is not None else self.general_dump(mapping)

    def general_dump(self, mapping: Mapping[str, Any]) -> str:
        """:meth:`dump_mapping` without the fast emitter: quoted, then dumped by ruamel.yaml."""
        data = CommentedMap()
        for key, value in mapping.items():
            data[key] = quote_ambiguous(value)
        return self.dump(data) if data else ""

    @overload
    def patch(
        self,
        yaml_text: str,
        old: Mapping[Any, Any],
        new: Mapping[str, Any],
        order: tuple[str, ...],
        *,
        fallback: Literal[True] = ...,
    ) -> str: ...
    @overload
    def patch(
        self, yaml_text: str, old: Mapping[Any, Any], new: Mapping[str, Any], order: tuple[str, ...], *, fallback: bool
    ) -> str | None: ...
    def patch(
        self,
        yaml_text: str,
        old: Mapping[Any, Any],
        new: Mapping[str, Any],
        order: tuple[str, ...],
        *,
        fallback: bool = True,
    ) -> str | None:
        """Return ``yaml_text`` changed so that it loads as ``new``, touching only changed keys.

        A top-level key whose value did not change keeps its lines byte for byte (indentation,
        quoting, comments), a changed key gets its lines replaced (:meth:`dump_mapping`), a new
        key is inserted after its predecessor in ``order``, a removed key loses its lines. The
        patched text is loaded back (:func:`load_fast` where it is exact, else the round-trip
        loader) and must give ``new``'s values.

        Args:
            yaml_text: The frontmatter YAML as it is in the file (no ``---`` lines).
            old: That text, parsed, with line information: ruamel's round-trip map, or any mapping
                whose ``lc.key(key)`` gives each top-level key's ``(line, column)`` the same way.
            new: The wanted mapping, in the wanted key order for keys that are new.
            order: Canonical key order used to place new keys.
            fallback: When the text cannot be patched (keys without line information, or a
                patch that does not load back as ``new``): ``True`` dumps the whole of ``new``
                instead, ``False`` returns ``None``.

        Returns:
            The new YAML text (ends with a newline when not empty), or ``None`` (see ``fallback``).
        """
        if not yaml_text.endswith("\n") and yaml_text:
            yaml_text += "\n"
        found = _blocks(yaml_text, old)
        if found is None:
            return self.dump_mapping(new) if fallback else None
        lines, spans = found
        replace: dict[int, list[str]] = {}
        drop: set[int] = set()
        for key, (start, end) in spans.items():
            if key not in new:
                drop.update(range(start, end))
            elif to_plain(old[key]) != to_plain(new[key]):
                drop.update(range(start + 1, end))
                replace[start] = [self.dump_mapping({key: new[key]})]
        inserts: dict[int, list[str]] = {}
        head: list[str] = []
        rank = {k: i for i, k in enumerate(order)}
        for key in new:
            if key in spans:
                continue
            fragment = self.dump_mapping({key: new[key]})
            if key in rank:
                before = [spans[k][1] for k in spans if k in rank and rank[k] < rank[key]]
            else:
                before = [spans[k][1] for k in spans]
            if before:
                inserts.setdefault(max(before), []).append(fragment)
            else:
                head.append(fragment)
        out: list[str] = list(head)
        for i, line in enumerate(lines):
            if i in inserts:
                out.extend(inserts.pop(i))
            if i in replace:
                out.extend(replace[i])
            elif i not in drop:
                out.append(line)
        for fragments in inserts.values():
            out.extend(fragments)
        text = "".join(out)
        check = load_fast(text)  # equals to_plain(load_yaml(text)) when not None
        if check is None:
            try:
                check = load_yaml(text) if text.strip() else CommentedMap()
            except Exception:  # noqa: BLE001 - any failure means: fall back to a full dump
                return self.dump_mapping(new) if fallback else None
        if to_plain(check or {}) != to_plain(new):
            return self.dump_mapping(new) if fallback else None
        return text


def _blocks(yaml_text: str, meta: Mapping[Any, Any]) -> tuple[list[str], dict[str, tuple[int, int]]] | None:
    lines = yaml_text.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    for key in meta:
        if not isinstance(key, str):
            return None  # a key like ``1:`` or ``true:``: patch by key name is unsafe, dump whole
        try:
            line, col = meta.lc.key(key)  # type: ignore[attr-defined]
        except (KeyError, TypeError, AttributeError):
            return None
        if col != 0:
            return None
        starts.append((line, str(key)))
    starts.sort()
    spans: dict[str, tuple[int, int]] = {}
    for i, (line, key) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        # Trailing blank and comment lines stay outside the block (they belong to what follows).
        while end > line + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        spans[key] = (line, end)
    return lines, spans


#: memcore's layout (and WhiteBox's): block-sequence dashes at their key's column.
FLUSH = YAMLWriter(indent_sequences=False)
#: The Box-memory authors' layout: block-sequence dashes two columns in (``related:\n  - ...``).
INDENTED = YAMLWriter(indent_sequences=True)


def dump_yaml(data: Any) -> str:
    """Dump ``data`` as YAML 1.2 block style in memcore's layout (:data:`FLUSH`), ending with a newline.

    Strings that would read back as another type are quoted by ruamel.yaml; call
    :func:`quote_ambiguous` first to also quote what a YAML 1.1 reader would misread.
    """
    return FLUSH.dump(data)


def _dump_simple(mapping: CommentedMap) -> str | None:
    """Return ``dump_yaml(mapping)`` written by the fast emitter, or ``None`` outside its subset."""
    return FLUSH.fast_dump(mapping)


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
    data = HANDLER.load(yaml_text, path=path, first_line=2) if yaml_text.strip() else CommentedMap()
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
    if _CParser is None or not FAST_PATHS or _UNSURE.search(text):
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
    kind = type(value)
    # Exact built-in types first (what libyaml and load_own give): no ABC check per value.
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): to_plain(v) for k, v in value.items()}
    if kind is list:
        return [to_plain(v) for v in value]
    if kind is int or kind is float:
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, (bool, ScalarBoolean)):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


# Exact built-in scalar types: told by one set lookup, without the ABC check (what load_own and
# libyaml give).
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def is_scalar(value: Any) -> bool:
    """Return whether ``value`` is a YAML scalar (text, number, bool, null), not a list or mapping."""
    return type(value) in _SCALAR_TYPES or not isinstance(value, (Mapping, list, tuple, set))


def text_of(value: Any) -> str | None:
    """Return a scalar frontmatter value as its text, ``None`` for null or a list or mapping.

    A list or mapping never becomes text here: ``str()`` of it would be a Python repr
    (``"['a', 'b']"``), which a write would then store as if the user had typed it.
    """
    if type(value) is str:
        return value
    if value is None or not is_scalar(value):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load_plain_yaml(text: str, *, path: str | None = None, first_line: int = 1) -> Any:
    """Load YAML 1.2 text as plain Python data, for reading only (dates stay text).

    The result always equals ``to_plain(load_yaml(text, ...))``: the fast loader reads the text
    when it can (:func:`load_own` for memcore's own layout, then libyaml for the subset whose
    meaning the two parsers agree on, see the comment above), the round-trip loader reads
    everything else (always, with :data:`FAST_PATHS` off). Use :func:`parse_frontmatter` for documents that
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
    own = load_own(text)  # memcore's own layout, then libyaml
    if own is not None:
        return own[0]
    try:
        return _load_fast(text)
    except _Unsure:
        return to_plain(load_yaml(text, path=path, first_line=first_line))


# -- the fast loader: memcore's own layout ------------------------------------------------
# What the fast emitter writes (the frontmatter of nearly every memory memcore wrote) is read by
# a small line reader, without libyaml: ``key: value`` lines, ``key:`` opening a nested mapping
# two columns in or a block list of ``- item`` lines two columns in (items may be mappings,
# ``- key: value`` with their other keys under the first), flow lists ``[a, "b"]``. Values
# (:func:`read_scalar`): double-quoted text with nothing to escape, single-quoted text without
# quotes inside, decimal integers and decimals, ``true``/``false``, and plain text that ruamel's
# resolver reads as a string. Printable ASCII only, no blank or comment lines, no duplicate
# keys, keys that read as strings. Anything else: ``None`` (libyaml, then ruamel, decide).
# tests/test_yaml_equivalence.py compares it with the round-trip loader.
_OWN_TEXT = re.compile(r"[ -~\n]*\Z")
_OWN_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?\Z")
_OWN_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
_OWN_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,15})\.[0-9]{1,17}\Z")
_OWN_NUMERIC = frozenset("-0123456789")
# What no plain scalar read here may start with (YAML indicators, and '-', '?', ':' which are
# indicators when a blank follows), and what it may not hold anywhere (flow indicators; in a
# flow list also ',' and ':').
_NOT_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@` ")
_BLOCK_NEVER = frozenset("[]{}")
_FLOW_NEVER = frozenset("[]{},:")

#: What :func:`read_scalar` returns for a text it does not read (the caller's YAML loader decides).
UNSURE: Any = object()


def _quoted_inner(text: str, quote: str, flow: bool) -> Any:
    inner = text[1:-1]
    if (
        len(text) < 2
        or text[-1] != quote
        or quote in inner
        or (quote == '"' and "\\" in inner)
        or (flow and "," in inner)
        or not inner.isprintable()
    ):
        return UNSURE
    return inner


def read_scalar(text: str, *, flow: bool = False) -> Any:
    """Read one YAML scalar written on one line, the way the round-trip loader reads it.

    ``text`` is the value as it stands after ``key: `` or ``- `` (or a flow-list item, with
    ``flow=True``), without leading or trailing blanks. Read here: ``"text"`` with nothing to
    escape, ``'text'`` without quotes inside, decimal integers and decimals, ``true`` /
    ``false``, and plain text (printable, no indicator first, no ``: `` or `` #``, no flow
    indicator) that ruamel's YAML 1.2 resolver reads as a string (dates stay text).

    Returns:
        The value (``str``, ``int``, ``float``, ``bool``), or :data:`UNSURE` for anything else
        and whenever the fast paths are off (:data:`FAST_PATHS`).
    """
    if not FAST_PATHS or not text:
        return UNSURE
    first = text[0]
    if first == '"' or first == "'":
        return _quoted_inner(text, first, flow)
    if first in _OWN_NUMERIC:
        if _OWN_INT.match(text):
            return int(text)
        if _OWN_FLOAT.match(text):
            return float(text)
    elif text == "true" or text == "false":
        return text == "true"
    never = _FLOW_NEVER if flow else _BLOCK_NEVER
    if (
        first in _NOT_FIRST
        or text[-1] == " "
        or ": " in text
        or " #" in text
        or text[-1] == ":"
        or not never.isdisjoint(text)
        or not text.isprintable()
        or not _reads_as_str(text)
    ):
        return UNSURE
    return text


def read_flow_list(text: str) -> list[Any] | None:
    """Read a one-line flow list (``[a, "b", 'c']``) as the round-trip loader reads it, or ``None``.

    Items are split at ``,`` and each is read by :func:`read_scalar` (``flow=True``); an empty
    list, an empty item or any item :func:`read_scalar` does not read gives ``None``.
    """
    if not FAST_PATHS or len(text) < 3 or text[0] != "[" or text[-1] != "]":
        return None
    out = []
    for item in text[1:-1].split(","):
        value = read_scalar(item.strip(" "), flow=True)
        if value is UNSURE:
            return None
        out.append(value)
    return out


# Text -> its value in block context (bounded, cleared when full; values are immutable), and
# flow-list text -> its items.
_OWN_VALUES: dict[str, Any] = {}
_OWN_LISTS: dict[str, tuple[Any, ...]] = {}


# Plain text that read_scalar surely reads as itself in block context, told by one match: a first
# character no implicit resolver rule starts with (a letter but t/f/n, either case, or "_"; none
# in _NOT_FIRST), then printable ASCII without "#", ",", ":", brackets or braces, not ending in a
# blank; or a UTC timestamp as memcore writes it (dates stay text). Most one-off values (ids,
# slugs, titles, timestamps) are read here, without read_scalar's checks and without filling
# _OWN_VALUES. tests/test_yaml_equivalence.py checks it against read_scalar.
_SURE_TEXT = re.compile(
    r"(?:[a-eg-mo-su-zA-EG-MO-SU-Z_](?:[ !\"$-+\--9;-Z\\^-z|~]*[!\"$-+\--9;-Z\\^-z|~])?"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z)\Z"
)


def _own_value(text: str) -> Any:
    found = _OWN_VALUES.get(text, _OWN_VALUES)
    if found is not _OWN_VALUES:
        return found
    if _SURE_TEXT.match(text):
        return text
    if text.startswith("["):
        known = _OWN_LISTS.get(text)
        if known is None:
            items = read_flow_list(text)
            if items is None:
                return UNSURE
            if len(_OWN_LISTS) >= _MEMO_MAX:
                _OWN_LISTS.clear()
            _OWN_LISTS[text] = known = tuple(items)
        return list(known)  # a new list each time (its items are immutable)
    value = read_scalar(text)
    if len(_OWN_VALUES) >= _MEMO_MAX:
        _OWN_VALUES.clear()
    _OWN_VALUES[text] = value
    return value


class _NotOwn(Exception):
    """The text is not in memcore's own layout (see above)."""


# One line: its indent, then ``key:`` with an optional `` value``, or ``- `` and an item.
_OWN_LINE = re.compile(r"( *)(?:([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?|- (.*))\Z")
_Row = tuple[int, "str | None", "str | None", "str | None"]  # indent, key, value text, item text


def _own_mapping(rows: list[_Row], i: int, indent: int, keys: dict[str, int] | None) -> tuple[dict[str, Any], int]:
    """Read the mapping whose keys start at column ``indent`` from row ``i``; return it and the next row."""
    out: dict[str, Any] = {}
    while i < len(rows):
        depth, key, rest, _item = rows[i]
        if depth < indent or (depth > indent and out):
            break  # a shallower row ends the mapping (a deeper one is an error the caller sees)
        if depth > indent or key is None:
            raise _NotOwn
        if key in out or not _reads_as_str(key):
            raise _NotOwn
        if keys is not None:
            keys[key] = i
        if rest is not None:
            value = _own_value(rest)
            if value is UNSURE:
                raise _NotOwn
            out[key] = value
            i += 1
            continue
        after = rows[i + 1] if i + 1 < len(rows) else None
        if after is None or after[0] not in (indent, indent + 2) or (after[0] == indent and after[3] is None):
            raise _NotOwn  # an empty value (null), or another layout
        if after[3] is not None:
            out[key], i = _own_list(rows, i + 1, after[0])
        else:
            out[key], i = _own_mapping(rows, i + 1, indent + 2, None)
    return out, i


def _own_list(rows: list[_Row], i: int, indent: int) -> tuple[list[Any], int]:
    """Read the block list whose ``- `` items start at column ``indent``; return it and the next row."""
    out: list[Any] = []
    while i < len(rows) and rows[i][0] == indent and rows[i][3] is not None:
        item = rows[i][3]
        assert item is not None
        found = _OWN_KEY.match(item)
        if found is not None:
            # "- key: value": a mapping whose keys start two columns in, the first on this row
            rows[i] = (indent + 2, found.group(1), found.group(2), None)
            value, i = _own_mapping(rows, i, indent + 2, None)
            out.append(value)
        else:
            scalar = read_scalar(item)
            if scalar is UNSURE:
                raise _NotOwn
            out.append(scalar)
            i += 1
    return out, i


# Key text -> whether it is a key load_own reads (``[A-Za-z_][A-Za-z0-9_]*`` that reads as a
# string); bounded, cleared when full.
_OWN_KEYS: dict[str, bool] = {}
_OWN_KEY_TEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _own_flat(yaml_text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """:func:`load_own` of a text whose every line starts at column 0 and none with ``-``.

    Such a text is in the layout only as ``key: value`` lines (a ``key:`` line would need
    deeper lines after it); this reads them one by one, with the same key and value rules as
    the row reader, and gives what it gives.
    """
    out: dict[str, Any] = {}
    keys: dict[str, int] = {}
    known = _OWN_KEYS
    for number, line in enumerate(yaml_text[:-1].split("\n")):
        key, sep, rest = line.partition(": ")
        good = known.get(key)
        if good is None:
            good = bool(_OWN_KEY_TEXT.match(key)) and _reads_as_str(key)
            if len(known) >= _MEMO_MAX:
                known.clear()
            known[key] = good
        if not good or not sep or key in out:
            return None
        value = _own_value(rest)
        if value is UNSURE:
            return None
        out[key] = value
        keys[key] = number
    return (out, keys) if out else None


def load_own(yaml_text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """Read frontmatter in memcore's own layout, without libyaml; ``None`` for any other text.

    Whenever the result is not ``None``, its mapping equals ``to_plain(load_yaml(yaml_text))``
    (the round-trip loader's values, dates as text), key order included. The layout is what the
    fast emitter writes, in either sequence layout (see the comment above this function).

    Args:
        yaml_text: The frontmatter between the ``---`` lines.

    Returns:
        ``(mapping, lines)``: ``lines`` gives each top-level key's 0-based line in
        ``yaml_text`` (for diagnostics); or ``None`` (also when :data:`FAST_PATHS` is off).
    """
    if not FAST_PATHS or not yaml_text.endswith("\n") or not _OWN_TEXT.match(yaml_text):
        return None
    if yaml_text[0] not in " -" and "\n " not in yaml_text and "\n-" not in yaml_text:
        return _own_flat(yaml_text)
    return _own_rows(yaml_text)


def _own_rows(yaml_text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """:func:`load_own` of any text in the layout (printable ASCII ending in a line break), row by row."""
    rows: list[_Row] = []
    for line in yaml_text[:-1].split("\n"):
        found = _OWN_LINE.match(line)
        if found is None:
            return None
        spaces, key, rest, item = found.groups()
        rows.append((len(spaces), key, rest, item))
    keys: dict[str, int] = {}
    try:
        out, end = _own_mapping(rows, 0, 0, keys)
    except _NotOwn:
        return None
    return (out, keys) if end == len(rows) and out else None


# Where YAML could hold an anchor (``&name`` starting a node). Catches some plain text too.
_ANCHOR = re.compile(r"(?:^|[\s,\[{:])&", re.MULTILINE)


def load_fast(yaml_text: str) -> dict[Any, Any] | None:
    """Load frontmatter YAML into plain Python, fast, or return ``None`` when unsure.

    The fast loader: :func:`load_own` first, then libyaml (:func:`try_load_plain_yaml`). The
    result equals ``to_plain(load_yaml(yaml_text))`` (the round-trip loader's values, dates
    as text) whenever it is not ``None``; ``None`` means: parse with the round-trip loader
    (which also reports malformed YAML with its line).

    Args:
        yaml_text: The frontmatter between the ``---`` lines.

    Returns:
        A dict (key order kept; ``{}`` for blank text), or ``None``: not a mapping, outside
        the subset the fast readers read exactly, a text that may hold an anchor (``&name``),
        libyaml is unavailable, or the fast paths are off (:data:`FAST_PATHS`).
    """
    if not FAST_PATHS:
        return None
    own = load_own(yaml_text)
    if own is not None:
        return own[0]
    if not LIBYAML or _ANCHOR.search(yaml_text):
        return None
    if not yaml_text.strip():
        # blank: {} unless it holds a character the two parsers read differently
        return None if any(c in yaml_text for c in "\t\x85\u2028\u2029") else {}
    return try_load_plain_yaml(yaml_text)


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
    equals ``to_plain(parse_frontmatter(text).metadata)``), but the YAML goes through the fast loader
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
    own = load_own(yaml_text)  # memcore's own layout, then libyaml
    if own is not None:
        return FrontmatterData(own[0], body, True, body_line)
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
    data = HANDLER.load(yaml_text, path=path, first_line=2)
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

    def load(self, fm: str, **kwargs: Any) -> Any:
        """Load YAML 1.2 round-trip (:func:`load_yaml`; an empty text gives an empty mapping).

        ``path`` and ``first_line`` keyword arguments go to :func:`load_yaml` (for messages). A
        text that is not a mapping (a list, a scalar) comes back as it is: the caller says what
        is wrong with it (:func:`parse_frontmatter` raises :class:`ParseError`).
        """
        data = load_yaml(fm, path=kwargs.get("path"), first_line=kwargs.get("first_line", 1))
        return CommentedMap() if data is None else data

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        """Dump YAML 1.2 block style without sorting keys."""
        return dump_yaml(metadata).rstrip("\n")


#: memcore's handler, the one :func:`parse_frontmatter`, :func:`read_frontmatter`'s general path
#: and :meth:`FrontmatterDocument.to_post` use.
HANDLER = RoundTripYAMLHandler()
