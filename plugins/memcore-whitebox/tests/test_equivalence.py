"""WhiteBox's fast paths give what the general path gives.

- An observation in the reference writer's own shape is built from a validated template
  (``model_copy``), not validated again: it must equal the entry pydantic validates.
- A monthly file's block count is kept between adds (:class:`~memcore_whitebox._parse.MonthState`)
  while the file keeps its version: the ids must be those a fresh scan gives.
- tags.md is not parsed again while its bytes are those last seen: the bytes staged must be
  those a fresh parse stages.

(batch() against one add at a time, and read_all() against iter_entries() + validate(), are in
test_whitebox_batch.py.)
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry
from memcore.storage import LocalStorage, WriteSession
from memcore_whitebox._tags import stage_tags
from memcore_whitebox.provider import WhiteBoxProvider

EXAMPLE_VAULT = Path(__file__).resolve().parents[3] / "examples" / "whitebox-vault"
START = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)


def _observations(n: int) -> list[MemoryEntry]:
    return [
        MemoryEntry(
            kind=Kind.OBSERVATION,
            body=f"Seen {i}.",
            source=("a", "b")[i % 2],
            tags=[f"t{i % 3}"],
            confidence=(0.3, 0.5, 0.7)[i % 3],
            created_at=START + timedelta(days=i % 40),
            date_only=True,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("which", ["sample", "example"])
def test_fast_built_observations_equal_validated_entries(vault: Path, tmp_path: Path, which: str) -> None:
    root = vault
    if which == "example":
        root = tmp_path / "example"
        shutil.copytree(EXAMPLE_VAULT, root)
    with WhiteBoxProvider(str(root)) as store:
        store.add(
            MemoryEntry(
                kind=Kind.OBSERVATION,
                body="Plain.",
                source="x",
                tags=["preference"],
                confidence=0.7,
                created_at=START,
                date_only=True,
            )
        )
        entries = [e for e in store.iter_entries() if e.kind is Kind.OBSERVATION]
    assert entries
    for entry in entries:
        reference = MemoryEntry.model_validate(entry.model_dump())
        assert reference.model_dump() == entry.model_dump()
        assert reference == entry


def test_kept_month_states_plan_the_ids_a_fresh_scan_plans(tmp_path: Path) -> None:
    WhiteBoxProvider.init_store(str(tmp_path / "v"))
    entries = _observations(60)
    with WhiteBoxProvider(str(tmp_path / "v")) as store:
        for entry in entries[:30]:  # one add per session: each reuses the state the last one left
            store.add(entry)
        kept = store.plan_ids(entries[30:])
        fresh = WhiteBoxProvider(str(tmp_path / "v")).open().plan_ids(entries[30:])
        assert kept == fresh
        added = [store.add(e).id for e in entries[30:]]
    assert added == kept


def test_tags_seen_before_stage_what_a_fresh_parse_stages(tmp_path: Path) -> None:
    WhiteBoxProvider.init_store(str(tmp_path / "v"))
    storage = LocalStorage(tmp_path / "v")
    groups = [(["preference", "new-a"], "agent"), (["new-b", "new-a"], "other")]
    fresh = WriteSession(storage)
    seen_nothing = stage_tags(fresh, groups, None)
    data, _version = storage.read("tags.md")
    seen = stage_tags(WriteSession(storage), [(["preference"], "agent")], None)  # tags.md as it is, parsed
    assert seen is not None and seen[0] == data
    cached = WriteSession(storage)
    assert stage_tags(cached, groups, seen) == seen_nothing
    assert dict(cached.staged) == dict(fresh.staged) and "tags.md" in fresh.staged
