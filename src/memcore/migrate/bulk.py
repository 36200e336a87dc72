"""The first pass through a target's bulk add (:class:`~memcore.provider.BulkAdding`), in runs.

A migration builds each entry from what the entries before it became (their ids, whether they
were refused). The first pass can still send many entries in one ``add_many`` call, as long as
no entry of a run is built from an outcome the run has not produced yet:

- an entry whose parent or relation names an entry of the run sent without an id (the target
  chooses it) ends the run before it; one sent with an id is mapped to that id, which the
  target either keeps or stops at (the ``add_many`` contract: it stops after an entry stored
  under another id, and after a refusal);
- an entry that would propose an id (same format, an entry coming home, a planned id) ends the
  run when an entry of the run might take that id (sent without one, or sent with the same);
- after an entry sent with another id than its plan the run ends (its add clears the plan);
- an entry the first pass does not simply add (updated, matched by content, refused while
  built) ends the run and goes through :meth:`write_one`.

When the target stops early, the entries it did not handle are built again from what it
returned. Every entry is therefore built, sent and recorded exactly as one ``add`` each would
do it, in the same order; ``MEMCORE_BULK_ADD=0`` (or :func:`set_bulk_add`) turns the path off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcore.errors import MemcoreError
from memcore.migrate.fidelity import _content_key
from memcore.migrate.ids import _IdPlanning
from memcore.migrate.report import EntryReport
from memcore.models import MemoryEntry
from memcore.provider import BulkAdding
from memcore.provider import add_many as add_entries
from memcore.switches import switch_on

#: Entries sent in one ``add_many`` call at most.
RUN_LIMIT = 1000

_switch: bool | None = None


def set_bulk_add(on: bool | None) -> None:
    """Turn the bulk first pass on or off for this process (``None``: ``MEMCORE_BULK_ADD`` decides)."""
    global _switch
    _switch = on


def bulk_add_enabled() -> bool:
    """Whether migrations send their first pass through a target's ``add_many`` (default: yes)."""
    if _switch is not None:
        return _switch
    return switch_on("MEMCORE_BULK_ADD")


@dataclass
class _Pending:
    """The run being gathered: entries built, not sent yet."""

    items: list[tuple[MemoryEntry, MemoryEntry, EntryReport]] = field(default_factory=list)
    src_ids: set[str] = field(default_factory=set)
    sent_ids: set[str] = field(default_factory=set)
    tentative: set[str] = field(default_factory=set)  # src ids mapped to the id they were sent with
    unknown: bool = False  # an entry sent without an id: the target chooses it
    off_plan: bool = False  # an entry sent with another id than its plan


class _BulkWriting(_IdPlanning):
    """The first pass of :class:`~memcore.migrate.run._Run` through ``add_many``."""

    def uses_bulk_add(self) -> bool:
        """Whether this run's first pass goes through the target's ``add_many``."""
        return isinstance(self.target, BulkAdding) and bulk_add_enabled()

    # implemented by _Run
    def write_one(
        self,
        src: MemoryEntry,
        src_ids: set[str],
        existing_ids: set[str],
        by_origin: dict[tuple[str, str], MemoryEntry],
        by_content: dict[tuple[str, str], MemoryEntry],
    ) -> None:
        raise NotImplementedError

    def add_failed(self, src_id: str, rep: EntryReport, exc: Exception) -> None:
        raise NotImplementedError

    def added(
        self, src_id: str, rep: EntryReport, entry: MemoryEntry, stored: MemoryEntry, existing_ids: set[str]
    ) -> None:
        raise NotImplementedError

    def _proposals(self, src: MemoryEntry) -> list[str]:
        """The ids :meth:`build` may propose for ``src`` (depending on which are taken)."""
        assert src.id is not None
        out: list[str] = []
        if self.src_fmt == self.tgt_fmt:
            out.append(src.id)
        else:
            origin = self.home_of(self.restored[src.id])
            if origin is not None and origin[0] == self.tgt_fmt:
                out.append(origin[1])
        planned = self.predicted.get(src.id)
        if planned is not None:
            out.append(planned)
        return out

    def _fits(self, src: MemoryEntry, run: _Pending) -> bool:
        """Whether ``src`` can be built now, before the entries of ``run`` are written."""
        if not run.items:
            return True
        if len(run.items) >= RUN_LIMIT or run.off_plan:
            return False
        restored = self.restored[src.id or ""]
        if restored.parent is not None and restored.parent in run.src_ids and restored.parent not in run.tentative:
            return False
        for rel in restored.relations:
            if rel.resolved and rel.target in run.src_ids and rel.target not in run.tentative:
                return False
        return not any(run.unknown or c in run.sent_ids for c in self._proposals(src))

    def _undo_build(self, src_id: str) -> None:
        """Forget what :meth:`build` noted for an entry that was not sent (it is built again)."""
        self.pending.pop(src_id, None)
        self.used_predictions.pop(src_id, None)

    def write_bulk(
        self,
        ordered: list[MemoryEntry],
        src_ids: set[str],
        existing_ids: set[str],
        by_origin: dict[tuple[str, str], MemoryEntry],
        by_content: dict[tuple[str, str], MemoryEntry],
    ) -> None:
        """Write every entry of ``ordered`` (first pass), adding in runs through ``add_many``."""
        total = len(ordered)
        done = 0
        run = _Pending()
        i = 0

        def step(count: int) -> None:
            nonlocal done
            for _ in range(count):
                done += 1
                if done % 50 == 0 or done == total:
                    self.progress("write", done, total)

        while i < total or run.items:
            src = ordered[i] if i < total else None
            if src is not None and (self.src_fmt, src.id) not in by_origin and self._fits(src, run):
                assert src.id is not None
                rep = EntryReport(source_id=src.id, kind=src.kind, title="", action="written")
                try:
                    entry = self.build(src, src_ids, existing_ids)
                except (MemcoreError, ValueError, OSError):
                    entry = None
                if entry is not None and by_content.get(_content_key(entry)) is None:
                    self.reports[src.id] = rep
                    rep.title = _title(src)
                    run.items.append((src, entry, rep))
                    run.src_ids.add(src.id)
                    if entry.id is None:
                        run.unknown = True
                    else:
                        run.sent_ids.add(entry.id)
                        self.id_map[src.id] = entry.id
                        run.tentative.add(src.id)
                    planned = self.predicted.get(src.id)
                    if planned is not None and entry.id != planned:
                        run.off_plan = True
                    i += 1
                    continue
                self._undo_build(src.id)  # not a plain add: after the run, by write_one
            if run.items:
                handled = self._send(run, existing_ids)
                step(handled)
                i -= len(run.items) - handled
                run = _Pending()
                continue
            assert src is not None
            self.write_one(src, src_ids, existing_ids, by_origin, by_content)
            step(1)
            i += 1

    def _send(self, run: _Pending, existing_ids: set[str]) -> int:
        """Send the entries of ``run``; record those the target handled; return how many."""
        results = add_entries(self.target, [entry for _, entry, _ in run.items])
        handled = len(results)
        for src, _entry, _rep in reversed(run.items[handled:]):
            assert src.id is not None
            self._undo_build(src.id)
            if src.id in run.tentative:
                del self.id_map[src.id]
        for (src, entry, rep), result in zip(run.items, results, strict=False):
            assert src.id is not None
            if isinstance(result, Exception):
                if src.id in run.tentative:
                    del self.id_map[src.id]
                self.add_failed(src.id, rep, result)
            else:
                self.added(src.id, rep, entry, result, existing_ids)
        return handled


def _title(entry: MemoryEntry) -> str:
    from memcore.migrate.run import _label

    return _label(entry)
