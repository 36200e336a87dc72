"""Maka's ``plan_ids``: the ids ``add`` gives, told before anything is written, and what it changes in a migration.

A new Maka id hashes the redacted content and ``createdAt``, so an entry that has its time has
a known id; one without takes the time of its add (``None``). Each case plans, then adds the
same entries one ``add`` each in one batch, and checks every planned id is the one given. A
migration with a relation pointing forward (a supersede pair) writes the link with the entry
when ids are planned, instead of updating the entry afterwards; the only difference in the
report is then the ``kept`` record of ``updated_at`` that the late update's new time caused.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.test_migrate_bulk_add import _generated

from memcore.migrate import migrate
from memcore.migrate.fidelity import restore_kept
from memcore.models import MemoryEntry
from memcore.provider import plan_ids
from memcore_maka import provider as maka_provider
from memcore_maka.provider import MakaProvider

NOW_MS = 1_780_000_000_000
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(maka_provider, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC))


def _open(tmp_path: Path) -> MakaProvider:
    path = tmp_path / "store" / "MEMORY.md"
    path.parent.mkdir()
    MakaProvider.init_store(str(path))
    store = MakaProvider(str(path)).open()
    store._now = lambda: NOW_MS
    return store


def _timed(n: int, body: str | None = None, **fields: Any) -> MemoryEntry:
    return MemoryEntry(title=f"Item {n}", body=body or f"Body {n}.", created_at=START + timedelta(hours=n), **fields)


def test_planned_ids_are_the_ids_add_gives(tmp_path: Path) -> None:
    store = _open(tmp_path)
    there = store.add(_timed(0))
    entries = [
        _timed(1),
        _timed(0),  # the same content and time as the entry already there: its id with "-2"
        _timed(2, body="Body 1."),
        MemoryEntry(title="No time", body="Added now."),  # its id hashes the time of its add
        _timed(3, id="given-id"),
        _timed(4, id=there.id),  # taken: add refuses it
        _timed(1),  # the same as the first of this plan: "-2" of it
    ]
    planned = plan_ids(store, entries)
    assert planned is not None
    assert planned[3] is None and planned[5] is None
    assert planned[1] == f"{there.id}-2" and planned[4] == "given-id" and planned[6] == f"{planned[0]}-2"
    assert [e.id for e in store.iter_entries()] == [there.id]  # nothing written
    with store.batch():
        for entry, want in zip(entries, planned, strict=True):
            if want is None:
                continue
            assert store.add(entry).id == want


def test_nothing_planned_is_none_for_all_and_the_switch_turns_plans_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _open(tmp_path)
    assert plan_ids(store, [MemoryEntry(title="No time", body="Added now.")]) is None
    assert plan_ids(store, [_timed(1)]) is not None
    monkeypatch.setenv("MEMCORE_MAKA_PLAN_IDS", "0")
    assert plan_ids(store, [_timed(1)]) is None


def test_an_entry_with_its_own_proposal_id_ends_the_plan(tmp_path: Path) -> None:
    store = _open(tmp_path)
    entries = [_timed(1), _timed(2, extra={"maka": {"proposalId": "proposal-x"}}), _timed(3)]
    planned = plan_ids(store, entries)
    assert planned is not None and planned[0] is not None and planned[1:] == [None, None]


def _migrated(src: str, root: Path, plan: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[MemoryEntry]]:
    monkeypatch.setenv("MEMCORE_MAKA_PLAN_IDS", plan)
    root.mkdir()
    report = migrate(src, f"maka:{root / 'MEMORY.md'}")
    dump = json.loads(
        json.dumps(report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})).replace(
            str(root), "<target>"
        )
    )
    with MakaProvider(str(root / "MEMORY.md")) as store:
        read = [restore_kept(e).model_copy(update={"version": None}) for e in store.iter_entries()]
    return dump, read


def test_a_migration_with_planned_ids_drops_only_the_kept_times_of_late_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"whitebox:{_generated('whitebox', tmp_path / 'src', 150)}"
    late, late_read = _migrated(src, tmp_path / "late", "0", monkeypatch)
    planned, planned_read = _migrated(src, tmp_path / "planned", "1", monkeypatch)
    # the same entries once kept fields are restored (the time the late update stamped is put back)
    assert planned_read == late_read
    dropped = [e for e in late["entries"] if e["kept"]]
    assert dropped and all(
        [k["field"] for k in e["kept"]] == ["updated_at"] and k["stored"] == "2026-12-07T08:00:00Z"
        for e in dropped
        for k in e["kept"]
    )
    for e in late["entries"]:
        e["kept"] = []
    late["counts"]["kept"] = 0
    assert planned == late  # everything else the same: losses, notes, diagnostics, links
