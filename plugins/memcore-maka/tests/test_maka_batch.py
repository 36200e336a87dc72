"""batch(): MEMORY.md read once and written once per block, with every write's checks kept."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import StoreLimitError
from memcore.models import MemoryEntry
from memcore.provider import Capability
from memcore.storage import atomic_write
from memcore_maka import MakaProvider
from memcore_maka.provider import IncognitoBlockedError

T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)


def entries(n: int) -> list[MemoryEntry]:
    """``n`` distinct entries with fixed creation times (so Maka's ids are the same every run)."""
    return [
        MemoryEntry(
            title=f"Fact {i}",
            body=f"Fact number {i}: the build uses tool {i % 7}.",
            tags=[f"t{i % 5}"],
            created_at=T0 + timedelta(seconds=i),
        )
        for i in range(n)
    ]


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path the provider hands to memcore.storage.atomic_write (the real one still runs)."""
    seen: list[Path] = []
    real: Callable[..., None] = atomic_write

    def counting(path: Any, data: bytes, *, mode: int | None = None) -> None:
        seen.append(Path(path))
        real(path, data, mode=mode)

    monkeypatch.setattr("memcore.storage._local.atomic_write", counting)
    return seen


def store(tmp_path: Path, name: str) -> MakaProvider:
    location = tmp_path / name / "MEMORY.md"
    MakaProvider.init_store(str(location))
    return MakaProvider(location).open()


def test_batch_is_declared() -> None:
    assert Capability.BATCH in MakaProvider.capabilities


def test_200_adds_in_a_batch_write_once_and_match_200_separate_adds(tmp_path: Path, writes: list[Path]) -> None:
    one_by_one = store(tmp_path, "single")
    writes.clear()
    for entry in entries(200):
        one_by_one.add(entry)
    assert writes.count(one_by_one.path) == 200

    batched = store(tmp_path, "batched")
    writes.clear()
    with batched.batch():
        stored = [batched.add(entry) for entry in entries(200)]
        assert writes == []
    assert writes == [batched.backup_path, batched.path]
    assert batched.path.read_bytes() == one_by_one.path.read_bytes()
    assert batched.backup_path.read_bytes() == b"# Maka Memory\n"
    assert (batched.path.stat().st_mode & 0o777) == 0o600
    assert [e.id for e in batched.iter_entries()] == [e.id for e in stored]
    assert len(stored) == 200 and len(set(e.id for e in stored)) == 200


def test_reads_in_a_batch_see_pending_writes_before_disk(tmp_path: Path) -> None:
    provider = store(tmp_path, "s")
    kept, gone = (provider.add(e) for e in entries(2))
    before = provider.path.read_bytes()
    with provider.batch():
        added = provider.add(MemoryEntry(title="New", body="Added in the batch.", created_at=T0))
        assert provider.get(added.id or "").body == "Added in the batch."
        changed = kept.model_copy(update={"body": "Changed in the batch."})
        provider.update(changed)
        provider.delete(gone.id or "")
        assert [e.body for e in provider.iter_entries()] == ["Changed in the batch.", "Added in the batch."]
        assert provider.state.entry_count == 2
        assert provider.path.read_bytes() == before
    assert [e.body for e in MakaProvider(provider.path).iter_entries()] == [
        "Changed in the batch.",
        "Added in the batch.",
    ]
    assert provider.backup_path.read_bytes() == before


def test_over_the_limit_in_a_batch_keeps_the_earlier_writes(tmp_path: Path) -> None:
    provider = store(tmp_path, "s")
    with pytest.raises(StoreLimitError, match="128 KiB"), provider.batch():
        first, second = (provider.add(e) for e in entries(2))
        provider.add(MemoryEntry(title="Huge", body="x" * 140_000, created_at=T0))
    assert [e.id for e in MakaProvider(provider.path).iter_entries()] == [first.id, second.id]
    assert len(provider.path.read_bytes()) < 1000


def test_a_block_that_raises_still_writes_what_was_applied(tmp_path: Path, writes: list[Path]) -> None:
    provider = store(tmp_path, "s")
    writes.clear()
    with pytest.raises(RuntimeError, match="stop here"), provider.batch():
        ids = [provider.add(e).id for e in entries(3)]
        raise RuntimeError("stop here")
    assert writes == [provider.backup_path, provider.path]
    assert [e.id for e in MakaProvider(provider.path).iter_entries()] == ids


def test_a_block_without_writes_writes_nothing(tmp_path: Path, writes: list[Path]) -> None:
    provider = store(tmp_path, "s")
    provider.add(entries(1)[0])
    writes.clear()
    with provider.batch():
        assert len(list(provider.iter_entries())) == 1
    assert writes == []


def test_nested_batch_writes_only_when_the_outermost_ends(tmp_path: Path, writes: list[Path]) -> None:
    provider = store(tmp_path, "s")
    writes.clear()
    with provider.batch():
        provider.add(entries(2)[0])
        with provider.batch():
            provider.add(entries(2)[1])
        assert writes == []
        assert provider.path.read_bytes() == b"# Maka Memory\n"
    assert writes == [provider.backup_path, provider.path]
    assert len(list(MakaProvider(provider.path).iter_entries())) == 2


def test_incognito_batch_touches_nothing(tmp_path: Path, writes: list[Path]) -> None:
    location = tmp_path / "private" / "MEMORY.md"
    provider = MakaProvider(location, incognito=True)
    with provider.batch():
        with pytest.raises(IncognitoBlockedError):
            provider.add(entries(1)[0])
        with pytest.raises(IncognitoBlockedError):
            list(provider.iter_entries())
    assert writes == []
    assert not (tmp_path / "private").exists()


def test_approve_in_a_batch_writes_memory_before_pending(tmp_path: Path) -> None:
    provider = store(tmp_path, "s")
    proposal = provider.propose(MemoryEntry(title="Proposed", body="A proposed fact."))
    with provider.batch():
        added = provider.add(entries(1)[0])
        approved = provider.approve(proposal.id or "")
        on_disk = [e.id for e in MakaProvider(provider.path).iter_entries()]
        assert on_disk == [added.id, approved.id]
        assert provider.pending() == []
    assert len(list(MakaProvider(provider.path).iter_entries())) == 2


EXTERNAL = (
    "\n## External section\n"
    "<!-- maka-memory: id=ext1 origin=manual createdAt=1770000000000 updatedAt=1770000000000 "
    "status=active -->\nEXTERNAL TEXT\n"
)


def test_external_append_during_a_batch_is_kept_and_the_batch_refused(tmp_path: Path) -> None:
    from memcore.errors import ConflictError

    provider = store(tmp_path, "ext")
    first, second = entries(2)
    with pytest.raises(ConflictError, match=r"changed on disk during the batch.*2 writes were not saved"):
        with provider.batch():
            provider.add(first)
            with open(provider.path, "a", encoding="utf-8") as fh:
                fh.write(EXTERNAL)  # a tool that does not take memcore's lock
            provider.add(second)
    text = provider.path.read_text(encoding="utf-8")
    assert text.endswith(EXTERNAL)
    assert "Fact 0" not in text
    assert [e.body for e in MakaProvider(provider.path).open().iter_entries()] == ["EXTERNAL TEXT"]


def test_second_provider_in_the_same_thread_keeps_its_write(tmp_path: Path) -> None:
    from memcore.errors import ConflictError

    a = store(tmp_path, "two")
    b = MakaProvider(a.path).open()
    one, two, three = entries(3)
    with pytest.raises(ConflictError, match=str(a.path)):
        with a.batch():
            a.add(one)
            b.add(two)  # memcore's lock is re-entrant in this thread: b writes the file at once
            a.add(three)
    assert [e.title for e in MakaProvider(a.path).open().iter_entries()] == ["Fact 1"]
    # the provider is usable again and a plain write still works
    a.add(one)
    assert sorted(e.title for e in MakaProvider(a.path).open().iter_entries()) == ["Fact 0", "Fact 1"]


def test_batch_without_outside_writes_still_saves(tmp_path: Path) -> None:
    provider = store(tmp_path, "plain")
    with provider.batch():
        for entry in entries(3):
            provider.add(entry)
    assert len(list(MakaProvider(provider.path).open().iter_entries())) == 3
