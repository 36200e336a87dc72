"""The one-range fast commit and the whole-graph path write the same bytes (MEMCORE_RIGHTMEMORY_FAST_COMMIT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry, Relation
from memcore_rightmemory import RightMemoryProvider


def _write(root: Path) -> dict[str, bytes]:
    RightMemoryProvider.init_store(str(root))
    with RightMemoryProvider(root) as store, store.batch():
        first = store.add(MemoryEntry(kind=Kind.FACT, title="Uses tabs", body="Tabs, width 4.\n"))
        second = store.add(
            MemoryEntry(
                kind=Kind.FACT,
                title="Editor",
                body="Vim.\n",
                tags=["tools"],
                relations=[Relation(type="related", target=first.id or "")],
            )
        )
        for i in range(5):
            store.add(MemoryEntry(kind=Kind.FACT, title=f"Fact {i}", body=f"Body {i}.\n", parent=second.id))
        changed = store.get(first.id or "")
        changed.body = "Tabs, width 8.\n"
        store.update(changed, expected_version=changed.version)
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def test_adds_and_an_update_write_the_same_files_with_the_fast_commit_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_FAST_COMMIT", "1")
    fast = _write(tmp_path / "fast")
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_FAST_COMMIT", "0")
    slow = _write(tmp_path / "slow")
    assert fast == slow
    assert b"Tabs, width 8." in fast["MEMORY.md"] and b"Fact 4" in fast["MEMORY.md"]
