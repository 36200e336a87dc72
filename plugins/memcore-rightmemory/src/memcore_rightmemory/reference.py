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
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from memcore.errors import MemcoreError
from memcore.models import FidelityNote, MemoryEntry
from memcore.switches import switch_on
from memcore_rightmemory._bulk import bulk_runs_enabled
from memcore_rightmemory._graph import Graph, ItemRef
from memcore_rightmemory._parse import read_fast_enabled
from memcore_rightmemory.mapping import kind_for

if TYPE_CHECKING:
    from memcore_rightmemory.provider import RightMemoryProvider

__all__ = ["READER", "RightMemoryReference", "Stamp", "graph_stamp", "read_memo_enabled", "reference_notes"]

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


Stamp = tuple[tuple[str, tuple[int, int, int, int, int] | None], ...]
"""``(file, (mtime_ns, ctime_ns, size, inode, mode) or None when absent)`` of the files a graph rests on."""


def _lstat(path: Path) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


def graph_stamp(graph: Graph, read: Callable[[str], bytes | None]) -> Stamp | None:
    """Return the stamp of the files ``graph`` was built from, or ``None`` when it cannot be told.

    The stamp holds every graph file and every backing file a heading names (absent ones as
    ``None``, so that one appearing later changes it). It is taken first and each graph
    file is read again after it: only when each still holds the bytes the graph was parsed
    from does the stamp describe that graph (a file that changed during or after the load
    gives ``None``). ``None`` too for a graph with an unreadable file, or an F# file it did not
    load that is now a regular file.

    Args:
        graph: A graph loaded outside a write session.
        read: The provider's ``rel -> bytes`` (``None``: not a regular file inside the root).
    """
    if graph.unreadable:
        return None
    details = {name for marker, name in graph.backing.values() if marker == "F#"}
    stamp: list[tuple[str, tuple[int, int, int, int, int] | None]] = []
    for rel in sorted({*graph.docs, *(name for _marker, name in graph.backing.values())}):
        try:
            st = _lstat(graph.root / rel)
        except OSError:
            return None
        if rel in details and rel not in graph.docs and st is not None and stat.S_ISREG(st[4]):
            return None  # an F# detail file the load did not find: it has just appeared
        stamp.append((rel, st))
    return tuple(stamp) if _holds_bytes(graph, read) else None


def _holds_bytes(graph: Graph, read: Callable[[str], bytes | None]) -> bool:
    """Whether each graph file still holds the bytes ``graph`` was parsed from (read through ``read``)."""
    return all(read(rel) == doc.source.data for rel, doc in graph.docs.items())


#: A file modified less than this long (ns) before a check may have been rewritten since, in the
#: same tick of a coarse file-system clock, at the same size: its stamp alone does not tell.
SETTLED_NS = 2_000_000_000


def _settled(stamp: Stamp) -> bool:
    """Whether every file of ``stamp`` was last modified at least :data:`SETTLED_NS` ago."""
    oldest_fresh = time.time_ns() - SETTLED_NS
    return all(st is None or st[0] <= oldest_fresh for _rel, st in stamp)


def _stamp_now(root: Path, stamp: Stamp) -> bool:
    """Whether every file of ``stamp`` is still as it records."""
    try:
        return all(_lstat(root / rel) == st for rel, st in stamp)
    except OSError:
        return False


def read_memo_enabled() -> bool:
    """Whether a graph read outside a write session is kept for the next reads (default: yes).

    ``MEMCORE_RIGHTMEMORY_READ_MEMO=0``: :meth:`~memcore_rightmemory.provider.RightMemoryProvider.read_all`
    keeps nothing, and :meth:`~memcore_rightmemory.provider.RightMemoryProvider.source_files`
    parses the store each time (the reference reading keeps its own parse, under
    ``MEMCORE_REFERENCE_MEMO``).
    """
    return switch_on("MEMCORE_RIGHTMEMORY_READ_MEMO")


class RightMemoryReference:
    """:class:`memcore.provider.ReferenceReading` for :class:`~memcore_rightmemory.provider.RightMemoryProvider`.

    A migration asks about every item in turn: outside a write session the parsed graph is kept
    between calls while no file it rests on changed (:func:`graph_stamp`: modification and
    change times, size, inode and type of each), so the questions cost one parse of the store,
    not one per item (``benchmarks/bench_reference_reading.py``; ``MEMCORE_REFERENCE_MEMO=0``
    turns it off). The graph a ``read_all`` loaded is kept the same way
    (:func:`read_memo_enabled`): a migration's read-back, then its reference reading, parse
    the target once. What is kept is one graph (each file's bytes and its parse, not its
    split lines), until a file changes or the provider closes.
    """

    _reference_memo: tuple[Stamp, Graph] | None = None
    #: Whether the kept graph's stamp alone tells a change (:func:`_settled` when last checked).
    _memo_settled = False

    def _remember(self, graph: Graph) -> None:
        """Keep ``graph`` (loaded outside a write session) while the files it rests on are unchanged."""
        provider = cast("RightMemoryProvider", self)
        stamp = graph_stamp(graph, provider._read)
        self._reference_memo = None if stamp is None else (stamp, graph)
        self._memo_settled = stamp is not None and _settled(stamp)

    def _remembered(self) -> Graph | None:
        """Return the graph kept by :meth:`_remember` while its files are unchanged, else ``None``.

        While a graph file was modified less than :data:`SETTLED_NS` ago, the stamp is not
        enough (a same-size rewrite in the same tick of a coarse clock keeps every field of
        it): each graph file's bytes are compared with the kept ones too (one read, no parse).
        """
        memo = self._reference_memo
        if memo is None:
            return None
        provider = cast("RightMemoryProvider", self)
        if _stamp_now(provider.root, memo[0]) and (self._memo_settled or self._same_bytes(memo)):
            return memo[1]
        self._reference_memo = None
        return None

    def _same_bytes(self, memo: tuple[Stamp, Graph]) -> bool:
        """Whether each graph file still holds the bytes ``memo``'s graph was parsed from (then settled when old)."""
        if not _holds_bytes(memo[1], cast("RightMemoryProvider", self)._read):
            return False
        self._memo_settled = _settled(memo[0])
        return True

    def _keep_read(self, graph: Graph) -> None:
        """Keep the graph ``read_all`` loaded (outside a write session; :func:`read_memo_enabled`)."""
        if cast("RightMemoryProvider", self).active_session() is None and read_memo_enabled():
            self._remember(graph)

    def _read_handed(self, rel: str) -> bytes | None:
        """``provider._read(rel)``; in a ``read_all``/``validate``, the bytes are handed to core's checks too.

        (:meth:`~memcore.provider.BaseProvider.source_bytes_read`: core does not read the file
        again; :func:`~memcore_rightmemory._parse.read_fast_enabled` off: it does.)
        """
        provider = cast("RightMemoryProvider", self)
        data = provider._read(rel)
        if data is not None and read_fast_enabled():
            provider.source_bytes_read(rel, data)
        return data

    def _read_graph(self) -> Graph:
        """Return the graph as on disk: the kept one while its files are unchanged, else a parse.

        In a write session, or with :func:`read_memo_enabled` off: ``provider.graph()``.
        """
        provider = cast("RightMemoryProvider", self)
        graph = self._remembered() if provider.active_session() is None and read_memo_enabled() else None
        return provider.graph() if graph is None else graph

    def _reference_graph(self) -> Graph:
        provider = cast("RightMemoryProvider", self)
        if provider.active_session() is not None or not switch_on("MEMCORE_REFERENCE_MEMO"):
            return provider.graph()
        graph = self._remembered()
        if graph is None:
            graph = provider.graph()
            self._remember(graph)
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
