"""What a reader following the Box-memory schema shows differently from what memcore kept.

The authors' "implementation" is the schema and the skills that follow it (reference notes:
``box-recall`` reads a memory's frontmatter, the folder ``_index.json`` maps and the rollup).
Such a reader does not read memcore's ``memcore:`` key. For a memory file memcore wrote it
therefore shows, per field (:func:`reference_notes`):

- ``title``: an untitled memory is written with its id as title (the wikilink target); the
  reader shows the id.
- ``kind`` / ``status``: a memcore kind or status Box has no word for is written as the Box
  word (``preference`` as ``fact``, ``proposed`` as ``draft``…); the reader shows that word.
- ``scope``: not noted for a memory without ``team``: the schema's readers put it in the
  ``default`` team, which is what memcore's unscoped entry means in a workspace.
- ``relations``: the reader resolves ``[[Title]]`` by exact title only (``by_wikilink``), not
  by id nor case-folded title as memcore does; it sees ``supersedes`` and one
  ``superseded_by``, not the other relation types memcore keeps under ``memcore.relations``.
- ``parent``: kept under ``memcore.parent``, which the reader does not read.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from memcore.frontmatter import is_scalar, text_of
from memcore.frontmatter import to_plain as plain
from memcore.models import FidelityNote, MemoryEntry
from memcore_box.codec import wikilink_title

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["READER", "BoxReference", "reference_notes"]

#: The reference reader: the schema (references/schema.md) as the box-recall skill applies it.
READER = "box-memory schema (box-recall)"
_NATIVE_EDGES = ("related", "supersedes", "superseded_by")


def _edges(meta: Mapping[str, Any], by_wikilink: Callable[[str], str | None]) -> list[list[str]]:
    """Return the ``[type, target]`` pairs the schema reader takes from a memory's frontmatter."""
    out: list[list[str]] = []
    related = plain(meta.get("related"))
    for item in related if isinstance(related, list) else [related]:
        if item is None or not is_scalar(item) or not str(item).strip():
            continue
        title = wikilink_title(str(item))
        if title:
            out.append(["related", by_wikilink(title) or title])
    supersedes = plain(meta.get("supersedes"))
    for target in supersedes if isinstance(supersedes, list) else [supersedes]:
        if target:
            out.append(["supersedes", str(target)])
    superseded_by = meta.get("superseded_by")
    if superseded_by is not None and str(superseded_by).strip():
        out.append(["superseded_by", str(superseded_by).strip()])
    return out


def _relations_why(entry: MemoryEntry, kept: list[list[str]], shown: list[list[str]]) -> str:
    if any(pair not in shown for pair in kept if pair[0] not in _NATIVE_EDGES):
        return "relation types other than related/supersedes/superseded_by are kept under memcore.relations"
    if sum(1 for r in entry.relations if r.type == "superseded_by") > 1:
        return "the schema's superseded_by holds one id: the others are kept under memcore.relations"
    return "the schema resolves [[Title]] by the exact title only, never by id or case-folded title"


def reference_notes(
    entry: MemoryEntry, meta: Mapping[str, Any], by_wikilink: Callable[[str], str | None]
) -> list[FidelityNote]:
    """Return each field a schema reader shows for a memory file otherwise than memcore's ``entry``.

    Args:
        entry: The entry as memcore reads the file (``memcore:`` key applied).
        meta: The file's frontmatter.
        by_wikilink: Exact title -> id, as the workspace's ``by_wikilink`` maps give it.

    Returns:
        Notes in field order: title, kind, status, relations, parent. Relations are
        compared as sets of ``[type, target]`` (their order is memcore's own).
    """
    notes: list[FidelityNote] = []

    def note(field: str, kept: Any, shown: Any, why: str) -> None:
        notes.append(FidelityNote(field=field, kept=kept, shown=shown, reader=READER, why=why))

    title = meta.get("title")
    shown_title = text_of(title) if is_scalar(title) and title is not None else None
    if entry.title != (shown_title or ""):
        why = "an untitled memory is written with its id as title, the schema's wikilink target"
        note("title", entry.title, shown_title, why if shown_title == entry.id else "the reader shows the title field")
    for field, kept in (("kind", entry.kind.value), ("status", entry.status.value)):
        shown = str(meta.get(field))
        if kept != shown:
            note(field, kept, shown, f"Box has no {field} {kept!r}: written as {shown!r} (memcore.{field} keeps it)")
    kept_edges = [[r.type, r.target] for r in entry.relations]
    shown_edges = _edges(meta, by_wikilink)
    if sorted(kept_edges) != sorted(shown_edges):
        note("relations", kept_edges, shown_edges, _relations_why(entry, kept_edges, shown_edges))
    if entry.parent is not None:
        note("parent", entry.parent, None, "the schema has no parent field: it is kept under memcore.parent")
    return notes


class BoxReference:
    """:class:`memcore.provider.ReferenceReading` for :class:`~memcore_box.provider.BoxMemoryProvider`."""

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what a schema reader shows differently for the memory ``entry.id`` (:func:`reference_notes`).

        Empty when the id names no memory file.
        """
        provider = cast("BoxMemoryProvider", self)
        if entry.id is None:
            return []
        provider._ensure_open()
        try:
            current = provider._read_file(entry.id)
        except LookupError:
            return []
        exact = provider._title_maps()[0]
        return reference_notes(entry, current.meta, lambda t: exact.get(unicodedata.normalize("NFC", t)))
