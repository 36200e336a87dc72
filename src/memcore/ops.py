"""Everyday operations on entries, built on the provider contract (edit, move, relations, graph).

:func:`edit`, :func:`insert`, :func:`rename`, :func:`move`, :func:`relate` and :func:`unrelate`
change one entry; :func:`graph` and :func:`recent` are reads.

Every function takes an open :class:`~memcore.contract.MemoryProvider` and works through the
contract's own operations (``get``, ``update``, ``iter_entries``), so it works for every
provider, third-party ones included; the format's rules hold because the provider's ``update``
enforces them (a WhiteBox observation is append-only and refuses the edit naming that rule,
a Box-memory ``held`` memory is immutable…)::

    import memcore
    from memcore import ops

    with memcore.open("box:./workspace") as store:
        ops.edit(store, "mem_01J…", "Friday", "Thursday")

A provider with a native way of doing one of these offers it as an optional method of the same
name and arguments (without the provider argument), as ``read_all`` and ``plan_ids`` are
optional: ``edit(entry_id, old, new, *, expected_version)``, ``insert(entry_id, text, *, line,
expected_version)``, ``rename(entry_id, title)``, ``move(entry_id, parent)``,
``relate(entry_id, type, target)`` / ``unrelate(entry_id, type, target)`` (RightMemory's
``add_edge`` / ``remove_edge`` are used for the last two, so its graph invariants are checked;
its ``move`` moves an item's lines under the new heading).
The function then calls it instead of the generic read-change-write.

What each operation means:

* **edit** replaces one exact string of the body (``str_replace`` semantics): the old string must
  occur exactly once, else :class:`EditMatchError` says how often it occurs.
* **insert** puts text before a given line of the body (0: at the start; ``None``: at the end).
* **rename** gives an entry a new title. Where a format derives ids from titles
  the stored entry's id changes with it: use the returned entry's id.
* **move** gives an entry a new ``parent`` (containment). A format whose containment is the
  file's structure and whose ``update`` cannot change it (RightMemory headings) refuses it,
  naming the rule.
* **relate** / **unrelate** add or remove one typed edge; **graph** reads the entries around
  one entry to a given depth, or the whole store; **recent** lists what changed since a time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcore.contract import MemoryProvider
from memcore.errors import EditMatchError, EntryNotFoundError, InvalidEntryError
from memcore.models import MemoryEntry, Relation, utc_now

__all__ = [
    "EditMatchError",
    "Graph",
    "edit",
    "graph",
    "insert",
    "move",
    "recent",
    "relate",
    "rename",
    "save",
    "unrelate",
]

#: The most levels :func:`graph` walks from its start entry.
MAX_DEPTH = 10


def _native(provider: MemoryProvider, name: str) -> Callable[..., Any] | None:
    method = getattr(provider, name, None)
    return method if callable(method) else None


def save(provider: MemoryProvider, entry: MemoryEntry, expected_version: str | None = None) -> MemoryEntry:
    """Store ``entry``, a changed copy of a stored one, through ``update`` with ``updated_at`` now.

    Args:
        provider: An open store.
        entry: The changed entry (its id names the stored one).
        expected_version: Refuse the write unless the stored entry has this version token
            (default: ``entry.version``, the version it was read at).

    Returns:
        The entry as stored.
    """
    entry.updated_at = utc_now()
    return provider.update(entry, expected_version=expected_version if expected_version is not None else entry.version)


def _label(provider: MemoryProvider) -> str:
    return getattr(provider, "format_name", "") or "store"


def edit(
    provider: MemoryProvider, entry_id: str, old: str, new: str, *, expected_version: str | None = None
) -> MemoryEntry:
    """Replace the one occurrence of ``old`` in an entry's body with ``new``.

    Args:
        provider: An open store.
        entry_id: The entry to change.
        old: The exact text to replace (not empty); it must occur exactly once in the body.
        new: The text to put in its place (may be empty: the old text is removed).
        expected_version: Refuse the write unless the entry still has this version token
            (default: the version just read).

    Returns:
        The entry as stored.

    Raises:
        EditMatchError: ``old`` is empty, or occurs 0 or 2+ times (nothing is written).
        EntryNotFoundError: No such entry.
        UnsupportedOperationError: The format forbids changing this entry (append-only,
            immutable, no ``update``); the message names the rule.
        ConflictError: ``expected_version`` is stale.
    """
    native = _native(provider, "edit")
    if native is not None:
        result: MemoryEntry = native(entry_id, old, new, expected_version=expected_version)
        return result
    if not old:
        raise EditMatchError(
            f"{_label(provider)}: edit of {entry_id!r}: the text to replace is empty; give the exact text to change",
            entry_id=entry_id,
            occurrences=0,
        )
    entry = provider.get(entry_id)
    count = entry.body.count(old)
    if count != 1:
        what = "does not occur" if count == 0 else f"occurs {count} times"
        fix = (
            "copy it exactly from the entry's body (whitespace and case count)"
            if count == 0
            else "include more of the surrounding text so that it occurs once"
        )
        raise EditMatchError(
            f"{_label(provider)}: edit of {entry_id!r}: the text to replace {what} in the body; {fix}",
            entry_id=entry_id,
            occurrences=count,
        )
    entry.body = entry.body.replace(old, new, 1)
    return save(provider, entry, expected_version)


def insert(
    provider: MemoryProvider,
    entry_id: str,
    text: str,
    *,
    line: int | None = None,
    expected_version: str | None = None,
) -> MemoryEntry:
    """Insert ``text`` into an entry's body before line ``line`` (0-based; ``None``: at the end).

    Lines are the body's ``\\n``-separated lines; ``text`` is inserted as whole lines (a final
    newline is added when it has none), so ``line=0`` puts it first and ``line=N`` (the number of
    lines) after the last. A body that did not end with a newline still does not.

    Args:
        provider: An open store.
        entry_id: The entry to change.
        text: The lines to insert.
        line: Where: before this 0-based line; ``None`` appends.
        expected_version: As for :func:`edit`.

    Returns:
        The entry as stored.

    Raises:
        InvalidEntryError: ``line`` is negative or past the end of the body (nothing is written).
        EntryNotFoundError: No such entry.
        UnsupportedOperationError: The format forbids changing this entry.
        ConflictError: ``expected_version`` is stale.
    """
    native = _native(provider, "insert")
    if native is not None:
        result: MemoryEntry = native(entry_id, text, line=line, expected_version=expected_version)
        return result
    entry = provider.get(entry_id)
    lines = entry.body.splitlines(keepends=True)
    if line is None:
        line = len(lines)
    if not 0 <= line <= len(lines):
        raise InvalidEntryError(
            f"{_label(provider)}: insert into {entry_id!r}: line {line} is outside the body "
            f"(it has {len(lines)} lines; use 0 to {len(lines)})"
        )
    at_end_unterminated = line == len(lines) and not entry.body.endswith("\n")
    if at_end_unterminated and lines:
        lines[-1] += "\n"  # the inserted text becomes the last line, ending as the body did
    block = text if at_end_unterminated or text.endswith("\n") else text + "\n"
    entry.body = "".join([*lines[:line], block, *lines[line:]])
    return save(provider, entry, expected_version)


def rename(provider: MemoryProvider, entry_id: str, title: str) -> MemoryEntry:
    """Give an entry a new title.

    Args:
        provider: An open store.
        entry_id: The entry to rename.
        title: The new title (not empty).

    Returns:
        The entry as stored; its id is new where the format derives ids from titles.

    Raises:
        InvalidEntryError: ``title`` is empty.
        EntryNotFoundError: No such entry.
        UnsupportedOperationError: The format forbids changing this entry.
    """
    if not title.strip():
        raise InvalidEntryError(f"{_label(provider)}: rename of {entry_id!r}: the new title is empty")
    native = _native(provider, "rename")
    if native is not None:
        result: MemoryEntry = native(entry_id, title)
        return result
    entry = provider.get(entry_id)
    entry.title = title
    return save(provider, entry)


def move(provider: MemoryProvider, entry_id: str, parent: str | None) -> MemoryEntry:
    """Move an entry under another entry (its ``parent``), or to the top level (``None``).

    Args:
        provider: An open store.
        entry_id: The entry to move.
        parent: Id of the new containing entry, or ``None``.

    Returns:
        The entry as stored.

    Raises:
        EntryNotFoundError: No such entry, or no entry ``parent``.
        InvalidEntryError: ``parent`` is the entry itself or one of its descendants.
        UnsupportedOperationError: The format forbids it (the message names the rule). A
            provider with its own ``move(entry_id, parent)`` (RightMemory: the item's lines move
            under the new heading, id and edges kept) is used instead, and its errors come
            through unchanged.
    """
    native = _native(provider, "move")
    if native is not None:
        result: MemoryEntry = native(entry_id, parent)
        return result
    entry = provider.get(entry_id)
    if parent is not None:
        provider.get(parent)
        step: str | None = parent
        seen: set[str] = set()
        while step is not None and step not in seen:
            if step == entry_id:
                raise InvalidEntryError(
                    f"{_label(provider)}: cannot move {entry_id!r} under {parent!r}: that is the entry itself "
                    "or one of its descendants"
                )
            seen.add(step)
            try:
                step = provider.get(step).parent
            except EntryNotFoundError:
                step = None
    entry.parent = parent
    return save(provider, entry)


def relate(provider: MemoryProvider, entry_id: str, type: str, target: str) -> MemoryEntry:
    """Add the typed edge ``type -> target`` to an entry (nothing happens if it is there already).

    Uses the provider's ``relate`` or ``add_edge`` when it has one (RightMemory checks its graph
    invariants there).

    Args:
        provider: An open store.
        entry_id: The entry the edge starts from.
        type: The relation type (``related``, ``depends_on``… or the format's own).
        target: Id of the entry it points at.

    Returns:
        The entry as stored.

    Raises:
        EntryNotFoundError: No such entry or target.
        UnsupportedOperationError: The format forbids changing this entry.
    """
    provider.get(target)
    native = _native(provider, "relate") or _native(provider, "add_edge")
    if native is not None:
        result: MemoryEntry = native(entry_id, type, target)
        return result
    entry = provider.get(entry_id)
    if any(r.type == type and r.target == target for r in entry.relations):
        return entry
    entry.relations = [*entry.relations, Relation(type=type, target=target)]
    return save(provider, entry)


def unrelate(provider: MemoryProvider, entry_id: str, type: str, target: str) -> MemoryEntry:
    """Remove the typed edge ``type -> target`` from an entry.

    Uses the provider's ``unrelate`` or ``remove_edge`` when it has one.

    Returns:
        The entry as stored.

    Raises:
        EntryNotFoundError: No such entry, or it has no such edge.
        UnsupportedOperationError: The format forbids changing this entry.
    """
    native = _native(provider, "unrelate") or _native(provider, "remove_edge")
    if native is not None:
        result: MemoryEntry = native(entry_id, type, target)
        return result
    entry = provider.get(entry_id)
    kept = [r for r in entry.relations if not (r.type == type and r.target == target)]
    if len(kept) == len(entry.relations):
        raise EntryNotFoundError(f"{_label(provider)}: {entry_id!r} has no relation {type}:{target}")
    entry.relations = kept
    return save(provider, entry)


@dataclass
class Graph:
    """Entries and the edges between them, as :func:`graph` returns them.

    Attributes:
        entries: The entries reached, in the order they were reached (the start entry first).
        edges: ``(source id, type, target id)`` of every relation between entries reached, plus
            ``"parent"`` edges (child -> parent) for containment; relations to ids outside the
            store are kept (their target is simply not among ``entries``).
        depth: How far from each entry the start entry is (``{id: levels}``; 0 for the start;
            every entry 0 for a whole-store read).
    """

    entries: list[MemoryEntry] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    depth: dict[str, int] = field(default_factory=dict)


def _edges(entry: MemoryEntry) -> Iterable[tuple[str, str, str]]:
    if entry.id is None:
        return
    for rel in entry.relations:
        yield entry.id, rel.type, rel.target
    if entry.parent is not None:
        yield entry.id, "parent", entry.parent


def graph(
    provider: MemoryProvider,
    entry_id: str | None = None,
    *,
    depth: int = 1,
    entries: Iterable[MemoryEntry] | None = None,
) -> Graph:
    """Return the entries within ``depth`` edges of ``entry_id`` (either direction), or all.

    Edges are the entries' relations and their ``parent`` links, followed both ways (an entry
    pointing at the start entry is one level away, as is the entry it points at).

    Args:
        provider: An open store.
        entry_id: The start entry; ``None`` returns every entry and every edge.
        depth: How many levels to walk (0: the start entry alone; at most :data:`MAX_DEPTH`).
        entries: The entries to walk over (default: ``provider.iter_entries()``); a caller that
            filters what may be shown (the MCP server) passes only those.

    Returns:
        A :class:`Graph`.

    Raises:
        EntryNotFoundError: No entry ``entry_id`` among ``entries``.
        ValueError: ``depth`` is negative or above :data:`MAX_DEPTH`.
    """
    if not 0 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be 0 to {MAX_DEPTH}, not {depth}")
    pool = list(provider.iter_entries() if entries is None else entries)
    by_id = {e.id: e for e in pool if e.id is not None}
    all_edges = [edge for e in pool for edge in _edges(e)]
    if entry_id is None:
        return Graph(entries=pool, edges=all_edges, depth={i: 0 for i in by_id})
    if entry_id not in by_id:
        raise EntryNotFoundError(f"{_label(provider)}: no entry {entry_id!r} in {provider.location}")
    neighbours: dict[str, list[str]] = {}
    for source, _type, target in all_edges:
        neighbours.setdefault(source, []).append(target)
        neighbours.setdefault(target, []).append(source)
    levels = {entry_id: 0}
    todo = deque([entry_id])
    while todo:
        current = todo.popleft()
        if levels[current] == depth:
            continue
        for other in neighbours.get(current, ()):
            if other not in levels and other in by_id:
                levels[other] = levels[current] + 1
                todo.append(other)
    reached = [by_id[i] for i in levels]
    edges = [edge for edge in all_edges if edge[0] in levels and (edge[2] in levels or edge[2] not in by_id)]
    return Graph(entries=reached, edges=edges, depth=levels)


def recent(
    provider: MemoryProvider,
    since: datetime | None = None,
    *,
    limit: int | None = None,
    entries: Iterable[MemoryEntry] | None = None,
) -> list[MemoryEntry]:
    """Return the entries changed (``updated_at``, else ``created_at``) at or after ``since``.

    Newest first; entries without any time are left out when ``since`` is given and come last
    otherwise.

    Args:
        provider: An open store.
        since: A timezone-aware time; ``None``: every entry.
        limit: At most this many entries.
        entries: The entries to look at (default: ``provider.iter_entries()``).

    Returns:
        The entries, newest first (ties keep the store's order).

    Raises:
        ValueError: ``since`` has no timezone.
    """
    if since is not None and since.tzinfo is None:
        raise ValueError("since must carry a timezone (e.g. 2026-03-01T00:00:00Z)")
    pool = list(provider.iter_entries() if entries is None else entries)
    timed = [(e.updated_at or e.created_at, i, e) for i, e in enumerate(pool)]
    if since is not None:
        timed = [t for t in timed if t[0] is not None and t[0] >= since]
    with_time = sorted((t for t in timed if t[0] is not None), key=lambda t: (-t[0].timestamp(), t[1]))  # type: ignore[union-attr]
    without = [t for t in timed if t[0] is None]
    found = [e for _, _, e in [*with_time, *without]]
    return found if limit is None else found[:limit]
