"""A migration's shared work between phases (``MEMCORE_MIGRATE_REUSE``) changes nothing it writes or reports.

Each case migrates the same source twice (and then once more into the same target, where
entries are found unchanged or updated) with the switch on and off, into fresh targets, and
compares every byte of the targets and the reports (the run's time and the target's path aside).
The pieces are checked one by one too: the entry built for ``plan_ids`` finished again for
the first pass, restored source entries, the one-tuple comparison of core fields, keep's copy,
and the joined control-character search (``MEMCORE_TEXT_CHECK_FAST``).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.test_migrate_bulk_add import _example, _files, _generated, _location, _report

from memcore.errors import InvalidEntryError
from memcore.migrate import ConversionReport, fidelity, ids, migrate
from memcore.models import MemoryEntry, Relation
from memcore.storage._control import check_entry_text
from memcore_box import _state as box_state
from memcore_box import _workspace as box_workspace
from memcore_box import provider as box_provider
from memcore_maka import provider as maka_provider


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    # Maka stamps updatedAt on an update (kept fields, links), Box its indexes' updated_at when
    # written: the same clock for every run
    for module in (maka_provider, box_state, box_workspace, box_provider):
        monkeypatch.setattr(module, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC))


def _both_ways(src: str, fmt: str, where: Path, monkeypatch: pytest.MonkeyPatch) -> list[ConversionReport]:
    """Migrate ``src`` into a new ``fmt`` store twice (a first run, then a re-run), with the switch
    off and on; check both ways' reports and files are the same; return the runs' reports (on)."""
    seen: list[Any] = []
    reports: list[ConversionReport] = []
    for value in ("0", "1"):
        monkeypatch.setenv("MEMCORE_MIGRATE_REUSE", value)
        root = where / f"reuse-{value}"
        root.mkdir(parents=True)
        runs = [migrate(src, f"{fmt}:{_location(fmt, root)}") for _ in range(2)]
        seen.append(([_report(r, root) for r in runs], _files(root)))
        reports = runs
    assert seen[1] == seen[0]
    return reports


@pytest.mark.parametrize(
    ("source", "target"),
    [("whitebox", "whitebox"), ("box", "whitebox"), ("box", "box"), ("whitebox", "maka"), ("maka", "maka"),
     ("rightmemory", "rightmemory"), ("maka", "whitebox")],
)  # fmt: skip
def test_a_generated_store_migrates_the_same_with_and_without_reuse(
    source: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"{source}:{_generated(source, tmp_path / 'src', 120)}"
    first, again = _both_ways(src, target, tmp_path, monkeypatch)
    assert first.counts == {**first.counts, "written": 120, "failed": 0}
    assert again.counts["written"] == 0 and again.counts["failed"] == 0


@pytest.mark.parametrize(("source", "target"), [("box", "whitebox"), ("rightmemory", "maka"), ("maka", "rightmemory")])
def test_an_example_store_migrates_the_same_with_and_without_reuse(
    source: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _again = _both_ways(_example(source, tmp_path), target, tmp_path, monkeypatch)
    assert first.counts["written"] > 0


def test_an_entry_built_for_plan_ids_is_copied_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # whitebox -> whitebox plans ids (a supersede pair points forward): 120 entries built twice
    src = f"whitebox:{_generated('whitebox', tmp_path / 'src', 120)}"
    copies: list[int] = []
    real = ids._copy_all_set

    def counted(entry: MemoryEntry) -> MemoryEntry:
        copies.append(1)
        return real(entry)

    monkeypatch.setattr(ids, "_copy_all_set", counted)
    for value, expected in (("0", 240), ("1", 120)):
        monkeypatch.setenv("MEMCORE_MIGRATE_REUSE", value)
        copies.clear()
        root = tmp_path / f"dst-{value}"
        root.mkdir()
        report = migrate(src, f"whitebox:{root / 'store'}")
        assert report.counts["written"] == 120
        assert len(copies) == expected


def _entry(**changes: Any) -> MemoryEntry:
    base = MemoryEntry(
        id="a1",
        title="Item",
        body="Body.",
        tags=["x", "y"],
        confidence=0.5,
        created_at=datetime(2026, 1, 5, 9, tzinfo=UTC),
        relations=[Relation(type="related", target="b2"), Relation(type="supersedes", target="b3")],
        extra={"ns": {"k": [1, {"n": 2}]}, "memcore": {"migrated_from": "x"}},
    )
    return base.model_copy(update=changes)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"confidence": 0.5 + 1e-12},  # within 1e-9: the same
        {"confidence": 0.6},
        {"relations": [Relation(type="supersedes", target="b3"), Relation(type="related", target="b2")]},
        {"relations": [Relation(type="related", target="b2")]},
        {"title": "Other", "tags": ["x"]},
        {"extra": {"ns": {"k": [1.0, {"n": 2}]}}},  # 1 and 1.0 are different JSON
        {"id": "other", "version": "v2", "extra": {"ns": {"k": [1, {"n": 2}]}, "memcore": {"kept": {}}}},
    ],
)
def test_compare_entries_finds_the_same_changes_with_and_without_reuse(
    changes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    found = []
    for value in ("0", "1"):
        monkeypatch.setenv("MEMCORE_MIGRATE_REUSE", value)
        found.append(fidelity.compare_entries(_entry(), _entry(**changes)))
    assert found[1] == found[0]


def test_a_restored_entry_without_kept_fields_is_the_entry_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _entry()
    assert fidelity.restored_or_same(plain) is plain
    kept = _entry(extra={"memcore": {"kept": {"title": {"if_sha256": fidelity._short_sha("Item"), "value": "Old"}}}})
    assert fidelity.restored_or_same(kept) == fidelity.restore_kept(kept)
    assert fidelity.restored_or_same(kept).title == "Old"
    monkeypatch.setenv("MEMCORE_MIGRATE_REUSE", "0")
    assert fidelity.restored_or_same(plain) is not plain
    assert fidelity.restored_or_same(plain) == plain


def test_keeps_copy_equals_a_deep_copy_and_shares_nothing_that_changes() -> None:
    entry = _entry()
    own, deep = fidelity._own_copy(entry), copy.deepcopy(entry)
    assert own == deep and own.model_fields_set == deep.model_fields_set
    own.tags.append("z")
    own.relations.clear()
    own.extra["ns"]["k"][1]["n"] = 3
    assert entry == deep


@pytest.mark.parametrize(
    "changes",
    [
        {"body": "a\x00b"},
        {"title": "t\x07"},
        {"tags": ["ok", "b\x1fad"]},
        {"relations": [Relation(type="related", target="b\x7f")]},
        {"extra": {"ns": {"k\x01": "v"}}},
        {"extra": {"ns": {"k": ["ok", {"n": "\x0b"}]}}},
        {"source": "s\x0c", "scope": "x\x02"},
    ],
)
def test_the_joined_text_check_refuses_what_the_field_by_field_check_does(
    changes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = []
    for value in ("0", "1"):
        monkeypatch.setenv("MEMCORE_TEXT_CHECK_FAST", value)
        with pytest.raises(InvalidEntryError) as caught:
            check_entry_text(_entry(**changes))
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
    assert "control character" in messages[0]


@pytest.mark.parametrize("value", ["0", "1"])
def test_the_text_check_passes_tab_lf_cr_and_raises_the_same_for_a_tag_that_is_not_text(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_TEXT_CHECK_FAST", value)
    check_entry_text(_entry(body="a\tb\r\nc", extra={"ns": {"k": ["x\ty", 3, None]}}))
    odd = _entry()
    odd.tags.append(b"bytes")  # type: ignore[arg-type]  # list mutation gets past validation
    with pytest.raises(TypeError):
        check_entry_text(odd)
