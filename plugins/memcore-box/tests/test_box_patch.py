"""The kept layout and map patch (memcore_box._patch): its bytes are the full encoder's, or it is not taken."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_box import _patch
from memcore_box._json import IndexWriter, loads_json
from memcore_box._maps import map_texts
from memcore_box.index import INDEX_FILE, INDEX_MAPS, IndexRow, index_row
from memcore_box.provider import BoxMemoryProvider

from .test_box_splice import _add_unknown_keys, _entry, _full_encodings, _on_disk, _workspace

KINDS = (Kind.FACT, Kind.DECISION, Kind.NOTE, Kind.TASK, Kind.OBSERVATION)


def _varied(i: int, prefix: str) -> MemoryEntry:
    """A memory whose kind and tags vary: some tags new to the workspace, some lists growing past one line."""
    rnd = random.Random(i)
    tags = rnd.sample(["auth", "ops", "ünï", "new-" + prefix, *(f"t{j}" for j in range(8))], rnd.randrange(0, 4))
    return MemoryEntry(
        kind=KINDS[i % len(KINDS)], title=f"Title «{prefix}» {i}", body=f"\nbody {i}\n", tags=tags, scope="default"
    )


def _patched(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, per folder-index write, whether appended_maps gave the maps."""
    taken: list[bool] = []
    real = _patch.appended_maps

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(_patch, "appended_maps", spy)
    return taken


def test_repeated_batches_in_one_open_store_patch_the_maps_and_write_the_full_encodings_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, ids = _workspace(tmp_path, 20)
    taken = _patched(monkeypatch)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():  # the first write after opening: the file is checked, the maps built from the rows
        store.add(_varied(0, "first"))
    assert taken == [] and store._folders["memories"].layout is not None
    for round_ in range(1, 6):
        with store.batch():
            for i in range(round_ * 7):
                store.add(_varied(round_ * 100 + i, f"r{round_}"))
        expected = _full_encodings(store)
        assert _on_disk(root, expected) == expected
    assert taken == [True] * 5
    changed = store.get(ids[2])  # an update is not an append: the maps are built from the rows
    changed.tags = ["changed"]
    store.update(changed)
    with store.batch():
        store.add(_varied(900, "after-update"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    assert taken == [True] * 5 + [False, True]
    store.close()


def test_the_off_switch_checks_the_entries_and_builds_the_maps_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _workspace(tmp_path, 12)
    monkeypatch.setenv(_patch.ENV, "0")
    taken = _patched(monkeypatch)
    store = BoxMemoryProvider(str(root)).open()
    for round_ in range(3):
        with store.batch():
            for i in range(5):
                store.add(_varied(round_ * 10 + i, f"off{round_}"))
        assert store._folders["memories"].layout is None
        expected = _full_encodings(store)
        assert _on_disk(root, expected) == expected
    assert taken == []
    store.close()


def test_an_index_edited_by_hand_between_batches_is_not_patched_and_its_maps_are_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _workspace(tmp_path, 10)
    taken = _patched(monkeypatch)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.add(_entry(50, "a"))
    index_path = root / "memories" / INDEX_FILE
    data = index_path.read_bytes()
    edited = data.replace(b'"by_tag": {\n', b'"by_tag": {\n    "hand-made": ["mem_nobody"],\n', 1)
    assert edited != data
    index_path.write_bytes(edited)  # same layout, maps no longer what the rows give
    with store.batch():
        store.add(_entry(51, "b"))
    assert taken == []  # the file changed: read again, checked, maps built from the rows
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    assert "hand-made" not in loads_json(index_path.read_bytes())["by_tag"]
    store.close()


# -- appended_maps against map_texts, on rows -----------------------------------------------
def _row(i: int, *, slug: str | None = None, title: str | None = None, tags: list[str] | None = None) -> IndexRow:
    meta = {
        "id": f"mem_{i:026d}",
        "slug": slug if slug is not None else f"slug-{i}",
        "title": title if title is not None else f"Tïtle {i}",
        "kind": ("fact", "decision", "note")[i % 3],
        "status": "active" if i % 4 else "superseded",
        "tags": tags if tags is not None else [f"tag{i % 5}"],
        "created_at": "2026-01-01T00:00:00Z",
    }
    if i % 6 == 0:
        meta["companion_for"] = {"file_id": f"files/b{i}.pdf", "sha256": "ab" * 32}
    return index_row(meta, filename=f"{meta['kind']}__{meta['slug']}.md", file_id=None, size=100 + i)


def _file(rows: list[IndexRow]) -> tuple[bytes, _patch.Layout]:
    """An index file of ``rows`` (maps from map_texts) and where its maps are."""
    maps = map_texts(rows)
    assert maps is not None
    values: dict[str, tuple[int, int]] = {}
    items = [("version", 1), ("entries", None), *maps]
    data = IndexWriter().dumps(items, groups=[(rows, None)], values=values)
    return data, _patch.Layout("v", (0, 0), {name: values[name] for name in INDEX_MAPS})


def _patch_of(old: list[IndexRow], new: list[IndexRow]) -> list[tuple[str, bytes]] | None:
    data, layout = _file(old)
    rows = [*old, *new]
    pos: dict[str, int] = {}
    for i, row in enumerate(rows):
        pos.setdefault(row.id, i)
    out = _patch.appended_maps(layout, data, old, rows, pos)
    return None if out is None else [(name, bytes(text)) for name, text in out]


def _expected(rows: list[IndexRow]) -> list[tuple[str, bytes]]:
    maps = map_texts(rows)
    assert maps is not None
    return [(name, text.encode("utf-8")) for name, text in maps]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (0, 5),  # every map empty before
        (3, 0),  # nothing appended
        (1, 4),  # one-line lists that pass 100 characters and fold
        (40, 7),
        (200, 30),  # long folded lists grow
    ],
)
def test_appended_maps_equal_map_texts_of_all_rows(old: int, new: int) -> None:
    rows = [_row(i) for i in range(old + new)]
    assert _patch_of(rows[:old], rows[old:]) == _expected(rows)


def test_appended_maps_put_new_tags_and_kinds_last_and_rewrite_grown_one_line_lists() -> None:
    old = [_row(i, tags=["a"]) for i in range(2)]
    new = [_row(10, tags=["a", "b", "ünï", "a"]), _row(11, tags=["", "b"]), _row(12, tags=[])]
    rows = [*old, *new]
    assert _patch_of(old, new) == _expected(rows)


def test_appended_maps_leave_shared_keys_duplicate_ids_and_many_tags_to_map_texts() -> None:
    old = [_row(i) for i in range(6)]
    assert _patch_of(old, [_row(20, slug="slug-3")]) is None  # slug held already: active-wins rule
    assert _patch_of(old, [_row(20, title="Tïtle 2")]) is None
    assert _patch_of(old, [_row(20, slug="same"), _row(21, slug="same")]) is None
    assert _patch_of(old, [_row(3, slug="other", title="other")]) is None  # an id already indexed
    assert _patch_of(old, [_row(20, tags=[f"t{j}" for j in range(70)])]) is None  # > 64 tags
    updated = [*old[:2], _row(2, tags=["x"]), *old[3:]]
    data, layout = _file(old)
    pos = {row.id: i for i, row in enumerate(updated)}
    assert _patch.appended_maps(layout, data, old, updated, pos) is None  # a row replaced: not an append


# -- the layout saved for a later process ----------------------------------------------------
def test_a_new_store_on_an_index_this_writer_wrote_patches_at_its_first_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_patch, "SAVE_FROM_BYTES", 0)
    root, _ = _workspace(tmp_path, 15)
    taken = _patched(monkeypatch)
    for round_ in range(3):  # each store stands for another process
        store = BoxMemoryProvider(str(root)).open()
        with store.batch():
            for i in range(4):
                store.add(_varied(round_ * 10 + i, f"p{round_}"))
        expected = _full_encodings(store)
        assert _on_disk(root, expected) == expected
        store.close()
    assert taken == [True, True, True]  # the workspace's own writes saved their layout too


def test_a_saved_layout_is_ignored_when_the_file_changed_or_the_record_is_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_patch, "SAVE_FROM_BYTES", 0)
    root, _ = _workspace(tmp_path, 8)
    index_path = root / "memories" / INDEX_FILE
    record = Path(_patch._record(str(index_path)))
    assert record.is_file()
    taken = _patched(monkeypatch)
    data = index_path.read_bytes()
    index_path.write_bytes(data.replace(b'"by_tag": {\n', b'"by_tag": {\n    "hand-made": ["mem_nobody"],\n', 1))
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():  # another version than the record's: checked and rebuilt
        store.add(_entry(60, "x"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()
    assert taken == []
    record.write_text("{not json", encoding="utf-8")
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.add(_entry(61, "y"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()
    assert taken == []
    assert _patch.recall(str(index_path), "sha256:other", 10, 10) is None


def test_small_indexes_save_no_layout_and_an_unwritable_cache_folder_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _workspace(tmp_path, 5)
    assert not Path(_patch._record(str(root / "memories" / INDEX_FILE))).exists()  # under SAVE_FROM_BYTES
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(blocked))
    monkeypatch.setattr(_patch, "SAVE_FROM_BYTES", 0)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.add(_entry(70, "z"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


def test_an_index_with_a_saved_layout_is_read_without_its_maps_into_the_same_rows_and_kept_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_patch, "SAVE_FROM_BYTES", 0)
    root, _ = _workspace(tmp_path, 12)
    _add_unknown_keys(root)
    with BoxMemoryProvider(str(root)) as store, store.batch():  # memcore writes it: its layout is saved
        store.add(_entry(80, "kept"))
    parsed: list[bool] = []
    real = _patch.parse_known
    monkeypatch.setattr(_patch, "parse_known", lambda *a: parsed.append(True) or real(*a))

    def loaded() -> tuple[Any, ...]:
        store = BoxMemoryProvider(str(root)).open()
        folder = store._loaded(store._folders["memories"])
        out = (folder.entries, folder.keep, folder.folder_id, folder.problem, folder.layout is not None)
        store.close()
        return out

    fast = loaded()
    assert parsed == [True] and fast[1] == {"x_folder_note": {"ünï": [1, 2, "三"], "flag": True}}
    monkeypatch.setenv(_patch.ENV, "0")
    assert loaded() == (*fast[:4], False)
    assert parsed == [True]
