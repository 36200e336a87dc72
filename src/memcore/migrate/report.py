"""The report models of a migration: what happened to each entry, what was lost, what was kept."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, Field, JsonValue, computed_field

from memcore.models import Diagnostic, FidelityNote, Kind, Severity, utc_now

__all__ = [
    "UNREAD_TEXT_CODE",
    "Action",
    "ConversionReport",
    "EntryReport",
    "FieldChange",
    "ProgressCallback",
    "UnresolvedLink",
    "iter_losses",
]

#: ``progress(phase, done, total)``: phase is ``"read"``, ``"plan"`` (ids asked of the target
#: or learnt by a trial run, only when relations point forward), ``"write"``, ``"link"`` or
#: ``"verify"``.
ProgressCallback = Callable[[str, int, int], None]

Action = Literal["written", "updated", "unchanged", "conflict", "not_updatable", "failed"]


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
            :mod:`memcore.migrate.journal`), ``not_updatable`` (the source changed, but the target
            cannot update its entry, e.g. an append-only WhiteBox observation: left as it was,
            :attr:`error` names what differs) or ``failed``.
        losses: Fields the target could not hold and that were not kept elsewhere.
        kept: Fields the target could not hold natively but kept in free data.
        fidelity: What the target format's own reader will show differently from what memcore
            kept (memcore reads the entry back whole; the format's reference reader does not
            read memcore's keys and escapes), per field. Empty when the target cannot tell
            (:class:`memcore.provider.ReferenceReading`) or nothing differs.
        error: Why the entry failed, for ``failed``; what was left alone, for ``conflict`` and
            ``not_updatable``.
    """

    source_id: str
    target_id: str | None = None
    kind: Kind
    title: str = ""
    action: Action
    losses: list[FieldChange] = Field(default_factory=list)
    kept: list[FieldChange] = Field(default_factory=list)
    fidelity: list[FidelityNote] = Field(default_factory=list)
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

        Keys: ``read``, ``written``, ``updated``, ``unchanged``, ``conflict``, ``not_updatable``, ``failed``,
        ``lossy``, ``kept``, ``reads_differently`` (entries with a :attr:`EntryReport.fidelity` note),
        ``unresolved_links``, ``unreadable`` (source error diagnostics, :attr:`source_errors`)
        and ``unread_text`` (passages of source text in no entry, :attr:`unread_text`).
        """
        out = dict.fromkeys(("written", "updated", "unchanged", "conflict", "not_updatable", "failed"), 0)
        out["read"] = len(self.entries)
        for entry in self.entries:
            out[entry.action] += 1
        out["lossy"] = sum(1 for e in self.entries if e.losses)
        out["kept"] = sum(1 for e in self.entries if e.kept)
        out["reads_differently"] = sum(1 for e in self.entries if e.fidelity)
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
                dict.fromkeys(
                    ("read", "written", "updated", "unchanged", "conflict", "not_updatable", "failed", "lossy"), 0
                ),
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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fidelity_fields(self) -> dict[str, int]:
        """How many entries the target's own reader shows differently, per field: ``{"tags": 4}``."""
        out: dict[str, int] = {}
        for entry in self.entries:
            for field in dict.fromkeys(note.field for note in entry.fidelity):
                out[field] = out.get(field, 0) + 1
        return dict(sorted(out.items()))

    @property
    def ok(self) -> bool:
        """Nothing failed, no conflict or not-updatable entry was left alone, nothing unreadable, no strict refusal."""
        return (
            not self.refused
            and not self.source_errors
            and not any(e.action in ("failed", "conflict", "not_updatable") for e in self.entries)
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


#: Suffix of the diagnostic code a reader gives text it puts in no entry (``rm.unread-text``)
UNREAD_TEXT_CODE = ".unread-text"


def _collect_source_diagnostics(diagnostics: Iterable[Diagnostic], report: ConversionReport) -> None:
    """Put the source's errors in ``report.source_errors`` and its unread text in ``report.unread_text``."""
    for diag in diagnostics:
        if diag.severity is Severity.ERROR:
            report.source_errors.append(diag)
        elif diag.code.endswith(UNREAD_TEXT_CODE):
            report.unread_text.append(diag)


def iter_losses(report: ConversionReport) -> Iterable[tuple[EntryReport, FieldChange]]:
    """Yield ``(entry report, loss)`` for every loss in ``report``, in entry order."""
    for entry in report.entries:
        for loss in entry.losses:
            yield entry, loss
