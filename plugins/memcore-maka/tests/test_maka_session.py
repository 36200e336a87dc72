"""Writes go through memcore's write session: read-only refusals and conflicts change no byte."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import ConflictError, ReadOnlyStoreError
from memcore.models import MemoryEntry
from memcore_maka import MakaProvider

T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
EXPIRED = (
    "## Old\n<!-- maka-memory: id=old origin=manual createdAt=1000 updatedAt=1000 status=active "
    "decayTtlMs=1 -->\nAn expired fact.\n"
)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in ``folder`` with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, str, str]:
    """A store with one entry, one pending proposal and one expired entry; ``(path, entry id, proposal id)``."""
    path = tmp_path / "store" / "MEMORY.md"
    MakaProvider.init_store(str(path))
    writer = MakaProvider(path, apply_decay=False).open()
    entry = writer.add(MemoryEntry(title="Kept", body="A kept fact.", created_at=T0))
    proposal = writer.propose(MemoryEntry(title="Proposed", body="A proposed fact.", created_at=T0))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n" + EXPIRED)
    return path, entry.id or "", proposal.id or ""


WRITES: dict[str, Callable[[MakaProvider, str, str], Any]] = {
    "add": lambda p, e, _: p.add(MemoryEntry(title="New", body="A new fact.")),
    "update": lambda p, e, _: p.update(MemoryEntry(id=e, title="Kept", body="Changed.")),
    "delete": lambda p, e, _: p.delete(e),
    "archive": lambda p, e, _: p.archive(e),
    "supersede": lambda p, e, _: p.supersede(e, MemoryEntry(title="Newer", body="A newer fact.")),
    "propose": lambda p, e, _: p.propose(MemoryEntry(title="Another", body="Another proposal.")),
    "approve": lambda p, e, pid: p.approve(pid),
    "reject": lambda p, e, pid: p.reject(pid),
}


def test_every_write_operation_is_listed() -> None:
    assert set(WRITES) == set(MakaProvider.write_operations)


@pytest.mark.parametrize("operation", sorted(WRITES))
def test_a_read_only_store_refuses_each_write_and_changes_no_byte(
    filled: tuple[Path, str, str], operation: str
) -> None:
    path, entry_id, proposal_id = filled
    before = snapshot(path.parent)
    provider = MakaProvider(path, read_only=True).open()
    with pytest.raises(ReadOnlyStoreError, match="read-only"):
        WRITES[operation](provider, entry_id, proposal_id)
    with provider.batch(), pytest.raises(ReadOnlyStoreError):
        WRITES[operation](provider, entry_id, proposal_id)
    # reads (which would run the decay rewrite on a writable store) change nothing either
    assert [e.id for e in provider.iter_entries()] == [entry_id, "old"]
    assert provider.read_all().entries[1].status.value == "active"
    assert snapshot(path.parent) == before


def test_a_file_edited_during_a_batch_makes_it_raise_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "store" / "MEMORY.md"
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    first = provider.add(MemoryEntry(title="First", body="The first fact.", created_at=T0))
    with pytest.raises(ConflictError):
        with provider.batch():
            provider.add(MemoryEntry(title="Second", body="The second fact.", created_at=T0))
            provider.update(first.model_copy(update={"body": "Changed."}))
            edited = path.read_bytes() + b"\n## By hand\nWritten in an editor.\n"
            path.write_bytes(edited)
            before = snapshot(path.parent)
    assert snapshot(path.parent) == before
    assert path.read_bytes() == edited
    # the provider reads the edited file and writes again
    assert [e.title for e in provider.iter_entries()] == ["First", "By hand"]
    provider.add(MemoryEntry(title="Third", body="The third fact.", created_at=T0))
    assert [e.title for e in MakaProvider(path).iter_entries()] == ["First", "By hand", "Third"]
