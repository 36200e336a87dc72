"""RightMemory's bulk add (:class:`memcore.provider.BulkAdding`): many new items, one window parse.

An ``add`` of a top-level heading (a Memory entry with a body and no parent: what a migration
writes) appends its lines at the end of MEMORY.md and checks the change by re-parsing the
window around it (:mod:`memcore_rightmemory._incremental`) and reading the item back
(:func:`~memcore_rightmemory.codec.verify`). :meth:`BulkAdd.add_many` renders a run of such
entries as consecutive adds would place them, splices them in as one range, parses that window
once, and checks every new item (its id, its edges, its text read back against what was sent).
Anything the run cannot decide with certainty (another kind of add, an id or edge that an
earlier add of the run would change, a check that fails) is undone and those entries are
added one ``add`` each, so the bytes, ids, returned entries and errors are those of one ``add``
each. ``MEMCORE_RIGHTMEMORY_BULK=0`` turns the run path off (one ``add`` each, in one session), and
the many-entry reference reading with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcore.errors import MemcoreError
from memcore.models import Kind, MemoryEntry, lf_body
from memcore.provider import Capability, add_in_turn, checked_for_write
from memcore.switches import switch_on
from memcore_rightmemory import _render as render
from memcore_rightmemory._graph import Graph
from memcore_rightmemory._state import Fast, fast_commit_enabled
from memcore_rightmemory.codec import blank, new_id, require_unicode_fast, verify, want

if TYPE_CHECKING:
    from memcore_rightmemory.provider import RightMemoryProvider

#: New items spliced in one range at most.
RUN_LIMIT = 500
_FILE = "MEMORY.md"


def bulk_runs_enabled() -> bool:
    """Whether :meth:`BulkAdd.add_many` adds runs of top-level headings in one splice (default: yes).

    Off, ``reference_reads_differently_many`` also asks once per entry.
    """
    return switch_on("MEMCORE_RIGHTMEMORY_BULK")


class BulkAdd:
    """``add_many`` for :class:`~memcore_rightmemory.provider.RightMemoryProvider`."""

    def add_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
        """Add ``entries`` as consecutive :meth:`add` calls would, in one write session.

        The contract of :meth:`memcore.contract.BulkAdding.add_many`: the same stops (after a
        refusal, after an entry stored under another id than its own) and the same items returned.

        Raises:
            ReadOnlyStoreError: The store was opened read-only.
        """
        provider: RightMemoryProvider = self  # type: ignore[assignment]
        out: list[MemoryEntry | Exception] = []
        fast = bulk_runs_enabled() and fast_commit_enabled() and Capability.ADD in provider.capabilities
        one_by_one = 0  # entries to add one by one before trying a run again
        with provider.session("add"):
            i = 0
            while i < len(entries):
                if fast and i >= one_by_one:
                    run = _run(provider, entries, i)
                    if len(run) > 1:
                        stored = _commit(provider, run)
                        if stored is not None:
                            out.extend(stored)
                            i += len(stored)
                            continue
                        one_by_one = i + len(run)
                if not add_in_turn(provider.add, entries[i], out):
                    break
                i += 1
        return out


_Prepared = tuple[str, MemoryEntry, list[str]]


def _prepare(provider: RightMemoryProvider, graph: Graph, entry: MemoryEntry) -> _Prepared | None:
    """Return ``(id, entry as add sends it, heading lines)`` of a top-level heading's add.

    That is an add that appends a heading to MEMORY.md, rendered as :meth:`add` renders it
    now, after the checks of add's wrapper (:func:`~memcore.models.revalidated`,
    :func:`~memcore.storage._control.check_entry_text`); ``None`` for any other add, and for one
    add would refuse (it reports the error).
    """
    if not isinstance(entry, MemoryEntry):
        return None
    try:
        entry = checked_for_write(provider, entry)  # add's wrapper's checks
        require_unicode_fast(entry)
        entry = lf_body(entry)
        if entry.parent is not None or entry.kind == Kind.PURSUIT or entry.body == "":
            return None
        item_hint, marker = want(entry)
        if marker not in (None, "node", "#") or item_hint == "node":
            return None
        ident = new_id(graph, entry)
        entry = entry.model_copy(update={"id": ident})
        core, meta = render.body_lines(entry, "memory", "#", ident, provider._md)
        where = render.target(graph, entry, "memory", True, None, provider._chains, provider.root)
        if where != (_FILE, None, 1, []):
            return None
        lines = render.heading_lines(entry, ident, "#", 1, core, meta)
    except (MemcoreError, ValueError):
        return None
    if not lines or blank(lines[-1]):
        return None  # the next append would not start right after it
    return ident, entry, lines


def _run(provider: RightMemoryProvider, entries: Sequence[MemoryEntry], start: int) -> list[_Prepared]:
    """The entries from ``start`` on that one splice can add as consecutive adds would."""
    try:
        graph = provider._write_graph()
    except MemcoreError:
        return []  # add reports it
    if _FILE not in graph.docs:
        return []
    run: list[_Prepared] = []
    ids: set[str] = set()
    for entry in entries[start : start + RUN_LIMIT]:
        prepared = _prepare(provider, graph, entry)
        # an id an earlier item of the run took would be made unique (or refused) by add
        if prepared is None or prepared[0] in ids:
            break
        ids.add(prepared[0])
        run.append(prepared)
    # an edge to an item of the run not written yet (or to itself) is one add refuses
    position = {ident: n for n, (ident, _e, _l) in enumerate(run)}
    for n, (_ident, entry, _lines) in enumerate(run):
        if any(position.get(rel.target, -1) >= n for rel in entry.relations):
            return run[:n]
    return run


def _commit(provider: RightMemoryProvider, run: list[_Prepared]) -> list[MemoryEntry] | None:
    """Splice ``run`` in as one range, check it, and return the items as read back.

    ``None``: the window parse could not decide with certainty, or a check failed; nothing
    changed (the caller adds those entries one by one, which reports the precise error).
    """
    session = provider.active_session()
    assert session is not None, "writes run inside a session"
    graph = provider._write_graph()
    lines = graph.docs[_FILE].source.lines
    last = len(lines)
    while last >= 1 and blank(lines[last - 1]):
        last -= 1
    block: list[str] = [""] if last >= 1 else []
    for n, (_ident, _entry, new) in enumerate(run):
        block.extend(new if n == 0 else ["", *new])
    change = render.Change.empty()
    change.splice(_FILE, last + 1, last, block)
    verified: list[MemoryEntry] = []

    def check(new: Graph) -> None:
        verified[:] = [verify(new, ident, entry) for ident, entry, _lines in run]

    fast = Fast(run[0][0], False, tuple(ident for ident, _e, _l in run[1:]))
    if not provider._graphs._fast_commit(graph, change, fast, check):
        return None
    for _ in run:
        session.count()
    return verified
