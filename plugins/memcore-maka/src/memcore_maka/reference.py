"""What Maka's own reader (``local-memory.ts``) shows differently from what memcore kept.

memcore reads a section whole: its ``mcData`` key holds the values Maka cannot show as they are
(reference notes "What the parser actually does"; docs/formats/maka.md). Maka's reader does not
read ``mcData``: it shows the heading as the title, the trimmed content with memcore's escapes
(a leading space before a line Maka would take for a heading, a trailing U+200B after a line it
would take for its metadata comment), ``tags=`` through ``parseTags`` (lower-cased, other
characters ``-``), ``origin=`` as manual / extracted / imported or ``unknown``, ``status=`` as one
of its five statuses or ``unknown``. :func:`reference_notes` lists each such field of an entry.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, cast

from memcore.models import FidelityNote, MemoryEntry
from memcore_maka._bulk import bulk_runs_enabled
from memcore_maka._parse import Document, Section, parse_finite_number, parse_tags
from memcore_maka.codec import from_ms
from memcore_maka.mapping import MAKA_STATUSES, ORIGINS

if TYPE_CHECKING:
    from memcore_maka.provider import MakaProvider

__all__ = ["READER", "MakaReference", "reference_notes"]

#: The reference reader, as Maka's sources name it.
READER = "local-memory.ts"
_UNTITLED = "Untitled memory"
_ZWSP = "\u200b"


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _body_why(kept: str, shown: str) -> str:
    lines = shown.split("\n")
    if any(line.endswith(_ZWSP) for line in lines):
        return "a line Maka would read as its metadata comment is written with a trailing U+200B, which Maka shows"
    if any(line.startswith(" ##") for line in lines) and not any(line.startswith(" ##") for line in kept.split("\n")):
        return "a line Maka would read as a new entry's heading is written after a space, which Maka shows"
    if not kept.strip():
        return "Maka drops a section with no content: the empty body is written as the title"
    return "Maka shows the section's content as written"


def _title_why(kept: str, shown: str) -> str:
    if not kept.strip() and shown == _UNTITLED:
        return f"an empty title is written as the heading {_UNTITLED!r}, as Maka's writer does"
    if "\n" in kept or "\r" in kept:
        return "a heading is one line: line breaks are written as spaces"
    return "Maka shows the heading text, trimmed"


def _time(raw: str | None) -> datetime | None:
    number = parse_finite_number(raw)
    return from_ms(number) if number is not None else None


def reference_notes(entry: MemoryEntry, section: Section, *, pending: bool = False) -> list[FidelityNote]:
    """Return each field Maka's reader shows for ``section`` otherwise than memcore's ``entry``.

    Args:
        entry: The entry as memcore reads ``section`` (``mcData`` applied).
        section: The section it was read from.
        pending: Whether the section is in PENDING.md (a missing status reads as review_required).

    Returns:
        Notes in field order: title, body, tags, source, status, scope, created_at, updated_at.
        Whitespace at the edges of the body (which Maka trims) is not a note.
    """
    meta = section.meta or {}
    notes: list[FidelityNote] = []

    def note(field: str, kept: object, shown: object, why: str) -> None:
        notes.append(FidelityNote(field=field, kept=kept, shown=shown, reader=READER, why=why))

    if entry.title != section.title:
        note("title", entry.title, section.title, _title_why(entry.title, section.title))
    if entry.body.strip() != section.content:  # edge whitespace: no markdown reader shows it
        note("body", entry.body, section.content, _body_why(entry.body, section.content))
    tags = parse_tags(meta.get("tags"))
    if entry.tags != tags:
        note("tags", entry.tags, tags, "Maka's parseTags lower-cases tags, turns other characters into '-', keeps 8")
    origin = meta.get("origin")
    shown_source = origin if origin in ORIGINS else "unknown"
    if entry.source != shown_source:
        note(
            "source",
            entry.source,
            shown_source,
            "Maka's origin= is manual, extracted or imported, else unknown",
        )
    raw_status = meta.get("status")
    status = ("review_required" if pending else "active") if raw_status is None else raw_status
    if status not in MAKA_STATUSES:
        status = "unknown"
    if entry.status.value != status:
        note("status", entry.status.value, status, "Maka shows a status not among its five as unknown")
    scope = meta.get("scope")
    if entry.scope != scope and not (entry.scope is None and scope is None):
        note("scope", entry.scope, scope, "Maka reads scope= as written (workspace or session)")
    for key, name in (("createdAt", "created_at"), ("updatedAt", "updated_at")):
        kept, shown = cast("datetime | None", getattr(entry, name)), _time(meta.get(key))
        if kept != shown:
            note(name, _iso(kept), _iso(shown), f"Maka reads {key}= as unix milliseconds")
    return notes


class MakaReference:
    """:class:`memcore.provider.ReferenceReading` for :class:`~memcore_maka.provider.MakaProvider`."""

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what Maka's reader shows differently for MEMORY.md's entry ``entry.id`` (:func:`reference_notes`).

        Empty when reads are gated off, the id names no section or more than one.
        """
        provider = cast("MakaProvider", self)
        if entry.id is None or not provider._gate_read():
            return []
        return self._notes_in(provider._load(provider.path, full=False).doc, entry)

    def reference_reads_differently_many(self, entries: Sequence[MemoryEntry]) -> list[list[FidelityNote]]:
        """Return :meth:`reference_reads_differently` of each of ``entries``, MEMORY.md read once.

        ``MEMCORE_MAKA_BULK=0``: asked once per entry (the file read each time), the same answers.
        """
        provider = cast("MakaProvider", self)
        if not bulk_runs_enabled() or any(entry.id is None for entry in entries):
            return [self.reference_reads_differently(entry) for entry in entries]
        if not entries or not provider._gate_read():
            return [[] for _ in entries]
        doc = provider._load(provider.path, full=False).doc
        return [self._notes_in(doc, entry) for entry in entries]

    @staticmethod
    def _notes_in(doc: Document, entry: MemoryEntry) -> list[FidelityNote]:
        """:func:`reference_notes` of the one entry section of ``doc`` named ``entry.id`` (none: ``[]``)."""
        found = doc.index().entries.get(unicodedata.normalize("NFC", entry.id or ""), [])
        if len(found) != 1:
            return []
        return reference_notes(entry, found[0])
