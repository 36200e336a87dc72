"""Files memcore writes, read by each format's own parser's rules, agree with memcore or are reported.

Every examples/ store is migrated (the real ``memcore.migrate``) into each of the four formats;
the target is read with memcore and with the test-side reference reader of its format
(tests/reference_readers, written from ../shared/specs/reference-notes/ and proven against the
authors' samples in test_reference_readers.py) and compared field by field. Every field the two
readings disagree on must be listed in the migration report's ``fidelity[]`` (what the
format's own reader shows differently), and every note there must be a real disagreement. The
figures per pair are docs/mapping.md's table ("Readability: what the formats' own readers
show"): ``cd tests && python -m reference_readers``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reference_readers.figures import FORMATS, PairFigures, measure_pair, table

PAIRS = [(source, target) for target in FORMATS for source in FORMATS]

#: Measured (fields compared, agreeing, of them the fields the target has a place for, agreeing)
#: per target: the same for every examples/ source, which all hold the one dataset of
#: examples/dataset.yaml. What disagrees is what the target has no slot for (docs/mapping.md lists
#: it per format), every field of it reported; of the fields it has a place for, WhiteBox shows 4
#: differently (a ``reference`` written as an observation: its ``sources/`` layer is for long
#: verbatim captures).
EXPECTED = {
    "whitebox": (585, 554, 558, 554),
    "box": (792, 753, 758, 758),
    "rightmemory": (330, 267, 273, 273),
    "maka": (528, 413, 413, 413),
}


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], PairFigures]:
    """Every pair migrated once into a fresh store and measured."""
    base = tmp_path_factory.mktemp("reference-fidelity")
    out = {(s, t): measure_pair(s, t, base / f"{s}-{t}") for s, t in PAIRS}
    print("\n" + table(list(out.values())))
    return out


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_every_field_the_reference_reader_shows_differently_is_in_the_reports_fidelity(
    figures: dict[tuple[str, str], PairFigures], source: str, target: str
) -> None:
    fig = figures[(source, target)]
    assert len(fig.rows) > 300  # 66 entries, every field the format holds
    assert fig.unreported == []
    assert fig.unfounded == []


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_fields_compared_and_agreeing_per_pair_are_the_documented_figures(
    figures: dict[tuple[str, str], PairFigures], source: str, target: str
) -> None:
    fig = figures[(source, target)]
    assert (len(fig.rows), fig.agreeing, len(fig.native_rows), fig.native_agreeing) == EXPECTED[target]


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_at_least_99_percent_of_the_fields_the_target_has_a_place_for_read_back_as_memcore_wrote_them(
    figures: dict[tuple[str, str], PairFigures], source: str, target: str
) -> None:
    fig = figures[(source, target)]
    assert len(fig.native_rows) > 0.75 * len(fig.rows)
    assert fig.native_percent >= 99.0


def test_the_table_in_docs_mapping_is_the_measured_one(figures: dict[tuple[str, str], PairFigures]) -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "mapping.md").read_text(encoding="utf-8")
    assert table([figures[pair] for pair in PAIRS]) in docs


def test_a_reader_of_each_format_reads_every_entry_memcore_wrote(figures: dict[tuple[str, str], PairFigures]) -> None:
    for fig in figures.values():
        assert not [r for r in fig.rows if r.field == "*"], (fig.source, fig.target)
