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

A migration asks about every memory it wrote right after reading them all back: the
frontmatter ``add`` wrote is kept (the keys :func:`reference_notes` reads, per id, with the
file's version, the sha256 of its bytes) and answers for an entry read from those very bytes,
without reading and parsing the file again (``MEMCORE_REFERENCE_MEMO=0``: every answer from a
read of the file).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from memcore.frontmatter import is_scalar, text_of
from memcore.frontmatter import to_plain as plain
from memcore.models import FidelityNote, MemoryEntry
from memcore.switches import switch_on
from memcore_box.codec import wikilink_title

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["READER", "BoxReference", "reference_notes"]

#: The reference reader: the schema (references/schema.md) as the box-recall skill applies it.
READER = "box-memory schema (box-recall)"
_NATIVE_EDGES = ("related", "supersedes", "superseded_by")
#: How many written frontmatters a provider keeps for its reference reading (a few hundred bytes each).
_KEPT_MAX = 100_000
#: The frontmatter keys :func:`reference_notes` reads.
_READ_KEYS = ("title", "kind", "status", *_NATIVE_EDGES)


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


def _plain_value(value: Any) -> Any:
    """``to_plain(value)``, with a string of exactly ``str`` (most values) taken as it is."""
    return value if type(value) is str else plain(value)


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

    #: id -> (version, the keys of :data:`_READ_KEYS` in the frontmatter written as that version)
    _written_refs: dict[str, tuple[str, dict[str, Any]]]

    def _remember_written(self, entry_id: str, version: str | None, meta: Mapping[str, Any]) -> None:
        """Keep what :func:`reference_notes` reads of the frontmatter just written for ``entry_id`` as ``version``.

        Valid for a file whose bytes read back as ``meta`` (what the writers' equivalence tests
        prove for ``add``). Kept until the provider closes, or the id is updated or deleted; at
        most :data:`_KEPT_MAX` ids (the oldest go first: their answers come from their files).
        """
        if version and switch_on("MEMCORE_REFERENCE_MEMO"):
            refs = self.__dict__.setdefault("_written_refs", {})
            if len(refs) >= _KEPT_MAX:
                del refs[next(iter(refs))]
            kept = {key: _plain_value(meta[key]) for key in _READ_KEYS if key in meta}
            refs[entry_id if entry_id.isascii() else unicodedata.normalize("NFC", entry_id)] = (version, kept)

    def _forget_written(self, entry_id: str | None = None) -> None:
        """Drop what :meth:`_remember_written` kept for ``entry_id`` (``None``: for every id)."""
        refs = self.__dict__.get("_written_refs")
        if refs:
            if entry_id is None:
                refs.clear()
            else:
                refs.pop(unicodedata.normalize("NFC", entry_id), None)

    def _written_meta(self, entry: MemoryEntry) -> Mapping[str, Any] | None:
        """What :meth:`_remember_written` kept for ``entry``, when ``entry`` was read from the bytes it names."""
        refs = self.__dict__.get("_written_refs")
        if not refs or entry.version is None or not switch_on("MEMCORE_REFERENCE_MEMO"):
            return None
        if cast("BoxMemoryProvider", self).active_session() is not None:
            return None  # a write session sees its own pending writes: read through it
        kept = refs.get(unicodedata.normalize("NFC", entry.id or ""))
        return kept[1] if kept is not None and kept[0] == entry.version else None

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what a schema reader shows differently for the memory ``entry.id`` (:func:`reference_notes`).

        Empty when the id names no memory file. For an entry read from a file this provider
        wrote with ``add`` (its ``version`` the version written), the frontmatter kept then.
        """
        provider = cast("BoxMemoryProvider", self)
        if entry.id is None:
            return []
        provider._ensure_open()
        meta = self._written_meta(entry)
        if meta is None:
            try:
                meta = provider._read_file(entry.id).meta
            except LookupError:
                return []
        exact = provider._title_maps()[0]
        return reference_notes(entry, meta, lambda t: exact.get(unicodedata.normalize("NFC", t)))
