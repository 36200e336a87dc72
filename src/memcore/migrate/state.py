"""What one run carries between its phases: the two stores, the id map, what was sent and returned."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from memcore.mapping import relation_types
from memcore.migrate.journal import EditCheck, legacy_origin, origin_key, parse_stamp
from memcore.migrate.report import ConversionReport, EntryReport, FieldChange, ProgressCallback
from memcore.models import MemoryEntry, Relation
from memcore.provider import Capability, MemoryProvider
from memcore.switches import switch_on


def gc_pause_enabled() -> bool:
    """Whether a migration pauses the cyclic garbage collector while it runs (default: yes).

    ``MEMCORE_MIGRATE_GC_PAUSE=0`` (or ``false``, ``no``, ``off``) leaves the collector running;
    see :meth:`memcore.migrate.run._Run.run`.
    """
    return switch_on("MEMCORE_MIGRATE_GC_PAUSE")


def reuse_enabled() -> bool:
    """Whether a migration shares work between its phases (default: yes); ``MEMCORE_MIGRATE_REUSE=0``: off.

    On: an entry built for the target's ``plan_ids`` is finished again for the first pass
    instead of being copied and mapped twice; a source entry with nothing kept stands for itself
    once its kept fields are restored (no copy); comparisons of written and stored entries
    first compare the core fields at once; ``keep`` copies the entry it updates field by
    field instead of through ``deepcopy``. Off, each of those runs its general path; the
    entries sent, the bytes written and the report are the same.
    """
    return switch_on("MEMCORE_MIGRATE_REUSE")


def _batch(provider: MemoryProvider) -> contextlib.AbstractContextManager[Any]:
    batch = getattr(provider, "batch", None)
    if callable(batch):
        manager: contextlib.AbstractContextManager[Any] = batch()
        return manager
    return contextlib.nullcontext()


def _meta(entry: MemoryEntry) -> dict[str, Any]:
    """Return ``entry.extra["memcore"]`` (empty when absent or not a mapping)."""
    meta = entry.extra.get("memcore")
    return meta if isinstance(meta, dict) else {}


def stamp_of(entry: MemoryEntry) -> tuple[str, str] | None:
    """Return ``(origin key, digest)`` of an entry memcore migrated, ``None`` for any other."""
    return parse_stamp(_meta(entry).get("migrated_from"))


class _RunState:
    """State of one generic conversion, shared by its phases (:mod:`memcore.migrate.run` and the mixins)."""

    def __init__(
        self,
        source: MemoryProvider,
        target: MemoryProvider,
        report: ConversionReport,
        progress: ProgressCallback | None,
        *,
        predict: bool = True,
        check_source: bool = True,
        validate: bool = True,
        edits: EditCheck | None = None,
    ) -> None:
        self.predict = predict
        #: whether this run shares work between its phases (:func:`reuse_enabled`)
        self.reuse = reuse_enabled()
        #: source id -> what build() made of it for plan_ids, finished again by the first pass
        self.prebuilt: dict[
            str, tuple[MemoryEntry, dict[str, Any], tuple[str, str] | None, list[Relation], str | None]
        ] = {}
        #: the last run's target versions (to leave entries edited since alone), and this run's
        self.edits = edits if edits is not None else EditCheck()
        self.check_source = check_source
        self.validate = validate
        #: whether run() freezes the collector's view of the source (see run)
        self.freeze_gc = False
        #: source id -> target id a trial run assigned (append-only targets, see predict_ids)
        self.predicted: dict[str, str] = {}
        #: source id -> full relation list, for entries written with predicted ids
        self.used_predictions: dict[str, list[Relation]] = {}
        self.source = source
        self.target = target
        self.report = report
        self.progress = progress or (lambda phase, done, total: None)
        self.src_fmt = source.format_name
        self.tgt_fmt = target.format_name
        #: (source, target) native relation type tables, when the formats differ and either has one
        tables = (relation_types(self.src_fmt), relation_types(self.tgt_fmt)) if self.src_fmt != self.tgt_fmt else None
        self.relation_types = tables if tables is not None and any(tables) else None
        loc = os.fspath(source.location)
        self.src_loc = loc if Capability.REMOTE in source.capabilities else os.path.realpath(loc)
        #: ``format:location`` of the source as the journal names it (origin keys hash it)
        self.src_url = f"{self.src_fmt}:{self.src_loc}"
        #: source id -> its origin key, and back (filled as the source is read)
        self.keys: dict[str, str] = {}
        self.by_key: dict[str, str] = {}
        self.caps = target.capabilities
        self.id_map: dict[str, str] = {}
        self.reports: dict[str, EntryReport] = {}
        #: source id -> (entry as last sent, entry as returned by the provider)
        self.sent: dict[str, tuple[MemoryEntry, MemoryEntry]] = {}
        #: (source entry, target entry) of entries left unchanged, for check_unchanged
        self.unchanged: list[tuple[MemoryEntry, MemoryEntry]] = []
        #: source id -> compare_entries(sent, returned), judged by keep() (verify reuses it
        #: when the entry read back equals the one returned)
        self.returned_changes: dict[str, list[FieldChange]] = {}
        #: source id -> whether the unstamped same-id target entry holds the source entry as it is
        self.same_as_source: dict[str, bool] = {}
        #: source id -> the full relation list still to write in the second pass
        self.pending: dict[str, list[Relation]] = {}
        #: source id -> content hash of the source entry
        self.hashes: dict[str, str] = {}
        #: source id -> entry as read / with kept fields restored
        self.originals: dict[str, MemoryEntry] = {}
        self.restored: dict[str, MemoryEntry] = {}

    def set_keys(self, ids: list[str]) -> None:
        """Compute the origin key of every source id (:func:`~memcore.migrate.journal.origin_key`)."""
        self.keys = {i: origin_key(self.src_url, i) for i in ids}
        self.by_key = {k: i for i, k in self.keys.items()}

    def home_of(self, entry: MemoryEntry | None) -> tuple[str, str] | None:
        """Return ``(format, id)`` a source entry was migrated from, when known.

        From the origins file of the source store (an earlier migration into it recorded the
        key), or from a record of an earlier memcore version that named them in the entry.
        """
        value = _meta(entry).get("migrated_from") if entry is not None else None
        legacy = legacy_origin(value)
        if legacy is not None:
            return legacy
        stamp = parse_stamp(value)
        return self.edits.homes.get(stamp[0]) if stamp is not None else None

    def _record_version(self, target_id: str, version: str | None) -> None:
        if version is not None:
            self.edits.current[target_id] = version
