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
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.resolver import VersionedResolver

from memcore.frontmatter import load_yaml, quote_ambiguous

__all__ = ["dump_mapping", "patch_yaml", "plain"]


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


def dump_mapping(mapping: Mapping[str, Any]) -> str:
    """Dump a mapping as block YAML in the authors' layout, ending with a newline.

    Plain strings a YAML 1.1 reader would misread (``yes``, ``0.5``, ``2026-01-01``…) are
    double-quoted first (:func:`memcore.frontmatter.quote_ambiguous`).
    """
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
