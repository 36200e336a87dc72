"""Fidelity: compare what was written with what the target holds, keep what it changed, read back."""

from __future__ import annotations

import hashlib
import json
import operator
import os
import unicodedata
from typing import Any

from pydantic import JsonValue

from memcore.errors import MemcoreError
from memcore.migrate.report import EntryReport, FieldChange
from memcore.migrate.state import _batch, _RunState, reuse_enabled, stamp_of
from memcore.models import MemoryEntry, Relation, Severity, json_copy
from memcore.provider import Capability, ManyReferenceReading, ReferenceReading, read_all
from memcore.switches import switch_on

__all__ = ["CORE_FIELDS", "MEMCORE_NS", "compare_entries", "restore_kept"]

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


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: hex digits of the sha256 a ``kept`` record holds (64 bits: it tells an edit, it secures nothing)
_KEPT_DIGITS = 16


def _sha(value: Any) -> str:
    return hashlib.sha256(_canon(value).encode("utf-8")).hexdigest()


def _short_sha(value: Any) -> str:
    return _sha(value)[:_KEPT_DIGITS]


def _sha_matches(value: Any, recorded: object) -> bool:
    """Whether ``recorded`` (a short or a full hex sha256, as earlier versions wrote) is ``value``'s."""
    return isinstance(recorded, str) and len(recorded) >= _KEPT_DIGITS and _sha(value).startswith(recorded)


def _field_json(entry: MemoryEntry, name: str) -> JsonValue:
    data: JsonValue = entry.model_dump(mode="json", include={name})[name]
    return data


_ALL_FIELDS = frozenset(MemoryEntry.model_fields)

#: Whether :func:`_copy_all_set` takes its fast path (a copy of the instance's field dict, a
#: third of the general path's cost, which a migration pays twice per entry), and
#: :func:`_assign` stores values validation would keep as they are without validating. Read from the
#: environment variable ``MEMCORE_MIGRATE_FAST`` at import (``0``, ``false``, ``no`` or
#: ``off``: off); change it at run time with :func:`set_fast_copy`.
FAST_COPY = switch_on("MEMCORE_MIGRATE_FAST")


def set_fast_copy(enabled: bool) -> None:
    """Switch :func:`_copy_all_set`'s fast path on or off (:data:`FAST_COPY`), here and in child processes."""
    global FAST_COPY
    FAST_COPY = enabled
    os.environ["MEMCORE_MIGRATE_FAST"] = "1" if enabled else "0"


def _copy_all_set(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of a validated entry with every field marked explicitly set.

    A value the source left at its default is still the value to send (``kind`` unset means
    "the target's default kind" to some providers). Not validated again: every value comes
    from a validated entry; the lists and ``extra`` are copies (relations are immutable).
    Both paths return equal entries with the same fields set (tests compare them); the
    general one (``FAST_COPY`` off) builds the copy with ``model_construct``.
    """
    tags, relations, extra = list(entry.tags), list(entry.relations), json_copy(entry.extra)
    if not FAST_COPY:
        values = {name: getattr(entry, name) for name in _ALL_FIELDS}
        values.update(tags=tags, relations=relations, extra=extra)
        return MemoryEntry.model_construct(_fields_set=set(_ALL_FIELDS), **values)
    # model_copy() copies the instance's field dict as it is (no validation, no per-field
    # getattr); the copy's own dict takes the new lists and its fields-set every field
    copy = entry.model_copy()
    copy.__dict__.update(tags=tags, relations=relations, extra=extra)
    object.__setattr__(copy, "__pydantic_fields_set__", set(_ALL_FIELDS))
    return copy


def _assign(entry: MemoryEntry, name: str, value: Any) -> None:
    """Set a field of a copy made by :func:`_copy_all_set`, as ``setattr`` (validated) would.

    ``MemoryEntry`` validates every assignment (~10 us each, 3-4 per entry built). With
    :data:`FAST_COPY` a value that validation would keep as it is goes straight into the
    field: ``None`` (the optional fields this is used for); for ``id`` and ``parent`` a
    ``str`` that is non-empty, NFC, without NUL and valid UTF-8; for ``relations`` a list of
    :class:`Relation` instances (stored as a new list of the same, immutable, instances).
    Anything else is assigned through validation, which normalises or refuses it.
    """
    if FAST_COPY and _kept_as_is(name, value):
        entry.__dict__[name] = list(value) if name == "relations" else value
    else:
        setattr(entry, name, value)


def _kept_as_is(name: str, value: Any) -> bool:
    """Whether validating ``value`` for field ``name`` returns it unchanged (see :func:`_assign`)."""
    if name == "relations":
        return type(value) is list and all(type(rel) is Relation for rel in value)
    if value is None:
        return name in ("id", "parent", "version")
    if name in ("id", "parent") and type(value) is str and value and "\x00" not in value:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return unicodedata.is_normalized("NFC", value)
    return False


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


#: The core fields of an entry as one tuple (compared at once before field by field).
_core_values = operator.attrgetter(*CORE_FIELDS)


def _core_same(written: MemoryEntry, stored: MemoryEntry) -> bool:
    """Whether every core field of the two entries is the same, by one tuple comparison (``True``: no change).

    Values that compare equal are the same for :func:`_same` too: ``==`` on each pair, confidences
    equal (within 1e-9 as well), the same relations in the same order. A confidence that is not
    equal to itself (NaN) is left to the field-by-field comparison.
    """
    confidence = written.confidence
    return (confidence is None or confidence == confidence) and _core_values(written) == _core_values(stored)


def compare_entries(written: MemoryEntry, stored: MemoryEntry, *, reuse: bool | None = None) -> list[FieldChange]:
    """Return every field of ``written`` that ``stored`` does not hold the same.

    Core fields are compared by value (confidence to 1e-9, relations as a set of edges:
    their order is not data); ``extra`` per namespace and
    top-level key, only for keys ``written`` has (a target adding its own bookkeeping keys is
    not a change). ``id``, ``version`` and ``extra["memcore"]`` are not compared.

    Args:
        written: The entry as sent to the target.
        stored: The same entry as read back.
        reuse: Whether the core fields are first compared at once (``MEMCORE_MIGRATE_REUSE``);
            ``None`` reads the switch. A run passes the value it read once.

    Returns:
        One :class:`FieldChange` per differing field, in :data:`CORE_FIELDS` order then extra.
    """
    changes: list[FieldChange] = []
    if reuse is None:
        reuse = reuse_enabled()
    fields = () if reuse and _core_same(written, stored) else CORE_FIELDS
    for name in fields:
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
    return _short_sha(data)


def _stash_for(change: FieldChange, stored_entry: MemoryEntry) -> dict[str, JsonValue]:
    """Return the ``kept`` record for a changed core field (compact for trimmed strings).

    ``if_sha256`` is the sha256 of the value the target stored; for ``updated_at``, which
    providers stamp on every write, it is the :func:`_fingerprint` of the whole stored entry
    instead, so the original time comes back only while nothing else in the entry changed.
    """
    if change.field == "updated_at":
        return {"if_entry_sha256": _fingerprint(stored_entry), "value": change.written}
    record: dict[str, JsonValue] = {"if_sha256": _short_sha(change.stored)}
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
            recorded = record["if_entry_sha256"]
            if not (
                isinstance(recorded, str)
                and len(recorded) >= _KEPT_DIGITS
                and fingerprint.startswith(recorded[:_KEPT_DIGITS])
            ):
                continue
        elif not _sha_matches(data.get(name), record.get("if_sha256")):
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


def restored_or_same(entry: MemoryEntry, *, reuse: bool | None = None) -> MemoryEntry:
    """:func:`restore_kept` for a run's own use: ``entry`` itself when nothing was kept in it.

    A migration never changes the source entries it holds, nor their restored forms (it
    builds copies to send), so an entry with no ``kept`` record needs no copy of its own.
    ``MEMCORE_MIGRATE_REUSE=0`` (or ``reuse=False``; ``None`` reads the switch): always
    :func:`restore_kept`.
    """
    if reuse is None:
        reuse = reuse_enabled()
    found = entry.extra.get(MEMCORE_NS)
    if reuse and not (isinstance(found, dict) and isinstance(found.get("kept"), dict)):
        return entry
    return restore_kept(entry)


def _own_copy(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` sharing nothing that can change: ``deepcopy``'s result, field by field.

    Every field but ``tags``, ``relations`` and ``extra`` holds an immutable value (strings,
    enums, numbers, datetimes; relations are frozen), so a copy of the instance with its own
    lists and its own ``extra`` (:func:`~memcore.models.json_copy`) equals the deep copy.
    """
    twin = entry.model_copy()
    twin.__dict__.update(tags=list(entry.tags), relations=list(entry.relations), extra=json_copy(entry.extra))
    return twin


def _content_key(entry: MemoryEntry) -> tuple[str, str]:
    return (entry.title.strip(), entry.body.strip())


class _ReadBack(_RunState):
    """The run's last phase: keep in free data what the target changed, then measure every entry."""

    def keep_changed(self) -> set[str]:
        """Start the verification: keep in free data what the target changed (:meth:`keep`).

        Runs inside the run's write session (the kept fields are its last writes); returns the
        source ids whose entries got a ``kept`` record, for :meth:`verify`.
        """
        if not self.sent and not self.validate:
            return set()
        self.progress("verify", 0, len(self.sent))
        return self.keep()

    def verify(self, kept: set[str]) -> None:
        """Read the target back once and measure every entry (after :meth:`keep_changed`).

        The fields a target changed are found from what ``add``/``update`` returned (the
        conformance suite checks that equals a read) and kept in free data first; the one
        read-back here (``read_all``: entries and the target's diagnostics) measures every
        entry, kept fields included, so the report never rests on a returned value.

        Args:
            kept: The source ids whose entries :meth:`keep` gave a ``kept`` record.
        """
        if not self.sent and not self.validate:
            return
        if self.validate:
            entries, diagnostics = read_all(self.target)
            self.report.diagnostics.extend(d for d in diagnostics if d.severity is not Severity.INFO)
        else:
            entries = list(self.target.iter_entries())
        stored_all = {e.id: e for e in entries if e.id is not None}
        provenance_lost = False
        where = f"extra.{MEMCORE_NS}.kept"
        reference = self.target if isinstance(self.target, ReferenceReading) else None
        asked: list[tuple[EntryReport, MemoryEntry]] = []  # (report, entry read back) for the reference
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
            if stamp_of(written) is not None and stamp_of(got) is None:
                provenance_lost = True
            changes = self.returned_changes.get(src_id)
            if changes is None or src_id in kept or got != returned:
                changes = compare_entries(
                    written, got, reuse=self.reuse
                )  # else: read back as returned, same comparison
            if src_id in kept:
                after = {c.field for c in compare_entries(written, restore_kept(got), reuse=self.reuse)}
                rep.losses = [c for c in changes if c.field in after]
                rep.kept = [c.model_copy(update={"kept_in": where}) for c in changes if c.field not in after]
            else:
                rep.losses = changes
            if reference is not None:
                asked.append((rep, got))
            if done % 200 == 0 or done == total:
                self.progress("verify", done, total)
        if reference is not None and asked:
            self._reference_notes(reference, asked)
        if provenance_lost:
            self.report.notes.append(
                f"{self.tgt_fmt}: the target did not keep extra.memcore.migrated_from; a second run "
                "matches entries by title and body instead of by source id"
            )

    @staticmethod
    def _reference_notes(reference: ReferenceReading, asked: list[tuple[EntryReport, MemoryEntry]]) -> None:
        """Set each report's ``fidelity`` from the target's reference reading of its entry.

        A target with :class:`~memcore.provider.ManyReferenceReading` is asked once for all of
        them (it reads each shared file once); any other once per entry.
        """
        if isinstance(reference, ManyReferenceReading):
            answers = reference.reference_reads_differently_many([got for _, got in asked])
            for (rep, _), notes in zip(asked, answers, strict=True):
                rep.fidelity = notes
            return
        for rep, got in asked:
            rep.fidelity = reference.reference_reads_differently(got)

    def keep(self) -> set[str]:
        """Write ``extra.memcore.kept`` for core fields the target changed; return whose.

        Judged from the entries ``add``/``update`` returned; :meth:`verify` then measures the
        result by reading the target.
        """
        if Capability.UPDATE not in self.caps:
            return set()
        stash: dict[str, list[FieldChange]] = {}
        for src_id, (written, returned) in self.sent.items():
            if stamp_of(written) is not None and stamp_of(returned) is None:
                continue  # the target does not keep extra.memcore
            changes = self.returned_changes[src_id] = compare_entries(written, returned, reuse=self.reuse)
            core = [c for c in changes if not c.field.startswith("extra.")]
            if core:
                stash[src_id] = core
        done: set[str] = set()
        with _batch(self.target):
            for src_id, changes in stash.items():
                written, returned = self.sent[src_id]
                got = _own_copy(returned) if self.reuse else returned.model_copy(deep=True)
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
                    stored = self.target.update(got, expected_version=got.version)
                except MemcoreError:
                    continue
                # as returned (the read-back confirms it): a run stopped before the read-back
                # leaves the journal holding what memcore last wrote, not an edit of its own
                self._record_version(stored.id or "", stored.version)
                done.add(src_id)
        return done
