"""A folder index memcore wrote itself, kept known: the next batch patches it instead of re-checking and rebuilding.

After a batch writes a folder ``_index.json`` in the writer's layout, the provider keeps a
:class:`Layout`: the file's version, where its entries are and where each ``by_*`` map's text
is. At the next write, when the file still has that version (another writer's change gives
another version: :class:`memcore.storage.LocalStorage` re-hashes a file whose inode, size or
modification time changed), the index's bytes are known to be exactly what the writer made of
the rows memcore holds, so:

- the unchanged entries' texts are taken from it without checking each entry's layout again
  (:func:`memcore_box._splice.entries_region`, ~0.3 s at 100,000 entries);
- when the write only appended entries (a batch of adds), :func:`appended_maps` gives the seven
  maps' texts as the old texts plus the new entries' lines, instead of building them from every
  row (:func:`memcore_box._maps.map_texts`, ~0.4 s at 100,000). Anything else (an update, a
  delete, a slug, title or companion key already in the map, more than
  :data:`memcore_box._maps._MAX_GROUPS` kinds, statuses or tags) builds them from the rows as before.

A large index's layout is also saved, by :func:`save`, in memcore's cache folder
(``box-layouts/`` in ``$MEMCORE_CACHE_DIR`` or the user's cache folder), under the index file's
path, with the file's version (the SHA-256 of its bytes): a later process that reads the index
and finds the same version (:func:`recall`) knows those bytes are the writer's output, since
the version names the content, whoever copied or wrote it since. Saving is best effort (a
cache folder that cannot be written only costs the check at the next process's first write);
a record that does not match (another version, another entry count, another writer layout) is
ignored.

The bytes written are the full encoder's (``tests/test_box_patch.py`` compares them).
``MEMCORE_BOX_PATCH=0`` turns this off (and ``MEMCORE_BOX_SPLICE=0`` too): every write then
checks the old entries and builds the maps from the rows, and no layout is saved or read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, compress
from operator import is_, itemgetter
from typing import Any

from memcore.switches import switch_on
from memcore_box import _splice
from memcore_box._json import _INLINE_MAX, RawBytes, _encode_str
from memcore_box._maps import _MAX_GROUPS, _strings
from memcore_box.index import INDEX_MAPS

__all__ = ["ENV", "SAVE_FROM_BYTES", "Layout", "appended_maps", "enabled", "parse_known", "recall", "save"]

#: Environment variable: ``0`` (or ``false``/``no``/``off``) turns the kept layout and the map patch off.
ENV = "MEMCORE_BOX_PATCH"

#: Layouts are saved for index files at least this large (smaller ones are checked quickly).
SAVE_FROM_BYTES = 1 << 20
#: Changes whenever the writer's or the maps' output changes: records of another writer are ignored.
WRITER = "box-index-writer/1"

_ID, _TITLE, _SLUG, _KIND, _STATUS, _TAGS, _COMPANION, _RAW = 0, 3, 4, 5, 6, 8, 10, 15
_FLAT = {"by_slug": _SLUG, "by_wikilink": _TITLE, "by_companion_for": _COMPANION}
_GROUPED = {"by_kind": _KIND, "by_tag": _TAGS, "by_status": _STATUS}
_CLOSE = b"\n  }"  # how a non-empty map's text ends


def enabled() -> bool:
    """Return whether the kept layout and map patch are on (``MEMCORE_BOX_PATCH`` and the splice switch)."""
    return _splice.enabled() and switch_on(ENV)


class Layout:
    """Where things are in a folder index file memcore wrote (every map built by :mod:`memcore_box._maps`).

    Args:
        version: The file's version as written.
        entries: ``(start, end)`` of the entries' texts (:func:`memcore_box._splice.entries_region`'s answer).
        maps: ``name -> (start, end)`` of each ``by_*`` map's text.
    """

    __slots__ = ("count", "entries", "maps", "version")

    def __init__(
        self, version: str, entries: tuple[int, int], maps: Mapping[str, tuple[int, int]], count: int | None = None
    ) -> None:
        self.version = version
        self.entries = entries
        self.maps = dict(maps)
        self.count = count


_ENTRIES_HEAD = b',\n  "entries": [\n'


def parse_known(data: bytes, layout: Layout) -> dict[str, Any] | None:
    """Parse a folder index whose layout is known (:func:`recall`) without its ``by_*`` maps.

    The maps are the rows' maps (the writer built them so), and parsing them would take about a
    third of the time and of the memory of parsing the whole file. Returns the head keys, the
    ``entries`` list and the keys after the maps, in file order; ``None`` when the bytes are not
    where the layout says (the caller parses the whole file).
    """
    start, end = layout.entries
    maps_end = max(stop for _, stop in layout.maps.values())
    if start >= end or not data.startswith(_ENTRIES_HEAD, start - len(_ENTRIES_HEAD)):
        return None
    if not data.startswith(b"\n  ],\n", end) or maps_end > len(data):
        return None
    try:
        head = json.loads(data[: start - len(_ENTRIES_HEAD)] + b"\n}")
        entries = json.loads(b"[" + data[start:end] + b"]")
        rest = data[maps_end:]
        tail = {} if rest == b"\n}\n" else json.loads(b"{" + rest[1:]) if rest.startswith(b",\n  ") else None
    except ValueError:
        return None
    if not isinstance(head, dict) or not isinstance(entries, list) or not isinstance(tail, dict):
        return None
    return {**head, "entries": entries, **tail}


def _record(index_file: str) -> str:
    """Return where the layout of ``index_file`` (an absolute path) is saved."""
    base = os.environ.get("MEMCORE_CACHE_DIR")
    if not base:
        import platformdirs

        base = platformdirs.user_cache_dir("memcore", appauthor=False, ensure_exists=False)
    key = hashlib.sha256(os.path.realpath(index_file).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(base, "box-layouts", key + ".json")


def save(index_file: str, layout: Layout, count: int, size: int) -> None:
    """Save ``layout`` of the index file just written (``count`` entries, ``size`` bytes); best effort.

    Nothing is saved for a file under :data:`SAVE_FROM_BYTES` (a stale record of it is removed).
    """
    with contextlib.suppress(OSError, ValueError):
        path = _record(index_file)
        if size < SAVE_FROM_BYTES:
            if os.path.exists(path):
                os.unlink(path)
            return
        record = {
            "writer": WRITER,
            "version": layout.version,
            "count": count,
            "size": size,
            "entries": list(layout.entries),
            "maps": {name: list(span) for name, span in layout.maps.items()},
        }
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{secrets.token_hex(6)}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(record, fh)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def recall(index_file: str, version: str, count: int | None, size: int) -> Layout | None:
    """Return the saved layout of ``index_file`` when it was saved for exactly this content, else ``None``.

    Args:
        index_file: The index file's absolute path.
        version: The version of the bytes just read (their SHA-256).
        count: How many entries they were parsed into (``None``: not parsed yet; the caller
            compares :attr:`Layout.count` afterwards).
        size: Their length.
    """
    if size < SAVE_FROM_BYTES:
        return None
    try:
        with open(_record(index_file), encoding="utf-8") as fh:
            record = json.load(fh)
        if (
            record["writer"] != WRITER
            or record["version"] != version
            or not isinstance(record["count"], int)
            or (count is not None and record["count"] != count)
            or record["size"] != size
            or set(record["maps"]) != set(INDEX_MAPS)
        ):
            return None
        spans = [record["entries"], *record["maps"].values()]
        if not all(isinstance(a, int) and isinstance(b, int) and 0 <= a <= b <= size for a, b in map(tuple, spans)):
            return None
        entries = (record["entries"][0], record["entries"][1])
        return Layout(version, entries, {name: (a, b) for name, (a, b) in record["maps"].items()}, record["count"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _flat_lines(keys: Sequence[Any], eids: Sequence[str]) -> str:
    held = map(_encode_str, compress(keys, keys))
    return ",\n    ".join(map(": ".join, zip(held, compress(eids, keys), strict=True)))


def _part(key: str, items: Sequence[str]) -> str:
    """One grouped map key's line(s), as :func:`memcore_box._maps._groups` writes them."""
    head = _encode_str(key) + ": "
    inline = "[" + ", ".join(items) + "]"
    if 4 + len(head) + len(inline) <= _INLINE_MAX:
        return "    " + head + inline
    return "    " + head + "[\n      " + ",\n      ".join(items) + "\n    ]"


def _grouped(
    view: memoryview, data: bytes, span: tuple[int, int], old_order: Sequence[str], added: dict[str, list[str]]
) -> tuple[bytes | memoryview, ...] | None:
    """Return the pieces of a grouped map whose keys ``added`` get more ids (new keys go last)."""
    start, end = span
    fresh = [key for key in added if key not in old_order]
    if not old_order:
        if not fresh:
            return (view[start:end],)
        return (("{\n" + ",\n".join(_part(key, added[key]) for key in fresh) + "\n  }").encode("utf-8"),)
    if data[end - len(_CLOSE) : end] != _CLOSE:
        return None
    pieces: list[bytes | memoryview] = []
    pos = start
    for key in old_order:
        more = added.get(key)
        if not more:
            continue
        head = b"\n    " + _encode_str(key).encode("utf-8") + b": "
        at = data.find(head, pos, end)
        if at < 0:
            return None
        at += len(head)
        if data.startswith(b"[\n", at):  # folded: the new ids go before its closing line
            close = data.find(b"\n    ]", at, end)
            if close < 0:
                return None
            pieces += (view[pos:close], (",\n      " + ",\n      ".join(more)).encode("utf-8"))
            pos = close
            continue
        stop = data.find(b"\n", at, end)  # one line: rewritten with its old and new ids
        text = bytes(data[at:stop]).removesuffix(b",")
        try:
            old = json.loads(text)
        except ValueError:
            return None
        if not isinstance(old, list) or not _strings(old):
            return None
        line = _part(key, [*map(_encode_str, old), *more])
        pieces += (view[pos : at - len(head) + 1], line.encode("utf-8"))
        pos = at + len(text)
    tail = "".join(",\n" + _part(key, added[key]) for key in fresh)
    pieces += (view[pos : end - len(_CLOSE)], (tail + "\n  }").encode("utf-8"))
    return tuple(pieces)


def appended_maps(
    layout: Layout, data: bytes, old: Sequence[Any], rows: Sequence[Any], pos: Mapping[str, int]
) -> list[tuple[str, RawBytes]] | None:
    """Return the seven maps' texts of ``rows`` when they are ``old`` plus appended rows, else ``None``.

    Args:
        layout: Where the maps are in ``data``.
        data: The folder index file whose rows are ``old`` (its version is ``layout.version``).
        old: The rows the file's entries are, in order.
        rows: The rows to write: ``old`` (the same objects) followed by new ones.
        pos: Id -> position of its first row in ``rows`` (:attr:`memcore_box.index._Folder.pos`).

    Returns:
        ``(name, text)`` in :data:`memcore_box.index.INDEX_MAPS` order, the texts in pieces (views
        of ``data`` and the new lines), byte for byte :func:`memcore_box._maps.map_texts` of
        ``rows``; ``None`` when the change is not an append this covers (see the module docstring).
    """
    k = len(old)
    if len(rows) < k or not all(map(is_, rows, old)) or set(layout.maps) != set(INDEX_MAPS):
        return None
    new = rows[k:]
    if list(map(itemgetter(_RAW), new)).count(None) != len(new):
        return None
    ids = list(map(itemgetter(_ID), new))
    if not _strings(ids) or any(pos.get(entry_id) != k + j for j, entry_id in enumerate(ids)):
        return None  # an id twice (the first row keeps it in by_id): built from the rows
    columns = {name: list(map(itemgetter(field), new)) for name, field in {**_FLAT, **_GROUPED}.items()}
    tags = columns["by_tag"]
    if set(map(type, tags)) - {tuple} or set(map(type, chain.from_iterable(tags))) - {str}:
        return None
    if not all(_strings(columns[name]) for name in (*_FLAT, "by_kind", "by_status")):
        return None
    view = memoryview(data)
    eids = list(map(_encode_str, ids))
    out: list[tuple[str, RawBytes]] = []
    start, end = layout.maps["by_id"]
    lines = ",\n".join(map("    {}: {}".format, eids, range(k, k + len(new))))
    if not new:
        out.append(("by_id", RawBytes(view[start:end])))
    elif k == 0:
        out.append(("by_id", RawBytes(("{\n" + lines + "\n  }").encode("utf-8"))))
    elif data[end - len(_CLOSE) : end] == _CLOSE:
        out.append(("by_id", RawBytes(view[start : end - len(_CLOSE)], (",\n" + lines + "\n  }").encode("utf-8"))))
    else:
        return None
    for name in INDEX_MAPS[1:]:
        start, end = layout.maps[name]
        values = columns[name]
        if name in _FLAT:
            keys = list(compress(values, values))
            if not keys:
                out.append((name, RawBytes(view[start:end])))
                continue
            held = set(compress(map(itemgetter(_FLAT[name]), old), map(itemgetter(_FLAT[name]), old)))
            if len(set(keys)) != len(keys) or not held.isdisjoint(keys):
                return None  # a shared key: the active-wins rule decides, from the rows
            text = _flat_lines(values, eids)
            if data[start:end] == b"{}":
                out.append((name, RawBytes(("{\n    " + text + "\n  }").encode("utf-8"))))
            elif data[end - len(_CLOSE) : end] == _CLOSE:
                out.append((name, RawBytes(view[start : end - len(_CLOSE)], (",\n    " + text + "\n  }").encode())))
            else:
                return None
            continue
        field = _GROUPED[name]
        members: list[Iterable[Any]]
        if name == "by_tag":
            old_order = list(dict.fromkeys(chain.from_iterable(map(itemgetter(field), old))))
            members = [dict.fromkeys(t) for t in values]
        else:
            column = list(map(itemgetter(field), old))
            old_order = list(dict.fromkeys(compress(column, column)))
            members = [(v,) if v else () for v in values]
        added: dict[str, list[str]] = {}
        for eid, keys_of_row in zip(eids, members, strict=True):
            for key in keys_of_row:
                added.setdefault(key, []).append(eid)
        if len(set(old_order) | set(added)) > _MAX_GROUPS:
            return None
        pieces = _grouped(view, data, (start, end), old_order, added)
        if pieces is None:
            return None
        out.append((name, RawBytes(*pieces)))
    return out
