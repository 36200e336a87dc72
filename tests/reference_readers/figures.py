"""Migrate every ``examples/`` store into each format and measure it with the reference readers.

:func:`measure_pair` runs the real ``memcore migrate`` (API) from one examples store into a
fresh store of a format, reads the target with memcore and with the format's reference reader
(:func:`reference_readers.compare.compare_store`) and checks each disagreement against the
migration report's ``fidelity[]``. Run ``python -m reference_readers`` from ``tests/`` for the
table docs/mapping.md shows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memcore.migrate import migrate
from reference_readers.compare import Row, compare_store

REPO = Path(__file__).resolve().parents[2]
FORMATS = ("whitebox", "box", "rightmemory", "maka")
EXAMPLES = {
    "whitebox": REPO / "examples" / "whitebox-vault",
    "box": REPO / "examples" / "box-workspace",
    "rightmemory": REPO / "examples" / "rightmemory",
    "maka": REPO / "examples" / "maka" / "MEMORY.md",
}


@dataclass
class PairFigures:
    """What the reference reader shows of one migration, against what memcore reads back.

    Attributes:
        source: Source format (its examples/ store).
        target: Target format.
        rows: Every field compared.
        native_rows: The same rows restricted to what the target's own files have a place for
            (:func:`reference_readers.compare.native`).
        reported: ``(target id, field)`` of every fidelity note of the report (``*``: the whole entry).
    """

    source: str
    target: str
    rows: list[Row] = field(default_factory=list)
    native_rows: list[Row] = field(default_factory=list)
    reported: set[tuple[str, str]] = field(default_factory=set)

    @property
    def agreeing(self) -> int:
        """Fields on which both readings agree."""
        return sum(1 for r in self.rows if r.agrees)

    @property
    def percent(self) -> float:
        """Agreeing fields in % of those compared."""
        return 100.0 * self.agreeing / len(self.rows) if self.rows else 100.0

    @property
    def native_agreeing(self) -> int:
        """Fields the target has a place for on which both readings agree."""
        return sum(1 for r in self.native_rows if r.agrees)

    @property
    def native_percent(self) -> float:
        """Agreeing fields in % of those the target has a place for."""
        rows = self.native_rows
        return 100.0 * self.native_agreeing / len(rows) if rows else 100.0

    @property
    def disagreeing(self) -> Counter[str]:
        """Disagreeing fields, counted per field name."""
        return Counter(r.field for r in self.rows if not r.agrees)

    @property
    def unreported(self) -> list[Row]:
        """Disagreements the report's ``fidelity[]`` does not list."""
        return [
            r
            for r in self.rows
            if not r.agrees and (r.entry, r.field) not in self.reported and (r.entry, "*") not in self.reported
        ]

    @property
    def unfounded(self) -> list[tuple[str, str]]:
        """Fidelity notes on a field both readings agree on."""
        agreeing = {(r.entry, r.field) for r in self.rows if r.agrees}
        return sorted(note for note in self.reported if note in agreeing)


def measure_pair(source: str, target: str, where: Path) -> PairFigures:
    """Migrate ``examples/<source>`` into a fresh ``target`` store under ``where`` and measure it."""
    where.mkdir(parents=True, exist_ok=True)
    location = str(where / "MEMORY.md") if target == "maka" else str(where / "store")
    report = migrate(f"{source}:{EXAMPLES[source]}", f"{target}:{location}", validate=False)
    reported = {(e.target_id or "", note.field) for e in report.entries for note in e.fidelity}
    pairs = compare_store(target, location)
    rows = [row for row, _ in pairs]
    held = [row for _, row in pairs if row is not None]
    return PairFigures(source, target, rows, held, reported)


def table(figures: list[PairFigures]) -> str:
    """Render the figures as the markdown table of docs/mapping.md."""
    lines = [
        "| source → target | fields compared | agreeing | % | disagreeing fields (all in `fidelity[]`) | unreported "
        "| fields the format holds | agreeing | % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for fig in figures:
        diff = ", ".join(f"{name} {n}" for name, n in sorted(fig.disagreeing.items())) or "none"
        lines.append(
            f"| {fig.source} → {fig.target} | {len(fig.rows)} | {fig.agreeing} | {fig.percent:.2f} | {diff} "
            f"| {len(fig.unreported)} | {len(fig.native_rows)} | {fig.native_agreeing} | {fig.native_percent:.2f} |"
        )
    return "\n".join(lines)
