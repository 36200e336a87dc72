"""A read takes the entry a write read back only for an item with the same inputs (MEMCORE_RIGHTMEMORY_READBACK)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import StoreSnapshot
from memcore_rightmemory import RightMemoryProvider


def _write(store: RightMemoryProvider) -> None:
    with store.batch():
        first = store.add(MemoryEntry(kind=Kind.FACT, title="Uses tabs", body="Tabs, width 4.\n", tags=["style"]))
        store.add_many(
            [
                MemoryEntry(
                    kind=Kind.NOTE, title=f"Note {i}", body=f"Body {i}.\n", source="chat", extra={"app": {"k": [i]}}
                )
                for i in range(4)
            ]
        )
        second = store.add(
            MemoryEntry(
                kind=Kind.FACT,
                title="Editor",
                body="Vim.\n",
                relations=[Relation(type="related", target=first.id or "")],
            )
        )
        store.add(MemoryEntry(kind=Kind.FACT, title="Child", body="Under the editor.\n", parent=second.id))
        store.add(MemoryEntry(kind=Kind.NOTE, title="A node", body="", parent=second.id))
        changed = store.get(first.id or "")
        changed.body = "Tabs, width 8.\n"
        store.update(changed, expected_version=changed.version)


def _same(a: StoreSnapshot, b: StoreSnapshot) -> None:
    assert a == b
    assert [e.model_fields_set for e in a.entries] == [e.model_fields_set for e in b.entries]
    assert [e.model_dump() for e in a.entries] == [e.model_dump() for e in b.entries]


def test_a_read_after_writes_takes_each_entry_they_read_back_once_and_equals_a_fresh_read(tmp_path: Path) -> None:
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as store:
        _write(store)
        assert len(store._built) == 9  # 8 adds and the update
        taken = store.read_all()
        assert len(store._built) == 1  # the first add's entry: the update changed its lines
        again = store.read_all()
    with RightMemoryProvider(tmp_path) as fresh:
        built = fresh.read_all()
    _same(taken, built)
    _same(again, built)
    titles = [e.title for e in taken.entries]
    assert titles == ["Uses tabs", "Note 0", "Note 1", "Note 2", "Note 3", "Editor", "A node", "Child"]
    assert taken.entries[0].body == "Tabs, width 8.\n" and taken.entries[7].parent == taken.entries[5].id


def test_an_item_whose_parent_changed_on_disk_is_built_again(tmp_path: Path) -> None:
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as store:
        _write(store)
        memory = tmp_path / "MEMORY.md"  # the editor's heading loses its anchor: a plain heading
        memory.write_bytes(memory.read_bytes().replace(b"# Editor {#editor}", b"# Editor", 1))
        read = store.read_all()
        # left: the tabs' first entry (updated since), the editor's, the node's and the child's
        assert len(store._built) == 4
    with RightMemoryProvider(tmp_path) as fresh:
        _same(read, fresh.read_all())
    child = next(e for e in read.entries if e.title == "Child")  # its own lines did not change
    assert child.parent is None and child.extra["rightmemory"]["sections"] == ["Editor"]


def test_with_the_switch_off_nothing_is_kept_and_reads_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshots = []
    for switch in ("1", "0"):
        monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READBACK", switch)
        root = tmp_path / switch
        RightMemoryProvider.init_store(str(root))
        with RightMemoryProvider(root) as store:
            _write(store)
            assert len(store._built) == (9 if switch == "1" else 0)
            snapshots.append(store.read_all())
    for a, b in zip(snapshots[0].entries, snapshots[1].entries, strict=True):
        assert a.model_dump() == b.model_dump()
    assert (tmp_path / "1" / "MEMORY.md").read_bytes() == (tmp_path / "0" / "MEMORY.md").read_bytes()
