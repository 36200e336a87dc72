"""Box-memory's ``add_many`` writes, returns and refuses exactly what one ``add`` each does.

Each case adds the same entries to two new workspaces, one ``add`` per entry in one batch and
one ``add_many`` call, and compares every file the adds wrote byte for byte and the results
item by item. New ids (ULIDs) and "now" are made the same on both sides.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ulid import ULID

import memcore_box._state
import memcore_box._workspace
import memcore_box.provider
from memcore.errors import ConflictError, InvalidEntryError, MemcoreError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_box import _bulk
from memcore_box.provider import BoxMemoryProvider

_NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _same_ids_and_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    monkeypatch.setattr(memcore_box.provider, "utc_now", lambda: _NOW)
    monkeypatch.setattr(memcore_box._state, "utc_now", lambda: _NOW)
    monkeypatch.setattr(memcore_box._workspace, "utc_now", lambda: _NOW)


def _ulids() -> Iterator[ULID]:
    return (ULID.from_int(i) for i in itertools.count(1))


def _store(root: Path) -> Path:
    root.mkdir()
    BoxMemoryProvider.init_store(str(root), workspace_name="w")
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _result(item: MemoryEntry | Exception) -> Any:
    if isinstance(item, MemoryEntry):
        return item.model_dump(), sorted(item.model_fields_set)
    return f"{type(item).__name__}: {item}".replace("/many/", "/one/")


def _one_by_one(root: Path, entries: list[MemoryEntry], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    ids = _ulids()
    monkeypatch.setattr(memcore_box._state, "ULID", lambda: next(ids))
    out: list[MemoryEntry | Exception] = []
    with BoxMemoryProvider(str(root)) as store, store.batch():
        for entry in entries:
            try:
                stored = store.add(entry)
            except MemcoreError as exc:
                out.append(exc)
                break
            out.append(stored)
            if entry.id is not None and stored.id != entry.id:
                break
    return out


def _bulk_add(root: Path, entries: list[MemoryEntry], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    ids = _ulids()
    monkeypatch.setattr(memcore_box._state, "ULID", lambda: next(ids))
    with BoxMemoryProvider(str(root)) as store, store.batch():
        return store.add_many(entries)


def _same(tmp_path: Path, entries: list[MemoryEntry], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    one, many = _store(tmp_path / "one"), _store(tmp_path / "many")
    expected = _one_by_one(one, entries, monkeypatch)
    got = _bulk_add(many, entries, monkeypatch)
    assert [_result(r) for r in got] == [_result(r) for r in expected]
    assert _files(many) == _files(one)
    return got


def _entries(n: int, *, ids: bool = False) -> list[MemoryEntry]:
    kinds = [Kind.FACT, Kind.DECISION, Kind.OBSERVATION, Kind.NOTE, Kind.PREFERENCE]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        relations = [Relation(type="related", target=f"b{i - 3}")] if ids and i % 4 == 3 else []
        out.append(
            MemoryEntry(
                id=f"b{i}" if ids else None,
                kind=kind,
                title="" if kind is Kind.OBSERVATION else f"Item {i % 7}",
                body=f"Entry {i}: what was learnt.\n",
                tags=[f"topic-{i % 3}", "bench"],
                confidence=(0.3, 0.5, 0.9)[i % 3],
                source="bench",
                created_at=datetime(2026, 1, 5, 9, i % 60, tzinfo=UTC) if i % 5 else None,
                date_only=kind is Kind.OBSERVATION,
                relations=relations,
                extra={"whitebox": {"schema": "whitebox/1.0"}, "memcore": {"migrated_from": f"x.{i}"}},
            )
        )
    return out


def test_entries_without_ids_are_written_and_returned_as_one_add_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = _same(tmp_path, _entries(30), monkeypatch)
    assert len(got) == 30 and all(isinstance(r, MemoryEntry) for r in got)
    assert got[8].title == "Item 1" and got[8].extra["box"]["slug"] == "item-1-2"  # entry 1 took "item-1"


def test_entries_with_ids_and_related_links_resolve_as_one_add_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = _same(tmp_path, _entries(20, ids=True), monkeypatch)
    linked = [r for r in got if isinstance(r, MemoryEntry) and r.relations]
    assert linked and all(rel.resolved for r in linked for rel in r.relations)


def test_supersedes_and_memcore_relations_are_read_back_as_one_add_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _entries(4, ids=True)
    entries.append(
        MemoryEntry(
            id="b9",
            title="Newer",
            relations=[
                Relation(type="supersedes", target="b1"),
                Relation(type="depends_on", target="b2"),
                Relation(type="superseded_by", target="later"),
            ],
        )
    )
    got = _same(tmp_path, entries, monkeypatch)
    assert [(r.type, r.resolved) for r in got[-1].relations] == [
        ("supersedes", True),
        ("depends_on", True),
        ("superseded_by", False),
    ]


def test_a_refused_entry_stops_the_call_and_nothing_of_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _entries(5)
    entries.insert(3, MemoryEntry(kind=Kind.COMPANION, title="No binary", body="x"))  # no companion_for
    got = _same(tmp_path, entries, monkeypatch)
    assert len(got) == 4 and isinstance(got[-1], InvalidEntryError)
    assert "box.companion-block" in str(got[-1])
    assert not list((tmp_path / "many").rglob("companion__no-binary*"))


def test_a_control_character_is_refused_as_add_refuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _entries(4)
    entries.insert(2, MemoryEntry(title="Bad", body="bell \x07"))
    got = _same(tmp_path, entries, monkeypatch)
    assert len(got) == 3 and isinstance(got[-1], InvalidEntryError)


def test_an_id_given_twice_is_refused_the_second_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [MemoryEntry(id="twice", title="One", body="a"), MemoryEntry(id="twice", title="Two", body="b")]
    got = _same(tmp_path, entries, monkeypatch)
    assert isinstance(got[0], MemoryEntry) and isinstance(got[1], ConflictError)


def test_a_file_nobody_indexed_that_holds_the_name_gets_the_next_suffix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, many = _store(tmp_path / "one"), _store(tmp_path / "many")
    for root in (one, many):  # written by hand after the index: add finds it only by its name
        (root / "memories" / "fact__taken.md").write_text("not a memory\n", encoding="utf-8")
    entries = [MemoryEntry(kind=Kind.FACT, title="Taken", body="b", source="me"), *_entries(3)]
    expected = _one_by_one(one, entries, monkeypatch)
    got = _bulk_add(many, entries, monkeypatch)
    assert [_result(r) for r in got] == [_result(r) for r in expected]
    assert got[0].extra["box"]["slug"] == "taken-2"
    assert (many / "memories" / "fact__taken.md").read_text(encoding="utf-8") == "not a memory\n"
    assert _files(many) == _files(one)


def test_entries_kept_by_the_caller_are_not_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _entries(6)
    before = [e.model_dump() for e in entries]
    _same(tmp_path, entries, monkeypatch)
    assert [e.model_dump() for e in entries] == before


_TEXT = st.text(alphabet=st.sampled_from("aZ é-_:#[]'\"0\n"), max_size=12)


@st.composite
def _random_entries(draw: st.DrawFn) -> list[MemoryEntry]:
    n = draw(st.integers(1, 6))
    out = []
    for i in range(n):
        targets = [f"r{j}" for j in range(i)] + ["elsewhere"]
        relations = [
            Relation(type=draw(st.sampled_from(["related", "supersedes", "depends_on"])), target=t)
            for t in draw(st.lists(st.sampled_from(targets), max_size=2, unique=True))
        ]
        out.append(
            MemoryEntry(
                id=draw(st.sampled_from([None, f"r{i}"])),
                kind=draw(st.sampled_from([Kind.FACT, Kind.NOTE, Kind.OBSERVATION, Kind.DECISION])),
                title=draw(_TEXT).strip(),
                body=draw(_TEXT),
                status=draw(st.sampled_from([Status.ACTIVE, Status.ARCHIVED, Status.SUPERSEDED])),
                tags=draw(st.lists(st.sampled_from(["a", "b é", "0.5", "yes"]), max_size=2, unique=True)),
                confidence=draw(st.sampled_from([None, 0.0, 0.25, 1.0])),
                scope=draw(st.sampled_from([None, "default", "eng"])),
                relations=relations,
                extra=draw(st.sampled_from([{}, {"box": {"slug": "same"}}, {"box": {"kind": "odd"}, "x": {"k": 1}}])),
            )
        )
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=_random_entries())
def test_random_entries_give_the_same_files_and_results(
    entries: list[MemoryEntry], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same(tmp_path_factory.mktemp("case"), entries, monkeypatch)


def test_the_bulk_steps_are_taken_and_the_switch_turns_them_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[str] = []
    real = _bulk.checked_read

    def counting(store: BoxMemoryProvider, path: str, *args: Any) -> Any:
        checked.append(path)
        return real(store, path, *args)

    monkeypatch.setattr(memcore_box.provider, "checked_read", counting)
    monkeypatch.setenv("MEMCORE_BOX_WRITE_FAST", "0")  # else a plain entry's check is the fast one
    (tmp_path / "on").mkdir()
    _same(tmp_path / "on", _entries(8), monkeypatch)
    assert len(checked) == 8
    checked.clear()
    monkeypatch.setenv("MEMCORE_BOX_BULK", "0")
    (tmp_path / "off").mkdir()
    _same(tmp_path / "off", _entries(8), monkeypatch)
    assert checked == []


@pytest.mark.parametrize("source_format", ["rightmemory", "box"])
def test_a_migration_into_box_writes_and_reports_the_same_with_the_bulk_add_on_and_off(
    source_format: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcore.migrate import migrate
    from memcore.migrate.bulk import set_bulk_add
    from memcore.registry import get_registry

    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    cls = get_registry().get(source_format)
    src = tmp_path / "src"
    src.mkdir()
    location = str(src / "MEMORY.md") if source_format == "rightmemory" else str(src)
    cls.init_store(location)
    ids: dict[str, str] = {}
    with cls(location) as store, store.batch():
        for i, entry in enumerate(_entries(40, ids=True)):
            entry.id = entry.id if source_format == "rightmemory" else None
            entry.extra = {}
            entry.relations = [Relation(type=r.type, target=ids[r.target]) for r in entry.relations if r.target in ids]
            if i % 10 == 1 and i > 1:
                entry.relations.append(Relation(type="supersedes", target=ids[f"b{i - 1}"]))
            ids[f"b{i}"] = store.add(entry).id or ""
    checked: list[bool] = []
    real = _bulk.checked_read
    monkeypatch.setattr(memcore_box.provider, "checked_read", lambda *a: checked.append(True) or real(*a))
    monkeypatch.setenv("MEMCORE_BOX_WRITE_FAST", "0")  # else a plain entry's check is the fast one
    results = []
    try:
        for on in (False, True):
            set_bulk_add(on)
            monkeypatch.setenv("MEMCORE_BOX_BULK", "1" if on else "0")
            ulids = _ulids()
            monkeypatch.setattr(memcore_box._state, "ULID", ulids.__next__)
            target = tmp_path / ("on" if on else "off") / "workspace"
            report = migrate(f"{source_format}:{location}", f"box:{target}")
            dump = report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})
            files = {k: v for k, v in _files(target).items() if not k.startswith(".")}
            results.append((repr(dump).replace(str(target), "<target>"), files))
    finally:
        set_bulk_add(None)
    assert results[0] == results[1]
    assert len([k for k in results[1][1] if k.endswith(".md")]) == 40
    assert len(checked) == 40  # the run with the bulk add on went through add_many's steps
