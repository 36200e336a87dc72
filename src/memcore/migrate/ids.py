"""Id planning: the order entries are written in, the ids they are proposed, their relations mapped."""

from __future__ import annotations

from pydantic import JsonValue

from memcore.mapping import translate_relation_type
from memcore.migrate.fidelity import MEMCORE_NS, _assign, _content_key, _copy_all_set
from memcore.migrate.journal import origin_stamp
from memcore.migrate.state import _RunState
from memcore.models import MemoryEntry, Relation
from memcore.provider import BaseProvider
from memcore.provider import plan_ids as plan_target_ids


def _parents_first(order: list[MemoryEntry], by_id: dict[str, MemoryEntry]) -> list[MemoryEntry]:
    """Return ``order`` with every child moved right after its parent (stable otherwise)."""
    emitted: set[str | None] = set()
    waiting: dict[str, list[MemoryEntry]] = {}
    out: list[MemoryEntry] = []
    for entry in order:
        if entry.parent is not None and entry.parent in by_id and entry.parent not in emitted:
            waiting.setdefault(entry.parent, []).append(entry)
            continue
        ready = [entry]
        while ready:
            item = ready.pop()
            out.append(item)
            emitted.add(item.id)
            ready.extend(reversed(waiting.pop(item.id or "", [])))
    for rest in waiting.values():  # a parent cycle (bad data): keep the entries anyway
        out.extend(rest)
    return out


def _set_meta(entry: MemoryEntry, meta: dict[str, JsonValue]) -> None:
    """Put ``meta`` in ``entry.extra["memcore"]``, or drop the namespace when ``meta`` is empty."""
    if meta:
        entry.extra[MEMCORE_NS] = meta
    else:
        entry.extra.pop(MEMCORE_NS, None)


#: ``extra.memcore`` key recording relation types renamed on the way out of a format
_RENAMED = "relation_types"


def _forward_links(ordered: list[MemoryEntry], restored: dict[str, MemoryEntry], to_write: set[str | None]) -> bool:
    """Return whether an entry to write has a relation to an entry to write later in ``ordered``."""
    position = {e.id: i for i, e in enumerate(ordered) if e.id in to_write}
    for i, entry in enumerate(ordered):
        if entry.id not in to_write:
            continue
        for rel in restored[entry.id or ""].relations:
            if rel.resolved and position.get(rel.target, -1) > i:
                return True
    return False


class _IdPlanning(_RunState):
    """Building the entries to send: proposed ids, planned ids, relations through the id map."""

    def rename_relations(
        self,
        relations: list[Relation],
        origin: tuple[str, str] | None,
        renamed: object,
        meta: dict[str, JsonValue],
    ) -> list[Relation]:
        """Give relation types the target's names (``rel`` <-> ``related``), reversibly.

        Leaving a format, a type renamed is recorded in ``extra.memcore.relation_types``
        (source target id -> the source's own name); coming back home, exactly those are
        renamed back and nothing else, so A -> B -> A returns every type A had, also when A
        held both names (RightMemory's ``rel`` edge and a ``related`` kept in free data).
        """
        assert self.relation_types is not None
        src_types, tgt_types = self.relation_types
        home = origin is not None and origin[0] == self.tgt_fmt
        record = renamed if home and isinstance(renamed, dict) else {}
        out: list[Relation] = []
        record_out: dict[str, JsonValue] = {}
        for rel in relations:
            if home:  # rename back exactly what was renamed on the way out
                linked = self.originals.get(rel.target)
                came_from = self.home_of(linked)
                home_id = came_from[1] if came_from is not None and came_from[0] == self.tgt_fmt else None
                if not rel.resolved:
                    home_id = rel.target  # link text: the same in every format
                native = record.get(home_id) if isinstance(home_id, str) else None
                same = isinstance(native, str) and src_types.get(rel.type, rel.type) == tgt_types.get(native, native)
                name = native if same and isinstance(native, str) else rel.type
            else:
                name = translate_relation_type(rel.type, src_types, tgt_types)
            if name != rel.type:
                record_out[rel.target] = rel.type
                rel = rel.model_copy(update={"type": name})
            out.append(rel)
        if record_out:
            meta[_RENAMED] = record_out
        return out

    def build(
        self, src: MemoryEntry, src_ids: set[str], existing_ids: set[str], *, planning: bool = False
    ) -> MemoryEntry:
        """Return the entry to send for ``src`` (relations mapped where possible).

        The copy of the source entry with its relation types renamed depends on nothing but
        the source; ids, parent and relations are mapped from what the run knows now. Built
        with ``planning`` (for :meth:`plan_ids`, whose entries are dropped afterwards), that
        first part is kept, and the next build of ``src`` maps the same copy again instead of
        making another (``MEMCORE_MIGRATE_REUSE``).
        """
        assert src.id is not None
        cached = self.prebuilt.pop(src.id, None)
        if cached is not None:
            entry, base_meta, origin, relations, parent = cached
            entry.__dict__.update(relations=relations, parent=parent)  # as the first part left them
            meta = dict(base_meta)
        else:
            entry = _copy_all_set(self.restored[src.id])
            origin = self.home_of(entry)
            meta = dict(entry.extra.get(MEMCORE_NS, {}))
            meta.pop("migrated_from", None)
            meta.pop("kept", None)
            renamed = meta.pop(_RENAMED, None)
            if self.relation_types is not None:
                _assign(entry, "relations", self.rename_relations(entry.relations, origin, renamed, meta))
            if planning and self.reuse:
                self.prebuilt[src.id] = (entry, dict(meta), origin, entry.relations, entry.parent)
        key = self.keys[src.id]
        proposed: str | None = None
        if self.src_fmt == self.tgt_fmt:
            proposed = src.id
        elif origin is not None and origin[0] == self.tgt_fmt:
            proposed = origin[1]
        _assign(entry, "id", proposed if proposed is not None and proposed not in existing_ids else None)
        if src.id in self.predicted and self.predicted[src.id] not in existing_ids:
            _assign(entry, "id", self.predicted[src.id])  # what the trial run got: propose it again
        _assign(entry, "version", None)
        waiting = False
        if entry.parent is not None:
            if entry.parent in self.id_map:
                _assign(entry, "parent", self.id_map[entry.parent])
            elif entry.parent in src_ids:
                waiting = True  # a parent not written yet (bad data: parent cycle), or failed
        mapped: list[Relation] = []
        full: list[Relation] = []
        predicted = False
        for rel in entry.relations:
            if not rel.resolved:
                mapped.append(rel)
                full.append(rel)
            elif rel.target in self.id_map:
                new = Relation(type=rel.type, target=self.id_map[rel.target])
                mapped.append(new)
                full.append(new)
            elif rel.target in src_ids and rel.target in self.predicted:
                mapped.append(Relation(type=rel.type, target=self.predicted[rel.target]))
                full.append(rel)  # remapped in the second pass if the prediction fails
                predicted = True
            elif rel.target in src_ids:
                waiting = True
                full.append(rel)  # rewritten in the second pass
            else:
                dangling = Relation(type=rel.type, target=rel.target, resolved=False)
                mapped.append(dangling)
                full.append(dangling)
        _assign(entry, "relations", mapped)
        if waiting:
            self.pending[src.id] = full
        elif predicted:
            self.used_predictions[src.id] = full
        if entry.id != src.id:
            # the target entry will not carry the source entry's id: the stamp tells a re-run
            # which source entry it is (an entry that keeps its id is found by that id)
            meta["migrated_from"] = origin_stamp(key, None if waiting else self.hashes[src.id])
        _set_meta(entry, meta)
        return entry

    def _plans_ids(self) -> bool:
        """Whether the target has a ``plan_ids`` of its own (BaseProvider's default plans nothing)."""
        method = getattr(type(self.target), "plan_ids", None)
        return callable(method) and method is not BaseProvider.plan_ids

    def plan_ids(
        self,
        ordered: list[MemoryEntry],
        src_ids: set[str],
        index: tuple[dict[tuple[str, str], MemoryEntry], dict[tuple[str, str], MemoryEntry], set[str]],
    ) -> dict[str, str] | None:
        """Return the ids the target will assign, from its ``plan_ids()`` (nothing written).

        The entries are built as the first pass will send them, skipping those it will not
        add (migrated by an earlier run, or matched by content). ``None`` when the target
        cannot plan ids; a wrong plan is caught as ids are assigned, as a trial's would be.
        """
        if not self._plans_ids():
            return None
        by_origin, by_content, existing_ids = index
        unmatched = dict(by_content)
        ids = set(existing_ids)
        sends: list[MemoryEntry] = []
        keys: list[str] = []
        for src in ordered:
            assert src.id is not None
            if (self.src_fmt, src.id) in by_origin:
                continue  # migrated before: its id is known, updated in place if changed
            entry = self.build(src, src_ids, ids, planning=True)
            if unmatched.pop(_content_key(entry), None) is not None:
                self.prebuilt.pop(src.id, None)
                continue
            sends.append(entry)
            keys.append(src.id)
        self.pending.clear()  # build() noted relations to link; the first pass notes them again
        self.used_predictions.clear()
        planned = plan_target_ids(self.target, sends)
        if planned is None:
            return None
        return {key: tid for key, tid in zip(keys, planned, strict=True) if tid is not None}

    def _unpredict(self) -> None:
        """A planned id was not the one assigned (or its entry failed): link what used plans in the second pass."""
        self.predicted = {}
        self.pending.update(self.used_predictions)
        self.used_predictions = {}

    def _final_relations(self, full: list[Relation], first: list[Relation]) -> list[Relation]:
        """The relations of an entry once every id is known (``full``: as noted by build)."""
        relations: list[Relation] = []
        for rel in full:
            if rel in first or not rel.resolved:
                relations.append(rel)  # already mapped in the first pass, or a dangling link
            elif rel.target in self.id_map:
                relations.append(Relation(type=rel.type, target=self.id_map[rel.target]))
            else:  # its entry failed: keep the link text, unresolved
                relations.append(Relation(type=rel.type, target=rel.target, resolved=False))
        return relations
