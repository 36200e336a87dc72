"""Writes run in core's write session: a read-only store refuses every write operation, and a batch
whose files changed on disk meanwhile raises ConflictError and writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import ConflictError, ReadOnlyStoreError
from memcore.models import Kind, MemoryEntry
from memcore_rightmemory import RightMemoryProvider

MEMORY = (
    "# Memory\n\n## Project {#project}\n\n- `fact-a` A fact \u2192 []\n- `fact-b` Another fact \u2192 [dep:fact-a]\n\n"
    "## Runbook {F#runbook}\n"
)
FILES = {
    "MEMORY.md": MEMORY,
    "MEMORY_runbook.md": "### Step {#step}\n\nDo it.\n",
    "PURSUITS.md": "# Pursuits\n\n## Focus\n\nNo Pursuit is focused yet.\n",
}


def _store(root: Path) -> Path:
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and modification time (a rewrite with the same bytes shows too)."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.iterdir())}


def _renamed(p: RightMemoryProvider) -> MemoryEntry:
    entry = p.get("fact-a")
    return p.update(entry.model_copy(update={"title": "Renamed"}), expected_version=entry.version)


#: One call per write operation of the provider (``write_operations``), each valid on a writable store.
WRITES: dict[str, Callable[[RightMemoryProvider], Any]] = {
    "add": lambda p: p.add(MemoryEntry(title="New", parent="project")),
    "update": _renamed,
    "delete": lambda p: p.delete("fact-b"),
    "archive": lambda p: p.archive("fact-b"),
    "supersede": lambda p: p.supersede("fact-b", MemoryEntry(title="Newer fact", parent="project")),
    "add_edge": lambda p: p.add_edge("fact-a", "doc", "step"),
    "remove_edge": lambda p: p.remove_edge("fact-b", "dep", "fact-a"),
    "move_to_detail": lambda p: p.move_to_detail("project"),
    "inline_detail": lambda p: p.inline_detail("runbook"),
    "move": lambda p: p.move("fact-a", "runbook"),
}


def test_every_write_operation_is_listed() -> None:
    assert set(WRITES) == set(RightMemoryProvider.write_operations)


@pytest.mark.parametrize("name", sorted(WRITES))
def test_each_write_works_on_a_writable_store(tmp_path: Path, name: str) -> None:
    root = _store(tmp_path / "s")
    before = _state(root)
    with RightMemoryProvider(root) as p:
        WRITES[name](p)
        assert [d for d in p.validate() if d.severity.value == "error"] == []
    assert _state(root) != before


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_read_only_store_refuses_each_write_and_changes_no_byte(tmp_path: Path, name: str) -> None:
    root = _store(tmp_path / "s")
    before = _state(root)
    with RightMemoryProvider(root, read_only=True) as p:
        with pytest.raises(ReadOnlyStoreError, match=f"`{name}` refused"):
            WRITES[name](p)
        with p.batch():  # a read-only batch is a plain block: each write in it is refused as well
            with pytest.raises(ReadOnlyStoreError):
                WRITES[name](p)
        assert [e.id for e in p.iter_entries()] == ["project", "fact-a", "fact-b", "runbook", "step"]  # reads work
    assert _state(root) == before
    assert sorted(p.name for p in root.iterdir()) == sorted(FILES)


def test_a_file_edited_during_a_batch_makes_it_raise_and_write_nothing(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    before = _state(root)
    outside = "\n## Added by hand {#by-hand}\n"
    with RightMemoryProvider(root) as p:
        with pytest.raises(
            ConflictError, match=r"PURSUITS\.md changed on disk during the batch.*3 writes were not saved"
        ):
            with p.batch():
                p.add(MemoryEntry(title="Memory item", parent="project"))
                p.add(MemoryEntry(title="A pursuit", kind=Kind.PURSUIT))
                with open(root / "PURSUITS.md", "a", encoding="utf-8") as fh:
                    fh.write(outside)  # a tool that does not take memcore's lock
                p.add(MemoryEntry(title="New runbook", extra={"rightmemory": {"marker": "F#"}}))
        after = _state(root)
        assert after["MEMORY.md"] == before["MEMORY.md"]  # not rewritten although unchanged outside
        assert after["PURSUITS.md"][0] == before["PURSUITS.md"][0] + outside.encode()
        assert sorted(after) == sorted(before)  # the new F# detail file was not created
        # the next write reads the files afresh and keeps the hand edit
        p.add(MemoryEntry(title="After the conflict", parent="project"))
    with RightMemoryProvider(root) as reopened:
        ids = {e.id for e in reopened.iter_entries()}
        assert {"by-hand", "after-the-conflict"} <= ids
        assert "memory-item" not in ids and "a-pursuit" not in ids


def test_a_file_edited_between_two_writes_is_read_again(tmp_path: Path) -> None:
    root = _store(tmp_path / "s")
    with RightMemoryProvider(root) as p:
        p.add(MemoryEntry(title="First", parent="project"))
        memory = root / "MEMORY.md"
        memory.write_text(
            memory.read_text(encoding="utf-8") + "\n- `hand` Written by hand \u2192 []\n", encoding="utf-8"
        )
        p.add(MemoryEntry(title="Second", parent="project"))
    with RightMemoryProvider(root) as reopened:
        assert {"first", "hand", "second"} <= {e.id for e in reopened.iter_entries()}
