"""A migration into Maka through its ``add_many`` writes what one ``add`` each writes.

As ``tests/test_migrate_bulk_add.py`` does for RightMemory: every case migrates the same source
twice, with the migration's bulk path on and off (``memcore.migrate.bulk.set_bulk_add``), into
fresh Maka files, and compares the bytes of the two targets and the two reports.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.migrate import ConversionReport, migrate
from memcore.migrate.bulk import set_bulk_add
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.registry import get_registry
from memcore_maka import provider as maka_provider

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXAMPLE_SOURCES = {
    "rightmemory": "rightmemory/MEMORY.md",
    "whitebox": "whitebox-vault",
    "box": "box-workspace",
    "maka": "maka/MEMORY.md",
}
_KINDS = [Kind.OBSERVATION, Kind.FACT, Kind.NOTE, Kind.PREFERENCE]


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    # Maka stamps updatedAt on an update (the kept fields): the same clock for both runs
    monkeypatch.setattr(maka_provider, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC))
    yield
    set_bulk_add(None)


def _location(fmt: str, root: Path) -> str:
    return str(root / "MEMORY.md") if fmt in ("rightmemory", "maka") else str(root / "store")


def _generated(fmt: str, root: Path, n: int) -> str:
    """A store of ``fmt`` with ``n`` entries: kinds mixed, a relation back every 7th entry, a
    supersede pair every 50th."""
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
            )
            ids[f"b{i}"] = store.add(entry).id or ""
    return loc


def _report(report: ConversionReport, root: Path) -> Any:
    """The report as JSON, its time and the target's path left out (paths in messages too)."""
    dump = report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})
    return json.loads(json.dumps(dump).replace(str(root), "<target>"))


def _both(src: str, where: Path) -> tuple[ConversionReport, list[bytes]]:
    """Migrate ``src`` into a new Maka file with the bulk path off, then on; check the reports
    are the same; return the bulk run's report and both files' bytes."""
    reports: list[Any] = []
    files: list[bytes] = []
    report = None
    for on in (False, True):
        set_bulk_add(on)
        root = where / ("bulk" if on else "one-by-one")
        root.mkdir(parents=True)
        report = migrate(src, f"maka:{root / 'MEMORY.md'}")
        reports.append(_report(report, root))
        files.append((root / "MEMORY.md").read_bytes())
    assert reports[1] == reports[0]
    assert report is not None
    return report, files


def _count_bulk_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    cls = get_registry().get("maka")
    real = cls.add_many
    sizes: list[int] = []

    def counting(self: Any, entries: Any) -> Any:
        sizes.append(len(entries))
        return real(self, entries)

    monkeypatch.setattr(cls, "add_many", counting)
    return sizes


@pytest.mark.parametrize("source", list(EXAMPLE_SOURCES))
def test_an_example_store_migrated_into_maka_is_the_same_with_and_without_bulk_add(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src_root = tmp_path / "src"
    shutil.copytree(EXAMPLES / EXAMPLE_SOURCES[source].split("/")[0], src_root)
    rel = EXAMPLE_SOURCES[source].partition("/")[2]
    src = f"{source}:{src_root / rel if rel else src_root}"
    sizes = _count_bulk_calls(monkeypatch)
    report, (off, on) = _both(src, tmp_path)
    assert on == off
    assert report.counts["written"] > 0
    assert sum(sizes) >= report.counts["written"]  # every add went through add_many


@pytest.mark.parametrize("source", ["rightmemory", "whitebox", "maka"])
def test_a_generated_store_migrated_into_maka_is_the_same_with_and_without_bulk_add(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"{source}:{_generated(source, tmp_path / 'src', 150)}"
    sizes = _count_bulk_calls(monkeypatch)
    report, (off, on) = _both(src, tmp_path)
    assert on == off
    assert report.counts == {**report.counts, "written": 150, "failed": 0}
    assert max(sizes) > 1  # entries went in runs, not one by one


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
