"""JSON in the layout the Box-memory authors' files use.

Two-space indent, objects one key per line, lists of scalars on one line when that line stays
short (``"tags": ["auth", "mobile", "security"]``), longer lists one item per line, non-ASCII
kept as is, a final newline. ``json.loads`` of the output equals the input.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["IndexWriter", "RawBytes", "dumps_json", "loads_json"]

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
            lines = [
                pad
                + _encode_str(str(k))
                + ": "
                + (int.__repr__(v) if type(v) is int else _encode_str(v) if type(v) is str else _scalar(v))
                for k, v in value.items()
            ]
            out.append("{\n" + ",\n".join(lines) + "\n" + "  " * level + "}")
            return
        out.append("{")
        first = True
        for key, item in value.items():
            head = _encode_str(str(key)) + ": "
            if isinstance(item, (dict, list, tuple)):
                out.append(("\n" if first else ",\n") + pad + head)
                _emit(item, level + 1, len(pad) + len(head), out)
            else:  # a scalar: its text on the key's line, without a call per value
                out.append(("\n" if first else ",\n") + pad + head + _scalar(item))
            first = False
        out.append("\n" + "  " * level + "}")
        return
    if isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        pad = "  " * (level + 1)
        if not any(isinstance(v, (dict, list, tuple)) for v in value):
            items = [_encode_str(v) if type(v) is str else _scalar(v) for v in value]
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


class _PreEncoded(str):
    """A top-level value given as its text (:class:`memcore_box._maps.RawText`): written as is."""

    __slots__ = ()


class RawBytes:
    """A top-level value given as its UTF-8 text, already encoded: written as is (by both index files).

    Args:
        *parts: The value's text as :func:`dumps_json` writes it at the index's top level, UTF-8,
            in pieces written one after the other (views of another file's bytes may be among them).
    """

    __slots__ = ("parts",)

    def __init__(self, *parts: bytes | memoryview) -> None:
        self.parts = parts

    def __bytes__(self) -> bytes:
        return b"".join(self.parts)


class _Out:
    """The pieces of an index file, joined once at the end (no growing buffer, no copy of it)."""

    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts: list[bytes | memoryview] = []
        self.size = 0

    def __iadd__(self, piece: bytes | memoryview) -> _Out:
        self.parts.append(piece)
        self.size += len(piece)
        return self

    def __len__(self) -> int:
        return self.size


class _Row(Protocol):
    def as_dict(self) -> dict[str, Any]: ...


class _Texts(Protocol):
    data: bytes | bytearray

    def plan(self, rows: Sequence[Any]) -> list[Any]: ...


#: How every entry's text ends: its one line indented by four spaces (deeper values are
#: indented further, and a JSON string holds no raw line break).
_ENTRY_END = b"\n    }"
_BETWEEN = b"\n    },\n    {\n"  # between two entries
_PIECE = 4 << 20  # bytes of entries given the rollup's folder path at once


#: Entry texts are cached only while an index holds at most this many entries: the cache makes a
#: one-entry rewrite of a 20,000-entry index cheap, and would hold ~600 bytes per entry beyond.
CACHE_MAX_ENTRIES = 20_000


class IndexWriter:
    """Serialise ``_index.json`` files like :func:`dumps_json`, into one ``bytes``.

    The result is built as a list of pieces (old entries' bytes given as views of the file they
    come from) joined once, so the only large object made is the output itself: no joined
    string, no growing buffer, no copy of it. Entries are given as dicts or as rows with
    an ``as_dict()`` method (:class:`memcore_box.index.IndexRow`). While an index holds at most
    :data:`CACHE_MAX_ENTRIES` entries, the text of every entry is cached by identity (the
    entry is kept alive with it) until the entry is no longer written, so that an index rewrite
    after one change re-encodes one entry, not thousands. The bytes equal ``dumps_json(index)``.
    """

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, str]] = {}

    def _entry(self, entry: Any, seen: dict[int, tuple[Any, str]] | None, borrow: Sequence[IndexWriter] = ()) -> str:
        key = id(entry)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not entry:
            for other in borrow:  # the same entry's text, encoded by another writer
                hit = other._cache.get(key)
                if hit is not None and hit[0] is entry:
                    break
            else:
                hit = None
        if hit is None:
            out: list[str] = ["    "]
            _emit(entry if isinstance(entry, dict) else entry.as_dict(), 2, 4, out)  # level 2: index -> entries
            hit = (entry, "".join(out))
        if seen is not None:
            seen[key] = hit
        return hit[1]

    def dumps(
        self,
        index: Mapping[str, Any] | Iterable[tuple[str, Any]],
        sources: Sequence[tuple[dict[str, Any] | _Row, str | None]] = (),
        *,
        groups: Sequence[tuple[Sequence[dict[str, Any] | _Row], str | None]] = (),
        borrow: Sequence[IndexWriter] = (),
        splice: Sequence[_Texts | None] = (),
        region: list[int] | None = None,
        values: dict[str, tuple[int, int]] | None = None,
    ) -> bytes:
        """Return the bytes of ``index`` whose ``entries`` are ``sources`` (plus ``folder_path``).

        Args:
            index: The index's keys and values in order (a mapping, or ``(key, value)`` pairs
                that may be produced lazily, e.g. one map at a time); the value given for
                ``entries`` is not read (``sources`` gives it); a value that is a
                :class:`memcore_box._maps.RawText` is the value's text, and a :class:`RawBytes`
                its UTF-8 bytes, written as is.
            sources: ``(entry, folder_path)`` in order; a ``folder_path`` (rollup) is written as
                the entry's last key.
            groups: Instead of ``sources``: ``(entries, folder_path)`` per folder, in order
                (no tuple per entry).
            borrow: Other writers whose cached entry texts may be used (an entry's text is the
                same in every index: the rollup takes what the folder indexes just wrote).
            splice: One per group: where the folder-index texts of unchanged entries can be
                taken as they are (:class:`memcore_box._splice.Spans`), or ``None``.
            region: A list that receives the byte offsets ``[start, end]`` of the entries'
                texts in the output (from the first entry's indent to the last one's closing
                brace; ``[n, n]`` for none).
            values: A dict that receives, for every top-level key but ``entries``, the byte
                offsets ``(start, end)`` of its value's text in the output.

        Returns:
            UTF-8 JSON ending in a newline, in the layout of :func:`dumps_json`.
        """
        items = index.items() if isinstance(index, Mapping) else index
        count = len(sources) + sum(len(entries) for entries, _ in groups)
        parts: Sequence[tuple[Sequence[dict[str, Any] | _Row], str | None]] = (
            [([entry], folder_path) for entry, folder_path in sources] if sources else groups
        )
        seen: dict[int, tuple[Any, str]] | None = {} if count <= CACHE_MAX_ENTRIES else None
        buf = _Out()
        buf += b"{"
        first = True
        for key, value in items:
            head = _encode_str(str(key)) + ": "
            buf += (("\n" if first else ",\n") + "  " + head).encode("utf-8")
            first = False
            if key != "entries":
                start = len(buf)
                if isinstance(value, RawBytes):  # a map's text built by memcore_box._maps, encoded
                    for piece in value.parts:
                        buf += piece
                elif isinstance(value, _PreEncoded):  # a map's text built by memcore_box._maps
                    buf += value.encode("utf-8")
                else:
                    out: list[str] = []
                    _emit(value, 1, 2 + len(head), out)
                    buf += "".join(out).encode("utf-8")
                if values is not None:
                    values[str(key)] = (start, len(buf))
                continue
            if not count:
                buf += b"[]"
                if region is not None:
                    region[:] = [len(buf), len(buf)]
                continue
            buf += b"[\n"
            if region is not None:
                region[:] = [len(buf)]
            self._entries(buf, parts, splice if not sources else (), seen, borrow)
            if region is not None:
                region.append(len(buf))
            buf += b"\n  ]"
        if first:
            return b"{}\n"
        buf += b"\n}\n"
        self._cache = seen if seen is not None else {}
        return b"".join(buf.parts)

    def _entries(
        self,
        buf: _Out,
        groups: Sequence[tuple[Sequence[dict[str, Any] | _Row], str | None]],
        splice: Sequence[_Texts | None],
        seen: dict[int, tuple[Any, str]] | None,
        borrow: Sequence[IndexWriter],
    ) -> None:
        """Append the entries' texts, separated by ``,\\n``: runs of unchanged ones copied whole."""
        first = True
        for g, (entries, folder_path) in enumerate(groups):
            texts = splice[g] if g < len(splice) else None
            tail = (
                None
                if folder_path is None
                else (',\n      "folder_path": ' + json.dumps(folder_path, ensure_ascii=False) + "\n    }").encode()
            )
            pieces: Iterable[Any] = entries if texts is None else texts.plan(entries)
            data = memoryview(texts.data) if texts is not None else None
            for piece in pieces:
                if not first:
                    buf += b",\n"
                first = False
                if type(piece) is tuple:  # (start, end): consecutive entries' text in texts.data
                    assert data is not None and texts is not None
                    start, end = piece
                    if tail is None:
                        buf += data[start:end]
                        continue
                    # Each entry's closing "\n    }" (its only line indented by four spaces) gets
                    # the folder path, a few MiB at a time (cut after an entry's closing brace).
                    while start < end:
                        cut = texts.data.find(_BETWEEN, start + _PIECE, end) if end - start > _PIECE else -1
                        cut = end if cut < 0 else cut + len(_ENTRY_END)
                        buf += bytes(data[start:cut]).replace(_ENTRY_END, tail)
                        start = cut
                    continue
                text = self._entry(piece, seen, borrow).encode("utf-8")
                buf += text if tail is None else text[: -len(_ENTRY_END)] + tail


def loads_json(data: bytes) -> Any:
    """Parse UTF-8 JSON bytes (a BOM is tolerated).

    Raises:
        ValueError: Not UTF-8 or not JSON (``json.JSONDecodeError`` is a ``ValueError``).
    """
    return json.loads(data.decode("utf-8-sig"))
