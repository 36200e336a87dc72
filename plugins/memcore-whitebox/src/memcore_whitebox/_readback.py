"""The entries WhiteBox built for what it wrote, for a read of the same bytes (:class:`Built`).

``add`` returns the entry a read of what it wrote gives: it builds it from the block (or the
stable file's bytes) it wrote, with the readers' own functions
(:func:`~memcore_whitebox.codec.observation_entry`, :func:`~memcore_whitebox.codec.file_entry`).
A read of those bytes later (a migration's read-back reads every entry it wrote) would build
the same entry again from the same input. :class:`Built` keeps each entry under everything it
was built from, so such a read takes a copy of it instead:

- an observation: its file, its number, the block's text as the file holds it (its version),
  the block's layout, frontmatter and body as the file's scan found them, and the active
  scope's name; no chunk frontmatter (a block in a chunk file is built again);
- a stable file: its path, its bytes, their version and the active scope's name.

The read still reads every file and scans every block, and runs every check of
``validate()`` on them; only the building of an entry from an input it was already built from
is skipped. An entry is kept only when its building reported nothing (the readers' diagnostics
come from the building). What is kept is a copy of the entry ``add`` returned (its own lists
and ``extra``), handed out once: the first read of those bytes takes it, a later read builds
the entry again.

Kept from the start of a write session (the outermost) until a read takes it or the next
session starts, at most :data:`LIMIT` entries. ``MEMCORE_WHITEBOX_READBACK=0`` turns it off: every read builds every
entry (``tests/test_whitebox_readback.py`` compares both).

A :class:`Built` reads its switches once, when it is made (the provider makes one when it is
created and one when each write session starts): this switch and ``MEMCORE_WHITEBOX_FAST``,
which it hands the readers' functions, instead of one environment look-up per entry.
"""

from __future__ import annotations

from typing import Any

from memcore.models import Diagnostic, MemoryEntry, json_copy
from memcore.switches import switch_on
from memcore_whitebox._blocks import Fields, RawBlock
from memcore_whitebox._fast import fast_enabled
from memcore_whitebox._scopes import Scope
from memcore_whitebox.codec import file_entry, observation_entry

__all__ = ["LIMIT", "Built", "readback_enabled"]

#: Entries kept at most (a migration writes each entry once).
LIMIT = 100_000


def readback_enabled() -> bool:
    """Whether reads reuse the entries built when writing (default: yes; ``MEMCORE_WHITEBOX_READBACK=0``: no)."""
    return switch_on("MEMCORE_WHITEBOX_READBACK")


def observation_key(
    rel: str, number: int, block_text: str, layout: str, frontmatter: str | None, body: str, active: str | None
) -> tuple[Any, ...]:
    """Everything :func:`~memcore_whitebox.codec.observation_entry` builds an entry from (no chunk frontmatter).

    Args:
        rel: The month file.
        number: The block's number in it.
        block_text: The block's text as the file holds it (its version is that text's).
        layout: The block's layout (``fenced`` or ``bare``).
        frontmatter: The block's frontmatter text (its fields are read from it).
        body: The block's body.
        active: The active scope's name, or ``None``.
    """
    return ("o", rel, number, block_text, layout, frontmatter, body, active)


def file_key(rel: str, data: bytes, version: str, active: str | None) -> tuple[Any, ...]:
    """Everything :func:`~memcore_whitebox.codec.file_entry` builds a stable file's entry from."""
    return ("f", rel, data, version, active)


def copy_entry(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` with its own ``tags``, ``relations`` and ``extra`` (relations are immutable).

    The copy's fields-set is the original's, so it equals a freshly built entry in every respect.
    """
    copy = entry.model_copy()
    copy.__dict__.update(tags=list(entry.tags), relations=list(entry.relations), extra=json_copy(entry.extra))
    return copy


class Built:
    """Entries built from written bytes, by what they were built from (see the module docstring)."""

    __slots__ = ("_entries", "fast", "on")

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], MemoryEntry] = {}
        #: Whether entries are kept and taken (:func:`readback_enabled`, read now).
        self.on = readback_enabled()
        #: ``MEMCORE_WHITEBOX_FAST`` (:func:`~memcore_whitebox._fast.fast_enabled`, read now), for the readers.
        self.fast = fast_enabled()

    def __bool__(self) -> bool:
        return bool(self._entries)

    def keep(self, key: tuple[Any, ...], entry: MemoryEntry) -> None:
        """Keep ``entry`` (a copy of it) as the one built from ``key`` (nothing when off or full)."""
        if self.on and len(self._entries) < LIMIT:
            self._entries[key] = copy_entry(entry)

    def take(self, key: tuple[Any, ...]) -> MemoryEntry | None:
        """Return the entry built from ``key`` and forget it (the caller's own copy), or ``None``."""
        return self._entries.pop(key, None)

    def written_observation(
        self, rel: str, number: int, block: str, blk: RawBlock, fields: Fields, active: Scope | None
    ) -> MemoryEntry:
        """:func:`~memcore_whitebox.codec.observation_entry` of a block just written alone; kept (see :meth:`keep`)."""
        notes: list[Diagnostic] = []  # what a read would report building it (then not kept)
        entry = observation_entry(rel, number, block, blk, fields, None, notes, active, fast=self.fast)
        if not notes:
            name = active.name if active is not None else None
            self.keep(observation_key(rel, number, block, blk.layout, blk.frontmatter, blk.body, name), entry)
        return entry

    def written_file(self, rel: str, raw: bytes, version: str, active: Scope | None) -> MemoryEntry | None:
        """:func:`~memcore_whitebox.codec.file_entry` of a stable file just written; kept (see :meth:`keep`)."""
        notes: list[Diagnostic] = []
        entry = file_entry(rel, raw, version, notes, active, fast=self.fast)
        if entry is not None and not notes:
            self.keep(file_key(rel, raw, version, active.name if active is not None else None), entry)
        return entry

    def observation_entry(
        self,
        rel: str,
        number: int,
        text: str,
        blk: RawBlock,
        fields: Fields,
        file_meta: dict[str, Any] | None,
        diags: list[Diagnostic] | None,
        active: Scope | None,
    ) -> MemoryEntry:
        """:func:`~memcore_whitebox.codec.observation_entry`, or the entry kept for the same input (taken)."""
        if file_meta is None and self._entries:
            name = active.name if active is not None else None
            key = observation_key(rel, number, text[blk.start : blk.end], blk.layout, blk.frontmatter, blk.body, name)
            found = self._entries.pop(key, None)
            if found is not None:
                return found
        return observation_entry(rel, number, text, blk, fields, file_meta, diags, active, fast=self.fast)

    def file_entry(
        self, rel: str, data: bytes, version: str, diags: list[Diagnostic] | None, active: Scope | None
    ) -> MemoryEntry | None:
        """:func:`~memcore_whitebox.codec.file_entry`, or the entry kept for the same input (taken)."""
        if self._entries:
            found = self._entries.pop(file_key(rel, data, version, active.name if active is not None else None), None)
            if found is not None:
                return found
        return file_entry(rel, data, version, diags, active, fast=self.fast)
