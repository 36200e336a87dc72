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
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, PlainScalarString

from memcore.frontmatter import LIBYAML, load_yaml, quote_ambiguous, try_load_plain_yaml

__all__ = ["dump_mapping", "load_fast", "patch_yaml", "plain"]


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


def _plain_text(value: Any, pattern: re.Pattern[str]) -> str | None:
    if type(value) is str:
        text = str(value)
        quoted = quote_ambiguous(text)
        if isinstance(quoted, DoubleQuotedScalarString):
            return _double_quoted(quoted)
        # ruamel quotes what its YAML 1.2 resolver would read as another type (0o17, 1e5…).
        if pattern.match(text) and str(_YAML.resolver.resolve(ScalarNode, text, (True, False))) == _STR_TAG:
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


def _scalar(value: Any) -> str | None:
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
                    item_text = _plain_text(item, _FLOW_TEXT)
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


def _blocks(yaml_text: str, meta: CommentedMap) -> tuple[list[str], dict[str, tuple[int, int]]] | None:
    lines = yaml_text.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    for key in meta:
        if not isinstance(key, str):
            return None  # a key like ``1:`` or ``true:``: patch by key name is unsafe, dump whole
        try:
            line, col = meta.lc.key(key)
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


def patch_yaml(yaml_text: str, old: CommentedMap, new: Mapping[str, Any], order: tuple[str, ...]) -> str:
    """Return ``yaml_text`` changed so that it loads as ``new``, touching only changed keys.

    Args:
        yaml_text: The frontmatter YAML as it is in the file (no ``---`` lines).
        old: That text, parsed (ruamel round-trip map with line information).
        new: The wanted mapping, in the wanted key order for keys that are new.
        order: Canonical key order used to place new keys.

    Returns:
        The new YAML text (ends with a newline when not empty).
    """
    if not yaml_text.endswith("\n") and yaml_text:
        yaml_text += "\n"
    found = _blocks(yaml_text, old)
    if found is None:
        return dump_mapping(new)
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
    try:
        check = load_yaml(text) if text.strip() else CommentedMap()
    except Exception:  # noqa: BLE001 - any failure means: fall back to a full dump
        return dump_mapping(new)
    if plain(check or {}) != plain(new):
        return dump_mapping(new)
    return text


# -- fast read path -----------------------------------------------------------------------
# Reading a memory needs plain values, not ruamel's round-trip objects (those are for byte-
# preserving writes): memcore.frontmatter.try_load_plain_yaml reads them with libyaml, with
# ruamel's YAML 1.2 rules and dates as text, and says "unsure" (None) for anything where the
# two parsers could differ; the caller then parses with the round-trip loader, so the values
# and the orphan decisions are those of the round-trip path.


def load_fast(yaml_text: str) -> dict[Any, Any] | None:
    """Load frontmatter YAML into plain Python, fast, or return ``None`` when unsure.

    The result equals ``plain(load_yaml(yaml_text))`` (the round-trip loader's values, dates
    as text) whenever it is not ``None``; ``None`` means: parse with the round-trip loader
    (which also reports malformed YAML with its line).

    Args:
        yaml_text: The frontmatter between the ``---`` lines.

    Returns:
        A dict (key order kept; ``{}`` for blank text), or ``None``: not a mapping, or outside
        the subset :func:`memcore.frontmatter.try_load_plain_yaml` reads exactly, or libyaml is
        unavailable.
    """
    if not LIBYAML:
        return None
    if not yaml_text.strip():
        # blank: {} unless it holds a character the two parsers read differently
        return None if any(c in yaml_text for c in "\t\x85\u2028\u2029") else {}
    return try_load_plain_yaml(yaml_text)
