"""The search index over the real formats: per-file refresh, and the same answers as a full scan."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.conftest import SAMPLES

import memcore
from memcore import MemoryEntry, Query
from memcore.index import SearchIndex


def _whitebox(tmp: Path) -> tuple[str, Path]:
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", tmp / "vault")
    return f"whitebox:{tmp / 'vault'}", tmp / "vault" / "working-style.md"


def _rightmemory(tmp: Path) -> tuple[str, Path]:
    shutil.copytree(SAMPLES / "rightmemory" / "test-fixture-extracted-test_graph", tmp / "rm")
    return f"rightmemory:{tmp / 'rm'}", tmp / "rm" / "MEMORY_details.md"


def _maka(tmp: Path) -> tuple[str, Path]:
    (tmp / "maka").mkdir()
    shutil.copy(SAMPLES / "maka" / "fixture-statuses-pending-rejected-unknown.md", tmp / "maka" / "MEMORY.md")
    return f"maka:{tmp / 'maka' / 'MEMORY.md'}", tmp / "maka" / "MEMORY.md"


def _box(tmp: Path) -> tuple[str, Path]:
    url = f"box:{tmp / 'ws'}"
    memcore.registry.get_registry().get("box").init_store(str(tmp / "ws"))
    with memcore.open(url) as store:
        for i, title in enumerate(["Use Postgres", "Weekly sync", "Token rotation"]):
            store.add(MemoryEntry(title=title, body=f"Body number {i} about {title.lower()}.", tags=["ops"]))
        last = store.search(Query(text="rotation"))[0]
    files = (
        sorted((tmp / "ws").rglob(f"*{last.extra['box']['slug']}*.md")) if "slug" in last.extra.get("box", {}) else []
    )
    return url, files[0] if files else next((tmp / "ws").rglob("*token-rotation*.md"))


@pytest.mark.parametrize("make", [_whitebox, _rightmemory, _maka, _box], ids=["whitebox", "rightmemory", "maka", "box"])
def test_refresh_rereads_one_file_and_agrees_with_a_full_scan(
    make,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(tmp_path / "cache"))
    url, edited = make(tmp_path)
    with memcore.open(url) as store, SearchIndex(store) as index:
        assert index.last_status is not None
        total = index.last_status.entries
        assert total == sum(1 for _ in store.iter_entries()) > 0
        for entry in list(store.iter_entries())[:5]:
            word = next((w for w in entry.body.split() if w.isalpha() and len(w) > 4), None)
            if word is None:
                continue
            with memcore.open(url, index=False) as scanner:
                scan = {e.id for e in scanner.search(Query(text=word))}
            assert entry.id in {h.entry.id for h in index.search(Query(text=word))}
            assert {h.entry.id for h in index.search(Query(text=word))} >= scan
    text = edited.read_text(encoding="utf-8")
    if "Detail body." in text:  # RightMemory: text after a node list belongs to no item; edit a heading body
        edited.write_text(text.replace("Detail body.", "Detail body zebraquagga."), encoding="utf-8")
    else:
        edited.write_text(text.rstrip("\n") + "\n\nA new paragraph: zebraquagga.\n", encoding="utf-8")
    with memcore.open(url) as store, SearchIndex(store) as index:
        status = index.last_status
        assert status is not None and status.rebuilt is None
        assert status.reread == 1 and status.entries == total
        hits = index.search("zebraquagga")
        assert len(hits) == 1 and "[zebraquagga]" in hits[0].snippet
        assert [e.id for e in store.search("zebraquagga")] == [hits[0].entry.id]  # provider search uses the index
