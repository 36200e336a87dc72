"""The generic conversion's run: read the source, write every entry, link, verify (one :class:`_Run`)."""

from __future__ import annotations

import collections
import contextlib
import gc
import os
from typing import Any

from memcore.collector import paused_gc
from memcore.errors import AmbiguousIdError, ImmutableEntryError, MemcoreError, UnsupportedOperationError
from memcore.migrate.bulk import _BulkWriting
from memcore.migrate.fidelity import (
    MEMCORE_NS,
    _content_key,
    _ReadBack,
    _same,
    compare_entries,
    restore_kept,
    restored_or_same,
)
from memcore.migrate.ids import _forward_links, _parents_first
from memcore.migrate.journal import DIGEST_DIGITS, PENDING, origin_stamp
from memcore.migrate.report import (
    ConversionReport,
    EntryReport,
    FieldChange,
    UnresolvedLink,
    _collect_source_diagnostics,
)
from memcore.migrate.state import _batch, gc_pause_enabled, stamp_of
from memcore.migrate.stores import _scratch_copy
from memcore.models import MemoryEntry
from memcore.provider import Capability, read_all
from memcore.storage import scratch_writes


def _label(entry: MemoryEntry) -> str:
    if entry.title:
        return entry.title
    for line in entry.body.splitlines():
        if line.strip():
            return line.strip()[:80]
    return ""


class _Run(_BulkWriting, _ReadBack):
    """One generic conversion (kept out of :func:`~memcore.migrate.convert` for readability)."""

    # -- reading ------------------------------------------------------------------------
    def read_source(self) -> list[MemoryEntry]:
        """Read the source once; with ``check_source``, its validate() errors come from the same pass."""
        self.progress("read", 0, 0)
        if self.check_source:
            entries, diagnostics = read_all(self.source)
            _collect_source_diagnostics(diagnostics, self.report)
        else:
            entries = list(self.source.iter_entries())
        self.progress("read", len(entries), len(entries))
        self.hashes = {e.id: e.content_hash() for e in entries if e.id is not None}
        self.set_keys(list(self.hashes))
        return entries

    def ambiguous_ids(self, entries: list[MemoryEntry]) -> dict[str, list[EntryReport]]:
        """Return a ``failed`` report for each entry whose id another source entry also has.

        A provider that derives ids from content (Maka: a section without an id takes its
        title's slug) can read two entries under one id. Migrating either would be a guess (and
        the provenance of both would name one source id), so none of them is written; the
        error names the places, from the :class:`~memcore.errors.AmbiguousIdError` the
        source's ``get`` raises for the id (a provider that does not raise one is named by
        titles), and the fix.
        """
        counts = collections.Counter(e.id for e in entries if e.id is not None)
        out: dict[str, list[EntryReport]] = {}
        errors: dict[str, str] = {}
        for e in entries:
            if e.id is None or counts[e.id] < 2:
                continue
            if e.id not in errors:
                where = self._places(e.id, [x for x in entries if x.id == e.id])
                errors[e.id] = (
                    f"AmbiguousIdError: the source read {counts[e.id]} entries under id {e.id!r} ({where}); "
                    "none of them was migrated: give each its own id in the source and run the migration again"
                )
            report = EntryReport(source_id=e.id, kind=e.kind, title=_label(e), action="failed", error=errors[e.id])
            out.setdefault(e.id, []).append(report)
        return out

    def _places(self, entry_id: str, same: list[MemoryEntry]) -> str:
        """Where the entries under ``entry_id`` are: ``file:line`` from the source's refusal, else titles."""
        try:
            self.source.get(entry_id)
        except AmbiguousIdError as exc:
            if exc.places:
                return ", ".join(exc.places)
        except MemcoreError:
            pass
        return "titles " + ", ".join(repr(_label(e)) for e in same)

    def index_target(
        self,
    ) -> tuple[dict[tuple[str, str], MemoryEntry], dict[tuple[str, str], MemoryEntry], set[str]]:
        """Read the target once: entries by provenance, by content key, and every id."""
        by_origin: dict[tuple[str, str], MemoryEntry] = {}
        by_content: dict[tuple[str, str], MemoryEntry] = {}
        ids: set[str] = set()
        same_id: list[MemoryEntry] = []
        for entry in self.target.iter_entries():
            if entry.id is not None:
                ids.add(entry.id)
            stamp = stamp_of(entry)
            if stamp is not None and stamp[0] in self.by_key:
                by_origin[(self.src_fmt, self.by_key[stamp[0]])] = entry
            elif stamp is None and self.src_fmt == self.tgt_fmt and entry.id in self.originals:
                same_id.append(entry)
            elif stamp is None:
                by_content.setdefault(_content_key(entry), entry)
        for entry in same_id:
            # an unstamped entry under a source entry's id is that entry's copy when the last
            # run of this migration wrote it (the journal), or when it holds what the source
            # does; else it is another's (or edited since, with no journal to tell): left alone
            assert entry.id is not None
            if (self.src_fmt, entry.id) not in by_origin and (
                entry.id in self.edits.previous or self._same_as_source(entry.id, entry)
            ):
                by_origin[(self.src_fmt, entry.id)] = entry
            else:
                by_content.setdefault(_content_key(entry), entry)
        return by_origin, by_content, ids

    def _same_as_source(self, src_id: str, existing: MemoryEntry) -> bool:
        """Whether ``existing`` (same format, same id, no stamp) holds the source entry ``src_id`` as it is now."""
        found = self.same_as_source.get(src_id)
        if found is None:
            found = self.same_as_source[src_id] = not compare_entries(
                self.restored[src_id], restore_kept(existing), reuse=self.reuse
            )
        return found

    # -- the run -----------------------------------------------------------------------
    def run(self) -> None:
        """Read, write, link and verify (:mod:`memcore.migrate`, steps 1-4).

        The cyclic garbage collector is paused for the whole run (:func:`memcore.collector.paused_gc`;
        ``MEMCORE_MIGRATE_GC_PAUSE=0`` leaves it running): a run keeps every entry it read,
        wrote and read back until its report is done, and the collections that growing heap set
        off cost 25-30 % of a 10,000-entry run's CPU. Peak memory is the same either way (the
        reference cycles a run leaves are held by its open stores until they close).
        """
        self.freeze_gc = gc.get_freeze_count() == 0  # never undo a host application's own freeze
        try:
            with paused_gc() if gc_pause_enabled() else contextlib.nullcontext():
                self._run()
        finally:
            if self.freeze_gc:
                gc.unfreeze()

    def _run(self) -> None:
        report = self.report
        source_entries = self.read_source()
        # the source's entries live until the end: moved out of the collector's sight, every
        # collection during the writes stops rescanning them (a 10,000-entry run spent more
        # time in the cyclic GC than in the target's writes)
        if self.freeze_gc:
            gc.freeze()
        # entries read under one id (e.g. Maka sections with the same title) cannot each be
        # migrated as themselves: every one of them fails, naming its places; the rest go on
        every_read = source_entries
        ambiguous = self.ambiguous_ids(source_entries)
        source_entries = [e for e in source_entries if e.id not in ambiguous]
        src_ids = {e.id for e in source_entries if e.id is not None}
        self.originals = {e.id: e for e in source_entries if e.id is not None}
        # fields kept in free data by an earlier migration come back before anything else
        restored = [restored_or_same(e, reuse=self.reuse) for e in source_entries]
        self.restored = {e.id: e for e in restored if e.id is not None}
        unnamed = [e for e in source_entries if e.id is None]
        for e in unnamed:  # pragma: no cover - providers always set ids on read
            report.entries.append(
                EntryReport(source_id="", kind=e.kind, title=_label(e), action="failed", error="source entry has no id")
            )
        for e in restored:
            for rel in e.relations:
                if not rel.resolved:
                    report.unresolved_links.append(
                        UnresolvedLink(
                            source_id=e.id or "", type=rel.type, target=rel.target, reason="unresolved in source"
                        )
                    )
                elif rel.target not in src_ids:
                    reason = "ambiguous in source" if rel.target in ambiguous else "not in source"
                    report.unresolved_links.append(
                        UnresolvedLink(source_id=e.id or "", type=rel.type, target=rel.target, reason=reason)
                    )
        named = [e for e in restored if e.id is not None]
        # source order (parents first): documents keep their order, positional ids (WhiteBox
        # observations) come out the same, and relations that point forward get the ids a
        # trial run predicted, so that every entry is written once, by add
        order = _parents_first(named, {e.id: e for e in named if e.id is not None})
        ordered = [self.originals[e.id] for e in order if e.id]
        index = self.index_target()
        by_origin = index[0]
        for src in ordered:  # entries migrated by an earlier run: their ids are known
            found = by_origin.get((self.src_fmt, src.id or ""))
            if found is not None and found.id is not None:
                self.id_map[src.id or ""] = found.id
        to_write = {
            src.id
            for src in ordered
            if (self.src_fmt, src.id) not in by_origin
            or not self._written_as_is(by_origin[(self.src_fmt, src.id or "")], src.id or "")
        }
        if self.predict and _forward_links(ordered, self.restored, to_write):
            # Relations that point forward in the write order: the ids the target will assign
            # are asked for first (plan_ids), so every entry is written once, by add. A target
            # that cannot plan them gets those links in the second pass (one update per such
            # entry); one that cannot update either (append-only entries) would lose them, so
            # its ids are learnt by a trial run into a scratch copy. (A provider that plans ids
            # accepts a relation to a planned id before its entry exists; a graph that refuses
            # such an edge, RightMemory, has no plan_ids.)
            can_plan = self._plans_ids()
            must_learn = Capability.APPEND_ONLY in self.caps or Capability.UPDATE not in self.caps
            if can_plan or must_learn:
                self.progress("plan", 0, len(to_write))
            planned = self.plan_ids(ordered, src_ids, index) if can_plan else None
            if planned is not None:
                self.predicted = planned
            elif must_learn:
                self.predicted = self.predict_ids(ordered, src_ids)
        # one write session for every write of the run (first pass, links, repairs, kept
        # fields): a target that writes derived files when a session ends (Box's folder
        # indexes, a single-file store's one rewrite) writes them once; the read-back follows
        with _batch(self.target):
            self.write_all(ordered, src_ids, index)
            self.check_unchanged(src_ids)
            kept = self.keep_changed()
        self.verify(kept)
        # report in source order
        for e in every_read:
            if e.id in ambiguous:
                report.entries.append(ambiguous[e.id].pop(0))
            elif e.id is not None:
                report.entries.append(self.reports[e.id])
        failed = {r.source_id for r in report.entries if r.action == "failed"} - set(ambiguous)
        for e in restored:
            for rel in e.relations:
                if rel.resolved and rel.target in failed:
                    report.unresolved_links.append(
                        UnresolvedLink(source_id=e.id or "", type=rel.type, target=rel.target, reason="not migrated")
                    )

    def write_all(
        self,
        ordered: list[MemoryEntry],
        src_ids: set[str],
        index: tuple[dict[tuple[str, str], MemoryEntry], dict[tuple[str, str], MemoryEntry], set[str]] | None = None,
    ) -> None:
        """Write every entry in ``ordered`` (first pass), then the relations that waited."""
        by_origin, by_content, existing_ids = index or self.index_target()
        total = len(ordered)
        self.progress("write", 0, total)
        with _batch(self.target):
            if self.uses_bulk_add():
                self.write_bulk(ordered, src_ids, existing_ids, by_origin, by_content)
            else:
                for done, src in enumerate(ordered, 1):
                    self.write_one(src, src_ids, existing_ids, by_origin, by_content)
                    if done % 50 == 0 or done == total:
                        self.progress("write", done, total)
            self.second_pass()

    def predict_ids(self, ordered: list[MemoryEntry], src_ids: set[str]) -> dict[str, str]:
        """Return the ids the target will assign, learnt by a trial run into a scratch copy.

        Used when some relation points forward in the write order (e.g. a ``supersedes`` /
        ``superseded_by`` pair): the entry is then written with the predicted id of its
        target at once, instead of being updated afterwards. Ids are checked as they are
        assigned; a wrong guess falls back to the second pass.
        """
        cls: Any = type(self.target)
        options = dict(getattr(self.target, "options", {}) or {})
        with (
            _scratch_copy(os.fspath(self.target.location)) as scratch,
            scratch_writes(),
            cls(scratch, **options) as probe,
        ):
            trial = _Run(self.source, probe, ConversionReport(source="", target=""), None, predict=False)
            trial.hashes, trial.originals, trial.restored = self.hashes, self.originals, self.restored
            trial.keys, trial.by_key, trial.edits.homes = self.keys, self.by_key, self.edits.homes
            trial.write_all(ordered, src_ids)
            return dict(trial.id_map)

    def write_one(
        self,
        src: MemoryEntry,
        src_ids: set[str],
        existing_ids: set[str],
        by_origin: dict[tuple[str, str], MemoryEntry],
        by_content: dict[tuple[str, str], MemoryEntry],
    ) -> None:
        assert src.id is not None
        rep = EntryReport(source_id=src.id, kind=src.kind, title=_label(src), action="written")
        self.reports[src.id] = rep
        existing = by_origin.get((self.src_fmt, src.id))
        try:
            entry = self.build(src, src_ids, existing_ids)
            if existing is None:
                match = by_content.get(_content_key(entry))
                if match is not None and match.id is not None:
                    by_content.pop(_content_key(entry))
                    rep.action, rep.target_id = "unchanged", match.id
                    self.id_map[src.id] = match.id
                    self.pending.pop(src.id, None)
                    self._keep_version(match.id, match.version)
                    return
                stored = self.target.add(entry)
            else:
                assert existing.id is not None
                self.id_map[src.id] = existing.id
                if self._written_as_is(existing, src.id):
                    # written completely by an earlier run (an unfinished one has "pending")
                    rep.action, rep.target_id = "unchanged", existing.id
                    self.pending.pop(src.id, None)
                    self._keep_version(existing.id, existing.version)
                    self.unchanged.append((src, existing))
                    return
                last = self.edits.previous.get(existing.id)
                if self._edited_since(existing) and any(
                    c.field != "updated_at" for c in compare_entries(entry, restore_kept(existing), reuse=self.reuse)
                ):
                    # changed in the source, and edited in the target since the last run (to
                    # something else than the source now says: the same edit on both sides is none)
                    rep.action, rep.target_id = "conflict", existing.id
                    rep.error = (
                        "edited in the target since the last migration, and changed in the source: "
                        "left as it is in the target (re-run with --overwrite to replace it with the source's)"
                    )
                    self.pending.pop(src.id, None)
                    self._record_version(existing.id, last)  # reported again until resolved
                    return
                entry.id = existing.id
                self._stamp_done(entry, src.id, existing, done=src.id not in self.pending)
                try:
                    stored = self.target.update(entry, expected_version=existing.version)
                except (UnsupportedOperationError, ImmutableEntryError) as exc:
                    rep.target_id = existing.id
                    changes = compare_entries(entry, restore_kept(existing), reuse=self.reuse)
                    differs = sorted({c.field for c in changes})
                    stamp = stamp_of(existing)
                    if stamp is not None and stamp[1] == PENDING and set(differs) <= {"relations", "updated_at"}:
                        # an earlier run left its links to write and the source did not change:
                        # the links it cannot take are losses, listed on every run
                        rep.action, rep.losses = "unchanged", changes
                        rep.error = (
                            f"the target cannot update this entry ({type(exc).__name__}); differences are losses"
                        )
                    else:
                        # the source's change was not applied: reported on every run (like a
                        # conflict) until the source holds what the target does
                        rep.action = "not_updatable"
                        rep.error = (
                            f"changed in the source ({', '.join(differs) or 'content'}) but not applied, "
                            f"the target cannot update this entry: {type(exc).__name__}: {exc}"
                        )
                    self.pending.pop(src.id, None)
                    self._keep_version(existing.id, existing.version)
                    return
                rep.action = "updated"
        except (MemcoreError, ValueError, OSError) as exc:
            self.add_failed(src.id, rep, exc)
            return
        self.added(src.id, rep, entry, stored, existing_ids)

    def add_failed(self, src_id: str, rep: EntryReport, exc: Exception) -> None:
        """Record that the entry of ``src_id`` was not written (``exc``: what refused it)."""
        rep.action, rep.error = "failed", f"{type(exc).__name__}: {exc}"
        self.pending.pop(src_id, None)
        if src_id in self.predicted:
            self._unpredict()  # entries already written point at the id it was to get

    def added(
        self, src_id: str, rep: EntryReport, entry: MemoryEntry, stored: MemoryEntry, existing_ids: set[str]
    ) -> None:
        """Record the entry of ``src_id`` as written: ``entry`` as sent, ``stored`` as the target returned it."""
        src = self.originals[src_id]
        assert stored.id is not None and src.id is not None
        rep.target_id = stored.id
        self.id_map[src.id] = stored.id
        existing_ids.add(stored.id)
        self.sent[src.id] = (entry, stored)
        self._record_version(stored.id, stored.version)  # as returned; the read-back confirms it
        if stamp_of(entry) is None:
            if stored.id != src.id and Capability.UPDATE in self.caps:
                # the target gave another id than the source's: stamped in the second pass
                self.pending.setdefault(src.id, list(entry.relations))
            elif src.id not in self.pending:
                self.edits.current_digests[stored.id] = self.hashes[src.id][:DIGEST_DIGITS]
        self.edits.origins[self.keys[src.id]] = (self.src_fmt, src.id)
        if src.id in self.predicted and self.predicted[src.id] != stored.id:
            self._unpredict()

    def check_unchanged(self, src_ids: set[str]) -> None:
        """Repair, or list, relations of unchanged entries that point where this run would not.

        A relation is written with the id its target had then: if that entry failed (the link
        was kept as unresolved text), or got another id than planned, an entry left unchanged
        keeps the old link. Measured against every id known now, such an entry is updated with
        the right relations (action ``updated``) where the target can and the journal shows it
        as the last run left it; otherwise (an append-only entry, or no journal to tell a user's
        edit) the difference is a loss of ``relations``, reported on every run while it lasts.
        An entry edited in the target since the last run is left alone: its relations are the
        user's.
        """
        for src, existing in self.unchanged:
            assert src.id is not None and existing.id is not None
            entry = self.build(src, src_ids, set())
            full = self.pending.pop(src.id, None)
            wanted = entry.relations if full is None else self._final_relations(full, entry.relations)
            held = restore_kept(existing)
            if _same("relations", MemoryEntry(relations=wanted), held):
                continue
            rep = self.reports[src.id]
            if self._edited_since(existing):
                continue  # its relations are the user's now
            if Capability.UPDATE in self.caps and existing.id in self.edits.previous:  # as memcore left it
                entry.id, entry.relations = existing.id, wanted
                self._stamp_done(entry, src.id, existing)
                try:
                    stored = self.target.update(entry, expected_version=existing.version)
                except (UnsupportedOperationError, ImmutableEntryError):
                    pass  # append-only: a loss, below
                except MemcoreError as exc:
                    rep.error = f"relations not repaired: {type(exc).__name__}: {exc}"
                else:
                    rep.action = "updated"
                    self.sent[src.id] = (entry, stored)
                    self._record_version(existing.id, stored.version)
                    continue
            rep.losses.append(
                FieldChange(
                    field="relations",
                    written=[r.model_dump(mode="json") for r in wanted],
                    stored=[r.model_dump(mode="json") for r in held.relations],
                )
            )

    def _written_as_is(self, existing: MemoryEntry, src_id: str) -> bool:
        """Whether ``existing`` was written completely (not ``pending``) from the source entry as it is now.

        A stamped entry says so by its digest. An unstamped one (it keeps the source entry's
        id) by the digest the journal recorded for it, or else by holding what the source does.
        """
        stamp = stamp_of(existing)
        if stamp is None:
            if existing.id != src_id or src_id not in self.restored:
                return False
            digest = self.hashes[src_id][:DIGEST_DIGITS]
            if self.edits.digests.get(src_id) == digest or self._same_as_source(src_id, existing):
                self.edits.current_digests[src_id] = digest
                return True
            return False
        stamped_id = self.by_key.get(stamp[0])
        return stamped_id is not None and stamp[1] == self.hashes[stamped_id][:DIGEST_DIGITS]

    def _stamp_done(
        self, entry: MemoryEntry, src_id: str, existing: MemoryEntry | None = None, *, done: bool = True
    ) -> None:
        """Give ``entry`` (about to be written) the stamp it needs, or none (:mod:`memcore.migrate`, step 2).

        An entry under another id than its source entry's, or replacing a stamped entry, is
        stamped with the content digest (``pending`` unless ``done``); an entry that keeps the
        source's id carries no stamp, and its digest goes to the journal once ``done``.
        """
        found = entry.extra.get(MEMCORE_NS)
        meta = dict(found) if isinstance(found, dict) else {}
        if existing is not None:  # an update: stamped as the entry it replaces is (or for another id)
            stamped = entry.id != src_id or stamp_of(existing) is not None
        else:
            stamped = "migrated_from" in meta or entry.id != src_id
        if stamped:
            meta["migrated_from"] = origin_stamp(self.keys[src_id], self.hashes[src_id] if done else None)
        else:
            meta.pop("migrated_from", None)
            if done and entry.id is not None:
                self.edits.current_digests[entry.id] = self.hashes[src_id][:DIGEST_DIGITS]
        if meta:
            entry.extra[MEMCORE_NS] = meta
        else:
            entry.extra.pop(MEMCORE_NS, None)

    def _edited_since(self, existing: MemoryEntry) -> bool:
        """Whether ``existing`` was edited in the target since the last run wrote it (and may not be overwritten)."""
        last = self.edits.previous.get(existing.id or "")
        return last is not None and existing.version not in (None, last) and not self.edits.overwrite

    def _keep_version(self, target_id: str, version: str | None) -> None:
        """Record the version of an entry this run did not write: the one a run last wrote, if known.

        An edit made in the target since is no new baseline: it stays a difference from what
        memcore wrote, so a later change in the source meets it as a conflict. An entry the
        journal does not know (no journal, a deleted one, the target reached by another path)
        takes its current version as the baseline, and the report's notes count them.
        """
        last = self.edits.previous.get(target_id)
        if last is None:
            self.edits.unknown += 1
        self._record_version(target_id, last if last is not None else version)

    def second_pass(self) -> None:
        total = len(self.pending)
        if total:
            self.progress("link", 0, total)
        for done, (src_id, full) in enumerate(list(self.pending.items()), 1):
            rep = self.reports[src_id]
            if rep.action == "failed" or src_id not in self.sent:
                continue
            entry, stored = self.sent[src_id]
            relations = self._final_relations(full, entry.relations)
            final = entry.model_copy(deep=True)
            final.id = stored.id
            final.relations = relations
            parent = self.restored[src_id].parent
            if parent is not None and parent in self.id_map:
                final.parent = self.id_map[parent]
            self._stamp_done(final, src_id)
            if Capability.UPDATE not in self.caps:
                self.sent[src_id] = (final, stored)  # verification reports the missing relations
                continue
            try:
                stored = self.target.update(final, expected_version=stored.version)
            except (UnsupportedOperationError, ImmutableEntryError) as exc:
                if final.relations != entry.relations or final.parent != entry.parent:
                    rep.error = f"second pass (relations): {type(exc).__name__}: {exc}"
                    self.sent[src_id] = (final, stored)
                continue  # a stamp alone: the entry is found by its content, or the journal
            except MemcoreError as exc:
                rep.error = f"second pass (relations): {type(exc).__name__}: {exc}"
                self.sent[src_id] = (final, stored)
                continue
            self.sent[src_id] = (final, stored)
            self._record_version(stored.id or "", stored.version)
            if done % 50 == 0 or done == total:
                self.progress("link", done, total)
        self.pending.clear()
