"""Iterating a workspace: every memory file read, mapped and yielded in ``(created_at, id)`` order."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from memcore import frontmatter
from memcore.errors import UnsafePathError
from memcore.models import MemoryEntry
from memcore.storage import file_reader, join, version_token
from memcore_box import _scan
from memcore_box._parse import read_memory_files
from memcore_box.codec import _sort_key, entry_from_meta, entry_from_plain
from memcore_box.index import _Titles

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["stream_entries"]

#: file bytes whose parse ``stream_entries`` holds between passes (~3x in objects; 10,000 memories fit)
_HOLD_BYTES = 16 * 2**20
#: file bytes ``stream_entries`` holds unparsed, the parsed ones counted 3x (pass 2 parses them
#: without reading them again; about 1.05x that in memory): every file of 100,000 memories of
#: ~1.2 KB, at a peak RSS of ~220 MB
_HOLD_RAW_BYTES = 120 * 2**20
#: :data:`_HOLD_RAW_BYTES` with the stream fast paths off (``MEMCORE_BOX_STREAM_FAST=0``): the
#: files beyond the parsed budget are parsed in both passes, so less is held
_HOLD_RAW_BYTES_OFF = 64 * 2**20


def stream_entries(self: BoxMemoryProvider) -> Iterator[MemoryEntry]:
    """Yield every memory in ``(created_at, id)`` order, holding one parsed file at a time.

    Pass 1 reads each memory file and keeps ``(created_at, id, scan position, path)`` plus
    the title/id lookups for wikilinks; pass 2 maps each file in that order. Orphans are
    skipped; of files sharing an id only the first in order is read. A file that became an
    orphan between the passes (a concurrent writer) is skipped.

    With the stream fast paths on (``MEMCORE_BOX_STREAM_FAST``, the YAML fast paths), pass 1
    reads the files through :func:`memcore.storage.file_reader` and takes the order keys of a
    file in memcore's layout from its lines (:func:`memcore_box._scan.order_keys`, the same
    values); it holds the bytes of those files (up to :data:`_HOLD_RAW_BYTES`, all of them
    for 100,000 memories of ~1.2 KB: peak RSS stays under the 250 MB target) and pass 2 maps
    them from the bytes (:func:`memcore_box._scan.flat_meta` and
    :func:`memcore_box.codec.entry_from_plain`, the general parse and mapping where those say
    ``None``). Other files are parsed in pass 1; the parse of the first ones (up to
    :data:`_HOLD_BYTES`) is held for pass 2, the rest read again. The first iteration after
    :meth:`open` reuses its listings when no folder changed (:meth:`_reused_listings`).
    ``MEMCORE_BOX_STREAM_FAST=0`` turns these fast paths off (with the YAML fast paths off,
    nothing is held either).
    """
    titles = _Titles()
    # (created_at, id, scan position, folder number, file name, bytes held, their version):
    # one flat tuple per file, the name shared with the listing (the path is joined again in
    # pass 2); the version None where it is version_token of the bytes (computed in pass 2).
    order: list[Any] = []
    folders = sorted((self._reused_listings() or self._discover()).items())
    held: dict[int, tuple[tuple[Mapping[str, Any], str], str | None]] = {}  # parsed in pass 1
    budget = _HOLD_BYTES if frontmatter.FAST_PATHS else 0
    light = _scan.enabled()
    raw_budget = (_HOLD_RAW_BYTES if light else _HOLD_RAW_BYTES_OFF) if frontmatter.FAST_PATHS else 0
    add = order.append
    with file_reader(self.storage, versions=False) if light else nullcontext(self.storage.read) as read:
        for number, (folder, items) in enumerate(folders):
            for item, path, data, version in read_memory_files(folder, items, read):
                keys = _scan.order_keys(data) if light else None
                if keys is not None:  # a memory in memcore's layout: its order keys read from the lines
                    entry_id = titles.add_keys(keys[0], keys[1])
                    created, _ = _sort_key(keys[2], entry_id)
                    if len(data) <= raw_budget:
                        raw_budget -= len(data)
                        add((created, entry_id, len(order), number, item.name, data, version, True))
                    else:
                        add((created, entry_id, len(order), number, item.name, None, None, True))
                    continue
                found = self._read_meta(path, data)
                if found is None:
                    continue
                entry_id = titles.add(found[0])
                created, _ = _sort_key(found[0].get("created_at"), entry_id)
                if len(data) <= budget:
                    budget -= len(data)
                    if light:  # parsed: about 3x the bytes in objects, out of the whole hold
                        raw_budget -= 3 * len(data)
                    held[len(order)] = (found, version if version is not None else version_token(data))
                    add((created, entry_id, len(order), number, item.name, None, None, False))
                elif len(data) <= raw_budget:
                    raw_budget -= len(data)
                    add((created, entry_id, len(order), number, item.name, data, version, False))
                else:
                    add((created, entry_id, len(order), number, item.name, None, None, False))
    names = [folder for folder, _ in folders]
    del folders  # the listings
    order.sort()
    seen: set[str] = set()
    resolve, known = titles.resolve, titles.known
    for index, (_, entry_id, position, number, name, data, version, flat) in enumerate(order):
        order[index] = None  # the bytes held for this file go with it
        found, parsed_version = held.pop(position, (None, None))
        if entry_id in seen:
            continue
        seen.add(entry_id)
        path = join(names[number], name)
        if found is not None:
            version = parsed_version
        else:
            if data is None:
                try:
                    with file_reader(self.storage, versions=False) if light else nullcontext(self.storage.read) as read:
                        data, version = read(path)  # between yields: no folder held open
                except (FileNotFoundError, UnsafePathError):
                    continue
                flat = light and _scan.order_keys(data) is not None  # it may have changed since
            found = _scan.flat_meta(data, checked=True) if flat else None
            if found is None:
                found = self._read_meta(path, data)
                if found is None:
                    continue
            if version is None:
                version = version_token(data)
            del data
        entry = None
        if light:
            entry = entry_from_plain(found[0], found[1], version=version, resolve=resolve, is_known_id=known)  # type: ignore[arg-type]
        if entry is None:
            entry = entry_from_meta(found[0], found[1], path=path, version=version, resolve=resolve, is_known_id=known)[
                0
            ]
        self._remember_path(entry_id, path)
        yield entry
