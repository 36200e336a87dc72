"""Writing Box-memory frontmatter so that a touched file changes only what was touched.

Parsing goes through :func:`memcore.frontmatter.parse_frontmatter` (the one splitter). Writing a
new file dumps the mapping in the authors' layout (``related:`` items indented two spaces, as in
their examples). Updating a file patches the original YAML text key by key: a top-level key
whose value did not change keeps its lines byte for byte (indentation, quoting, comments), a
changed key gets its lines replaced, a new key is inserted after its predecessor in
:data:`~memcore_box.mapping.FIELD_ORDER`, a removed key loses its lines. The patched text is
parsed back and compared with the wanted mapping; on any difference the whole mapping is dumped
instead (correctness first).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, overload

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, PlainScalarString

from memcore.frontmatter import LIBYAML, load_yaml, quote_ambiguous, try_load_plain_yaml

__all__ = ["dump_mapping", "is_scalar", "load_fast", "load_own", "patch_yaml", "plain", "text_of"]


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _DatesAsText(VersionedResolver):
    """YAML 1.2 resolver without timestamps: the same reading rule as memcore.frontmatter."""

    _filtered: Any = None

    @property
    def versioned_resolver(self) -> Any:
        # Filtered once per resolver (ruamel asks for the table for every scalar).
        table = super().versioned_resolver
        cached = self._filtered
        if cached is None or cached[0] is not table:
            rules = {first: [(t, rx) for t, rx in r if str(t) != _TIMESTAMP_TAG] for first, r in table.items()}
            cached = self._filtered = (table, rules)
        return cached[1]


def _new_yaml() -> YAML:
    # Same settings as memcore.frontmatter's codec except the sequence indent: the authors'
    # files indent block sequences under their key ("related:\n  - ...").
    yaml = YAML(typ="rt")
    yaml.Resolver = _DatesAsText
    yaml.version = None
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.allow_unicode = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


_YAML = _new_yaml()


def plain(value: Any) -> Any:
    """Return ``value`` as plain JSON-like Python (ruamel containers and scalar types unwrapped)."""
    kind = type(value)
    # Exact built-in types first (what libyaml and load_own give): no ABC check per value.
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if kind is int or kind is float:
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def is_scalar(value: Any) -> bool:
    """Return whether ``value`` is a YAML scalar (text, number, bool, null), not a list or mapping."""
    return not isinstance(value, (Mapping, list, tuple, set))


def text_of(value: Any) -> str | None:
    """Return a scalar frontmatter value as its text, ``None`` for null or a list or mapping.

    A list or mapping never becomes text here: ``str()`` of it would be a Python repr
    (``"['a', 'b']"``), which a write would then store as if the user had typed it.
    """
    if value is None or not is_scalar(value):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# What the direct renderer writes itself; anything else goes through ruamel. Plain ASCII text
# that ruamel writes unquoted in block context: no leading indicator, no trailing blank, no
# ': ' or ' #', no trailing ':', and read back as a string by ruamel's own resolver (YAML 1.2)
# and by a YAML 1.1 reader (quote_ambiguous); flow-list items also without ',' '[' ']';
# double-quoted strings (the "[[Title]]" wikilinks, what quote_ambiguous quotes) with nothing
# to escape; in block context, printable ASCII that surely cannot be plain (': ', ' #', a
# leading indicator, edge blanks) single-quoted; ISO timestamps marked plain; booleans,
# integers, decimals; nested mappings and block lists of those. tests/test_box_golden.py and
# test_box_files.py check the bytes against ruamel's.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BLOCK_TEXT = re.compile(
    r"(?!.*(?:: | #|:\Z))[A-Za-z0-9_/](?:[A-Za-z0-9 _.,/()+'#:=@%-]{0,998}[A-Za-z0-9_.,/()+'#=@%-])?\Z"
)
_FLOW_TEXT = re.compile(r"(?!.* #)[A-Za-z0-9_/](?:[A-Za-z0-9 _./()+'#=@%-]{0,198}[A-Za-z0-9_./()+'#=@%-])?\Z")
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z\Z")
_DECIMAL = re.compile(r"-?[0-9]+\.[0-9]+\Z")
_STR_TAG = "tag:yaml.org,2002:str"
_PRINTABLE = re.compile(r"[ -~]{0,1000}\Z")
_SIMPLE_QUOTED = re.compile(r"[ !#-\[\]-~]{0,1000}\Z")  # printable ASCII but '"' and '\'
_ALWAYS_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


# First character -> ((is the str tag, the rule's match function), ...): ruamel's implicit
# resolver rules for plain scalars starting with it, then its rules for any character.
_RULES: dict[str, tuple[tuple[bool, Callable[[str], Any]], ...]] = {}
# Text -> the answer (bounded, cleared when full): keys and many values repeat in every file.
_STR_ANSWERS: dict[str, bool] = {}


def _reads_as_str(text: str) -> bool:
    """Return whether ruamel's resolver (:data:`_YAML`'s, YAML 1.2, dates as text) reads plain ``text`` as a string.

    The same answer as ``_YAML.resolver.resolve(ScalarNode, text, (True, False))`` being the
    ``str`` tag: the implicit rules for the text's first character (then those for any
    character) are tried in order, the first whose regular expression matches decides, and
    no match means ``str``. The rules are taken from the resolver once per first character
    (the dumper's version is fixed), not looked up through ruamel's properties per scalar,
    and each text's answer is remembered.
    """
    known = _STR_ANSWERS.get(text)
    if known is not None:
        return known
    first = text[0] if text else ""
    rules = _RULES.get(first)
    if rules is None:
        table = _YAML.resolver.versioned_resolver
        rules = tuple((str(tag) == _STR_TAG, regexp.match)
                      for tag, regexp in (*table.get(first, ()), *table.get(None, ())))
        if len(_RULES) >= 1024:
            _RULES.clear()
        _RULES[first] = rules
    answer = True
    for is_str, match in rules:
        if match(text):
            answer = is_str
            break
    if len(_STR_ANSWERS) >= 4096:
        _STR_ANSWERS.clear()
    _STR_ANSWERS[text] = answer
    return answer


def _plain_text(value: Any, pattern: re.Pattern[str]) -> str | None:
    if type(value) is str:
        text = str(value)
        quoted = quote_ambiguous(text)
        if isinstance(quoted, DoubleQuotedScalarString):
            return _double_quoted(quoted)
        # ruamel quotes what its YAML 1.2 resolver would read as another type (0o17, 1e5…).
        if pattern.match(text) and _reads_as_str(text):
            return text
        return None
    if type(value) is PlainScalarString and _STAMP.match(value):
        return str(value)
    if type(value) is DoubleQuotedScalarString:
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
    if not _PRINTABLE.match(value) or not value or not (
        ": " in value or " #" in value or value.endswith(":") or value[0] in _ALWAYS_INDICATORS
        or value[0] == " " or value[-1] == " " or value.startswith(("---", "..."))
    ):
        return None
    if "'" in value:  # ruamel then prefers double quotes
        return _double_quoted(value)
    return "'" + value + "'"


# Text -> what _scalar gives for it (a str of exactly type str): memory frontmatter repeats
# many values (kinds, statuses, agents, tags, format names). Bounded; cleared when full.
_TEXT_SCALARS: dict[str, str | None] = {}
_FLOW_ITEMS: dict[str, str | None] = {}
_MEMO_MAX = 4096


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


def _flow_item(value: Any) -> str | None:
    if type(value) is not str:
        return _plain_text(value, _FLOW_TEXT)
    found = _FLOW_ITEMS.get(value, _FLOW_ITEMS)
    if found is not _FLOW_ITEMS:
        return found  # type: ignore[return-value]
    text = _plain_text(value, _FLOW_TEXT)
    if len(_FLOW_ITEMS) >= _MEMO_MAX:
        _FLOW_ITEMS.clear()
    _FLOW_ITEMS[value] = text
    return text


def _scalar(value: Any) -> str | None:
    if type(value) is str:
        return _text_scalar(value)
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        text = repr(value)
        return text if _DECIMAL.match(text) else None
    found = _plain_text(value, _BLOCK_TEXT)
    if found is None and type(value) is str:
        found = _single_quoted(value)
    return found


def _block(mapping: Mapping[Any, Any], indent: str, out: list[str]) -> bool:
    """Append ``mapping``'s lines at ``indent``; return ``False`` for anything unusual."""
    if not mapping or (isinstance(mapping, CommentedMap) and (mapping.ca.items or mapping.ca.comment)):
        return False
    for key, value in mapping.items():
        if type(key) is not str or not _KEY.match(key):
            return False
        if isinstance(value, Mapping):
            if not isinstance(value, (dict, CommentedMap)):
                return False
            out.append(f"{indent}{key}:\n")
            if not _block(value, indent + "  ", out):
                return False
        elif isinstance(value, list):
            if not value or (isinstance(value, CommentedSeq) and (value.ca.items or value.ca.comment)):
                return False
            if isinstance(value, CommentedSeq) and value.fa.flow_style():
                items: list[str] = []
                for item in value:
                    item_text = _flow_item(item)
                    if item_text is None:
                        return False
                    items.append(item_text)
                out.append(f"{indent}{key}: [" + ", ".join(items) + "]\n")
                continue
            out.append(f"{indent}{key}:\n")
            for item in value:
                if isinstance(item, Mapping):
                    if not isinstance(item, (dict, CommentedMap)):
                        return False
                    inner: list[str] = []
                    if not _block(item, indent + "    ", inner):
                        return False
                    out.append(f"{indent}  - " + inner[0][len(indent) + 4:])
                    out.extend(inner[1:])
                else:
                    text = _scalar(item)
                    if text is None:
                        return False
                    out.append(f"{indent}  - {text}\n")
        else:
            text = _scalar(value)
            if text is None:
                return False
            out.append(f"{indent}{key}: {text}\n")
    return True


def _fast_dump(mapping: Mapping[str, Any]) -> str | None:
    """Return ``mapping`` as ruamel would dump it, or ``None`` when it holds anything unusual."""
    out: list[str] = []
    return "".join(out) if _block(mapping, "", out) else None


def dump_mapping(mapping: Mapping[str, Any]) -> str:
    """Dump a mapping as block YAML in the authors' layout, ending with a newline.

    Plain strings a YAML 1.1 reader would misread (``yes``, ``0.5``, ``2026-01-01``…) are
    double-quoted first (:func:`memcore.frontmatter.quote_ambiguous`). A mapping of plain
    text, ISO timestamps, booleans, integers, decimals and flow lists of plain text (what a new
    memory usually is) is written directly, in the bytes ruamel would write; anything else is
    dumped by ruamel.
    """
    fast = _fast_dump(mapping)
    if fast is not None:
        return fast
    return _ruamel_dump(mapping)


def _ruamel_dump(mapping: Mapping[str, Any]) -> str:
    data = CommentedMap()
    for key, value in mapping.items():
        data[key] = quote_ambiguous(value)
    if not data:
        return ""
    buf = io.StringIO()
    _YAML.dump(data, buf)
    return buf.getvalue()


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


@overload
def patch_yaml(yaml_text: str, old: Mapping[Any, Any], new: Mapping[str, Any], order: tuple[str, ...],
               *, fallback: Literal[True] = ...) -> str: ...
@overload
def patch_yaml(yaml_text: str, old: Mapping[Any, Any], new: Mapping[str, Any], order: tuple[str, ...],
               *, fallback: bool) -> str | None: ...
def patch_yaml(yaml_text: str, old: Mapping[Any, Any], new: Mapping[str, Any], order: tuple[str, ...],
               *, fallback: bool = True) -> str | None:
    """Return ``yaml_text`` changed so that it loads as ``new``, touching only changed keys.

    The patched text is loaded back (libyaml where :func:`load_fast` reads it exactly, else the
    round-trip loader) and must give ``new``'s values.

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
        return dump_mapping(new) if fallback else None
    lines, spans = found
    replace: dict[int, list[str]] = {}
    drop: set[int] = set()
    for key, (start, end) in spans.items():
        if key not in new:
            drop.update(range(start, end))
        elif plain(old[key]) != plain(new[key]):
            drop.update(range(start + 1, end))
            replace[start] = [dump_mapping({key: new[key]})]
    inserts: dict[int, list[str]] = {}
    head: list[str] = []
    rank = {k: i for i, k in enumerate(order)}
    for key in new:
        if key in spans:
            continue
        fragment = dump_mapping({key: new[key]})
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
    check = load_fast(text)  # equals plain(load_yaml(text)) when not None
    if check is None:
        try:
            check = load_yaml(text) if text.strip() else CommentedMap()
        except Exception:  # noqa: BLE001 - any failure means: fall back to a full dump
            return dump_mapping(new) if fallback else None
    if plain(check or {}) != plain(new):
        return dump_mapping(new) if fallback else None
    return text


# -- fast read path -----------------------------------------------------------------------
# Reading a memory needs plain values, not ruamel's round-trip objects (those are for byte-
# preserving writes): memcore.frontmatter.try_load_plain_yaml reads them with libyaml, with
# ruamel's YAML 1.2 rules and dates as text, and says "unsure" (None) for anything where the
# two parsers could differ; the caller then parses with the round-trip loader, so the values
# and the orphan decisions are those of the round-trip path.


# Where YAML could hold an anchor (``&name`` starting a node). Catches some plain text too.
_ANCHOR = re.compile(r"(?:^|[\s,\[{:])&", re.MULTILINE)

# -- memcore's own layout -------------------------------------------------------------------
# What the direct renderer above writes (the frontmatter of nearly every memory memcore wrote)
# is read by a small line reader, without libyaml: ``key: value`` lines, ``key:`` opening a
# nested mapping two columns in or a block list of ``- item`` lines two columns in (items may
# be mappings, ``- key: value`` with their other keys under the first), flow lists
# ``[a, "b"]``. Values: double-quoted text with nothing to escape, single-quoted text without
# quotes inside, decimal integers and decimals, ``true``/``false``, and plain text that the
# direct renderer itself would write plain (:data:`_BLOCK_TEXT`, in lists :data:`_FLOW_TEXT`)
# and that ruamel's resolver reads as a string. Printable ASCII only, no blank or comment
# lines, no duplicate keys, keys that read as strings. Anything else: ``None`` (libyaml, then
# ruamel, decide). tests/test_box_read_path.py compares it with the round-trip loader.
_OWN_TEXT = re.compile(r"[ -~\n]*\Z")
_OWN_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?\Z")
_OWN_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
_OWN_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,15})\.[0-9]{1,17}\Z")
_OWN_DQ = re.compile(r'"([ !#-\[\]-~]*)"\Z')  # printable ASCII but '"' and '\'
_OWN_SQ = re.compile(r"'([ -&(-~]*)'\Z")  # printable ASCII but "'"
_OWN_NUMERIC = frozenset("-0123456789")
_OWN_FLOW_DQ = re.compile(r'"([ !#-+\--\[\]-~]*)"\Z')  # nor ','


class _NotOwn(Exception):
    """The text is not in memcore's own layout (see above)."""


def _own_scalar(text: str, *, flow: bool = False) -> Any:
    first = text[:1]
    if first == '"':
        found = (_OWN_FLOW_DQ if flow else _OWN_DQ).match(text)
        if found is not None:
            return found.group(1)
        raise _NotOwn
    if not flow:
        if first == "'":
            found = _OWN_SQ.match(text)
            if found is not None:
                return found.group(1)
            raise _NotOwn
        if first in _OWN_NUMERIC:
            if _OWN_INT.match(text):
                return int(text)
            if _OWN_FLOAT.match(text):
                return float(text)
        elif text == "true" or text == "false":
            return text == "true"
    if (_FLOW_TEXT if flow else _BLOCK_TEXT).match(text) and _reads_as_str(text):
        return text
    raise _NotOwn


# Text -> its value in block context (bounded, cleared when full; values are immutable).
_OWN_VALUES: dict[str, Any] = {}
_NOT_OWN: Any = object()


def _own_value(text: str) -> Any:
    found = _OWN_VALUES.get(text, _OWN_VALUES)
    if found is not _OWN_VALUES:
        if found is _NOT_OWN:
            raise _NotOwn
        return found
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        if not inner:
            raise _NotOwn
        return [_own_scalar(item, flow=True) for item in inner.split(", ")]  # a new list each time
    try:
        value = _own_scalar(text)
    except _NotOwn:
        value = _NOT_OWN
    if len(_OWN_VALUES) >= _MEMO_MAX:
        _OWN_VALUES.clear()
    _OWN_VALUES[text] = value
    if value is _NOT_OWN:
        raise _NotOwn
    return value


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
            out[key] = _own_value(rest)
            i += 1
            continue
        after = rows[i + 1] if i + 1 < len(rows) else None
        if after is None or after[0] != indent + 2:
            raise _NotOwn  # an empty value (null), or another layout
        if after[3] is not None:
            out[key], i = _own_list(rows, i + 1, indent + 2)
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
            out.append(_own_scalar(item))
            i += 1
    return out, i


def load_own(yaml_text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """Read frontmatter in memcore's own layout, without libyaml; ``None`` for any other text.

    Whenever the result is not ``None``, its mapping equals ``plain(load_yaml(yaml_text))`` (the
    round-trip loader's values, dates as text), key order included. The layout is what
    :func:`dump_mapping` writes directly (see the comment above this function).

    Args:
        yaml_text: The frontmatter between the ``---`` lines.

    Returns:
        ``(mapping, lines)``: ``lines`` gives each top-level key's 0-based line in
        ``yaml_text`` (for diagnostics); or ``None``.
    """
    if not yaml_text.endswith("\n") or not _OWN_TEXT.match(yaml_text):
        return None
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


def load_fast(yaml_text: str) -> dict[Any, Any] | None:
    """Load frontmatter YAML into plain Python, fast, or return ``None`` when unsure.

    The result equals ``plain(load_yaml(yaml_text))`` (the round-trip loader's values, dates
    as text) whenever it is not ``None``; ``None`` means: parse with the round-trip loader
    (which also reports malformed YAML with its line).

    Args:
        yaml_text: The frontmatter between the ``---`` lines.

    Returns:
        A dict (key order kept; ``{}`` for blank text), or ``None``: not a mapping, or outside
        the subset :func:`memcore.frontmatter.try_load_plain_yaml` reads exactly, a text that
        may hold an anchor (``&name``: ruamel reads an anchored ``true`` as the integer 1,
        libyaml as ``True``), or libyaml is unavailable.
    """
    own = load_own(yaml_text)
    if own is not None:
        return own[0]
    if not LIBYAML or _ANCHOR.search(yaml_text):
        return None
    if not yaml_text.strip():
        # blank: {} unless it holds a character the two parsers read differently
        return None if any(c in yaml_text for c in "\t\x85\u2028\u2029") else {}
    return try_load_plain_yaml(yaml_text)
