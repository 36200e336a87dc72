"""A read of bytes a WhiteBox instance wrote gives what a read by a fresh instance gives.

With ``MEMCORE_WHITEBOX_READBACK`` on (the default), the instance that wrote an observation
block or a stable file hands a copy of the entry it built then to the first read of the same bytes
(:mod:`memcore_whitebox._readback`). Each case compares that read with a fresh instance's read
of the same vault (which never wrote it) and with the switch off: every entry (every field,
the fields set), every diagnostic; and a migration into WhiteBox with this switch (and
``MEMCORE_WHITEBOX_FAST``) on and off: the report and every byte of the target.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import read_all
from memcore_whitebox import _readback
from memcore_whitebox.provider import WhiteBoxProvider

T0 = datetime(2026, 3, 4, 9, 30, tzinfo=UTC)
_KINDS = [Kind.OBSERVATION, Kind.FACT, Kind.DECISION, Kind.NOTE, Kind.PREFERENCE]


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    monkeypatch.delenv("MEMCORE_WHITEBOX_READBACK", raising=False)
    monkeypatch.delenv("MEMCORE_WHITEBOX_FAST", raising=False)
    yield


def _entries(n: int) -> list[MemoryEntry]:
    out = []
    for i in range(n):
        kind = _KINDS[i % len(_KINDS)]
        out.append(
            MemoryEntry(
                kind=kind,
                title="" if kind is Kind.OBSERVATION else f"Item {i}",
                body=f"Entry {i}: ü and `code`.\n" if i % 3 else f"  Entry {i}\n\n```py\nx = {i}\n```\n",
                status=Status.SUPERSEDED if i % 9 == 8 else Status.ACTIVE,
                tags=[f"topic-{i % 4}", "Café"] if i % 2 else [],
                confidence=(0.3, 0.55, None, 0.9)[i % 4],
                source=None if i % 6 == 5 else "test",
                created_at=T0 + timedelta(days=i * 11),
                updated_at=T0 + timedelta(days=i * 11, hours=1),
                date_only=kind is Kind.OBSERVATION,
                extra={"box": {"n": i, "nested": {"list": [1, "two", None]}}} if i % 4 == 1 else {},
            )
        )
    return out


def _dump(entries: list[MemoryEntry]) -> list[Any]:
    return [(e.model_dump(), sorted(e.model_fields_set)) for e in entries]


def _read(root: Path) -> tuple[list[Any], list[Any]]:
    with WhiteBoxProvider(str(root)) as fresh:
        entries, diags = read_all(fresh)
    return _dump(entries), [d.model_dump() for d in diags]


def test_a_read_after_add_many_is_the_read_of_a_fresh_instance_whatever_the_caller_changed(tmp_path: Path) -> None:
    WhiteBoxProvider.init_store(str(tmp_path))
    with WhiteBoxProvider(str(tmp_path), as_user=True) as store:
        returned = store.add_many(_entries(40))
        assert all(isinstance(e, MemoryEntry) for e in returned)
        kept = [e.model_copy(deep=True) for e in returned if isinstance(e, MemoryEntry)]
        # what a caller does to the entries add returned changes no read
        for e in returned:
            assert isinstance(e, MemoryEntry)
            e.tags.append("changed")
            e.extra.setdefault("box", {})["changed"] = True
        assert store._built  # kept for the read
        entries, diags = read_all(store)
        assert not store._built  # the read took every one of them
        assert sorted(_dump(entries), key=repr) == sorted(_dump(kept), key=repr)
        again, diags_again = read_all(store)  # built again
        iterated = list(store.iter_entries())
    fresh_entries, fresh_diags = _read(tmp_path)
    assert _dump(entries) == _dump(again) == _dump(iterated) == fresh_entries
    assert [d.model_dump() for d in diags_again] == [d.model_dump() for d in diags] == fresh_diags
    assert len(fresh_entries) == 40


def test_with_the_switch_off_nothing_is_kept_and_the_read_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = []
    for switch in ("1", "0"):
        monkeypatch.setenv("MEMCORE_WHITEBOX_READBACK", switch)
        root = tmp_path / switch
        WhiteBoxProvider.init_store(str(root))
        with WhiteBoxProvider(str(root), as_user=True) as store:
            store.add_many(_entries(25))
            assert bool(store._built) is (switch == "1")
            entries, diags = read_all(store)
        reads.append((_dump(entries), [d.model_dump() for d in diags]))
    assert reads[0] == reads[1]


def test_bytes_changed_on_disk_after_the_write_are_read_as_they_are_now(tmp_path: Path) -> None:
    WhiteBoxProvider.init_store(str(tmp_path))
    with WhiteBoxProvider(str(tmp_path), as_user=True) as store:
        store.add_many(_entries(10))
        month = next(p for p in sorted((tmp_path / "observations").glob("*.md")))
        month.write_text(month.read_text(encoding="utf-8").replace("Entry 0", "Edited 0"), encoding="utf-8")
        fact = next(p for p in sorted(tmp_path.glob("item-*.md")))
        fact.write_text(fact.read_text(encoding="utf-8").replace("Entry", "Changed"), encoding="utf-8")
        entries, diags = read_all(store)
    assert (_dump(entries), [d.model_dump() for d in diags]) == _read(tmp_path)
    bodies = [e.body for e in entries]
    assert any("Edited 0" in b for b in bodies) and any(b.startswith("Changed") for b in bodies)


@pytest.mark.parametrize("switch", ["MEMCORE_WHITEBOX_READBACK", "MEMCORE_WHITEBOX_FAST"])
def test_a_migration_into_whitebox_is_the_same_with_the_switch_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, switch: str
) -> None:
    src = tmp_path / "src"
    WhiteBoxProvider.init_store(str(src))
    with WhiteBoxProvider(str(src), as_user=True) as store, store.batch():
        added = store.add_many(_entries(30))
        first = added[0]
        assert isinstance(first, MemoryEntry)
        store.add(
            MemoryEntry(
                kind=Kind.OBSERVATION, body="links back", relations=[Relation(type="related", target=first.id or "")]
            )
        )
    results = []
    for value in ("0", "1"):
        monkeypatch.setenv(switch, value)
        root = tmp_path / f"dst{value}"
        root.mkdir()
        report = migrate(f"whitebox:{src}", f"whitebox:{root / 'store'}")
        dump = report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})
        files = {
            p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "store").rglob("*")) if p.is_file()
        }
        results.append((json.loads(json.dumps(dump).replace(str(root), "<target>")), files))
        assert report.counts["written"] == 31 and report.counts["failed"] == 0
    assert results[0] == results[1]


def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_WHITEBOX_READBACK", "0")
    assert not _readback.readback_enabled()
    monkeypatch.setenv("MEMCORE_WHITEBOX_READBACK", "1")
    assert _readback.readback_enabled()


def test_the_switches_are_read_when_the_write_session_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    WhiteBoxProvider.init_store(str(tmp_path))
    with WhiteBoxProvider(str(tmp_path), as_user=True) as store:
        with store.batch():
            monkeypatch.setenv("MEMCORE_WHITEBOX_READBACK", "0")  # after the session started: this session keeps
            monkeypatch.setenv("MEMCORE_WHITEBOX_FAST", "0")
            store.add_many(_entries(12))
        assert store._built.on and store._built.fast and bool(store._built)
        entries, diags = read_all(store)
        assert not store._built  # every kept entry taken
        assert (_dump(entries), [d.model_dump() for d in diags]) == _read(tmp_path)
        store.add(MemoryEntry(kind=Kind.OBSERVATION, body="one more"))  # a new session reads them again
        assert not store._built.on and not store._built.fast and not store._built
