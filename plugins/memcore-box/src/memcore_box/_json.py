"""JSON in the layout the Box-memory authors' files use.

Two-space indent, objects one key per line, lists of scalars on one line when that line stays
short (``"tags": ["auth", "mobile", "security"]``), longer lists one item per line, non-ASCII
kept as is, a final newline. ``json.loads`` of the output equals the input.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps_json", "loads_json"]

_INLINE_MAX = 100


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _dump(value: Any, indent: int, prefix_len: int, out: list[str]) -> None:
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{\n")
        items = list(value.items())
        for i, (key, item) in enumerate(items):
            head = f"{pad}  {_scalar(str(key))}: "
            out.append(head)
            _dump(item, indent + 1, len(head), out)
            out.append(",\n" if i < len(items) - 1 else "\n")
        out.append(f"{pad}}}")
        return
    if isinstance(value, list):
        if not value:
            out.append("[]")
            return
        if all(not isinstance(v, (dict, list)) for v in value):
            inline = "[" + ", ".join(_scalar(v) for v in value) + "]"
            if prefix_len + len(inline) <= _INLINE_MAX:
                out.append(inline)
                return
        out.append("[\n")
        for i, item in enumerate(value):
            out.append(f"{pad}  ")
            _dump(item, indent + 1, len(pad) + 2, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append(f"{pad}]")
        return
    out.append(_scalar(value))


def dumps_json(value: Any) -> bytes:
    """Serialise ``value`` (dicts keep their key order) as UTF-8 bytes ending in a newline."""
    out: list[str] = []
    _dump(value, 0, 0, out)
    out.append("\n")
    return "".join(out).encode("utf-8")


def loads_json(data: bytes) -> Any:
    """Parse UTF-8 JSON bytes (a BOM is tolerated).

    Raises:
        ValueError: Not UTF-8 or not JSON (``json.JSONDecodeError`` is a ``ValueError``).
    """
    return json.loads(data.decode("utf-8-sig"))
