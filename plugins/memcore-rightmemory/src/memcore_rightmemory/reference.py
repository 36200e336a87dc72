"""What RightMemory's own parser (``graph.py``) reads differently from what memcore kept.

memcore reads an item whole: its ``<!-- memcore: {…} -->`` comment holds the fields RightMemory
has no slot for (docs/formats/rightmemory.md). memcore writes those comments in the file's
header, before its first heading, where ``graph.py`` reads nothing (:mod:`._header`); in a
file that keeps one under its heading (memcore's older layout, which it still reads) graph.py
reads it as one more line of the heading's body (the paragraphs directly under it). The
item's type is its marker and tree (a Memory heading or node, an ``S#`` skill, an ``M#``
evidence file, a Pursuit); its edges are the ones on its line. :func:`reference_notes` lists
each such field of one item.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from memcore.errors import MemcoreError
from memcore.models import FidelityNote, MemoryEntry
from memcore_rightmemory._bulk import bulk_runs_enabled
from memcore_rightmemory._graph import Graph, ItemRef
from memcore_rightmemory.mapping import kind_for

if TYPE_CHECKING:
    from memcore_rightmemory.provider import RightMemoryProvider

__all__ = ["READER", "RightMemoryReference", "reference_notes"]

#: The reference reader, as RightMemory's sources name it.
READER = "graph.py"


def _note(name: str, kept: object, shown: object, why: str) -> FidelityNote:
    return FidelityNote(field=name, kept=kept, shown=shown, reader=READER, why=why)


def reference_notes(entry: MemoryEntry, graph: Graph, ref: ItemRef) -> list[FidelityNote]:
    """Return each field ``graph.py`` reads otherwise than memcore for the item ``ref``.

    Args:
        entry: The item as memcore reads it (its comment applied).
        graph: The parsed graph holding it.
        ref: Where the item is.

    Returns:
        Notes in field order: ``kind`` (the marker's and tree's type), ``body`` (a heading's
        lines up to its first child, the comment line among them; edge whitespace aside) and
        ``relations`` (the edges on the item's line, as ``[type, target]``).
    """
    doc = graph.docs[ref.rel]
    item = doc.headings[ref.index] if ref.is_heading else doc.nodes[ref.index]
    notes: list[FidelityNote] = []
    shown_kind = kind_for(ref.family, ref.marker)
    if entry.kind is not shown_kind:
        why = f"graph.py gives an item no kind beyond its marker and tree ({shown_kind.value})"
        notes.append(_note("kind", entry.kind.value, shown_kind.value, why))
    if ref.is_heading:
        heading = doc.headings[ref.index]
        meta = heading.meta_line
        if meta is not None and (doc.source.file_line(meta) or 0) < (doc.source.file_line(heading.line) or 0):
            meta = None  # the file keeps the comment in its header, where graph.py reads nothing
        hidden = heading.meta_line if meta is None else None
        lines = doc.source.lines
        shown = "\n".join(lines[n - 1] for n in range(heading.line + 1, heading.lead_end + 1) if n != hidden).strip()
        if shown != entry.body.strip():
            why = (
                "graph.py reads the <!-- memcore: --> line under the heading as part of the heading's body"
                if meta is not None
                else "graph.py reads the heading's body as written"
            )
            notes.append(_note("body", entry.body.strip(), shown, why))
    kept = [[r.type, r.target] for r in entry.relations]
    edges = [[t, target] for t, target in item.edges]
    if kept != edges:
        why = "graph.py reads only the edges on the item's line; memcore keeps the other relations in its comment"
        notes.append(_note("relations", kept, edges, why))
    return notes


def _stamp(root: Path, rels: list[str]) -> tuple[tuple[str, int, int, int], ...] | None:
    """Return ``(file, mtime_ns, size, inode)`` of each graph file, ``None`` when one cannot be read."""
    out = []
    for rel in rels:
        try:
            st = os.stat(root / rel)
        except OSError:
            return None
        out.append((rel, st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


class RightMemoryReference:
    """:class:`memcore.provider.ReferenceReading` for :class:`~memcore_rightmemory.provider.RightMemoryProvider`.

    A migration asks about every item in turn: outside a write session the parsed graph is kept
    between calls while no graph file changed (same modification time, size and inode), so
    the questions cost one parse of the store, not one per item
    (``benchmarks/bench_reference_reading.py``; ``MEMCORE_REFERENCE_MEMO=0`` turns it off).
    """

    _reference_memo: tuple[tuple[tuple[str, int, int, int], ...], Graph] | None = None

    def _reference_graph(self) -> Graph:
        provider = cast("RightMemoryProvider", self)
        if provider.active_session() is not None or os.environ.get("MEMCORE_REFERENCE_MEMO") == "0":
            return provider.graph()
        memo = self._reference_memo
        if memo is not None and _stamp(provider.root, [rel for rel, *_ in memo[0]]) == memo[0]:
            return memo[1]
        graph = provider.graph()
        stamp = _stamp(provider.root, sorted({*graph.docs, *graph.unreadable}))
        self._reference_memo = None if stamp is None else (stamp, graph)
        return graph

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what ``graph.py`` reads differently for graph item ``entry.id`` (:func:`reference_notes`).

        Empty for an id naming no item, more than one, or an Agent Corrections entry.
        """
        provider = cast("RightMemoryProvider", self)
        if entry.id is None:
            return []
        try:
            graph = self._reference_graph()
            ref = provider._item(graph, entry.id)
        except MemcoreError:
            return []
        return [] if ref is None else reference_notes(entry, graph, ref)

    def reference_reads_differently_many(self, entries: Sequence[MemoryEntry]) -> list[list[FidelityNote]]:
        """Return :meth:`reference_reads_differently` of each of ``entries``, the graph got once.

        One graph for all (the kept one, or one parse), where one call each checks the graph
        files' stamps (a ``stat`` of each) every time. ``MEMCORE_RIGHTMEMORY_BULK=0``: one call
        each, the same answers.
        """
        if not bulk_runs_enabled():
            return [self.reference_reads_differently(entry) for entry in entries]
        provider = cast("RightMemoryProvider", self)
        graph: Graph | None = None
        out: list[list[FidelityNote]] = []
        for entry in entries:
            if entry.id is None:
                out.append([])
                continue
            try:
                if graph is None:
                    graph = self._reference_graph()
                ref = provider._item(graph, entry.id)
            except MemcoreError:
                out.append([])
                continue
            out.append([] if ref is None else reference_notes(entry, graph, ref))
        return out
