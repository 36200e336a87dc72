"""A frontmatter's layout as hints: what a reader records where its format's writer would lay a file out otherwise.

Some formats' files are written by more than one hand (basic-memory's ``write_note`` and its
indexer; Claude Code topics, which the model writes with its Write tool), so the same values come
in more than one layout. A reader records the layout of a file's frontmatter where the writer
would write it otherwise (:func:`read_layout`), in the entry's ``extra``; the writer follows the
hints when it writes the entry as a new file (:func:`apply_layout`, :func:`open_blocks`), so a
copy is the same file, byte for byte. Hints say how, never what: a value that changed is
written anew in the old layout, and a hint that no longer fits is ignored.

Hints, each present only where it differs from the writer's layout:

- ``keys``: the top-level keys in their order (keys the writer writes that ``keys`` does not
  name go after the keys the writer puts before them, :func:`order_like`);
- ``nested``: ``{key: [the keys of its mapping, in order]}``;
- ``quoted``: keys whose string is written in double quotes (``description: "…"``);
- ``flow``: keys whose list is written ``[a, b]``;
- ``spaced``: keys whose block opens with blanks after the colon (``metadata: ``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from memcore.errors import UnsafePathError
from memcore.frontmatter import flow_list
from memcore.storage import check_component

__all__ = ["apply_layout", "layout_file", "open_blocks", "order_like", "read_layout"]

_KEY = r"^([A-Za-z_][\w.-]*)"
_QUOTED = re.compile(_KEY + r':[ \t]+"', re.MULTILINE)
_FLOW = re.compile(_KEY + r":[ \t]+\[", re.MULTILINE)
_SPACED = re.compile(_KEY + r":[ \t]+$", re.MULTILINE)
_STYLES = (
    ("quoted", _QUOTED, str, '"'),
    ("flow", _FLOW, list, "["),
    ("spaced", _SPACED, dict, (" \n", "\t\n", " \r", "\t\r")),  # a blank ending a line
)


def order_like(mapping: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """Return ``mapping`` with the keys ``keys`` names in that order, the others placed as ``mapping`` places them.

    A key ``keys`` does not name goes right after the last (in the new order) of the keys that
    come before it in ``mapping``, or first when none does: ``order_like({"title": 1, "type": 2,
    "permalink": 3, "tags": 4}, ["tags", "title", "type"])`` is ``tags, title, type, permalink``.
    Keys ``keys`` names that ``mapping`` has not are skipped. Values are not copied.
    """
    order = list(dict.fromkeys(k for k in keys if k in mapping))
    placed = set(order)
    written = list(mapping)
    for i, key in enumerate(written):
        if key not in placed:
            at = max((order.index(k) + 1 for k in written[:i] if k in placed), default=0)
            order.insert(at, key)
            placed.add(key)
    return {k: mapping[k] for k in order}


def read_layout(
    yaml_text: str | None,
    meta: Mapping[Any, Any],
    written: Sequence[str],
    nested: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Return the hints that say how a frontmatter is laid out where its writer would lay it out otherwise.

    Args:
        yaml_text: The frontmatter's YAML text (``None``: only the key orders are compared).
        meta: That YAML's values, keys in their order.
        written: The top-level keys the writer would write for these values, in its order.
        nested: ``{key: the keys of its mapping the writer would write, in its order}``.
    """
    if not all(isinstance(k, str) for k in meta):
        return {}
    layout: dict[str, Any] = {}
    if list(meta) != list(written):
        layout["keys"] = list(meta)
    inner = {
        key: list(meta[key])
        for key, order in (nested or {}).items()
        if isinstance(meta.get(key), dict)
        and list(meta[key]) != list(order)
        and all(isinstance(k, str) for k in meta[key])
    }
    if inner:
        layout["nested"] = inner
    text = yaml_text or ""
    for hint, pattern, kind, marks in _STYLES:
        if any(mark in text for mark in marks):  # the pattern cannot match without one: no scan
            found = [k for k in pattern.findall(text) if isinstance(meta.get(k), kind) and meta[k]]
            if found:
                layout[hint] = found
    return layout


def _names(value: Any) -> list[str]:
    return value if isinstance(value, list) and all(isinstance(k, str) for k in value) else []


def apply_layout(meta: dict[str, Any], layout: Any, droppable: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """Return ``meta`` (a writer's frontmatter values) ordered, quoted and flowed as ``layout`` says.

    ``droppable`` names the keys the format reads the same without (``True``): those are left
    out where ``layout`` has ``keys`` and they are not among them. Every value reads back the same.
    """
    if not isinstance(layout, dict):
        return meta
    keys = layout.get("keys")
    if isinstance(keys, list):
        meta = {k: v for k, v in meta.items() if k in keys or not (droppable or {}).get(k)}
    out = order_like(meta, _names(keys))
    inner = layout.get("nested")
    for key, order in inner.items() if isinstance(inner, dict) else ():
        if isinstance(out.get(key), dict):
            out[key] = order_like(out[key], _names(order))
    for key in _names(layout.get("quoted")):
        if isinstance(out.get(key), str):
            out[key] = DoubleQuotedScalarString(out[key])
    for key in _names(layout.get("flow")):
        if isinstance(out.get(key), list) and out[key]:
            out[key] = flow_list(out[key])
    return out


def open_blocks(yaml_text: str, layout: Any) -> str:
    """Return dumped YAML with the blocks ``layout["spaced"]`` names opened ``key: `` (a blank after the colon)."""
    spaced = {f"{key}:" for key in _names(layout.get("spaced"))} if isinstance(layout, dict) else set()
    if not spaced:
        return yaml_text
    return "\n".join(line + " " if line in spaced else line for line in yaml_text.split("\n"))


def layout_file(layout: Any, suffix: str) -> str | None:
    """Return the layout's ``file`` (a file's own name) when it is one safe file name ending in ``suffix``.

    Safe: :func:`memcore.storage.check_component` accepts it (no folder, no ``..``, no device or
    control characters) and it is no dotfile; ``suffix`` is compared in any case. Else ``None``.
    """
    name = layout.get("file") if isinstance(layout, dict) else None
    if not isinstance(name, str) or name.startswith(".") or not name.lower().endswith(suffix.lower()):
        return None
    try:
        return check_component(name)
    except UnsafePathError:
        return None
