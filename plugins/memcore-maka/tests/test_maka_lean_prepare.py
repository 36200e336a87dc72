"""Maka's entry prepared without a copy (``MEMCORE_MAKA_LEAN_PREPARE``) gives what ``new_entry_among`` gives.

:func:`memcore_maka._lean.lean_new_entry` decides an appended entry's times and id from the
entry itself when none of its strings holds a hint of a secret, instead of on a redacted copy.
On and off, for every kind of entry (its id and times given or not, a secret in any field, a
taken id, a string that is not UTF-8), the section rendered, the id and the error are the same;
``add_many``, ``plan_ids`` and whole migrations into Maka write the same bytes, return the same
entries and report the same.
"""

from __future__ import annotations

import copy
import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.test_migrate_bulk_add import _generated

from memcore.errors import ConflictError
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import add_many, checked_for_write, plan_ids
from memcore_maka import provider as maka_provider
from memcore_maka._lean import lean_new_entry
from memcore_maka.codec import new_entry_among, render_section, stable_entry_id, to_ms
from memcore_maka.provider import MakaProvider

NOW_MS = 1_780_000_000_000
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WHERE = Path("/store/MEMORY.md")
SECRET = "sk-ant-api03-Q7w1Anthropic9Zx"


@pytest.fixture(autouse=True)
def _fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(maka_provider, "utc_now", lambda: datetime(2026, 12, 7, 8, 0, tzinfo=UTC))


def _entries() -> dict[str, MemoryEntry]:
    clean = MemoryEntry(
        kind=Kind.DECISION,
        title="Use the queue",
        body="We chose the queue for retries.\nSecond line.",
        tags=["infra", "queue"],
        source="chat",
        scope="project",
        parent="p0",
        created_at=WHEN,
        relations=[Relation(type="related", target="e0"), Relation(type="see", target="Some text", resolved=False)],
        extra={"maka": {"origin": "manual"}, "other": {"nested": [1, "two", {"three": None}], "flag": True}},
    )
    return {
        "no id, a time": clean,
        "id and both times": clean.model_copy(update={"id": "given-1", "updated_at": WHEN + timedelta(hours=1)}),
        "id, no updated time": clean.model_copy(update={"id": "given-2"}),
        "no time at all": MemoryEntry(title="t", body="Added now."),
        "times given as None": MemoryEntry(title="t", body="b", created_at=None, updated_at=None),
        "the hash of an entry already there": clean.model_copy(update={"body": "Already there."}),
        "a taken id": clean.model_copy(update={"id": "taken-id"}),
        "a secret in the body": clean.model_copy(update={"body": f"the key is {SECRET}"}),
        "a secret in a tag": clean.model_copy(update={"tags": ["infra", SECRET]}),
        "a secret relation type": clean.model_copy(update={"relations": [Relation(type="password", target="x")]}),
        "a secret in extra": clean.model_copy(update={"extra": {"other": {"note": f"password={SECRET}"}}}),
        "a hint word that redacts nothing": clean.model_copy(update={"body": "the token bucket refills"}),
        "a secret id": clean.model_copy(update={"id": "password=hunter2"}),
        "a lone surrogate": clean.model_copy(update={"title": "bad \ud800 text"}),
    }


def _ids() -> tuple[set[str], set[str]]:
    there = stable_entry_id("Already there.", to_ms(WHEN))
    return {there, "taken-id"}, {there, "taken-id"}


def _outcome(make: Any, entry: MemoryEntry) -> tuple[str, Any]:
    taken, known = _ids()
    try:
        new = make(entry, taken, known, WHERE, NOW_MS)
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the error itself
        return "error", (type(exc), str(exc))
    rendered = render_section(new)
    return "written", (new.id, rendered.title, rendered.meta_text, rendered.content_lines)


@pytest.mark.parametrize("case", list(_entries()))
def test_the_lean_entry_renders_the_section_and_raises_the_error_of_new_entry_among(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = _entries()[case]
    before = copy.deepcopy(entry.__dict__)
    monkeypatch.setenv("MEMCORE_MAKA_LEAN_PREPARE", "1")
    lean = _outcome(lean_new_entry, entry)
    monkeypatch.setenv("MEMCORE_MAKA_LEAN_PREPARE", "0")
    off = _outcome(lean_new_entry, entry)
    assert lean == off == _outcome(new_entry_among, entry)
    assert entry.__dict__ == before  # the entry given is never changed


def test_the_lean_entry_is_the_entry_itself_when_it_holds_its_id_and_times(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_MAKA_LEAN_PREPARE", "1")
    entry = _entries()["id and both times"]
    assert lean_new_entry(entry, set(), set(), WHERE, NOW_MS) is entry
    # the switches as the caller read them for a run: off, the general path's copy
    general = lean_new_entry(entry, set(), set(), WHERE, NOW_MS, lean=False)
    assert general is not entry and render_section(general) == render_section(entry)
    fresh = _entries()["no id, a time"]
    new = lean_new_entry(fresh, set(), set(), WHERE, NOW_MS)
    assert new is not fresh and fresh.id is None and fresh.updated_at is None
    assert new.id == stable_entry_id(fresh.body, to_ms(WHEN)) and new.updated_at == WHEN


def test_a_taken_id_is_refused_as_add_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_MAKA_LEAN_PREPARE", "1")
    with pytest.raises(
        ConflictError, match=re.escape("an entry with id 'taken-id' already exists in /store/MEMORY.md")
    ):
        lean_new_entry(_entries()["a taken id"], *_ids(), WHERE, NOW_MS)


def _store(root: Path) -> MakaProvider:
    path = root / "MEMORY.md"
    root.mkdir()
    MakaProvider.init_store(str(path))
    store = MakaProvider(str(path)).open()
    store._now = lambda: NOW_MS
    return store


@pytest.mark.parametrize("lean", ["1", "0"])
def test_add_many_and_plan_ids_write_and_plan_the_same_on_and_off(
    lean: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(flag: str, root: Path) -> tuple[list[str | None] | None, list[Any], bytes]:
        monkeypatch.setenv("MEMCORE_MAKA_LEAN_PREPARE", flag)
        store = _store(root)
        store.add(_entries()["the hash of an entry already there"].model_copy(update={"extra": {}}))
        entries = [e for name, e in _entries().items() if name != "a lone surrogate"]
        planned = plan_ids(store, [checked_for_write(store, e) for e in entries])
        results: list[MemoryEntry | Exception] = []
        with store.batch():
            while len(results) < len(entries):  # as a migration sends them: on after each refusal
                results += add_many(store, entries[len(results) :])
        shown = [r.model_dump(mode="json") if isinstance(r, MemoryEntry) else repr(r) for r in results]
        return planned, shown, (root / "MEMORY.md").read_bytes()

    planned, results, data = run(lean, tmp_path / "one")
    assert (planned, results, data) == run("0", tmp_path / "general")
    assert planned is not None and any(p is not None for p in planned)
    assert any(isinstance(r, dict) for r in results) and b"[redacted]" in data


def _migrated(src: str, root: Path, flag: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, bytes]:
    monkeypatch.setenv("MEMCORE_MAKA_LEAN_PREPARE", flag)
    root.mkdir()
    report = migrate(src, f"maka:{root / 'MEMORY.md'}")
    dump = json.loads(
        json.dumps(report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})).replace(
            str(root), "<target>"
        )
    )
    return dump, (root / "MEMORY.md").read_bytes()


@pytest.mark.parametrize("fmt", ["whitebox", "box", "rightmemory", "maka"])
def test_a_migration_into_maka_writes_the_same_bytes_and_report_on_and_off(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = f"{fmt}:{_generated(fmt, tmp_path / 'src', 120)}"
    lean_report, lean_bytes = _migrated(src, tmp_path / "lean", "1", monkeypatch)
    general_report, general_bytes = _migrated(src, tmp_path / "general", "0", monkeypatch)
    assert lean_bytes == general_bytes and lean_bytes.count(b"## ") == 120
    assert lean_report == general_report
    assert lean_report["counts"]["written"] == 120 and lean_report["counts"]["failed"] == 0
