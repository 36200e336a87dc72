"""A migration's first pass through the target's ``add_many`` writes what one ``add`` each writes.

Every case migrates the same source twice, with the bulk path on and off
(``memcore.migrate.bulk.set_bulk_add``), into fresh targets, and compares every byte of the
two targets and the two reports (the run's time and the target's path aside).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.migrate import ConversionReport, migrate
from memcore.migrate.bulk import bulk_add_enabled, set_bulk_add
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import BulkAdding, add_many
from memcore.registry import get_registry
from memcore_maka import provider as maka_provider

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ONE_FILE = {"rightmemory": "MEMORY.md", "maka": "MEMORY.md"}
_KINDS = [Kind.OBSERVATION, Kind.FACT, Kind.NOTE, Kind.PREFERENCE]


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    yield
    set_bulk_add(None)


def _location(fmt: str, root: Path) -> str:
    return str(root / ONE_FILE[fmt]) if fmt in ONE_FILE else str(root / "store")


def _generated(fmt: str, root: Path, n: int, *, refused_at: int | None = None) -> str:
    """A store of ``fmt`` with ``n`` entries: kinds mixed, a relation back every 7th entry, a
    supersede pair every 50th (a forward relation); ``refused_at``: that entry asks RightMemory
    for an ``M#`` heading, which RightMemory's ``add`` refuses."""
    cls = get_registry().get(fmt)
    loc = _location(fmt, root)
    root.mkdir(parents=True, exist_ok=True)
    cls.init_store(loc)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    ids: dict[str, str] = {}
    with cls(loc) as store, store.batch():
        for i in range(n):
            kind = _KINDS[i % len(_KINDS)]
            relations = []
            if i % 7 == 3 and i > 10:
                relations.append(Relation(type="related", target=f"b{i - 9}"))
            if i % 50 == 1 and i > 1:
                relations.append(Relation(type="supersedes", target=f"b{i - 1}"))
            extra: dict[str, Any] = {"rightmemory": {"marker": "M#"}} if i == refused_at else {}
            entry = MemoryEntry(
                id=f"b{i}" if fmt == "rightmemory" else None,
                kind=kind,
                title="" if kind is Kind.OBSERVATION else f"Item {i}",
                body=f"Entry {i}: what was learnt on day {i // 40}.\n",
                status=Status.SUPERSEDED if i % 50 == 0 and i > 0 else Status.ACTIVE,
                tags=[f"topic-{i % 13}"],
                confidence=(0.3, 0.5, 0.7, 0.9)[i % 4],
                source="test",
                created_at=start + timedelta(hours=i),
                updated_at=start + timedelta(hours=i),
                relations=[Relation(type=r.type, target=ids[r.target]) for r in relations if r.target in ids],
                extra=extra,
            )
            ids[f"b{i}"] = store.add(entry).id or ""
        if n > 60 and fmt == "rightmemory":  # a forward relation (WhiteBox observations are append-only)
            old = store.get(ids["b50"])
            old.relations = [*old.relations, Relation(type="superseded_by", target=ids["b51"])]
            store.update(old, expected_version=old.version)
    return loc


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _report(report: ConversionReport, root: Path) -> Any:
    """The report as JSON, its time and the target's path left out (paths in messages too)."""
    dump = report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})
    return json.loads(json.dumps(dump).replace(str(root), "<target>"))


def _both(src: str, fmt: str, where: Path) -> tuple[ConversionReport, dict[str, str], dict[str, str]]:
    """Migrate ``src`` into a new ``fmt`` store with the bulk path off, then on; return the
    bulk run's report and both targets' files, after checking the reports are the same."""
    reports: list[Any] = []
    files: list[dict[str, str]] = []
    report = None
    for on in (False, True):
        set_bulk_add(on)
        root = where / ("bulk" if on else "one-by-one")
        root.mkdir(parents=True)
        report = migrate(src, f"{fmt}:{_location(fmt, root)}")
        reports.append(_report(report, root))
        files.append(_files(root))
    assert reports[1] == reports[0]
    assert report is not None
    return report, files[0], files[1]


def _count_bulk_calls(monkeypatch: pytest.MonkeyPatch, fmt: str) -> list[int]:
    """Count the entries each ``add_many`` call of ``fmt``'s provider was sent."""
    cls = get_registry().get(fmt)
    real = cls.add_many
    sizes: list[int] = []

    def counting(self: Any, entries: Any) -> Any:
        sizes.append(len(entries))
        return real(self, entries)

    monkeypatch.setattr(cls, "add_many", counting)
    return sizes


EXAMPLE_SOURCES = {
    "rightmemory": "rightmemory/MEMORY.md",
    "whitebox": "whitebox-vault",
    "box": "box-workspace",
    "maka": "maka/MEMORY.md",
}


def _example(source: str, tmp_path: Path) -> str:
    """The URL of a copy of the examples/ store of ``source`` under ``tmp_path / "src"``."""
    src_root = tmp_path / "src"
    shutil.copytree(EXAMPLES / EXAMPLE_SOURCES[source].split("/")[0], src_root)
    rel = EXAMPLE_SOURCES[source].partition("/")[2]
    return f"{source}:{src_root / rel if rel else src_root}"


@pytest.mark.parametrize("source", ["rightmemory", "whitebox"])
def test_a_generated_store_migrated_into_rightmemory_is_the_same_with_and_without_bulk_add(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"{source}:{_generated(source, tmp_path / 'src', 150)}"
    sizes = _count_bulk_calls(monkeypatch, "rightmemory")
    report, off, on = _both(src, "rightmemory", tmp_path)
    assert on == off
    assert report.counts == {**report.counts, "written": 150, "failed": 0}
    assert max(sizes) > 1  # entries went in runs, not one by one


def test_a_refused_entry_in_the_middle_fails_alone_and_the_stores_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # entry 43 is refused; entry 52 relates to it (a relation back, every 7th entry)
    src = f"whitebox:{_generated('whitebox', tmp_path / 'src', 120, refused_at=43)}"
    sizes = _count_bulk_calls(monkeypatch, "rightmemory")
    report, off, on = _both(src, "rightmemory", tmp_path)
    assert on == off
    failed = [e for e in report.entries if e.action == "failed"]
    assert len(failed) == 1 and failed[0].title == "Item 43"
    assert failed[0].error is not None and failed[0].error.startswith("UnsupportedOperationError:")
    assert report.counts["written"] == 119
    assert [(u.type, u.reason) for u in report.unresolved_links if u.target == failed[0].source_id] == [
        ("related", "not migrated")
    ]
    assert max(sizes) > 1


def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    set_bulk_add(None)
    monkeypatch.setenv("MEMCORE_BULK_ADD", "0")
    assert not bulk_add_enabled()
    monkeypatch.setenv("MEMCORE_BULK_ADD", "1")
    assert bulk_add_enabled()
    set_bulk_add(False)
    assert not bulk_add_enabled()


def test_add_many_stops_after_a_refusal_and_writes_nothing_of_it(tmp_path: Path) -> None:
    cls = get_registry().get("rightmemory")
    loc = _location("rightmemory", tmp_path)
    cls.init_store(loc)
    good = [MemoryEntry(id=f"n{i}", title=f"Note {i}", body=f"Body {i}.\n") for i in range(3)]
    bad = MemoryEntry(id="m1", title="Bad", body="x\n", extra={"rightmemory": {"marker": "M#"}})
    with cls(loc) as store:
        assert isinstance(store, BulkAdding)
        results = add_many(store, [good[0], good[1], bad, good[2]])
        assert [r.id if isinstance(r, MemoryEntry) else type(r).__name__ for r in results] == [
            "n0",
            "n1",
            "UnsupportedOperationError",
        ]
        assert [e.id for e in store.iter_entries()] == ["n0", "n1"]
        assert results[0] == store.get("n0")  # returned as a read gives it


@pytest.mark.parametrize("source", ["rightmemory", "whitebox", "box"])
def test_a_generated_store_migrated_into_whitebox_is_the_same_with_and_without_bulk_add(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # WhiteBox plans ids, so entries go in runs sent with their planned ids; its add_many reuses
    # the blocks plan_ids rendered (memcore_whitebox._bulk)
    src = f"{source}:{_generated(source, tmp_path / 'src', 130)}"
    sizes = _count_bulk_calls(monkeypatch, "whitebox")
    report, off, on = _both(src, "whitebox", tmp_path)
    assert on == off
    assert report.counts == {**report.counts, "written": 130, "failed": 0}
    assert max(sizes) > 1


@pytest.mark.parametrize("source", ["rightmemory", "box", "maka"])
def test_an_example_store_migrated_into_whitebox_is_the_same_with_and_without_bulk_add(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _example(source, tmp_path)
    sizes = _count_bulk_calls(monkeypatch, "whitebox")
    report, off, on = _both(src, "whitebox", tmp_path)
    assert on == off
    assert report.counts["written"] > 0
    assert sum(sizes) >= 1


# -- into Maka ---------------------------------------------------------------------------------


@pytest.fixture
def maka_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Maka stamps updatedAt on an update (the kept fields): the same clock for both runs."""
    monkeypatch.setattr(maka_provider, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC))


@pytest.mark.usefixtures("maka_clock")
@pytest.mark.parametrize("target", ["rightmemory", "maka"])
@pytest.mark.parametrize("source", list(EXAMPLE_SOURCES))
def test_an_example_store_migrated_into_rightmemory_or_maka_is_the_same_with_and_without_bulk_add(
    source: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _example(source, tmp_path)
    sizes = _count_bulk_calls(monkeypatch, target)
    report, off, on = _both(src, target, tmp_path)
    assert on == off
    assert report.counts["written"] > 0
    assert sum(sizes) >= report.counts["written"]  # every add went through add_many


@pytest.mark.usefixtures("maka_clock")
@pytest.mark.parametrize("source", ["rightmemory", "whitebox", "maka"])
def test_a_generated_store_migrated_into_maka_is_the_same_with_and_without_bulk_add(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"{source}:{_generated(source, tmp_path / 'src', 150)}"
    sizes = _count_bulk_calls(monkeypatch, "maka")
    report, off, on = _both(src, "maka", tmp_path)
    assert on == off
    assert report.counts == {**report.counts, "written": 150, "failed": 0}
    assert max(sizes) > 1  # entries went in runs, not one by one


@pytest.mark.usefixtures("maka_clock")
def test_the_maka_switch_off_gives_the_same_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = f"whitebox:{_generated('whitebox', tmp_path / 'src', 80)}"
    set_bulk_add(True)
    out: list[bytes] = []
    for name in ("0", "1"):
        monkeypatch.setenv("MEMCORE_MAKA_BULK", name)
        root = tmp_path / f"maka-bulk-{name}"
        root.mkdir()
        report = migrate(src, f"maka:{root / 'MEMORY.md'}")
        assert report.counts["written"] == 80
        out.append((root / "MEMORY.md").read_bytes())
    assert out[0] == out[1]
