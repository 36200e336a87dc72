"""Hostile `memcore:` frontmatter values found by the adversarial trial: diagnostics, never a TypeError."""

from __future__ import annotations

from pathlib import Path

from memcore import MemoryEntry
from memcore_box.provider import BoxMemoryProvider


def test_memcore_key_with_wrong_types_is_a_diagnostic(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(title="Target", body="x"))
    path = next((root / "memories").glob("*target*.md"))
    text = path.read_text()
    hostile = 'memcore: {kind: 5, status: [1], relations: 3, relation_order: ["x"], date_only: maybe, parent: [1], extra: 5}\n'
    path.write_text(text.replace("---\n", "---\n" + hostile, 1))
    with BoxMemoryProvider(str(root)) as store:
        [entry] = list(store.iter_entries())
        assert entry.title == "Target" and entry.relations == [] and entry.parent is None
        diags = [d for d in store.validate() if d.code == "box.bad-memcore"]
    assert diags and diags[0].path == path.relative_to(root).as_posix()
    assert "memcore.relations must be a list" in diags[0].message
