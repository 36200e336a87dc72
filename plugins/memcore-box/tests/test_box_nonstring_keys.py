"""A memory whose frontmatter has a non-string key (``1: one``) can still be updated."""

from __future__ import annotations

from pathlib import Path

import memcore
from memcore.models import MemoryEntry, Severity
from memcore_box.provider import BoxMemoryProvider


def test_update_of_a_memory_with_a_numeric_key_rewrites_it_whole(tmp_path: Path) -> None:
    BoxMemoryProvider.init_store(str(tmp_path))
    with memcore.open(f"box:{tmp_path}") as store:
        stored = store.add(MemoryEntry(kind="fact", title="Numeric key", body="Body.\n"))
    path = next(tmp_path.rglob("fact__numeric-key.md"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("kind: fact\n", "kind: fact\n1: one\n", 1), encoding="utf-8")
    with memcore.open(f"box:{tmp_path}") as store:
        current = store.get(stored.id or "")
        store.update(current.model_copy(update={"body": "Body, edited.\n"}), expected_version=current.version)
    with memcore.open(f"box:{tmp_path}") as store:
        again = store.get(stored.id or "")
        assert again.body == "Body, edited.\n"
        assert [d for d in store.validate() if d.severity is Severity.ERROR] == []
    assert "one" in path.read_text(encoding="utf-8")  # the unknown key is kept
