"""The seven ``by_*`` maps of an ``_index.json`` as text, built from the rows in C-level passes.

:func:`memcore_box.index.row_maps` builds each map as a dict with one Python step per row (and
:func:`memcore_box._json._emit` then encodes it with a few more): ~1 s for the two index files of
a 100,000-memory folder. :func:`map_texts` gives the same text (byte for byte what ``_emit``
writes for ``row_maps``' maps at the index's top level) from passes that run in C (``map``,
``zip``, ``itertools.compress``, ``str.join``), with every id encoded once. It covers the usual
case, and returns ``None`` for anything else, where the caller builds the maps as before: a row
read from a foreign entry (``raw``), a duplicate id, a key that is not a string, a slug or title
two rows share (the active-wins rule then decides), more than :data:`_MAX_GROUPS` distinct kinds,
statuses or tags. ``tests/test_box_splice.py`` compares both encodings.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, compress, repeat
from operator import contains, eq, itemgetter
from typing import Any

from memcore_box._json import _INLINE_MAX, _encode_str, _PreEncoded

__all__ = ["RawText", "map_texts"]

#: A grouped map (``by_kind``, ``by_tag``, ``by_status``) costs one pass over the rows per key:
#: beyond this many keys the caller's one-pass build is cheaper.
_MAX_GROUPS = 64

_ID, _TITLE, _SLUG, _KIND, _STATUS, _TAGS, _COMPANION, _RAW = 0, 3, 4, 5, 6, 8, 10, 15
_NONE = type(None)


class RawText(_PreEncoded):
    """A top-level value's text, already encoded (``IndexWriter.dumps`` writes it as is)."""

    __slots__ = ()


def _flat(keys: Sequence[Any], eids: Sequence[str]) -> str | None:
    """Return the text of ``{key: id}`` over the rows with a key, or ``None`` when two rows share one."""
    held = list(compress(keys, keys))
    if not held:
        return "{}"
    if len(set(held)) != len(held):
        return None  # a shared key: the active-wins rule decides which id it maps to
    lines = map(": ".join, zip(map(_encode_str, held), compress(eids, keys), strict=True))
    return "{\n    " + ",\n    ".join(lines) + "\n  }"


def _groups(order: Sequence[str], member: Any, values: Sequence[Any], eids: Sequence[str]) -> str:
    """Return the text of ``{key: [ids of the rows whose value ``member`` takes the key]}``."""
    if not order:
        return "{}"
    parts = []
    for key in order:
        head = _encode_str(key) + ": "
        items = list(compress(eids, map(member, values, repeat(key))))
        inline = "[" + ", ".join(items) + "]"
        if 4 + len(head) + len(inline) <= _INLINE_MAX:
            parts.append("    " + head + inline)
        else:
            parts.append("    " + head + "[\n      " + ",\n      ".join(items) + "\n    ]")
    return "{\n" + ",\n".join(parts) + "\n  }"


def _strings(values: Any) -> bool:
    """Return whether every value is a string or ``None`` (dict and ``==`` semantics then agree)."""
    return set(map(type, values)) <= {str, _NONE}


def map_texts(rows: Sequence[Any]) -> list[tuple[str, RawText]] | None:
    """Return ``(name, text)`` of the seven maps over ``rows``, as ``_emit`` writes ``row_maps(rows)``.

    Args:
        rows: The index's rows (:class:`memcore_box.index.IndexRow`), in entry order.

    Returns:
        The maps in :data:`memcore_box.index.INDEX_MAPS` order, each the text that follows
        ``"<name>": `` at the index's top level (two-space indent, lists folded past 100
        characters); ``None`` when the rows are outside what this covers (see the module
        docstring).
    """
    if list(map(itemgetter(_RAW), rows)).count(None) != len(rows):
        return None
    ids = list(map(itemgetter(_ID), rows))
    if len(set(ids)) != len(ids):
        return None
    slugs = list(map(itemgetter(_SLUG), rows))
    titles = list(map(itemgetter(_TITLE), rows))
    kinds = list(map(itemgetter(_KIND), rows))
    statuses = list(map(itemgetter(_STATUS), rows))
    companions = list(map(itemgetter(_COMPANION), rows))
    tags = list(map(itemgetter(_TAGS), rows))
    if not all(_strings(v) for v in (slugs, titles, kinds, statuses, companions)):
        return None
    if set(map(type, tags)) - {tuple} or set(map(type, chain.from_iterable(tags))) - {str}:
        return None
    kind_order = list(dict.fromkeys(compress(kinds, kinds)))
    status_order = list(dict.fromkeys(compress(statuses, statuses)))
    tag_order = list(dict.fromkeys(chain.from_iterable(tags)))  # an empty tag is a key too, as in row_maps
    if max(len(kind_order), len(status_order), len(tag_order)) > _MAX_GROUPS:
        return None
    eids = list(map(_encode_str, ids))
    by_slug = _flat(slugs, eids)
    by_wikilink = _flat(titles, eids)
    by_companion = _flat(companions, eids)
    if by_slug is None or by_wikilink is None or by_companion is None:
        return None
    by_id = "{}" if not ids else "{\n" + ",\n".join(map("    {}: {}".format, eids, range(len(ids)))) + "\n  }"
    texts = (
        ("by_id", by_id),
        ("by_slug", by_slug),
        ("by_wikilink", by_wikilink),
        ("by_kind", _groups(kind_order, eq, kinds, eids)),
        ("by_tag", _groups(tag_order, contains, tags, eids)),
        ("by_status", _groups(status_order, eq, statuses, eids)),
        ("by_companion_for", by_companion),
    )
    return [(name, RawText(text)) for name, text in texts]
