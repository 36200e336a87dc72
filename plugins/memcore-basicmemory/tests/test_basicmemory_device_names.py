"""A new note's file name is one every file system can hold, whatever its title (§4.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_basicmemory import BasicMemoryProvider


@pytest.mark.parametrize("title", ["NUL", "con", "COM1", "Lpt9", "aux.txt"])
def test_a_note_titled_like_a_device_name_gets_a_file_it_can_have_and_keeps_its_title(
    title: str, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    BasicMemoryProvider.init_store(str(root))
    with BasicMemoryProvider(str(root)) as store:
        stored = store.add(MemoryEntry(kind=Kind.NOTE, title=title, body="Device-named.\n"))
    names = [p.name for p in root.rglob("*.md")]
    assert len(names) == 1 and names[0].endswith("-note.md")
    with BasicMemoryProvider(str(root)) as store:
        assert store.get(stored.id or "").title == title
