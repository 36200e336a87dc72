"""Iterating a workspace maps the files pass 1 held exactly as it maps the files it reads again.

``stream_entries`` holds what its first pass parsed for the first ``_HOLD_BYTES`` of memory
files, the bytes of the next ``_HOLD_RAW_BYTES`` (parsed again) and re-reads the rest: every kind
of file must give the same entries, in the same order, with the same versions, and orphans stay
out either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.frontmatter import set_fast_paths
from memcore.models import Kind, MemoryEntry
from memcore_box import _stream as box_provider
from memcore_box.provider import BoxMemoryProvider


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path))
    with BoxMemoryProvider(str(path)) as store, store.batch():
        store.add(MemoryEntry(kind=Kind.DECISION, title="Tokens", body="Stateless.\n", tags=["auth"]))
        store.add(MemoryEntry(kind=Kind.TASK, title="Rotate keys", body="Monthly.\n", scope="default"))
    (path / "memories" / "fact__gateway.md").write_text(
        "---\nid: mem_GATEWAY\nkind: fact\ntitle: Gateway\ncreated_at: 2021-01-01T00:00:00Z\n"
        "related: ['[[Tokens]]']\n---\nSee the tokens.\n",
        encoding="utf-8",
    )
    (path / "memories" / "note__broken.md").write_text("---\nid: [unclosed\n---\nbody\n", encoding="utf-8")
    (path / "memories" / "note__hand.md").write_text(
        "---\nid: mem_HAND\nkind: note\ntitle: 'Hand # written'\ncreated_at: 2020-01-01T00:00:00Z\n---\nBy hand.\n",
        encoding="utf-8",
    )
    return path


def _dumps(root: Path) -> list[tuple[str, str | None, dict[str, object]]]:
    with BoxMemoryProvider(str(root)) as store:
        return [(e.id or "", e.version, e.model_dump(mode="json")) for e in store.iter_entries()]


def test_held_and_reread_files_give_the_same_entries(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held = _dumps(root)
    monkeypatch.setattr(box_provider, "_HOLD_BYTES", 0)
    kept = _dumps(root)  # every file's bytes held, parsed again
    monkeypatch.setattr(box_provider, "_HOLD_RAW_BYTES", 0)
    reread = _dumps(root)
    assert held == kept
    assert held == reread
    assert held[0][0] == "mem_HAND"  # created 2020: first; the orphan left out
    assert len(held) == 4
    gateway = next(d for _, _, d in held if d["title"] == "Gateway")
    tokens = next(i for i, _, d in held if d["title"] == "Tokens")
    assert tokens in json.dumps(gateway)  # the wikilink resolved to the id pass 1 recorded


def test_a_workspace_larger_than_the_hold_mixes_both_and_matches(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _dumps(root)
    first = min(p.stat().st_size for p in (root / "memories").glob("*.md"))
    monkeypatch.setattr(box_provider, "_HOLD_BYTES", first)  # one file held parsed
    monkeypatch.setattr(box_provider, "_HOLD_RAW_BYTES", first)  # one file's bytes; the rest read again
    assert _dumps(root) == reference


def test_with_the_fast_paths_off_the_entries_are_the_same(root: Path) -> None:
    reference = _dumps(root)
    set_fast_paths(False)
    try:
        assert _dumps(root) == reference
    finally:
        set_fast_paths(True)
