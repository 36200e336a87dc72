"""store.search() through the API (issue 24): one index connection per open provider, no check
of every file on every call, and still a hand edit seen by the very next search."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

import memcore
from memcore import MemoryEntry
from memcore.index import SearchIndex, index_path_for
from memcore_box import BoxMemoryProvider

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def box(coffee_box: Any) -> Any:
    SearchIndex(coffee_box).rebuild()
    return coffee_box


def _open_index(store: Any) -> SearchIndex:
    index = store.__dict__["_memcore_search_index"]
    assert isinstance(index, SearchIndex)
    return index


def _file_of(store: Any, title: str) -> Path:
    (entry,) = [e for e in store.iter_entries() if e.title == title]
    return Path(store.location) / store.file_of(entry)


def test_one_connection_serves_every_search_of_an_open_store(box: Any) -> None:
    assert [e.title for e in box.search("espresso")] == ["Coffee"]
    index = _open_index(box)
    conn = index.conn
    for text in ("deploy", "friday", "lunch"):
        assert len(box.search(text)) == 1
        assert _open_index(box) is index and index.conn is conn
    box.close()
    assert "_memcore_search_index" not in box.__dict__ and index._conn is None


@linux_only
def test_an_unchanged_store_is_not_refreshed_and_an_edit_is(box: Any) -> None:
    box.search("espresso")
    index = _open_index(box)
    index.refresh_if_changed()  # the watches the first search added count as a change once
    assert index.refresh_if_changed() is None
    assert index.refresh_if_changed() is None
    path = _file_of(box, "Coffee")
    path.write_text(path.read_text(encoding="utf-8").replace("Espresso", "Ristretto"), encoding="utf-8")
    status = index.refresh_if_changed()
    assert status is not None and status.reread == 1
    assert index.refresh_if_changed() is None


def test_a_hand_edit_in_place_is_seen_by_the_next_search(box: Any) -> None:
    assert [e.title for e in box.search("espresso")] == ["Coffee"]
    path = _file_of(box, "Coffee")
    folder_mtime = path.parent.stat().st_mtime_ns
    with open(path, "r+", encoding="utf-8") as fh:  # in place: the folder's mtime does not move
        text = fh.read().replace("Espresso", "Ristretto")
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    assert path.parent.stat().st_mtime_ns == folder_mtime
    assert box.search("espresso") == []
    assert [e.title for e in box.search("ristretto")] == ["Coffee"]


def test_files_added_and_deleted_by_hand_are_seen_by_the_next_search(box: Any, tmp_path: Path) -> None:
    assert [e.title for e in box.search("deploy")] == ["Deploy window"]
    # A file copied in by hand: written by another store of the same format, then moved in.
    other = tmp_path / "other"
    BoxMemoryProvider.init_store(str(other))
    with memcore.open(f"box:{other}") as store:
        added = store.add(MemoryEntry(title="Tea", body="Green tea at four."))
        source = Path(store.location) / store.file_of(added)
    target = _file_of(box, "Coffee").parent / source.name
    os.replace(source, target)
    assert [e.title for e in box.search("green")] == ["Tea"]
    _file_of(box, "Deploy window").unlink()
    assert box.search("deploy") == []


def test_a_deleted_index_falls_back_to_a_scan_and_is_not_recreated(box: Any) -> None:
    assert len(box.search("friday")) == 1
    path = index_path_for(box)
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    assert [e.title for e in box.search("friday")] == ["Deploy window"]
    assert not path.exists()
