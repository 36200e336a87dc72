"""Moving a RightMemory item under another heading: plan the splices, keep the id and every line.

The spec's ids are anchors (``{#id}``, ``- `id```), one namespace across Memory and Pursuit,
independent of where an item sits (*Model And Schema* → *Addressable Items*), so a moved item
keeps its id, and every edge that points at it stays valid. Its own lines move unchanged: the
heading or node line with its edge list, its memcore comment, a heading's body, child nodes and
child headings (their ``#`` depth shifted by the same amount, never past ``######``). An ``F#``
heading keeps its detail file (named after the id and its tree), so a heading moves only within
its tree (Memory or Pursuit); a node may move between trees. Where the item lands is decided as
for a new item (:func:`memcore_rightmemory._render.target`): at the end of the new parent's
direct nodes or block, or into an ``F#`` parent's detail file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memcore.errors import EntryNotFoundError, InvalidEntryError
from memcore.models import MemoryEntry
from memcore_rightmemory import _render as render
from memcore_rightmemory._graph import Graph, ItemRef
from memcore_rightmemory.codec import FORMAT, blank, entry_of

if TYPE_CHECKING:
    from memcore_rightmemory.provider import RightMemoryProvider

__all__ = ["move_item", "parents_after_move", "plan_move"]


def move_item(provider: RightMemoryProvider, entry_id: str, parent: str | None) -> MemoryEntry:
    """Move an item under the heading ``parent`` (``None``: the top level), in one write.

    ``RightMemoryProvider.move``; :func:`memcore.ops.move` uses it. The item keeps its id, its
    edges, its memcore comment, a heading's body and children (see the module docstring).
    Nothing is written when the item is already there.

    Args:
        provider: An open store.
        entry_id: The item to move.
        parent: Id of the new parent heading, or ``None``.

    Returns:
        The item as read back.

    Raises:
        EntryNotFoundError: No item ``entry_id`` or ``parent``.
        AmbiguousIdError: Either id names two or more items; nothing is written.
        InvalidEntryError: See :func:`plan_move`; or the move would change another item's parent.
        GraphInvariantError: The result breaks an invariant (e.g. a ``rel:`` edge to its new
            ancestor, which the spec forbids as repeated containment); nothing is written.
    """
    with provider.session("move"):
        graph = provider._write_graph()
        ref = provider._graph_item(graph, entry_id)
        target = provider._item(graph, parent) if parent is not None else None
        if parent is not None and target is None:
            raise EntryNotFoundError(f"{FORMAT}: no item {parent!r} in {provider.root} to move `{entry_id}` under")
        entry = entry_of(graph, ref)
        if entry.parent == parent:
            return entry
        extra = {k: v for k, v in entry.extra.items() if k != FORMAT}
        info = entry.extra.get(FORMAT)
        if isinstance(info, dict):  # where the item sat: not where it goes
            extra[FORMAT] = {k: v for k, v in info.items() if k not in ("depth", "sections")}
        moved = entry.model_copy(update={"parent": parent, "extra": extra})
        change = plan_move(graph, ref, moved, target, provider._chains, provider.root)
        provider._commit(graph, change, check=parents_after_move(graph, entry_id, parent))
    return provider.get(entry_id)


def plan_move(
    graph: Graph,
    ref: ItemRef,
    entry: MemoryEntry,
    parent: ItemRef | None,
    chains: render.Chains,
    root: Path,
) -> render.Change:
    """Plan moving the item ``ref`` (read as ``entry``) under ``parent`` (``None``: the top level).

    Args:
        graph: The store's graph in the write session.
        ref: The item to move.
        entry: The item as read, with ``parent`` set to the new parent's id.
        parent: The new parent heading, or ``None`` (a node goes under ``# Memory`` /
            ``# Pursuits``, a Memory heading to the top of MEMORY.md).
        chains: The provider's plain-heading chain cache.
        root: The store root (for messages).

    Returns:
        The splices: the item's lines removed where they are and inserted where they go.

    Raises:
        InvalidEntryError: The new parent is the item itself, one of its descendants, a node,
            or a heading in the other tree (for a heading); or a moved heading would be deeper
            than ``######``.
    """
    key = (ref.rel, ref.index)
    if parent is not None:
        if parent.id == ref.id or (ref.is_heading and key in graph.ancestors(parent)):
            raise InvalidEntryError(
                f"{FORMAT}: cannot move `{ref.id}` under `{parent.id}`: that is the item itself or one of "
                "its descendants"
            )
        if ref.is_heading and parent.family != ref.family:
            raise InvalidEntryError(
                f"{FORMAT}: heading `{ref.id}` is in the {ref.family} tree and `{parent.id}` in the "
                f"{parent.family} tree; a heading moves within its tree (its F# detail files are named after it)"
            )
    family = parent.family if parent is not None else ref.family
    doc = graph.docs[ref.rel]
    lines = doc.source.lines
    change = render.Change.empty()
    if not ref.is_heading:
        node = doc.nodes[ref.index]
        moved = lines[node.line - 1 : node.meta_line or node.line]
        indent = len(moved[0]) - len(moved[0].lstrip())
        if indent:  # a nested list item becomes a direct node of its new heading
            moved = [line[indent:] if line[:indent].isspace() else line.lstrip() for line in moved]
        rel, index, _level, create = render.target(graph, entry, family, False, parent, chains, root)
        render.remove_item(graph, ref, change)
        render.node_insert(graph, rel, index, create, moved, change)
        return change
    heading = doc.headings[ref.index]
    end = heading.end
    while end > heading.line and blank(lines[end - 1]):
        end -= 1
    rel, index, level, create = render.target(graph, entry, family, True, parent, chains, root)
    shift = level - heading.depth
    inner = {h.line: h.depth for h in doc.headings if heading.line <= h.line <= end}
    if max(inner.values()) + shift > 6:
        raise InvalidEntryError(
            f"{FORMAT}: moving `{ref.id}` under {parent.id if parent else 'the top level'!r} would make a heading "
            "deeper than ###### (Markdown has six levels); move its deepest headings up first"
        )
    moved = []
    for number in range(heading.line, end + 1):
        line = lines[number - 1]
        depth = inner.get(number)
        moved.append("#" * (depth + shift) + line[depth:] if depth is not None else line)
    change.splice(ref.rel, heading.line, heading.end, [])
    render.heading_insert(graph, rel, index, create, moved, change)
    return change


def parents_after_move(before: Graph, ident: str, parent: str | None) -> Callable[[Graph], None]:
    """Return a check that only ``ident`` changed parent (to ``parent``), and no item was lost.

    Raises (from the check):
        InvalidEntryError: Another item's parent changed, or an item appeared or disappeared.
    """
    expected = {key: before.parent_id(ref) for key, ref in before.items.items()}
    expected[ident] = parent

    def check(after: Graph) -> None:
        got = {key: after.parent_id(ref) for key, ref in after.items.items()}
        if got != expected:
            changed = sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))
            raise InvalidEntryError(
                f"{FORMAT}: moving `{ident}` would change the items or parents of {', '.join(changed)}; "
                "nothing was written"
            )

    return check
