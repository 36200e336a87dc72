"""Conversion between stores: read with provider A, write with provider B, measure what was lost.

The generic conversion goes through :class:`~memcore.models.MemoryEntry`: every entry read from
the source is written to the target, then **read back** from the target and compared field by
field with what was written. Every difference is reported in a :class:`ConversionReport`, so the
report is measured, never guessed. A direct converter registered through the
``memcore_register_converters`` hook (see :class:`Converter`) is preferred where one exists for
the pair.

What the conversion does, in order (docs/migration.md explains each step for users):

1. **Order.** Source entries are written in the source's own order (a child right after its
   parent when it came before it), so documents keep their order and positional ids (WhiteBox
   observations ``observations/2026-03.md#2``) come out the same in a same-format copy. When
   a relation points forward (at an entry written later; ``supersedes`` / ``superseded_by``
   pairs always do one way), the ids the target will give are asked for first, with the
   provider's optional :meth:`~memcore.provider.BaseProvider.plan_ids` (a format that names
   entries by position or path tells them without writing); the real run proposes those ids
   and writes every relation at once, so each entry is written exactly once, by ``add`` (an
   ``update`` would stamp ``updated_at`` on most formats, and append-only entries cannot be
   updated at all). A target that cannot plan ids gets those relations in a second pass
   through ``update``, and so does a graph format (``GRAPH``), which refuses an edge to an
   entry that does not exist yet; one that can neither plan ids nor update gets
   them from a **trial run** into a scratch copy of the target. If the target assigns another
   id than planned, the relations concerned are rewritten in the second pass.
2. **Provenance.** Each written entry carries ``extra["memcore"]["migrated_from"] =
   {"format", "location", "id", "sha256"}``: the source format, location (an absolute path
   for file stores: it travels with the target; docs/migration.md says why it is absolute), id
   and the sha256 of the source entry's
   :meth:`~memcore.models.MemoryEntry.content_hash`. A second run finds the entry by
   ``(format, location, id)`` (two sources migrated into one target never overwrite each
   other; a moved source is a new source): same hash -> *unchanged* (nothing written),
   another hash -> *updated*. An interrupted run resumes: what was written is found, the rest is written.
   While an entry still waits for its second-pass relations its hash is ``"pending"``, so an
   interruption between the passes is repaired by the next run. Where the target cannot keep
   ``extra["memcore"]``, entries are matched by ``(title, body)`` (whitespace-trimmed)
   instead, and the report says so.
3. **Read back.** After the writes, the target is read once and each written entry is compared
   with what was sent (id and version aside). A core field the target changed is then
   **kept in free data** when the target allows it: ``extra["memcore"]["kept"][field] =
   {"value": <original>, "if_sha256": <sha256 of what the target stored>}`` is written with a
   second ``update``; a later conversion out of that store restores ``value`` when the field
   still holds what the target stored (a field edited since is left alone; ``updated_at``,
   which most formats stamp on every write, comes back only while nothing else in the entry
   changed). A field neither held nor kept is a *loss*, listed per entry and field.
4. **Ids.** Same-format copies propose the source id; an entry that came from the target's
   format (``migrated_from.format``) gets its original id proposed back. A provider may assign
   its own id instead; relations are rewritten through the resulting id map either way. A
   relation to an entry that is not in the source (or was not written) is reported as an
   unresolved link and kept as unresolved link text.

Dry runs and ``strict`` never touch the real target: they run the same conversion into a
scratch copy of the target (or a fresh scratch store when the target does not exist yet) in a
temporary folder, so their report is as measured as a real run's. ``strict`` writes the real
target only when that scratch run lost nothing and failed nothing.

A target that is the source, lies inside it or contains it is refused before anything is
written (:func:`_refuse_overlap`). Both stores are read with ``read_all()`` (entries and
``validate()`` diagnostics from one pass): the source's errors (files or entries it could not
read, which ``iter_entries`` skips) go to ``ConversionReport.source_errors`` and its
``*.unread-text`` warnings (text in no entry) to ``ConversionReport.unread_text``, so neither
can vanish silently; the target's read-back measures every entry written.

The source is only read. It is opened with ``read_only=True`` when its provider takes that
option (:func:`source_options_for`). A remote target (``REMOTE``) is set up by
:func:`migrate` only when opening it says it holds no store yet, and cannot be dry-run (there is
no local scratch copy of it).
"""

from __future__ import annotations

import collections
import contextlib
import gc
import hashlib
import inspect
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import pluggy
from pydantic import BaseModel, Field, JsonValue, computed_field

from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ImmutableEntryError,
    MemcoreError,
    UnsupportedOperationError,
)
from memcore.journal import EditCheck, journal_path, load_journal, save_journal
from memcore.mapping import relation_types, translate_relation_type
from memcore.models import Diagnostic, Kind, MemoryEntry, Relation, Severity, json_copy, utc_now
from memcore.provider import BaseProvider, Capability, MemoryProvider, read_all
from memcore.provider import plan_ids as plan_target_ids
from memcore.registry import ProviderRegistry, get_registry
from memcore.storage import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, scratch_writes

__all__ = [
    "MEMCORE_NS",
    "ConversionReport",
    "Converter",
    "EntryReport",
    "FieldChange",
    "ProgressCallback",
    "UnresolvedLink",
    "compare_entries",
    "convert",
    "find_converter",
    "migrate",
    "restore_kept",
    "source_options_for",
]

#: The ``extra`` namespace memcore itself uses for migration bookkeeping.
MEMCORE_NS = "memcore"

#: Core fields compared on read-back, in report order (``id`` and ``version`` aside).
CORE_FIELDS: tuple[str, ...] = (
    "kind",
    "title",
    "body",
    "status",
    "tags",
    "confidence",
    "source",
    "created_at",
    "updated_at",
    "date_only",
    "scope",
    "relations",
    "parent",
    "expires_at",
)

#: ``progress(phase, done, total)``: phase is ``"read"``, ``"plan"`` (ids asked of the target
#: or learnt by a trial run, only when relations point forward), ``"write"``, ``"link"`` or
#: ``"verify"``.
ProgressCallback = Callable[[str, int, int], None]

Action = Literal["written", "updated", "unchanged", "conflict", "failed"]


@runtime_checkable
class Converter(Protocol):
    """A direct converter between two formats, registered through ``memcore_register_converters``.

    A direct converter replaces the generic conversion for its pair. It must keep the promises
    of the generic one: never modify ``source``, record every entry and every loss in
    ``report`` (``report.entries``, ``report.unresolved_links``), and leave the target valid.

    Attributes:
        source_format: Format name it reads, e.g. ``"whitebox"``.
        target_format: Format name it writes, e.g. ``"box"``.
    """

    source_format: str
    target_format: str

    def convert(self, source: MemoryProvider, target: MemoryProvider, report: ConversionReport) -> None:
        """Copy every entry of the opened ``source`` into the opened ``target``, filling ``report``."""


class FieldChange(BaseModel):
    """One field the target did not give back as it was written.

    Attributes:
        field: Dotted field name: a core field (``"confidence"``) or ``"extra.<ns>.<key>"``;
            ``"*"`` when the whole entry was not read back.
        written: The value sent to the target (JSON form).
        stored: The value read back (JSON form); ``None`` when absent.
        kept_in: Where the original value was kept instead (``"extra.memcore.kept"``), or
            ``None`` for a loss.
    """

    field: str
    written: JsonValue = None
    stored: JsonValue = None
    kept_in: str | None = None


class EntryReport(BaseModel):
    """What happened to one source entry.

    Attributes:
        source_id: Id in the source store.
        target_id: Id in the target store (``None`` when it could not be written).
        kind: The entry's kind (as read from the source).
        title: Its title, or the first line of its body when it has none (for reading the report).
        action: ``written`` (added), ``updated`` (source changed since the last run),
            ``unchanged`` (already migrated, nothing written), ``conflict`` (the source
            changed, but so did the target entry since the last run: left alone, see
            :mod:`memcore.journal`) or ``failed``.
        losses: Fields the target could not hold and that were not kept elsewhere.
        kept: Fields the target could not hold natively but kept in free data.
        error: Why the entry failed, for ``failed``; what was left alone, for ``conflict``.
    """

    source_id: str
    target_id: str | None = None
    kind: Kind
    title: str = ""
    action: Action
    losses: list[FieldChange] = Field(default_factory=list)
    kept: list[FieldChange] = Field(default_factory=list)
    error: str | None = None


class UnresolvedLink(BaseModel):
    """A relation the conversion could not point at a target entry.

    Attributes:
        source_id: The entry holding the relation (source id).
        type: Relation type.
        target: The relation's target as written in the source.
        reason: ``"unresolved in source"`` (a dangling link already), ``"not in source"`` (the
            id names no source entry), ``"ambiguous in source"`` (the id names two or more
            source entries, none migrated) or ``"not migrated"`` (its entry failed).
    """

    source_id: str
    type: str
    target: str
    reason: str


class ConversionReport(BaseModel):
    """The measured result of one conversion.

    Attributes:
        source: Source store URL.
        target: Target store URL (the real target, also for dry runs).
        converter: ``"generic"`` or the qualified name of the direct converter used.
        dry_run: The run wrote into a scratch copy, not the target.
        strict: The run was asked to refuse any loss.
        refused: ``strict`` found losses or failures in its scratch run and wrote nothing.
        started_at: When the run started (UTC).
        duration_ms: Wall time in milliseconds.
        entries: One :class:`EntryReport` per source entry, in source order.
        unresolved_links: Relations that could not be rewritten to a target id.
        notes: Store-level remarks (e.g. the target cannot keep provenance).
        diagnostics: Errors and warnings of the target's own ``validate()`` after the run.
        source_errors: The source's own ``validate()`` diagnostics of severity error, collected
            before converting: files or entries the source could not read, which therefore
            were not migrated (counted as ``counts["unreadable"]``; they make the run not
            :attr:`ok` and ``strict`` refuse).
        unread_text: The source's ``validate()`` warnings with a code ending in ``.unread-text``:
            text in the source files that its reader puts in no entry (free prose between
            entries, text inside a graph node's list item), so no conversion carries it. Counted
            as ``counts["unread_text"]``; a run with any is not :attr:`lossless` (``--strict``
            refuses it).
    """

    source: str
    target: str
    converter: str = "generic"
    dry_run: bool = False
    strict: bool = False
    refused: bool = False
    started_at: str = Field(default_factory=lambda: utc_now().isoformat().replace("+00:00", "Z"))
    duration_ms: float = 0.0
    entries: list[EntryReport] = Field(default_factory=list)
    unresolved_links: list[UnresolvedLink] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    source_errors: list[Diagnostic] = Field(default_factory=list)
    unread_text: list[Diagnostic] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def counts(self) -> dict[str, int]:
        """Totals by action and outcome.

        Keys: ``read``, ``written``, ``updated``, ``unchanged``, ``conflict``, ``failed``, ``lossy``, ``kept``,
        ``unresolved_links``, ``unreadable`` (source error diagnostics, :attr:`source_errors`)
        and ``unread_text`` (passages of source text in no entry, :attr:`unread_text`).
        """
        out = {"read": len(self.entries), "written": 0, "updated": 0, "unchanged": 0, "conflict": 0, "failed": 0}
        for entry in self.entries:
            out[entry.action] += 1
        out["lossy"] = sum(1 for e in self.entries if e.losses)
        out["kept"] = sum(1 for e in self.entries if e.kept)
        out["unresolved_links"] = len(self.unresolved_links)
        out["unreadable"] = len(self.source_errors)
        out["unread_text"] = len(self.unread_text)
        return out

    @computed_field  # type: ignore[prop-decorator]
    @property
    def by_kind(self) -> dict[str, dict[str, int]]:
        """The same totals per source kind: ``{kind: {"read": n, "written": n, ...}}``."""
        out: dict[str, dict[str, int]] = {}
        for entry in self.entries:
            row = out.setdefault(
                entry.kind.value,
                {"read": 0, "written": 0, "updated": 0, "unchanged": 0, "conflict": 0, "failed": 0, "lossy": 0},
            )
            row["read"] += 1
            row[entry.action] += 1
            row["lossy"] += 1 if entry.losses else 0
        return dict(sorted(out.items()))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lost_fields(self) -> dict[str, int]:
        """How many entries lost each field: ``{"confidence": 12, "extra.box.team": 3}``."""
        out: dict[str, int] = {}
        for entry in self.entries:
            for loss in entry.losses:
                out[loss.field] = out.get(loss.field, 0) + 1
        return dict(sorted(out.items()))

    @property
    def ok(self) -> bool:
        """Nothing failed, no conflict was left alone, nothing unreadable, ``strict`` did not refuse."""
        return (
            not self.refused
            and not self.source_errors
            and not any(e.action in ("failed", "conflict") for e in self.entries)
        )

    @property
    def lossless(self) -> bool:
        """No entry lost a field, none failed, and no source text was outside every entry."""
        return self.ok and not self.unread_text and not any(e.losses for e in self.entries)

    def entry(self, source_id: str) -> EntryReport:
        """Return the report of the entry with ``source_id``.

        Raises:
            KeyError: No such source entry in this report.
        """
        for item in self.entries:
            if item.source_id == source_id:
                return item
        raise KeyError(source_id)


# --------------------------------------------------------------------------------------------
# Field comparison and the "kept" stash
# --------------------------------------------------------------------------------------------


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha(value: Any) -> str:
    return hashlib.sha256(_canon(value).encode("utf-8")).hexdigest()


def _field_json(entry: MemoryEntry, name: str) -> JsonValue:
    data: JsonValue = entry.model_dump(mode="json", include={name})[name]
    return data


_ALL_FIELDS = frozenset(MemoryEntry.model_fields)


def _copy_all_set(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of a validated entry with every field marked explicitly set.

    A value the source left at its default is still the value to send (``kind`` unset means
    "the target's default kind" to some providers). Not validated again: every value comes
    from a validated entry; the lists and ``extra`` are copies (relations are immutable).
    """
    values = {name: getattr(entry, name) for name in _ALL_FIELDS}
    values["tags"] = list(entry.tags)
    values["relations"] = list(entry.relations)
    values["extra"] = json_copy(entry.extra)
    return MemoryEntry.model_construct(_fields_set=set(_ALL_FIELDS), **values)


def _json_same(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same JSON (``_canon(a) == _canon(b)``, without serialising).

    Stricter than ``==``: ``1``, ``1.0`` and ``True`` differ, as their JSON does.
    """
    if a is b:
        return True
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(_json_same, a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_same(value, b[key]) for key, value in a.items())
    return bool(a == b)


def _same(name: str, a: MemoryEntry, b: MemoryEntry) -> bool:
    left, right = getattr(a, name), getattr(b, name)
    if name == "confidence" and left is not None and right is not None:
        return abs(float(left) - float(right)) < 1e-9
    if name == "relations":  # an entry's relations are a set of edges: order is not data
        if left == right:
            return True
        return sorted(_canon(r.model_dump()) for r in left) == sorted(_canon(r.model_dump()) for r in right)
    return bool(left == right)


def compare_entries(written: MemoryEntry, stored: MemoryEntry) -> list[FieldChange]:
    """Return every field of ``written`` that ``stored`` does not hold the same.

    Core fields are compared by value (confidence to 1e-9, relations as a set of edges:
    their order is not data); ``extra`` per namespace and
    top-level key, only for keys ``written`` has (a target adding its own bookkeeping keys is
    not a change). ``id``, ``version`` and ``extra["memcore"]`` are not compared.

    Args:
        written: The entry as sent to the target.
        stored: The same entry as read back.

    Returns:
        One :class:`FieldChange` per differing field, in :data:`CORE_FIELDS` order then extra.
    """
    changes: list[FieldChange] = []
    for name in CORE_FIELDS:
        if not _same(name, written, stored):
            changes.append(
                FieldChange(field=name, written=_field_json(written, name), stored=_field_json(stored, name))
            )
    for ns, values in written.extra.items():
        if ns == MEMCORE_NS:
            continue
        got = stored.extra.get(ns, {})
        for key, value in values.items():
            if key not in got or not _json_same(got[key], value):
                changes.append(FieldChange(field=f"extra.{ns}.{key}", written=value, stored=got.get(key)))
    return changes


def _fingerprint(entry: MemoryEntry) -> str:
    """Return the sha256 of ``entry``'s content less ``updated_at`` and ``extra.memcore``."""
    data = entry.content_dict()
    data.pop("updated_at", None)
    data.pop("id", None)
    data["extra"].pop(MEMCORE_NS, None)
    return _sha(data)


def _stash_for(change: FieldChange, stored_entry: MemoryEntry) -> dict[str, JsonValue]:
    """Return the ``kept`` record for a changed core field (compact for trimmed strings).

    ``if_sha256`` is the sha256 of the value the target stored; for ``updated_at``, which
    providers stamp on every write, it is the :func:`_fingerprint` of the whole stored entry
    instead, so the original time comes back only while nothing else in the entry changed.
    """
    if change.field == "updated_at":
        return {"if_entry_sha256": _fingerprint(stored_entry), "value": change.written}
    record: dict[str, JsonValue] = {"if_sha256": _sha(change.stored)}
    written, stored = change.written, change.stored
    if isinstance(written, str) and isinstance(stored, str) and stored and stored in written:
        start = written.find(stored)
        prefix, suffix = written[:start], written[start + len(stored) :]
        if len(prefix) + len(suffix) < len(written):
            record["prefix"] = prefix
            record["suffix"] = suffix
            return record
    record["value"] = written
    return record


def restore_kept(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` with the fields kept in ``extra["memcore"]["kept"]`` restored.

    A field is restored only when it still holds what the target stored when it was kept
    (``if_sha256``); a field edited since keeps its new value. The ``kept`` record itself is
    dropped from the copy.

    Args:
        entry: An entry read from a store that memcore migrated into.

    Returns:
        A new entry; ``entry`` is not modified. When nothing was kept (most entries), a
        shallow copy: its lists and ``extra`` are ``entry``'s own, so do not mutate them.
    """
    found = entry.extra.get(MEMCORE_NS)
    if not isinstance(found, dict) or not isinstance(found.get("kept"), dict):
        return entry.model_copy()
    out = entry.model_copy(deep=True)
    meta = out.extra[MEMCORE_NS]
    assert isinstance(meta, dict)
    kept = meta.pop("kept")
    assert isinstance(kept, dict)
    data = out.model_dump(mode="json")
    fingerprint = _fingerprint(out)
    for name, record in kept.items():
        if name not in CORE_FIELDS or not isinstance(record, dict):
            continue
        if "if_entry_sha256" in record:
            if record["if_entry_sha256"] != fingerprint:
                continue
        elif _sha(data.get(name)) != record.get("if_sha256"):
            continue
        if "value" in record:
            data[name] = record["value"]
        elif isinstance(data.get(name), str):
            data[name] = f"{record.get('prefix', '')}{data[name]}{record.get('suffix', '')}"
    if not meta:
        data["extra"].pop(MEMCORE_NS, None)
    else:
        data["extra"][MEMCORE_NS] = meta
    return MemoryEntry.model_validate(data)


# --------------------------------------------------------------------------------------------
# The generic conversion
# --------------------------------------------------------------------------------------------


def _label(entry: MemoryEntry) -> str:
    if entry.title:
        return entry.title
    for line in entry.body.splitlines():
        if line.strip():
            return line.strip()[:80]
    return ""


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


def _provenance(entry: MemoryEntry) -> dict[str, Any] | None:
    meta = entry.extra.get(MEMCORE_NS)
    if isinstance(meta, dict) and isinstance(meta.get("migrated_from"), dict):
        found = meta["migrated_from"]
        assert isinstance(found, dict)
        return dict(found)
    return None


def _batch(provider: MemoryProvider) -> contextlib.AbstractContextManager[Any]:
    batch = getattr(provider, "batch", None)
    if callable(batch):
        manager: contextlib.AbstractContextManager[Any] = batch()
        return manager
    return contextlib.nullcontext()


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


def _content_key(entry: MemoryEntry) -> tuple[str, str]:
    return (entry.title.strip(), entry.body.strip())


class _Run:
    """State of one generic conversion (kept out of :func:`convert` for readability)."""

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
        self.src_loc = loc if Capability.REMOTE in source.capabilities else os.path.abspath(loc)
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
        #: source id -> the full relation list still to write in the second pass
        self.pending: dict[str, list[Relation]] = {}
        #: source id -> content hash of the source entry
        self.hashes: dict[str, str] = {}
        #: source id -> entry as read / with kept fields restored
        self.originals: dict[str, MemoryEntry] = {}
        self.restored: dict[str, MemoryEntry] = {}

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
        for entry in self.target.iter_entries():
            if entry.id is not None:
                ids.add(entry.id)
            origin = _provenance(entry)
            if (
                origin is not None
                and origin.get("format") == self.src_fmt
                and origin.get("location") == self.src_loc
                and isinstance(origin.get("id"), str)
            ):
                by_origin[(self.src_fmt, origin["id"])] = entry
            elif origin is None:
                by_content.setdefault(_content_key(entry), entry)
        return by_origin, by_content, ids

    # -- building target entries ---------------------------------------------------------
    def rename_relations(
        self,
        relations: list[Relation],
        origin: dict[str, Any] | None,
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
        home = origin is not None and origin.get("format") == self.tgt_fmt
        record = renamed if home and isinstance(renamed, dict) else {}
        out: list[Relation] = []
        record_out: dict[str, JsonValue] = {}
        for rel in relations:
            if home:  # rename back exactly what was renamed on the way out
                linked = self.originals.get(rel.target)
                came_from = _provenance(linked) if linked is not None else None
                home_id = came_from.get("id") if came_from and came_from.get("format") == self.tgt_fmt else None
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

    def build(self, src: MemoryEntry, src_ids: set[str], existing_ids: set[str]) -> MemoryEntry:
        """Return the entry to send for ``src`` (relations mapped where possible)."""
        assert src.id is not None
        entry = _copy_all_set(self.restored[src.id])
        origin = _provenance(entry)
        meta = dict(entry.extra.get(MEMCORE_NS, {}))
        meta.pop("migrated_from", None)
        meta.pop("kept", None)
        renamed = meta.pop(_RENAMED, None)
        if self.relation_types is not None:
            entry.relations = self.rename_relations(entry.relations, origin, renamed, meta)
        origin_record: dict[str, JsonValue] = {
            "format": self.src_fmt,
            "location": self.src_loc,
            "id": src.id,
            "sha256": self.hashes[src.id],
        }
        meta["migrated_from"] = origin_record
        entry.extra[MEMCORE_NS] = meta
        proposed: str | None = None
        if self.src_fmt == self.tgt_fmt:
            proposed = src.id
        elif origin is not None and origin.get("format") == self.tgt_fmt and isinstance(origin.get("id"), str):
            proposed = origin["id"]
        entry.id = proposed if proposed is not None and proposed not in existing_ids else None
        if src.id in self.predicted and self.predicted[src.id] not in existing_ids:
            entry.id = self.predicted[src.id]  # what the trial run got: propose it again
        entry.version = None
        waiting = False
        if entry.parent is not None:
            if entry.parent in self.id_map:
                entry.parent = self.id_map[entry.parent]
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
        entry.relations = mapped
        if waiting:
            self.pending[src.id] = full
            origin_record["sha256"] = "pending"
        elif predicted:
            self.used_predictions[src.id] = full
        return entry

    # -- the run -----------------------------------------------------------------------
    def run(self) -> None:
        """Read, write, link and verify (module docstring, steps 1-4)."""
        self.freeze_gc = gc.get_freeze_count() == 0  # never undo a host application's own freeze
        try:
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
        restored = [restore_kept(e) for e in source_entries]
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
            or (_provenance(by_origin[(self.src_fmt, src.id or "")]) or {}).get("sha256") != self.hashes[src.id or ""]
        }
        if self.predict and _forward_links(ordered, self.restored, to_write):
            # Relations that point forward in the write order: the ids the target will assign
            # are asked for first (plan_ids), so every entry is written once, by add. A target
            # that cannot plan them gets those links in the second pass (one update per such
            # entry); one that cannot update either (append-only entries) would lose them, so
            # its ids are learnt by a trial run into a scratch copy. (A graph is not asked: it
            # refuses an edge to an entry that does not exist yet.)
            can_plan = Capability.GRAPH not in self.caps and self._plans_ids()
            must_learn = Capability.APPEND_ONLY in self.caps or Capability.UPDATE not in self.caps
            if can_plan or must_learn:
                self.progress("plan", 0, len(to_write))
            planned = self.plan_ids(ordered, src_ids, index) if can_plan else None
            if planned is not None:
                self.predicted = planned
            elif must_learn:
                self.predicted = self.predict_ids(ordered, src_ids)
        self.write_all(ordered, src_ids, index)
        self.check_unchanged(src_ids)
        self.verify()
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
            for done, src in enumerate(ordered, 1):
                self.write_one(src, src_ids, existing_ids, by_origin, by_content)
                if done % 50 == 0 or done == total:
                    self.progress("write", done, total)
            self.second_pass()

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
            entry = self.build(src, src_ids, ids)
            if unmatched.pop(_content_key(entry), None) is not None:
                continue
            sends.append(entry)
            keys.append(src.id)
        self.pending.clear()  # build() noted relations to link; the first pass notes them again
        self.used_predictions.clear()
        planned = plan_target_ids(self.target, sends)
        if planned is None:
            return None
        return {key: tid for key, tid in zip(keys, planned, strict=True) if tid is not None}

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
                origin = _provenance(existing) or {}
                if origin.get("sha256") == self.hashes[src.id]:
                    # written completely by an earlier run (an unfinished one has "pending")
                    rep.action, rep.target_id = "unchanged", existing.id
                    self.pending.pop(src.id, None)
                    self._keep_version(existing.id, existing.version)
                    self.unchanged.append((src, existing))
                    return
                last = self.edits.previous.get(existing.id)
                if self._edited_since(existing) and any(
                    c.field != "updated_at" for c in compare_entries(entry, restore_kept(existing))
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
                try:
                    stored = self.target.update(entry, expected_version=existing.version)
                except (UnsupportedOperationError, ImmutableEntryError) as exc:
                    # an append-only entry: what differs from the source stays a loss, listed on
                    # every run (not a failure: nothing this run could do)
                    rep.action, rep.target_id = "unchanged", existing.id
                    rep.error = f"the target cannot update this entry ({type(exc).__name__}); differences are losses"
                    rep.losses = compare_entries(entry, restore_kept(existing))
                    self.pending.pop(src.id, None)
                    self._keep_version(existing.id, existing.version)
                    return
                rep.action = "updated"
        except (MemcoreError, ValueError, OSError) as exc:
            rep.action, rep.error = "failed", f"{type(exc).__name__}: {exc}"
            self.pending.pop(src.id, None)
            if src.id in self.predicted:
                self._unpredict()  # entries already written point at the id it was to get
            return
        assert stored.id is not None
        rep.target_id = stored.id
        self.id_map[src.id] = stored.id
        existing_ids.add(stored.id)
        self.sent[src.id] = (entry, stored)
        self._record_version(stored.id, stored.version)  # as returned; the read-back confirms it
        if src.id in self.predicted and self.predicted[src.id] != stored.id:
            self._unpredict()

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
                meta = entry.extra[MEMCORE_NS]
                assert isinstance(meta, dict) and isinstance(meta["migrated_from"], dict)
                meta["migrated_from"]["sha256"] = self.hashes[src.id]
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

    def _edited_since(self, existing: MemoryEntry) -> bool:
        """Whether ``existing`` was edited in the target since the last run wrote it (and may not be overwritten)."""
        last = self.edits.previous.get(existing.id or "")
        return last is not None and existing.version not in (None, last) and not self.edits.overwrite

    def _record_version(self, target_id: str, version: str | None) -> None:
        if version is not None:
            self.edits.current[target_id] = version

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
            meta = final.extra[MEMCORE_NS]
            assert isinstance(meta, dict) and isinstance(meta["migrated_from"], dict)
            meta["migrated_from"]["sha256"] = self.hashes[src_id]
            if Capability.UPDATE not in self.caps:
                self.sent[src_id] = (final, stored)  # verification reports the missing relations
                continue
            try:
                stored = self.target.update(final, expected_version=stored.version)
            except MemcoreError as exc:
                rep.error = f"second pass (relations): {type(exc).__name__}: {exc}"
                self.sent[src_id] = (final, stored)
                continue
            self.sent[src_id] = (final, stored)
            self._record_version(stored.id or "", stored.version)
            if done % 50 == 0 or done == total:
                self.progress("link", done, total)
        self.pending.clear()

    def verify(self) -> None:
        """Keep what the target changed, then read the target back once and measure every entry.

        The fields a target changed are found from what ``add``/``update`` returned (the
        conformance suite checks that equals a read) and kept in free data first (:meth:`keep`);
        the one read-back that follows (``read_all``: entries and the target's diagnostics)
        measures every entry, kept fields included, so the report never rests on a returned value.
        """
        if not self.sent and not self.validate:
            return
        self.progress("verify", 0, len(self.sent))
        kept = self.keep()
        if self.validate:
            entries, diagnostics = read_all(self.target)
            self.report.diagnostics.extend(d for d in diagnostics if d.severity is not Severity.INFO)
        else:
            entries = list(self.target.iter_entries())
        stored_all = {e.id: e for e in entries if e.id is not None}
        provenance_lost = False
        where = f"extra.{MEMCORE_NS}.kept"
        total = len(self.sent)
        for done, (src_id, (written, returned)) in enumerate(self.sent.items(), 1):
            rep = self.reports[src_id]
            tid = rep.target_id
            got = stored_all.get(tid) if tid is not None else None
            if got is None:
                rep.action = "failed"
                rep.error = f"written as {tid!r} but not found when the target was read back"
                rep.losses = [FieldChange(field="*", written=None, stored=None)]
                continue
            self._record_version(got.id or "", got.version)
            if _provenance(got) is None:
                provenance_lost = True
            changes = self.returned_changes.get(src_id)
            if changes is None or src_id in kept or got != returned:
                changes = compare_entries(written, got)  # else: read back as returned, same comparison
            if src_id in kept:
                after = {c.field for c in compare_entries(written, restore_kept(got))}
                rep.losses = [c for c in changes if c.field in after]
                rep.kept = [c.model_copy(update={"kept_in": where}) for c in changes if c.field not in after]
            else:
                rep.losses = changes
            if done % 200 == 0 or done == total:
                self.progress("verify", done, total)
        if provenance_lost:
            self.report.notes.append(
                f"{self.tgt_fmt}: the target did not keep extra.memcore.migrated_from; a second run "
                "matches entries by title and body instead of by source id"
            )

    def keep(self) -> set[str]:
        """Write ``extra.memcore.kept`` for core fields the target changed; return whose.

        Judged from the entries ``add``/``update`` returned; :meth:`verify` then measures the
        result by reading the target.
        """
        if Capability.UPDATE not in self.caps:
            return set()
        stash: dict[str, list[FieldChange]] = {}
        for src_id, (written, returned) in self.sent.items():
            if _provenance(returned) is None:
                continue
            changes = self.returned_changes[src_id] = compare_entries(written, returned)
            core = [c for c in changes if not c.field.startswith("extra.")]
            if core:
                stash[src_id] = core
        done: set[str] = set()
        with _batch(self.target):
            for src_id, changes in stash.items():
                written, returned = self.sent[src_id]
                got = returned.model_copy(deep=True)
                meta = dict(got.extra.get(MEMCORE_NS, {}))
                kept: dict[str, JsonValue] = {c.field: _stash_for(c, got) for c in changes}
                if "updated_at" not in kept and written.updated_at is not None:
                    # this update stamps updated_at on most targets: keep the original too
                    kept["updated_at"] = {
                        "if_entry_sha256": _fingerprint(got),
                        "value": _field_json(written, "updated_at"),
                    }
                meta["kept"] = kept
                got.extra[MEMCORE_NS] = meta
                try:
                    self.target.update(got, expected_version=got.version)
                except MemcoreError:
                    continue
                done.add(src_id)
        return done


def convert(
    source: MemoryProvider,
    target: MemoryProvider,
    report: ConversionReport | None = None,
    *,
    progress: ProgressCallback | None = None,
    validate: bool = True,
    check_source: bool = True,
    edits: EditCheck | None = None,
) -> ConversionReport:
    """Copy every entry of ``source`` into ``target`` through :class:`MemoryEntry` and measure it.

    This is the generic conversion (module docstring, steps 1-4). Both stores must be open.
    Entries that fail (the target refuses them) are reported as ``failed`` and the run goes
    on; nothing is raised for a single entry. The target's ``validate()`` diagnostics of
    severity error or warning are added to the report.

    Args:
        source: The opened source store; only read.
        target: The opened target store; written.
        report: Report to fill (default: a new one).
        progress: Called as ``progress(phase, done, total)`` while running.
        validate: Run the target's ``validate()`` afterwards and add its errors and warnings
            to the report.
        check_source: Read the source with ``read_all()`` (its ``validate()`` in the same pass)
            and put its errors in ``report.source_errors``: entries a provider could not read
            are skipped by ``iter_entries`` and would otherwise vanish without a word.
        edits: The last run's target versions: an entry to update that was edited in the
            target since is reported as ``conflict`` and left alone (unless
            ``edits.overwrite``); ``edits.current`` receives this run's versions
            (:mod:`memcore.journal`). ``None``: no check.

    Returns:
        The filled report.

    Raises:
        MemcoreError: Reading the source or indexing the target failed as a whole.
    """
    started = time.perf_counter()
    if report is None:
        report = ConversionReport(source=_url(source), target=_url(target))
    _Run(source, target, report, progress, check_source=check_source, validate=validate, edits=edits).run()
    report.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    return report


def _collect_source_errors(source: MemoryProvider, report: ConversionReport) -> None:
    """Add the source's ``validate()`` errors and unread text to the report (validate never raises)."""
    _collect_source_diagnostics(source.validate(), report)


#: Suffix of the diagnostic code a reader gives text it puts in no entry (``rm.unread-text``)
UNREAD_TEXT_CODE = ".unread-text"


def _collect_source_diagnostics(diagnostics: Iterable[Diagnostic], report: ConversionReport) -> None:
    for diag in diagnostics:
        if diag.severity is Severity.ERROR:
            report.source_errors.append(diag)
        elif diag.code.endswith(UNREAD_TEXT_CODE):
            report.unread_text.append(diag)


def _url(provider: MemoryProvider) -> str:
    url = getattr(provider, "url", None)
    return url if isinstance(url, str) else f"{provider.format_name}:{provider.location}"


# --------------------------------------------------------------------------------------------
# Direct converters, opening stores, dry runs
# --------------------------------------------------------------------------------------------


def find_converter(source_format: str, target_format: str, pm: pluggy.PluginManager | None = None) -> Converter | None:
    """Return the first direct converter registered for the pair, or ``None``.

    Args:
        source_format: Source format name.
        target_format: Target format name.
        pm: Plugin manager to ask (default: the process-wide one).
    """
    if pm is None:
        from memcore.plugins import get_plugin_manager

        pm = get_plugin_manager()
    for batch in pm.hook.memcore_register_converters():
        for conv in batch or []:
            if (
                getattr(conv, "source_format", None) == source_format
                and getattr(conv, "target_format", None) == target_format
            ):
                found: Converter = conv
                return found
    return None


def source_options_for(cls: type[Any]) -> dict[str, Any]:
    """Return the options that open a store of provider ``cls`` read-only.

    ``read_only`` is the option name the built-in providers share (a read-only Maka store, for
    example, never rewrites expired entries as archived while being read). It is passed when
    the provider names a ``read_only`` parameter in ``__init__``, lists ``"read_only"`` in a
    class attribute ``options``, or takes arbitrary ``**options`` (as
    :class:`~memcore.provider.BaseProvider` does); otherwise this returns ``{}``. Either way
    the conversion only ever reads the source.
    """
    declared = getattr(cls, "options", None)
    if isinstance(declared, (set, frozenset, list, tuple, dict)) and "read_only" in declared:
        return {"read_only": True}
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return {}
    if "read_only" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return {"read_only": True}
    return {}


def _exists(location: str) -> bool:
    return os.path.exists(location)


def _init_if_missing(cls: type[Any], location: str, options: dict[str, Any]) -> bool:
    if Capability.REMOTE in getattr(cls, "capabilities", frozenset()):
        # A remote location (a Box folder id) always "exists": ask the provider whether it holds
        # a store, and set one up only when opening says it does not.
        probe = cls(location, **options)
        try:
            probe.open()
        except ConfigError:
            cls.init_store(location, **options)
            return True
        probe.close()
        return False
    if _exists(location):
        return False
    parent = os.path.dirname(os.path.abspath(location))
    os.makedirs(parent, exist_ok=True)
    cls.init_store(location, **options)
    return True


def _store_area(location: str) -> tuple[str, bool]:
    """Return ``(resolved real path, is a single-file store)`` for a local store location.

    A location is a single-file store when it is an existing file, or does not exist and its
    name has a suffix (``maka:./m/MEMORY.md``); an existing folder or a suffix-less new name
    is a folder store.
    """
    real = os.path.realpath(location)
    if os.path.isfile(real):
        return real, True
    if os.path.exists(real):
        return real, False
    return real, bool(Path(real).suffix)


def _within(inner: str, outer: str) -> bool:
    return inner != outer and os.path.commonpath([inner, outer]) == outer


def _refuse_overlap(src_cls: type[Any], src_loc: str, dst_cls: type[Any], dst_loc: str) -> None:
    """Refuse a target that is the source, lies inside it, or contains it (findings D1).

    Locations are compared as resolved real paths (symlinks, ``..`` and ``.`` followed). A
    single-file store (``maka:./m/MEMORY.md``) is its file; two single-file stores in one folder
    overlap too (they share the folder's side files, e.g. Maka's ``PENDING.md`` and ``.bak``).
    Remote locations (``REMOTE`` capability) are not paths and are not checked.

    Raises:
        ConfigError: The two locations overlap; nothing has been written.
    """
    for cls in (src_cls, dst_cls):
        if Capability.REMOTE in getattr(cls, "capabilities", frozenset()):
            return
    src, src_file = _store_area(src_loc)
    dst, dst_file = _store_area(dst_loc)
    problem = ""
    if src == dst:
        problem = "are the same location"
    elif not src_file and _within(dst, src):
        problem = "overlap: the target lies inside the source"
    elif not dst_file and _within(src, dst):
        problem = "overlap: the target contains the source"
    elif src_file and dst_file and os.path.dirname(src) == os.path.dirname(dst):
        problem = "overlap: both are single-file stores in the same folder (which holds their side files)"
    if problem:
        raise ConfigError(
            f"source {src_loc} and target {dst_loc} {problem} ({src} / {dst}); writing would change "
            "the source or mix the two stores: pick a target outside the source"
        )


def _unscratch(report: ConversionReport, scratch: str, real: str) -> None:
    """Name the real target instead of the scratch copy in ``report``'s texts (N5).

    The "created a new … store" note becomes "would create …" (nothing was created at the real
    target); scratch paths in notes, entry errors and target diagnostics become ``real``.
    """

    def fix(text: str) -> str:
        return text.replace(scratch, real)

    notes = []
    for note in report.notes:
        note = fix(note)
        notes.append("would create " + note.removeprefix("created ") if note.startswith("created a new ") else note)
    report.notes = notes
    for entry in report.entries:
        if entry.error is not None:
            entry.error = fix(entry.error)
    report.diagnostics = [
        d.model_copy(update={"message": fix(d.message), "path": None if d.path is None else fix(d.path)})
        for d in report.diagnostics
    ]


def _private_copy(src: str, dst: str) -> str:
    """Copy ``src`` to ``dst`` as :func:`shutil.copy2` does, then make the copy 0600 (scratch copies)."""
    shutil.copy2(src, dst)
    os.chmod(dst, PRIVATE_FILE_MODE)
    return dst


@contextlib.contextmanager
def _scratch_copy(location: str) -> Iterator[str]:
    """Yield a scratch location in a temporary folder holding a copy of ``location`` (if any).

    The folder and every folder copied are 0700, every file copied 0600 (issue 17: derived
    copies are as private as their source, whatever its own modes).
    """
    tmp = tempfile.mkdtemp(prefix="memcore-migrate-")  # mkdtemp creates it 0700
    try:
        name = Path(location).name or "store"
        dest = os.path.join(tmp, name)
        if os.path.isdir(location):
            shutil.copytree(location, dest, symlinks=True, copy_function=_private_copy)
            for folder, _dirs, _files in os.walk(dest):
                os.chmod(folder, PRIVATE_DIR_MODE)
        elif os.path.isfile(location):
            _private_copy(location, dest)
        yield dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _open(
    url: str | MemoryProvider, registry: ProviderRegistry, **options: Any
) -> tuple[type[Any], str, dict[str, Any]]:
    """Return ``(provider class, location, options)`` for a URL or an (unopened) provider."""
    if isinstance(url, str):
        from memcore.config import parse_store_url

        spec = parse_store_url(url, registry=registry)
        cls = registry.get(spec.format_name)
        return cls, spec.location, {**spec.options, **options}
    cls = type(url)
    return cls, os.fspath(url.location), {**dict(getattr(url, "options", {})), **options}


def _run_once(
    src_cls: type[Any],
    src_loc: str,
    src_opts: dict[str, Any],
    dst_cls: type[Any],
    dst_loc: str,
    dst_opts: dict[str, Any],
    report: ConversionReport,
    pm: pluggy.PluginManager | None,
    progress: ProgressCallback | None,
    validate: bool = True,
    edits: EditCheck | None = None,
) -> ConversionReport:
    conv = find_converter(src_cls.format_name, dst_cls.format_name, pm) if pm is not None else None
    with contextlib.ExitStack() as stack:
        # the source is opened and the target's options checked (its constructor) first: a
        # source that cannot be opened or a mistyped option leaves no new target behind
        source = stack.enter_context(src_cls(src_loc, **src_opts))
        target_provider = dst_cls(dst_loc, **dst_opts)
        if _init_if_missing(dst_cls, dst_loc, dst_opts):
            report.notes.append(f"created a new {dst_cls.format_name} store at {dst_loc}")
        target = stack.enter_context(target_provider)
        if conv is not None:
            report.converter = f"{type(conv).__module__}.{type(conv).__qualname__}"
            started = time.perf_counter()
            _collect_source_errors(source, report)
            conv.convert(source, target, report)
            if validate:
                report.diagnostics.extend(d for d in target.validate() if d.severity is not Severity.INFO)
            report.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        else:
            convert(source, target, report, progress=progress, validate=validate, edits=edits)
    return report


def migrate(
    source: str | MemoryProvider,
    target: str | MemoryProvider,
    *,
    dry_run: bool = False,
    strict: bool = False,
    registry: ProviderRegistry | None = None,
    progress: ProgressCallback | None = None,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
    validate: bool = True,
    overwrite: bool = False,
) -> ConversionReport:
    """Migrate a store into another (any format to any format) and return the measured report.

    ``source`` and ``target`` are store URLs (``whitebox:./vault``) or provider objects (not
    opened; their class, ``location`` and ``options`` are used). The target is created with
    its provider's ``init_store`` when its location does not exist. A direct converter for the
    pair is used when a plugin registers one; otherwise :func:`convert`.

    Args:
        source: Where to read from; never modified.
        target: Where to write to.
        dry_run: Convert into a scratch copy of the target and report; the target is untouched.
        strict: First convert into a scratch copy; write the target only when that run had no
            loss, no failure and no unreadable source entry (``source_errors``), else return
            its report with ``refused=True``.
        registry: Provider registry (default: the process-wide one); its plugin manager is
            asked for direct converters.
        progress: ``progress(phase, done, total)`` callback.
        source_options: Extra provider options for the source.
        target_options: Extra provider options for the target.
        validate: Add the target's ``validate()`` errors and warnings to the report (one
            more full read of the target).
        overwrite: Update target entries whose source changed even when they were edited in
            the target since the last run (default: such an entry is a ``conflict``, left
            alone). The last run is known from its journal (:mod:`memcore.journal`), written
            after every real run (not after dry runs or a refused ``strict``).

    Returns:
        The :class:`ConversionReport` of the run that decided the outcome (the scratch run for
        ``dry_run`` and for a refused ``strict``).

    Raises:
        ConfigError: A URL cannot be parsed, or source and target overlap: the same location,
            the target inside the source or containing it (resolved real paths; remote
            locations are not checked); nothing is written then.
        UnknownFormatError: A format is not installed.
        MemcoreError: The source cannot be read or the target cannot be created.
    """
    reg = registry or get_registry()
    src_cls, src_loc, src_opts = _open(source, reg, **(source_options or {}))
    src_opts = {**source_options_for(src_cls), **src_opts}
    dst_cls, dst_loc, dst_opts = _open(target, reg, **(target_options or {}))
    dst_opts = {**dict(getattr(dst_cls, "migration_target_options", None) or {}), **dst_opts}
    _refuse_overlap(src_cls, src_loc, dst_cls, dst_loc)
    if not _exists(src_loc) and Capability.REMOTE not in getattr(src_cls, "capabilities", frozenset()):
        raise ConfigError(f"{src_cls.format_name}: source {src_loc} does not exist")
    src_url, dst_url = f"{src_cls.format_name}:{src_loc}", f"{dst_cls.format_name}:{dst_loc}"
    pm = reg.pm
    journal_key = (_journal_url(src_cls, src_loc), _journal_url(dst_cls, dst_loc))
    previous, journal_problem = load_journal(*journal_key)

    def edit_check() -> EditCheck:
        return EditCheck(previous=previous, overwrite=overwrite)

    def noted(report: ConversionReport) -> ConversionReport:
        if journal_problem is not None:
            report.notes.append(f"{journal_problem}: target edits since the last run were not checked")
        return report

    def scratch_run() -> ConversionReport:
        report = ConversionReport(source=src_url, target=dst_url, dry_run=True, strict=strict)
        with _scratch_copy(dst_loc) as scratch, scratch_writes():
            _run_once(
                src_cls, src_loc, src_opts, dst_cls, scratch, dst_opts, report, pm, progress, validate, edit_check()
            )
        _unscratch(report, scratch, dst_loc)
        return noted(report)

    remote_target = Capability.REMOTE in getattr(dst_cls, "capabilities", frozenset())
    if (dry_run or strict) and remote_target:
        raise ConfigError(
            f"{dst_cls.format_name}: --dry-run and --strict convert into a local scratch copy of the "
            "target, which a remote store cannot have; migrate into a local store of the same format "
            "first, or run without them"
        )
    if dry_run:
        return scratch_run()
    if strict:
        trial = scratch_run()
        if not trial.lossless:
            trial.refused = True
            trial.notes = [n for n in trial.notes if not n.startswith("would create ")]
            trial.notes.append(
                "--strict: the target was not written because the trial run lists losses, failures, "
                "conflicts (entries edited in the target since the last run) or source entries that could not be read"
            )
            return trial
    report = ConversionReport(source=src_url, target=dst_url, strict=strict)
    edits = edit_check()
    finished = False
    try:
        _run_once(src_cls, src_loc, src_opts, dst_cls, dst_loc, dst_opts, report, pm, progress, validate, edits)
        finished = True
    finally:
        # also when interrupted (Ctrl-C, a crash): what was written is recorded, the rest keeps
        # what the last run recorded
        if report.converter == "generic":  # a direct converter does not report versions
            versions = edits.current if finished else {**previous, **edits.current}
            try:
                save_journal(*journal_key, versions)
            except OSError as exc:
                report.notes.append(
                    f"the migration journal could not be written ({exc}): the next run cannot tell "
                    "target edits made in between"
                )
    if edits.unknown:
        report.notes.append(
            f"{edits.unknown} entries migrated by an earlier run had no version in the migration journal "
            f"({journal_path(*journal_key)}; first run with it, deleted, or the target reached by another "
            "path): edits made to them in the target before this run could not be told apart, and their "
            "current state is the baseline from now on"
        )
    return noted(report)


def _journal_url(cls: type[Any], location: str) -> str:
    """``format:location`` naming a store in the journal (resolved real path for file stores)."""
    remote = Capability.REMOTE in getattr(cls, "capabilities", frozenset())
    return f"{cls.format_name}:{location if remote else os.path.realpath(location)}"


def iter_losses(report: ConversionReport) -> Iterable[tuple[EntryReport, FieldChange]]:
    """Yield ``(entry report, loss)`` for every loss in ``report``, in entry order."""
    for entry in report.entries:
        for loss in entry.losses:
            yield entry, loss
