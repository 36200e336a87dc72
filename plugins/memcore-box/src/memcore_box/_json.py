"""JSON in the layout the Box-memory authors' files use.

Two-space indent, objects one key per line, lists of scalars on one line when that line stays
short (``"tags": ["auth", "mobile", "security"]``), longer lists one item per line, non-ASCII
kept as is, a final newline. ``json.loads`` of the output equals the input.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["dumps_json", "loads_json"]

_INLINE_MAX = 100


_SCALAR = r'(?:"(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)'
_SCALAR_LIST = re.compile(
    r"\[\n(?P<indent>[ ]+)(?P<body>" + _SCALAR + r"(?:,\n(?P=indent)" + _SCALAR + r")*)\n[ ]*\]"
)


def dumps_json(value: Any) -> bytes:
    """Serialise ``value`` (dicts keep their key order) as UTF-8 bytes ending in a newline.

    ``json.dumps(indent=2)`` does the work; lists of scalars are then folded onto one line when
    the line stays within 100 characters (JSON strings hold no raw newline, so the folding
    regex cannot cut through a string).
    """
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)

    def fold(match: re.Match[str]) -> str:
        items = match.group("body").split(",\n" + match.group("indent"))
        inline = "[" + ", ".join(items) + "]"
        line_start = text.rfind("\n", 0, match.start()) + 1
        if match.start() - line_start + len(inline) <= _INLINE_MAX:
            return inline
        return match.group(0)

    return (_SCALAR_LIST.sub(fold, text) + "\n").encode("utf-8")


def loads_json(data: bytes) -> Any:
    """Parse UTF-8 JSON bytes (a BOM is tolerated).

    Raises:
        ValueError: Not UTF-8 or not JSON (``json.JSONDecodeError`` is a ``ValueError``).
    """
    return json.loads(data.decode("utf-8-sig"))
