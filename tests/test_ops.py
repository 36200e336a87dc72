"""memcore.ops on the four real formats: edits land in the files as each format writes them, and
each format's rules refuse what it forbids, naming the rule."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import memcore
from memcore import MemoryEntry, ops
from memcore.errors import EntryNotFoundError, InvalidEntryError, UnsupportedOperationError
from memcore.models import Kind
from memcore.provider import MemoryProvider
from memcore.registry import get_registry

#: format -> (location inside tmp_path, options that let memcore change stable entries in place)
FORMATS: dict[str, tuple[str, dict[str, Any]]] = {
    "box": ("ws", {}),
    "whitebox": ("vault", {"as_user": True}),
    "rightmemory": ("rm", {}),
    "maka": ("MEMORY.md", {}),
}


def open_new(tmp_path: Path, fmt: str) -> MemoryProvider:
    where, options = FORMATS[fmt]
    location = str(tmp_path / where)
    get_registry().get(fmt).init_store(location)
    return memcore.open(f"{fmt}:{location}", **options)


@pytest.fixture(params=sorted(FORMATS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryProvider]:
    provider = open_new(tmp_path, request.param)
    try:
        yield provider
    finally:
        provider.close()


def files_text(provider: MemoryProvider) -> str:
    root = Path(provider.location)
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*.md") if p.is_file())
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


def test_edit_insert_and_rename_reach_the_files_on_every_format(store: MemoryProvider) -> None:
    added = store.add(MemoryEntry(kind=Kind.FACT, title="Deploy days", body="Deploy on Friday.\nNever at night.\n"))
    assert added.id is not None
    edited = ops.edit(store, added.id, "Friday", "Thursday")
    assert edited.body == "Deploy on Thursday.\nNever at night.\n"
    inserted = ops.insert(store, added.id, "Ask ops first.", line=1)
    assert store.get(added.id).body == inserted.body == "Deploy on Thursday.\nAsk ops first.\nNever at night.\n"
    renamed = ops.rename(store, added.id, "Release days")
    assert renamed.title == "Release days" and store.get(renamed.id or "").title == "Release days"
    text = files_text(store)
    assert "Deploy on Thursday.\nAsk ops first.\nNever at night." in text and "Friday" not in text
    assert "Release days" in text


def test_edit_refuses_zero_or_several_occurrences_and_writes_nothing(tmp_path: Path) -> None:
    with open_new(tmp_path, "box") as store:
        added = store.add(MemoryEntry(title="Days", body="Friday or Friday.\n"))
        assert added.id is not None
        before = files_text(store)
        with pytest.raises(ops.EditMatchError, match="occurs 2 times in the body") as many:
            ops.edit(store, added.id, "Friday", "Monday")
        assert many.value.occurrences == 2
        with pytest.raises(ops.EditMatchError, match="does not occur in the body") as none:
            ops.edit(store, added.id, "friday", "Monday")
        assert none.value.occurrences == 0
        with pytest.raises(ops.EditMatchError, match="the text to replace is empty"):
            ops.edit(store, added.id, "", "Monday")
        assert files_text(store) == before


def test_insert_places_lines_and_keeps_a_missing_final_newline(tmp_path: Path) -> None:
    with open_new(tmp_path, "box") as store:
        added = store.add(MemoryEntry(title="List", body="one\ntwo"))
        assert added.id is not None
        assert ops.insert(store, added.id, "zero", line=0).body == "zero\none\ntwo"
        assert ops.insert(store, added.id, "three").body == "zero\none\ntwo\nthree"
        with pytest.raises(InvalidEntryError, match="line 5 is outside the body"):
            ops.insert(store, added.id, "x", line=5)


def test_a_whitebox_observation_refuses_every_change_naming_append_only(tmp_path: Path) -> None:
    with open_new(tmp_path, "whitebox") as store:
        obs = store.add(MemoryEntry(kind=Kind.OBSERVATION, body="Alex moved to Lyon."))
        assert obs.id is not None and "#" in obs.id
        before = files_text(store)
        for change in (
            lambda: ops.edit(store, obs.id or "", "Lyon", "Paris"),
            lambda: ops.insert(store, obs.id or "", "x"),
            lambda: ops.rename(store, obs.id or "", "x"),
            lambda: ops.move(store, obs.id or "", None),
        ):
            with pytest.raises(UnsupportedOperationError, match="whitebox: observations are append-only"):
                change()
        assert files_text(store) == before


def test_move_sets_the_parent_where_the_format_stores_it_and_rightmemory_moves_natively(tmp_path: Path) -> None:
    with open_new(tmp_path, "box") as store:
        top = store.add(MemoryEntry(title="Project", body="p"))
        child = store.add(MemoryEntry(title="Task", body="t"))
        assert top.id and child.id
        assert ops.move(store, child.id, top.id).parent == top.id
        assert store.get(child.id).parent == top.id
        with pytest.raises(InvalidEntryError, match="that is the entry itself or one of its descendants"):
            ops.move(store, top.id, child.id)
        with pytest.raises(EntryNotFoundError):
            ops.move(store, child.id, "mem_nope")
        assert ops.move(store, child.id, None).parent is None
    with open_new(tmp_path, "rightmemory") as store:
        a = store.add(MemoryEntry(title="A", body="a"))
        b = store.add(MemoryEntry(title="B", body="b"))
        assert a.id and b.id
        assert ops.move(store, b.id, a.id).parent == a.id
        with pytest.raises(InvalidEntryError, match="update keeps `b` under 'a'; move it to None with move"):
            store.update(store.get(b.id).model_copy(update={"parent": None}))


def test_relate_and_unrelate_use_the_format_edges_and_graph_follows_them(tmp_path: Path) -> None:
    with open_new(tmp_path, "rightmemory") as store:
        a = store.add(MemoryEntry(title="A", body="a"))
        b = store.add(MemoryEntry(title="B", body="b"))
        assert a.id and b.id
        ops.relate(store, b.id, "dep", a.id)
        assert "# B {#b} → [dep:a]" in files_text(store)
        around = ops.graph(store, a.id, depth=1)
        assert [e.id for e in around.entries] == ["a", "b"] and around.edges == [("b", "dep", "a")]
        assert around.depth == {"a": 0, "b": 1}
        ops.unrelate(store, b.id, "dep", a.id)
        assert "dep:a" not in files_text(store)
        with pytest.raises(EntryNotFoundError, match="has no edge dep:a"):
            ops.unrelate(store, b.id, "dep", a.id)
        with pytest.raises(EntryNotFoundError):
            ops.relate(store, b.id, "dep", "nope")
    with open_new(tmp_path, "box") as store:
        x = store.add(MemoryEntry(title="X", body="x"))
        y = store.add(MemoryEntry(title="Y", body="y"))
        assert x.id and y.id
        related = ops.relate(store, x.id, "related", y.id)
        assert [(r.type, r.target) for r in related.relations] == [("related", y.id)]
        assert ops.relate(store, x.id, "related", y.id).relations == related.relations  # already there
        assert ops.unrelate(store, x.id, "related", y.id).relations == []


JAN, MAR = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)


def test_recent_lists_newest_first_since_a_time(tmp_path: Path) -> None:
    with open_new(tmp_path, "box") as store:
        old = store.add(MemoryEntry(title="Old", body="o", created_at=JAN, updated_at=JAN))
        new = store.add(MemoryEntry(title="New", body="n", created_at=MAR, updated_at=MAR))
        assert [e.id for e in ops.recent(store)] == [new.id, old.id]
        assert [e.id for e in ops.recent(store, datetime(2026, 2, 1, tzinfo=UTC))] == [new.id]
        with pytest.raises(ValueError, match="since must carry a timezone"):
            ops.recent(store, datetime(2026, 2, 1))
        with pytest.raises(ValueError, match="depth must be 0 to 10, not 11"):
            ops.graph(store, old.id, depth=11)


class NativeEdit:
    """A provider with a native ``edit``: ops.edit calls it instead of get + update."""

    format_name = "native"
    location = "nowhere"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, str | None]] = []

    def edit(self, entry_id: str, old: str, new: str, *, expected_version: str | None = None) -> MemoryEntry:
        self.calls.append((entry_id, old, new, expected_version))
        return MemoryEntry(id=entry_id, body=new)


def test_a_provider_native_operation_wins_over_the_generic_one() -> None:
    provider = NativeEdit()
    result = ops.edit(provider, "e1", "a", "b", expected_version="v1")  # type: ignore[arg-type]
    assert result.body == "b" and provider.calls == [("e1", "a", "b", "v1")]
