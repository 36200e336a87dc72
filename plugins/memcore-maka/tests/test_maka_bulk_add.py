"""Maka's ``add_many`` writes, returns and refuses exactly what one ``add`` each does.

Each case adds the same entries to two copies of one MEMORY.md (the clock fixed), one ``add``
per entry in one batch and one ``add_many`` call, and compares the files byte for byte and the
results item by item; ``MEMCORE_MAKA_BULK=0`` must give the same again.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import ConflictError, InvalidEntryError, MemcoreError, StoreLimitError
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import BulkAdding
from memcore_maka import _bulk
from memcore_maka.provider import MakaProvider

NOW_MS = 1_780_000_000_000
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test


def _store(folder: Path, text: bytes | None) -> Path:
    folder.mkdir(parents=True)
    path = folder / "MEMORY.md"
    if text is None:
        MakaProvider.init_store(str(path))
    else:
        path.write_bytes(text)
        os.chmod(path, 0o600)
    return path


def _open(path: Path, **options: Any) -> MakaProvider:
    store = MakaProvider(str(path), **options).open()
    store._now = lambda: NOW_MS
    return store


def _result(item: MemoryEntry | Exception, folder: Path) -> Any:
    if isinstance(item, MemoryEntry):
        return item.model_dump()
    return f"{type(item).__name__}: {item}".replace(str(folder), "<store>")


def _one_by_one(path: Path, entries: list[MemoryEntry]) -> list[MemoryEntry | Exception]:
    out: list[MemoryEntry | Exception] = []
    store = _open(path)
    with store.batch():
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


def _many(path: Path, entries: list[MemoryEntry], *, batch: bool = True) -> list[MemoryEntry | Exception]:
    store = _open(path)
    assert isinstance(store, BulkAdding)
    if not batch:
        return store.add_many(entries)
    with store.batch():
        return store.add_many(entries)


def _adds_counted(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Record the id of each entry :meth:`MakaProvider.add` is called with."""
    real = MakaProvider.add
    calls: list[str | None] = []

    def counting(self: MakaProvider, entry: MemoryEntry) -> MemoryEntry:
        calls.append(entry.id)
        return real(self, entry)

    monkeypatch.setattr(MakaProvider, "add", counting)
    return calls


def _same(
    tmp_path: Path, entries: list[MemoryEntry], text: bytes | None = None, *, batch: bool = True
) -> list[MemoryEntry | Exception]:
    """Add ``entries`` one by one, with ``add_many``, and with ``add_many`` switched off; all alike."""
    one = _store(tmp_path / "one", text)
    many = _store(tmp_path / "many", text)
    off = _store(tmp_path / "off", text)
    expected = _one_by_one(one, entries)
    got = _many(many, entries, batch=batch)
    os.environ["MEMCORE_MAKA_BULK"] = "0"
    try:
        got_off = _many(off, entries, batch=batch)
    finally:
        del os.environ["MEMCORE_MAKA_BULK"]
    want = [_result(r, one.parent) for r in expected]
    assert [_result(r, many.parent) for r in got] == want
    assert [_result(r, off.parent) for r in got_off] == want
    assert many.read_bytes() == one.read_bytes()
    assert off.read_bytes() == one.read_bytes()
    read_many, read_one = _open(many).read_all(), _open(one).read_all()
    assert read_many.entries == read_one.entries
    assert [(d.line, d.code, d.message) for d in read_many.diagnostics] == [
        (d.line, d.code, d.message) for d in read_one.diagnostics
    ]
    return got


def _entries(n: int, start: int = 0, *, ids: bool = False) -> list[MemoryEntry]:
    kinds = [Kind.FACT, Kind.OBSERVATION, Kind.NOTE, Kind.DECISION]
    return [
        MemoryEntry(
            id=f"e{i}" if ids else None,
            kind=kinds[i % len(kinds)],
            title="" if i % 4 == 1 else f"Entry {i}",
            body=f"What entry {i} says.\n\nA second paragraph of {i}.",
            tags=[f"Topic {i % 3}", "bench"],
            confidence=(0.25, 0.5, 0.9)[i % 3],
            source="test" if i % 2 else "manual",
            created_at=START + timedelta(hours=i),
            updated_at=START + timedelta(hours=i),
            date_only=i % 4 == 1,
            relations=[Relation(type="related", target=f"e{i - 3}")] if i % 5 == 4 and i >= 3 else [],
        )
        for i in range(start, start + n)
    ]


def test_a_run_of_new_entries_gives_the_same_file_and_entries_as_one_add_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _adds_counted(monkeypatch)
    got = _same(tmp_path, _entries(40))
    assert len(got) == 40 and all(isinstance(r, MemoryEntry) for r in got)
    assert len({r.id for r in got if isinstance(r, MemoryEntry)}) == 40
    # one add by one (40), then one with the switch off (40), and in add_many only the
    # session's first write (it checks the files)
    assert len(calls) == 40 + 1 + 40


def test_entries_with_ids_and_a_run_outside_a_batch_give_the_same(tmp_path: Path) -> None:
    got = _same(tmp_path, _entries(12, ids=True), batch=False)
    assert [r.id for r in got if isinstance(r, MemoryEntry)] == [f"e{i}" for i in range(12)]


def test_derived_ids_that_collide_inside_the_run_and_with_the_file_are_made_unique_alike(tmp_path: Path) -> None:
    same = [MemoryEntry(title=f"Twin {i}", body="The same body.", created_at=START) for i in range(4)]
    first = _one_by_one(_store(tmp_path / "seed", None), same[:1])
    assert isinstance(first[0], MemoryEntry)
    text = (tmp_path / "seed" / "MEMORY.md").read_bytes()
    got = _same(tmp_path, same, text)
    base = first[0].id
    assert [r.id for r in got if isinstance(r, MemoryEntry)] == [f"{base}-2", f"{base}-3", f"{base}-4", f"{base}-5"]


def test_an_id_given_twice_stops_at_the_second_with_the_conflict(tmp_path: Path) -> None:
    entries = _entries(5, ids=True)
    entries[3] = entries[3].model_copy(update={"id": "e1"})
    got = _same(tmp_path, entries)
    assert len(got) == 4 and isinstance(got[3], ConflictError)


def test_an_id_already_in_the_file_stops_there(tmp_path: Path) -> None:
    text = b"# Maka Memory\n\n## Old\n<!-- maka-memory: id=e2 -->\nAlready here.\n"
    got = _same(tmp_path, _entries(6, ids=True), text)
    assert len(got) == 3 and isinstance(got[2], ConflictError)


def test_a_refused_entry_in_the_middle_ends_the_call_with_its_error(tmp_path: Path) -> None:
    entries = _entries(6)
    entries[2] = entries[2].model_copy(update={"body": "a NUL \x00 here"})
    got = _same(tmp_path, entries)
    assert len(got) == 3 and isinstance(got[2], InvalidEntryError)


def test_the_entry_that_would_go_over_128_kib_is_refused_and_the_earlier_ones_kept(tmp_path: Path) -> None:
    big = "x" * 3000
    entries = [MemoryEntry(title=f"Big {i}", body=f"{i} {big}", created_at=START) for i in range(60)]
    got = _same(tmp_path, entries)
    assert isinstance(got[-1], StoreLimitError)
    assert 30 < len(got) < 60


def test_a_crlf_file_with_trailing_blank_lines_gets_the_same_terminators(tmp_path: Path) -> None:
    # ten blank LF lines at the end of a CRLF file: the first append drops them, which makes
    # the file CRLF-dominant again only as the appends go on
    text = b"# Maka Memory\r\n\r\n## A\r\n<!-- maka-memory: id=a -->\r\nKept.\r\n" + b"\n" * 10
    _same(tmp_path, _entries(8), text)
    lf = b"# Maka Memory\n\n## A\n<!-- maka-memory: id=a -->\nKept.   \n\n\r\n\r\n\r\n\r\n\r\n\r\n"
    _same(tmp_path / "lf", _entries(8), lf)


def test_an_empty_file_gets_its_header_from_the_first_add_then_the_run(tmp_path: Path) -> None:
    _same(tmp_path, _entries(5), b"")
    _same(tmp_path / "blank", _entries(5), b"  \n\n")


def test_secrets_escapes_and_odd_ids_read_back_as_one_add_each_gives_them(tmp_path: Path) -> None:
    entries = [
        MemoryEntry(title="Secret", body="token sk-abcdefghijklmnopqrstuvwxyz0123456789 here", created_at=START),
        MemoryEntry(
            title="Escapes", body="## not a heading\n<!-- maka-memory: id=x -->\n  indented\r\n", created_at=START
        ),
        MemoryEntry(id="cafe\u0301", title="Not NFC", body="An id that is not NFC."),
        MemoryEntry(id="café", title="NFC twin", body="Its NFC twin."),
        MemoryEntry(title="", body="", created_at=START),
        MemoryEntry(title="Proposal id", body="Carries one.", extra={"maka": {"proposalId": "p-1"}}),
        MemoryEntry(title="Line\nbreaks in\ta title", body="Body.", created_at=START, tags=["A b", "c,d"]),
    ]
    got = _same(tmp_path, entries)
    assert "sk-abcdefghijklmnopqrstuvwxyz0123456789" not in (tmp_path / "many" / "MEMORY.md").read_text()
    assert len(got) >= 4


def test_a_gated_store_refuses_the_first_entry_as_add_does(tmp_path: Path) -> None:
    path = _store(tmp_path / "s", None)
    before = path.read_bytes()
    for options in ({"read_only": True}, {"incognito": True}, {"enabled": False}):
        store = _open(path, **options)
        got = store.add_many(_entries(3))
        assert len(got) == 1 and isinstance(got[0], MemcoreError)
        with pytest.raises(type(got[0])):
            store.add(_entries(1)[0])
    assert path.read_bytes() == before


def test_many_reference_readings_are_those_of_one_entry_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _store(tmp_path / "s", None)
    stored = [r for r in _many(path, _entries(10)) if isinstance(r, MemoryEntry)]
    store = _open(path)
    asked = [*stored, MemoryEntry(id="missing", title="No such entry", body="x")]
    one_each = [store.reference_reads_differently(e) for e in asked]
    assert store.reference_reads_differently_many(asked) == one_each
    assert any(one_each)  # the entries' sources, tags and kinds are notes
    monkeypatch.setenv("MEMCORE_MAKA_BULK", "0")
    assert store.reference_reads_differently_many(asked) == one_each


def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_MAKA_BULK", "0")
    assert not _bulk.bulk_runs_enabled()
    monkeypatch.setenv("MEMCORE_MAKA_BULK", "1")
    assert _bulk.bulk_runs_enabled()


def test_a_run_whose_check_fails_is_undone_and_added_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bulk._Run, "_check", staticmethod(lambda doc, sections, rendered: False))
    calls = _adds_counted(monkeypatch)
    text = b"# Maka Memory\n\n## A\n<!-- maka-memory: id=a -->\nKept.\n\n\n"
    got = _same(tmp_path, _entries(9), text)
    assert len(got) == 9
    assert len(calls) == 3 * 9  # every run was undone: add_many added each with add


def test_an_item_add_cannot_take_raises_after_the_entries_before_it_are_written(tmp_path: Path) -> None:
    entries: list[Any] = [*_entries(4), {"title": "not an entry"}]
    one, many = _store(tmp_path / "one", None), _store(tmp_path / "many", None)
    with pytest.raises(AttributeError):
        _one_by_one(one, entries)
    with pytest.raises(AttributeError):
        _many(many, entries)
    assert many.read_bytes() == one.read_bytes()
    assert len(_open(many).read_all().entries) == 4
