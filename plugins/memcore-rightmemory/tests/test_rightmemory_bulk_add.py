"""RightMemory's ``add_many`` writes, returns and refuses exactly what one ``add`` each does.

Each case adds the same entries to two new stores, one ``add`` per entry in one batch and one
``add_many`` call, and compares the files byte for byte and the results item by item.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import InvalidEntryError, MemcoreError
from memcore.models import Kind, MemoryEntry, Relation
from memcore_rightmemory import _bulk
from memcore_rightmemory.provider import RightMemoryProvider


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test


def _store(root: Path) -> Path:
    root.mkdir()
    RightMemoryProvider.init_store(str(root))
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _result(item: MemoryEntry | Exception) -> Any:
    return item.model_dump() if isinstance(item, MemoryEntry) else f"{type(item).__name__}: {item}"


def _one_by_one(root: Path, entries: list[MemoryEntry]) -> list[MemoryEntry | Exception]:
    out: list[MemoryEntry | Exception] = []
    with RightMemoryProvider(str(root)) as store, store.batch():
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


def _bulk_add(root: Path, entries: list[MemoryEntry]) -> list[MemoryEntry | Exception]:
    with RightMemoryProvider(str(root)) as store, store.batch():
        return store.add_many(entries)


def _same(tmp_path: Path, entries: list[MemoryEntry]) -> list[MemoryEntry | Exception]:
    one, many = _store(tmp_path / "one"), _store(tmp_path / "many")
    expected = _one_by_one(one, entries)
    got = _bulk_add(many, entries)
    assert [_result(r) for r in got] == [_result(r) for r in expected]
    assert _files(many) == _files(one)
    return got


def _headings(n: int, start: int = 0) -> list[MemoryEntry]:
    return [
        MemoryEntry(
            id=None if i % 3 else f"h{i}",
            title=f"Heading {i}",
            body=f"What heading {i} says.\n\nA second paragraph.",
            tags=[f"t{i % 4}"],
            confidence=0.5,
            relations=[Relation(type="related", target=f"h{i - 3}")] if i % 3 == 0 and i >= 3 else [],
        )
        for i in range(start, start + n)
    ]


def test_a_run_of_headings_is_written_as_one_add_each_writes_it(tmp_path: Path) -> None:
    got = _same(tmp_path, _headings(40))
    assert len(got) == 40 and all(isinstance(r, MemoryEntry) for r in got)


def test_headings_mixed_with_nodes_children_and_pursuits_are_the_same(tmp_path: Path) -> None:
    entries = _headings(6)
    entries.insert(2, MemoryEntry(id="n1", title="A node"))  # a node: not in a run
    entries.insert(4, MemoryEntry(id="c1", title="Child", body="Under h0.", parent="h0"))
    entries.insert(5, MemoryEntry(id="p1", kind=Kind.PURSUIT, title="A pursuit", body="Goal."))
    entries += _headings(5, start=10)
    _same(tmp_path, entries)


def test_a_refused_entry_in_a_run_stops_the_call_and_writes_nothing_of_it(tmp_path: Path) -> None:
    entries = _headings(5)
    entries.insert(3, MemoryEntry(id="bad", title="Bad", body="x", extra={"rightmemory": {"marker": "M#"}}))
    got = _same(tmp_path, entries)
    assert len(got) == 4 and isinstance(got[-1], MemcoreError)


@pytest.mark.parametrize("text", ["a\x00b", "bell \x07", "del \x7f"])
def test_a_control_character_in_a_run_is_refused_as_add_refuses_it(text: str, tmp_path: Path) -> None:
    entries = _headings(4)
    entries.insert(2, MemoryEntry(title="Bad", body=text))
    got = _same(tmp_path, entries)
    assert len(got) == 3 and isinstance(got[-1], InvalidEntryError)
    assert "control character" in str(got[-1])
    assert b"Bad" not in (tmp_path / "many" / "MEMORY.md").read_bytes()


def test_an_edge_to_a_later_entry_of_the_run_is_written_as_add_writes_it(tmp_path: Path) -> None:
    entries = _headings(4)
    entries[1] = entries[1].model_copy(update={"id": "x1", "relations": [Relation(type="related", target="h3")]})
    got = _same(tmp_path, entries)
    assert len(got) == 4


def test_a_title_taken_by_an_earlier_entry_of_the_run_gets_the_next_id(tmp_path: Path) -> None:
    entries = [MemoryEntry(title="Same", body=f"Body {i}.") for i in range(4)]
    got = _same(tmp_path, entries)
    assert [r.id for r in got if isinstance(r, MemoryEntry)] == ["same", "same-2", "same-3", "same-4"]


def test_an_id_given_twice_is_refused_the_second_time(tmp_path: Path) -> None:
    entries = [MemoryEntry(id="twice", title="One", body="a"), MemoryEntry(id="twice", title="Two", body="b")]
    got = _same(tmp_path, entries)
    assert isinstance(got[0], MemoryEntry) and isinstance(got[1], MemcoreError)


def test_text_that_would_not_read_back_is_refused_with_adds_error(tmp_path: Path) -> None:
    entries = _headings(3)
    entries.insert(1, MemoryEntry(id="anchor", title="Has {#anchor2} in it", body="b"))
    got = _same(tmp_path, entries)
    assert len(got) == 2 and isinstance(got[-1], MemcoreError)


def test_the_run_path_is_taken_and_its_switch_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commits: list[int] = []
    real = _bulk._commit

    def counting(provider: RightMemoryProvider, run: list[Any]) -> Any:
        commits.append(len(run))
        return real(provider, run)

    monkeypatch.setattr(_bulk, "_commit", counting)
    (tmp_path / "on").mkdir()
    _same(tmp_path / "on", _headings(30))
    assert commits == [30]
    commits.clear()
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_BULK", "0")
    (tmp_path / "off").mkdir()
    _same(tmp_path / "off", _headings(30))
    assert commits == []
