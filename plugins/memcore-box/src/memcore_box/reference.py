"""What a reader following the Box-memory schema shows differently from what memcore kept.

The authors' tools are skills that follow ``references/schema.md`` (reference notes): they read
a memory's frontmatter keys and do not read memcore's ``memcore:`` key. So a kind or status
outside the schema's vocabularies shows as the Box value memcore wrote (``pursuit`` as
``task``), a relation other than ``related`` / ``supersedes`` / ``superseded_by`` is not shown,
and a ``related: "[[Title]]"`` shows the memory ``by_wikilink`` gives for that exact title.
:func:`reference_notes` lists each such field of one memory file.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from memcore.errors import MemcoreError
from memcore.models import FidelityNote, MemoryEntry
from memcore_box.codec import wikilink_title
from memcore_box.mapping import format_timestamp, parse_timestamp

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["READER", "BoxReference", "reference_notes"]

#: The reference reader: the schema the authors' skills follow.
READER = "references/schema.md"
_SCALARS = (
    ("title", "title"),
    ("kind", "kind"),
    ("status", "status"),
    ("source", "agent"),
    ("confidence", "confidence"),
)


def _note(name: str, kept: object, shown: object, why: str) -> FidelityNote:
    return FidelityNote(field=name, kept=kept, shown=shown, reader=READER, why=why)


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _time(value: Any) -> str | None:
    if value is None or value == "":
        return None
    try:
        parsed = value if isinstance(value, datetime) else parse_timestamp(str(value))
    except ValueError:
        return str(value)
    return format_timestamp(parsed)


def shown_relations(meta: dict[str, Any], by_wikilink: dict[str, str]) -> list[list[str]]:
    """Return ``[type, target]`` of the relations the frontmatter shows, sorted: ``related`` by exact title."""
    out = [
        ["related", by_wikilink.get(wikilink_title(link), wikilink_title(link))] for link in _list(meta.get("related"))
    ]
    out += [["supersedes", target] for target in _list(meta.get("supersedes"))]
    out += [["superseded_by", target] for target in _list(meta.get("superseded_by"))]
    return sorted(out)


def reference_notes(entry: MemoryEntry, meta: dict[str, Any], by_wikilink: dict[str, str]) -> list[FidelityNote]:
    """Return each field a schema reader shows for frontmatter ``meta`` otherwise than memcore's ``entry``.

    Args:
        entry: The memory as memcore reads it (its ``memcore:`` key applied).
        meta: The file's frontmatter.
        by_wikilink: Exact title → id, as the folder indexes' ``by_wikilink`` maps hold it.

    Returns:
        Notes in field order: title, kind, status, source (``agent``), confidence, tags,
        created_at, updated_at, expires_at, relations.
    """
    notes: list[FidelityNote] = []
    memcore_key = "memcore keeps this value in its memcore: key, which the schema's readers do not read"
    for name, key in _SCALARS:
        kept = getattr(entry, name)
        kept = kept.value if hasattr(kept, "value") else kept
        if kept != meta.get(key) and not (kept in (None, "") and meta.get(key) in (None, "")):
            notes.append(_note(name, kept, meta.get(key), memcore_key))
    if entry.tags != _list(meta.get("tags")):
        notes.append(_note("tags", entry.tags, _list(meta.get("tags")), memcore_key))
    for name in ("created_at", "updated_at", "expires_at"):
        kept_time = cast("datetime | None", getattr(entry, name))
        kept_text = None if kept_time is None else format_timestamp(kept_time)
        if kept_text != _time(meta.get(name)):
            notes.append(_note(name, kept_text, _time(meta.get(name)), memcore_key))
    kept_rel = sorted([r.type, r.target] for r in entry.relations)
    shown_rel = shown_relations(meta, by_wikilink)
    if kept_rel != shown_rel:
        why = (
            "the schema's readers see related (resolved by exact title), supersedes and superseded_by; "
            "memcore keeps other relations in its memcore: key"
        )
        notes.append(_note("relations", kept_rel, shown_rel, why))
    return notes


class BoxReference:
    """:class:`memcore.provider.ReferenceReading` for :class:`~memcore_box.provider.BoxMemoryProvider`."""

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what a schema reader shows differently for memory ``entry.id`` (:func:`reference_notes`).

        Empty when no memory file has that id.
        """
        provider = cast("BoxMemoryProvider", self)
        if entry.id is None:
            return []
        try:
            found = provider._read_file(entry.id)
        except MemcoreError:
            return []
        exact, _ = provider._title_maps()
        meta = {unicodedata.normalize("NFC", str(k)): v for k, v in dict(found.meta).items()}
        return reference_notes(entry, meta, exact)
