"""Iterating a workspace: every memory file read, mapped and yielded in ``(created_at, id)`` order."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memcore import frontmatter
from memcore.errors import UnsafePathError
from memcore.models import MemoryEntry
from memcore.storage import join
from memcore_box import _scan
from memcore_box._parse import is_memory_name
from memcore_box.codec import _sort_key, entry_from_meta
from memcore_box.index import _Titles

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["stream_entries"]

#: file bytes whose parse ``stream_entries`` holds between passes (~3x in objects; 10,000 memories fit)
_HOLD_BYTES = 16 * 2**20
#: file bytes ``stream_entries`` holds unparsed beyond :data:`_HOLD_BYTES` (pass 2 parses them
#: again without reading them again; about 1.05x that in memory)
_HOLD_RAW_BYTES = 64 * 2**20


def stream_entries(self: BoxMemoryProvider) -> Iterator[MemoryEntry]:
    """Yield every memory in ``(created_at, id)`` order, holding one parsed file at a time.

    Pass 1 reads each memory file and keeps ``(created_at, id, scan position, path)`` plus
    the title/id lookups for wikilinks; pass 2 reads the files again in that order and maps
    each one. Orphans are skipped; of files sharing an id only the first in order is read.
    A file that became an orphan between the passes (a concurrent writer) is skipped.
    Pass 2 maps the first files pass 1 read (up to :data:`_HOLD_BYTES` of them, none with the
    fast paths off) from what pass 1 parsed, and the next ones (up to :data:`_HOLD_RAW_BYTES`)
    from the bytes pass 1 read, parsed again (at 100,000 memories of ~1.2 KB, about 80,000
    files are read once; peak RSS stays under the 250 MB target). The rest is read again.
    Beyond the parsed budget, pass 1 takes the order keys of a file in memcore's layout from
    its lines (:func:`memcore_box._scan.order_keys`, the same values) instead of parsing it, and
    the first iteration after :meth:`open` reuses its listings when no folder changed
    (:meth:`_reused_listings`); ``MEMCORE_BOX_STREAM_FAST=0`` turns both off.
    """
    titles = _Titles()
    # (created_at, id, scan position, folder number, file name): one flat tuple per file,
    # the name shared with the listing; the path is joined again in pass 2.
    order: list[tuple[datetime, str, int, int, str]] = []
    folders = sorted((self._reused_listings() or self._discover()).items())
    held: dict[int, tuple[tuple[Mapping[str, Any], str] | None, str]] = {}
    kept: dict[int, tuple[bytes, str]] = {}  # bytes held unparsed, beyond the parsed budget
    budget = _HOLD_BYTES if frontmatter.FAST_PATHS else 0
    raw_budget = _HOLD_RAW_BYTES if frontmatter.FAST_PATHS else 0
    light = _scan.enabled()
    for number, (folder, items) in enumerate(folders):
        for item in items:
            if item.is_folder or not is_memory_name(item.name):
                continue
            path = join(folder, item.name)
            try:
                data, version = self.storage.read(path)
            except FileNotFoundError:
                continue
            # Once the parsed budget is spent, a file would be parsed in both passes: pass 1
            # then reads only its order keys where it can.
            keys = _scan.order_keys(data) if light and len(data) > budget else None
            if keys is not None:  # a memory in memcore's layout: its order keys read from the lines
                entry_id = titles.add({"id": keys[0], "title": keys[1]})
                created, _ = _sort_key(keys[2], entry_id)
                if len(data) <= raw_budget:
                    raw_budget -= len(data)
                    kept[len(order)] = (data, version)
                order.append((created, entry_id, len(order), number, item.name))
                continue
            found = self._read_meta(path, data)
            if found is None:
                continue
            entry_id = titles.add(found[0])
            created, _ = _sort_key(found[0].get("created_at"), entry_id)
            if len(data) <= budget:
                budget -= len(data)
                held[len(order)] = (found, version)
            elif len(data) <= raw_budget:
                raw_budget -= len(data)
                kept[len(order)] = (data, version)
            order.append((created, entry_id, len(order), number, item.name))
    names = [folder for folder, _ in folders]
    del folders  # the listings
    order.sort()
    seen: set[str] = set()
    for _, entry_id, position, number, name in order:
        found, version = held.pop(position, (None, ""))
        if entry_id in seen:
            continue
        seen.add(entry_id)
        path = join(names[number], name)
        if found is None:
            raw = kept.pop(position, None)
            if raw is not None:
                data, version = raw
            else:
                try:
                    data, version = self.storage.read(path)
                except (FileNotFoundError, UnsafePathError):
                    continue
            found = self._read_meta(path, data)
        if found is not None:
            self._remember_path(entry_id, path)
            yield entry_from_meta(
                found[0], found[1], path=path, version=version, resolve=titles.resolve, is_known_id=titles.known
            )[0]
