"""The entries RightMemory's writes read back, for a later read of the same item (:class:`Built`).

Every write reads its item back from the graph it made (:func:`~memcore_rightmemory.codec.verify`,
which builds it with :func:`~memcore_rightmemory.codec.entry_of`) and returns that entry. A read
of the store afterwards (a migration's read-back reads every entry it wrote) would build the
same entry again from the same input. :class:`Built` keeps a copy of each under everything
``entry_of`` builds it from (:func:`inputs`), so such a read takes the copy instead:

- the item's file, family, kind of line (heading or node), marker and id;
- its own lines' text as the parser reads them (the heading line, its comment and its body up
  to its first child, trailing blank lines left out; or the node line and its comment);
- its parent, the titles of the plain headings above it, and whether each edge's target is an
  item of the graph.

The read still loads and validates the whole graph and reports every diagnostic; only the
building of an entry from inputs it was already built from is skipped. A copy (its own lists
and ``extra``) is handed out once: the first read of that item takes it, a later one builds
it again. Kept from the start of a write session (the outermost) until a read takes it or the
next session starts, at most :data:`LIMIT` entries. ``MEMCORE_RIGHTMEMORY_READBACK=0`` turns
it off: every read builds every entry.
"""

from __future__ import annotations

from typing import Any

from memcore.models import MemoryEntry, json_copy
from memcore.switches import switch_on
from memcore_rightmemory._graph import Graph, ItemRef
from memcore_rightmemory.codec import blank

__all__ = ["LIMIT", "Built", "inputs", "readback_enabled"]

#: Entries kept at most (a migration writes each entry once).
LIMIT = 100_000


def readback_enabled() -> bool:
    """Whether reads take the entries writes read back (default: yes; ``MEMCORE_RIGHTMEMORY_READBACK=0``: no)."""
    return switch_on("MEMCORE_RIGHTMEMORY_READBACK")


def inputs(graph: Graph, ref: ItemRef) -> tuple[Any, ...]:
    """Everything :func:`~memcore_rightmemory.codec.entry_of` builds the entry of ``ref`` from.

    Two items with equal inputs give equal entries (version included: it is the hash of the
    file's name and the item's own text).
    """
    doc = graph.docs[ref.rel]
    lines = doc.source.lines
    if ref.is_heading:
        heading = doc.headings[ref.index]
        own = lines[heading.line - 1 : heading.lead_end]
        while own and blank(own[-1]):
            own.pop()
        edges = heading.edges
    else:
        node = doc.nodes[ref.index]
        own = lines[node.line - 1 : (node.meta_line or node.line)]
        edges = node.edges
    sections = tuple(graph.heading(key).title for key in graph.ancestors(ref) if graph.heading(key).id is None)
    return (
        ref.rel,
        ref.family,
        ref.is_heading,
        ref.marker,
        ref.id,
        "\n".join(own),
        graph.parent_id(ref),
        sections,
        tuple(target in graph.items for _type, target in edges),
    )


def _copy(entry: MemoryEntry) -> MemoryEntry:
    """A copy of ``entry`` with its own lists and ``extra`` (the same fields set)."""
    copy = entry.model_copy()
    fields = copy.__dict__
    fields["tags"] = list(entry.tags)
    fields["relations"] = list(entry.relations)  # Relation is frozen
    fields["extra"] = json_copy(entry.extra)
    return copy


class Built:
    """Entries writes read back, by their :func:`inputs` (see the module docstring)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], MemoryEntry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry kept (a write session starts)."""
        self._entries.clear()

    def keep(self, graph: Graph, ref: ItemRef, entry: MemoryEntry) -> None:
        """Keep a copy of ``entry``, read back as ``entry_of(graph, ref)`` by a write."""
        if len(self._entries) < LIMIT and readback_enabled():
            self._entries[inputs(graph, ref)] = _copy(entry)

    def take(self, graph: Graph, ref: ItemRef) -> MemoryEntry | None:
        """Return (once) the entry kept for an item with the inputs of ``ref`` in ``graph``, else ``None``."""
        if not self._entries or not readback_enabled():
            return None
        return self._entries.pop(inputs(graph, ref), None)
