"""JSON in the layout the Box-memory authors' files use.

Two-space indent, objects one key per line, lists of scalars on one line when that line stays
short (``"tags": ["auth", "mobile", "security"]``), longer lists one item per line, non-ASCII
kept as is, a final newline. ``json.loads`` of the output equals the input.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["IndexWriter", "dumps_json", "loads_json"]

_INLINE_MAX = 100


_encode_str: Callable[[str], str] = (
    getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring
)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _encode_str(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    return json.dumps(value, allow_nan=False)


def _emit(value: Any, level: int, column: int, out: list[str]) -> None:
    """Append ``value``'s text; ``column`` is where it starts on its line (for folding)."""
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        pad = "  " * (level + 1)
        if not any(isinstance(v, (dict, list, tuple)) for v in value.values()):
            # Flat maps (by_id, by_slug, by_wikilink…): one line per key, no recursion.
            lines = [pad + _encode_str(str(k)) + ": " + _scalar(v) for k, v in value.items()]
            out.append("{\n" + ",\n".join(lines) + "\n" + "  " * level + "}")
            return
        out.append("{")
        first = True
        for key, item in value.items():
            head = _encode_str(str(key)) + ": "
            out.append(("\n" if first else ",\n") + pad + head)
            first = False
            _emit(item, level + 1, len(pad) + len(head), out)
        out.append("\n" + "  " * level + "}")
        return
    if isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        pad = "  " * (level + 1)
        if not any(isinstance(v, (dict, list, tuple)) for v in value):
            items = [_scalar(v) for v in value]
            inline = "[" + ", ".join(items) + "]"
            if column + len(inline) <= _INLINE_MAX:
                out.append(inline)
            else:
                out.append("[\n" + pad + (",\n" + pad).join(items) + "\n" + "  " * level + "]")
            return
        out.append("[")
        first = True
        for item in value:
            out.append(("\n" if first else ",\n") + pad)
            first = False
            _emit(item, level + 1, len(pad), out)
        out.append("\n" + "  " * level + "]")
        return
    out.append(_scalar(value))


def _text(value: Any, column: int = 0) -> str:
    out: list[str] = []
    _emit(value, 0, column, out)
    return "".join(out)


def dumps_json(value: Any) -> bytes:
    """Serialise ``value`` (dicts keep their key order) as UTF-8 bytes ending in a newline.

    Two-space indent like ``json.dumps(indent=2)``; a list of scalars is written on one line
    when that line stays within 100 characters. Strings are escaped by :mod:`json`'s own
    encoder (``ensure_ascii=False`` rules: control characters escaped, the rest kept).
    """
    return (_text(value) + "\n").encode("utf-8")


_MARK = "\x00memcore-entries\x00"


class IndexWriter:
    """Serialise ``_index.json`` files like :func:`dumps_json`, reusing each entry's text.

    An index rewrite after one change re-encodes one entry, not ten thousand: the text of
    every entry dict is cached by identity (the dict is kept alive with it) until the dict is
    no longer in the index. The bytes are the same as ``dumps_json(index)``.
    """

    def __init__(self) -> None:
        self._cache: dict[int, tuple[dict[str, Any], str]] = {}

    def _entry(self, entry: dict[str, Any], seen: dict[int, tuple[dict[str, Any], str]]) -> str:
        key = id(entry)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not entry:
            out: list[str] = ["    "]
            _emit(entry, 2, 4, out)  # an entry sits at level 2: index -> "entries" -> entry
            hit = (entry, "".join(out))
        seen[key] = hit
        return hit[1]

    def dumps(self, index: dict[str, Any], sources: Sequence[tuple[dict[str, Any], str | None]]) -> bytes:
        """Return the bytes of ``index`` whose ``entries`` are ``sources`` (plus ``folder_path``).

        Args:
            index: The index; its ``entries`` value is not read (``sources`` gives it).
            sources: ``(entry, folder_path)`` in order; a ``folder_path`` (rollup) is written as
                the entry's last key.
        """
        if not sources:
            return dumps_json(index)
        seen: dict[int, tuple[dict[str, Any], str]] = {}
        texts = []
        for entry, folder_path in sources:
            text = self._entry(entry, seen)
            if folder_path is not None:
                text = text[:-6] + ',\n      "folder_path": ' + json.dumps(folder_path, ensure_ascii=False) + "\n    }"
            texts.append(text)
        self._cache = seen
        outline = _text({**index, "entries": [_MARK]})
        marker = "[" + json.dumps(_MARK) + "]"
        block = "[\n" + ",\n".join(texts) + "\n  ]"
        return (outline.replace(marker, block, 1) + "\n").encode("utf-8")


def loads_json(data: bytes) -> Any:
    """Parse UTF-8 JSON bytes (a BOM is tolerated).

    Raises:
        ValueError: Not UTF-8 or not JSON (``json.JSONDecodeError`` is a ``ValueError``).
    """
    return json.loads(data.decode("utf-8-sig"))
