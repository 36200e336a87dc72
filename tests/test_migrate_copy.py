"""The entry copy a migration sends to the target: both paths give the same entry, every field set."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memcore.migrate import fidelity
from memcore.models import Kind, MemoryEntry, Relation


@pytest.fixture(params=[True, False], ids=["fast", "general"])
def copy_path(request: pytest.FixtureRequest) -> Iterator[bool]:
    saved = fidelity.FAST_COPY
    fidelity.set_fast_copy(request.param)
    yield request.param
    fidelity.set_fast_copy(saved)


def _entry() -> MemoryEntry:
    return MemoryEntry(
        id="a1",
        title="Item",
        body="Body.",
        tags=["x", "y"],
        created_at=datetime(2026, 1, 5, 9, tzinfo=UTC),
        relations=[Relation(type="related", target="b2")],
        extra={"ns": {"k": [1, {"n": 2}]}},
    )


def test_the_copy_equals_the_entry_with_every_field_set(copy_path: bool) -> None:
    entry = _entry()
    copy = fidelity._copy_all_set(entry)
    assert copy == entry
    assert copy.model_fields_set == set(MemoryEntry.model_fields)
    assert "kind" not in entry.model_fields_set and copy.kind is Kind.NOTE


def test_the_copys_lists_and_extra_are_its_own(copy_path: bool) -> None:
    entry = _entry()
    copy = fidelity._copy_all_set(entry)
    copy.tags.append("z")
    copy.relations.clear()
    copy.extra["ns"]["k"][1]["n"] = 3
    assert entry.tags == ["x", "y"]
    assert entry.relations == [Relation(type="related", target="b2")]
    assert entry.extra == {"ns": {"k": [1, {"n": 2}]}}


def test_the_switch_is_read_by_child_processes_through_the_environment(copy_path: bool) -> None:
    assert os.environ["MEMCORE_MIGRATE_FAST"] == ("1" if copy_path else "0")
