"""Reuse an ``_index.json``'s own bytes for the entries a write did not change (the splice fast path).

A batch of 1,000 adds into a folder of 100,000 memories changes 1,000 of the 101,000 entries
of the folder ``_index.json`` and of the rollup, yet :class:`memcore_box._json.IndexWriter`
encodes every entry of both (~90 MB each). When the index on disk is exactly what the writer
produces (checked here, entry by entry, against the writer's layout) the text of an unchanged
entry is taken from the file's bytes instead; the output bytes are identical to the full
encoding (``tests/test_box_splice.py`` compares both on generated workspaces). The whole file is
still written at once, atomically, by the storage.

The rollup's unknown keys are found by :func:`top_level_extras`, which decodes only the values
of keys memcore does not know, instead of parsing the whole ~90 MB rollup.

``MEMCORE_BOX_SPLICE=0`` turns both off (the full parse and encoding, for benchmarks and to
rule the fast path out).
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Sequence
from operator import is_
from typing import Any

from memcore.switches import switch_on

__all__ = ["ENV", "Spans", "enabled", "entries_region", "entry_spans", "top_level_extras"]

#: Environment variable: ``0`` (or ``false``/``no``/``off``) turns the splice fast path off.
ENV = "MEMCORE_BOX_SPLICE"

# One JSON string as ``json``'s C encoder writes it with ensure_ascii=False: ``"`` and ``\``
# escaped, \b \f \n \r \t short, the other control characters as \u00XX (lower-case hex).
_PLAIN = rb'[^"\\\x00-\x1f]*'
_S = rb'"' + _PLAIN + rb'(?:\\(?:["\\bfnrt]|u00(?:0[0-7]|0b|0e|0f|1[0-9a-f]))' + _PLAIN + rb')*"'
# A scalar as the writer writes it (floats are left out: their text is not checked here).
_V = rb"(?:" + _S + rb"|null|true|false|0|-?[1-9][0-9]*)"
_INLINE = rb"\[" + _V + rb"(?:, " + _V + rb")*\]"
_FOLDED = rb"\[\n        " + _V + rb"(?:,\n        " + _V + rb")*\n      \]"
_LIST = rb"(\[\]|" + _INLINE + rb"|" + _FOLDED + rb")"
_FIELD = rb",\n      "
_ENTRY = re.compile(
    rb'    \{\n      "id": '
    + _S
    + _FIELD
    + rb'"file_id": '
    + _V
    + _FIELD
    + rb'"filename": '
    + _S
    + b"".join(_FIELD + b'"' + name + b'": ' + _V for name in (b"title", b"slug", b"kind", b"status", b"team"))
    + _FIELD
    + rb'"tags": '
    + _LIST
    + _FIELD
    + rb'"related": '
    + _LIST
    + b"".join(
        _FIELD + b'"' + name + b'": ' + _V
        for name in (b"companion_for", b"sha256", b"size_bytes", b"created_at", b"updated_at")
    )
    + rb'(,\n      "folder_path": '
    + _S
    + rb")?\n    \}"
)
_INLINE_MAX = 100  # memcore_box._json._INLINE_MAX
_TAGS_COLUMN = len('      "tags": ')
_RELATED_COLUMN = len('      "related": ')


def _short_list(column: int) -> bytes:
    """A list as the writer writes it on one line, whose line (bytes) stays within 100 characters."""
    return rb"(?:\[\]|(?=[^\n]{1,%d},\n)" % (_INLINE_MAX - column) + _INLINE + rb"|" + _FOLDED + rb")"


# A folder index's entries, all of them at once: the entry above without groups, its lists
# inline only when their line's bytes (at least its characters) fit, one atomic match each.
_ENTRY_ONLY = (
    rb'(?>    \{\n      "id": '
    + _S
    + _FIELD
    + rb'"file_id": '
    + _V
    + _FIELD
    + rb'"filename": '
    + _S
    + b"".join(_FIELD + b'"' + name + b'": ' + _V for name in (b"title", b"slug", b"kind", b"status", b"team"))
    + _FIELD
    + rb'"tags": '
    + _short_list(_TAGS_COLUMN)
    + _FIELD
    + rb'"related": '
    + _short_list(_RELATED_COLUMN)
    + b"".join(
        _FIELD + b'"' + name + b'": ' + _V
        for name in (b"companion_for", b"sha256", b"size_bytes", b"created_at", b"updated_at")
    )
    + rb"\n    \})"
)
_ENTRIES = re.compile(_ENTRY_ONLY + rb"(?:,\n" + _ENTRY_ONLY + rb")*+")
_FOLDED_START = re.compile(rb'\n      "(tags|related)": \[\n')
#: Between two entries: the first one's closing line and the next one's opening line.
_BETWEEN = b"\n    },\n    {\n"
_HEAD_KEYS = ("version", "folder_id", "folder_path", "updated_at", "tier", "entry_count")
_TOP_KEY = re.compile(rb'\n  ("(?:[^"\\]|\\.)*"): ')


def enabled() -> bool:
    """Return whether the splice fast path is on (``MEMCORE_BOX_SPLICE`` unset or not ``0``)."""
    return switch_on(ENV)


def _chars(text: bytes) -> int:
    return len(text) if text.isascii() else len(text.decode("utf-8"))


def _list_ok(text: bytes, column: int) -> bool:
    """Return whether a matched list is folded exactly when its one-line form would pass 100 characters."""
    if len(text) <= 2:  # []
        return True
    if text[1:2] != b"\n":
        return column + _chars(text) <= _INLINE_MAX
    inline = b"[" + text[10:-8].replace(b",\n        ", b", ") + b"]"
    return column + _chars(inline) > _INLINE_MAX


def _head(data: bytes, end: int, keys: Sequence[str]) -> bool:
    """Return whether ``data[:end]`` is the writer's ``{`` and top-level ``keys`` in order."""
    head = data[:end]
    if not head.startswith(b'{\n  "version": ') or not head.endswith(b","):
        return False
    try:
        parsed = json.loads(head[:-1] + b"\n}")
    except ValueError:
        return False
    return isinstance(parsed, dict) and tuple(parsed) == tuple(keys)


def entry_spans(data: bytes, count: int, *, rollup: bool = False) -> tuple[array[int], array[int]] | None:
    """Return the byte spans of an index's ``count`` entries when the file is in the writer's layout.

    Args:
        data: The whole ``_index.json`` (UTF-8, no BOM).
        count: The number of entries it was parsed into.
        rollup: Whether it is the workspace rollup (``child_indexes``; entries end with
            ``folder_path``).

    Returns:
        ``(starts, ends)``: entry ``i``'s text (from its indent to its closing brace) is
        ``data[starts[i]:ends[i]]``, exactly as :class:`memcore_box._json.IndexWriter` writes
        that entry; ``None`` when some entry, the head or the list around them is not in that
        layout (the caller then encodes every entry).
    """
    marker = b'\n  "entries": '
    at = data.find(marker)
    keys = (*_HEAD_KEYS, "child_indexes") if rollup else _HEAD_KEYS
    if at < 0 or not _head(data, at, keys):
        return None
    pos = at + len(marker)
    starts: array[int] = array("q")
    ends: array[int] = array("q")
    if data.startswith(b"[]", pos):
        return (starts, ends) if count == 0 else None
    if not data.startswith(b"[\n", pos):
        return None
    pos += 2
    match = _ENTRY.match
    for i in range(count):
        if i:
            if not data.startswith(b",\n", pos):
                return None
            pos += 2
        m = match(data, pos)
        if m is None or (m.group(3) is not None) != rollup:
            return None
        if not (_list_ok(m.group(1), _TAGS_COLUMN) and _list_ok(m.group(2), _RELATED_COLUMN)):
            return None
        starts.append(pos)
        pos = m.end()
        ends.append(pos)
    if not data.startswith(b"\n  ]", pos):
        return None
    pos += 4
    return (starts, ends) if data.startswith(b',\n  "', pos) or data[pos:] == b"\n}\n" else None


def entries_region(data: bytes, count: int) -> tuple[int, int] | None:
    """Return where a folder index's ``count`` entries are, when all of them are in the writer's layout.

    :func:`entry_spans` with one regular-expression match for all the entries instead of one
    per entry (and no offsets of each entry). Stricter: a list written on one line must fit in
    100 *bytes* there (the writer counts characters), so a file with a long one-line list of
    non-ASCII tags gives ``None`` here and is checked by :func:`entry_spans`.

    Args:
        data: The whole ``_index.json`` (a folder index, not the rollup).
        count: The number of entries it was parsed into.

    Returns:
        ``(start, end)``: the entries' texts are ``data[start:end]``, from the first entry's
        indent to the last one's closing brace, separated by ``,\\n``; ``None`` when the head,
        an entry or the list around them is not in that layout.
    """
    marker = b'\n  "entries": '
    at = data.find(marker)
    if at < 0 or not _head(data, at, _HEAD_KEYS):
        return None
    pos = at + len(marker)
    if data.startswith(b"[]", pos):
        end = pos + 2
        region = (pos, pos)
    elif data.startswith(b"[\n", pos) and count:
        pos += 2
        stop = data.find(b"\n  ]", pos)  # no line inside an entry is indented by two spaces only
        if stop < 0 or _ENTRIES.fullmatch(data, pos, stop) is None:
            return None
        if data.count(_BETWEEN, pos, stop) + 1 != count:
            return None
        folded = data.find(b"[\n        ", pos, stop)  # a folded list: not too short for one line?
        while folded >= 0:
            field = data.rfind(b"\n", pos, folded) + 1
            column = _TAGS_COLUMN if data.startswith(b'      "tags": ', field) else _RELATED_COLUMN
            close = data.find(b"\n      ]", folded, stop) + 8
            if not _list_ok(data[folded:close], column):
                return None
            folded = data.find(b"[\n        ", close, stop)
        end = stop + 4
        region = (pos, stop)
    else:
        return None
    if count == 0 and region[0] != region[1]:
        return None
    return region if data.startswith(b',\n  "', end) or data[end:] == b"\n}\n" else None


class Spans:
    """The entry texts of one folder index file, found by the row objects they were parsed into.

    Args:
        data: The file's bytes.
        region: Where the entries' texts are (:func:`entries_region`): consecutive, separated
            by ``,\\n``, each in the writer's layout.
        rows: The rows the file's entries became, in file order (matched by identity: a row
            replaced since, or built from the memory files, is not found).
        spans: Each entry's ``(start, end)`` when known (:func:`entry_spans`); otherwise found
            from ``region`` when first needed.
    """

    __slots__ = ("_by_id", "data", "ends", "region", "rows", "starts")

    def __init__(
        self,
        data: bytes | bytearray,
        region: tuple[int, int],
        rows: Sequence[Any],
        spans: tuple[array[int], array[int]] | None = None,
    ) -> None:
        self.data = data
        self.region = region
        self.rows = rows
        self.starts: array[int] | None = spans[0] if spans is not None else None
        self.ends: array[int] | None = spans[1] if spans is not None else None
        self._by_id: dict[int, int] | None = None

    def _offsets(self) -> tuple[array[int], array[int]]:
        """Return each entry's ``(start, end)``, found from the region once."""
        if self.starts is None or self.ends is None:
            starts: array[int] = array("q")
            ends: array[int] = array("q")
            if self.rows:
                pos, stop = self.region
                find = self.data.find
                starts.append(pos)
                while (at := find(_BETWEEN, pos, stop)) >= 0:
                    ends.append(at + 6)  # after the closing "\n    }"
                    pos = at + 8  # after ",\n": the next entry's indent
                    starts.append(pos)
                ends.append(stop)
            self.starts, self.ends = starts, ends
        return self.starts, self.ends

    def plan(self, rows: Sequence[Any]) -> list[Any]:
        """Return how to write ``rows``: ``(start, end)`` byte ranges of ``data`` and rows to encode.

        A range covers consecutive rows that are consecutive, unchanged entries of this file
        (their texts and the ``,\\n`` between them); every other row is given as itself.
        """
        mine = self.rows
        known = len(mine)
        if len(rows) >= known and all(map(is_, rows, mine)):  # the old entries first, unchanged (adds)
            plan: list[Any] = [self.region] if known else []
            plan.extend(rows[known:])
            return plan
        starts, ends = self._offsets()
        if len(starts) != known:
            return list(rows)
        if self._by_id is None:
            self._by_id = {id(r): i for i, r in enumerate(mine)}
        old = list(map(self._by_id.get, map(id, rows)))  # a live row's id is no other object's
        plan = []
        n = len(rows)
        i = 0
        while i < n:
            p = old[i]
            if p is None:
                plan.append(rows[i])
                i += 1
                continue
            j = i + 1
            q = p + 1
            while j < n and old[j] == q:
                j += 1
                q += 1
            plan.append((starts[p], ends[q - 1]))
            i = j
        return plan


def _decode_at(text: str, pos: int) -> tuple[Any, int] | None:
    try:
        return json.JSONDecoder().raw_decode(text, pos)
    except ValueError:
        return None


def top_level_extras(data: bytes, known: Iterable[str]) -> dict[str, Any] | None:
    """Return the top-level keys of an index not in ``known``, with their values, without parsing the rest.

    Top-level keys are the lines indented by exactly two spaces (JSON strings hold no raw line
    break, and the writer indents deeper levels further); the head must parse as the writer's
    and each unknown key's value must decode and end where the next key or the closing brace
    begins.

    Returns:
        The unknown keys in file order; ``None`` when the file is not in the writer's layout
        (the caller then parses it whole).
    """
    skip = frozenset(known)
    ends = [m for m in _TOP_KEY.finditer(data)]
    if not ends or not data.endswith(b"\n}\n"):
        return None
    names: list[str] = []
    extras: dict[str, Any] = {}
    head_end = -1
    for m in ends:
        try:
            name = json.loads(m.group(1))
        except ValueError:
            return None
        names.append(name)
        if name == "entries" and head_end < 0:
            head_end = m.start()
    if head_end < 0 or len(set(names)) != len(names):
        return None
    if not _head(data, head_end, [n for n in names[: names.index("entries")]]):
        return None
    for i, m in enumerate(ends):
        name = names[i]
        if name in skip:
            continue
        start = m.end()
        stop = ends[i + 1].start() if i + 1 < len(ends) else len(data) - 3
        chunk = data[start:stop].decode("utf-8")
        decoded = _decode_at(chunk, 0)
        if decoded is None:
            return None
        value, end = decoded
        rest = chunk[end:]
        if rest != ("," if i + 1 < len(ends) else ""):
            return None
        extras[name] = value
    return extras
