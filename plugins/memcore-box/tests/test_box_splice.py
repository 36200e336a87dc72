"""The index splice fast path (memcore_box._splice): its bytes are the full encoder's, or it is not taken."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_box import _drift, _json, _splice
from memcore_box._json import IndexWriter, _emit, dumps_json, loads_json
from memcore_box._maps import map_texts
from memcore_box._parse import is_memory_name
from memcore_box._state import _ROLLUP_KEYS
from memcore_box.index import INDEX_FILE, IndexRow, row_from_json, row_maps
from memcore_box.provider import BoxMemoryProvider

TITLES = (
    "Zürich naïve café",
    "東京 meeting notes 😀",
    'He said "stop" \\ then left',
    "tab\tinside",
    "plain ascii title",
)
HAND_WRITTEN = (
    "---\nid: mem_01J00000000000000000000009\nslug: by-hand\ntitle: By hand\nkind: fact\n"
    "status: active\ncreated_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n---\nx\n"
)
LONG_TAGS = [f"tag-number-{i:02d}" for i in range(12)]  # their one-line list passes 100 characters


def _entry(i: int, prefix: str = "m") -> MemoryEntry:
    return MemoryEntry(
        kind=(Kind.FACT, Kind.DECISION, Kind.NOTE)[i % 3],
        title=f"{TITLES[i % len(TITLES)]} {prefix}{i}",
        body=f"\nbody {i}\n",
        tags=LONG_TAGS if i % 7 == 0 else ["auth", "ops"][: 1 + i % 2],
        scope="default",
    )


def _workspace(tmp_path: Path, n: int = 40) -> tuple[Path, list[str]]:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store, store.batch():
        ids = [store.add(_entry(i)).id or "" for i in range(n)]
    return root, ids


def _add_unknown_keys(root: Path) -> None:
    """Put keys memcore does not know in both indexes, in the writer's layout."""
    for name, extra in (
        ("memories/_index.json", {"x_folder_note": {"ünï": [1, 2, "三"], "flag": True}}),
        (INDEX_FILE, {"x_rollup_note": "kept as is", "x_nested": {"a": {"b": [None, 3]}}}),
    ):
        data = loads_json((root / name).read_bytes())
        data.update(extra)
        (root / name).write_bytes(dumps_json(data))


def _full_encodings(store: BoxMemoryProvider) -> dict[str, bytes]:
    """Return every index file as the full encoder writes the store's current state (no splice).

    The maps too are built as dicts and encoded by ``_emit`` (the fast paths off), whatever
    ``MEMCORE_BOX_SPLICE`` says for the store's own writes.
    """
    saved = os.environ.get(_splice.ENV)
    os.environ[_splice.ENV] = "0"
    try:
        return _encode_whole(store)
    finally:
        if saved is None:
            os.environ.pop(_splice.ENV, None)
        else:
            os.environ[_splice.ENV] = saved


def _encode_whole(store: BoxMemoryProvider) -> dict[str, bytes]:
    root = Path(store.location)
    out: dict[str, bytes] = {}
    now = ""
    for path, folder in sorted(store._folders.items()):
        on_disk = root / path / INDEX_FILE
        if not on_disk.is_file():
            continue
        now = loads_json(on_disk.read_bytes())["updated_at"]
        out[f"{path}/{INDEX_FILE}"] = bytes(
            IndexWriter().dumps(store._index_items(store._loaded(folder), now), groups=[(folder.entries, None)])
        )
    now = loads_json((root / INDEX_FILE).read_bytes())["updated_at"]
    folders = store._rollup_folders()
    rows = [row for f in folders for row in f.entries]
    out[INDEX_FILE] = bytes(
        IndexWriter().dumps(
            store._rollup_items(folders, rows, now), groups=[(f.entries, f.path + "/") for f in folders]
        )
    )
    return out


def _on_disk(root: Path, names: Any) -> dict[str, bytes]:
    return {name: (root / name).read_bytes() for name in names}


def test_spliced_indexes_equal_the_full_encoding_after_adds_updates_deletes_supersedes(tmp_path: Path) -> None:
    root, ids = _workspace(tmp_path)
    _add_unknown_keys(root)
    store = BoxMemoryProvider(str(root)).open()
    folder = store._loaded(store._folders["memories"])
    assert store._old_texts(folder) is not None  # the file is in the writer's layout: the fast path is taken
    store._load_rollup()
    assert store._rollup_scanned  # only the rollup's top-level keys were read
    with store.batch():
        for i in range(40, 55):
            store.add(_entry(i, "new"))
        changed = store.get(ids[3])
        changed.title = "Ünïcode retitled 🚀"
        changed.tags = LONG_TAGS
        store.update(changed)
        store.delete(ids[10])
        store.supersede(ids[20], _entry(99, "successor"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    kept = loads_json((root / INDEX_FILE).read_bytes())
    assert kept["x_rollup_note"] == "kept as is" and kept["x_nested"] == {"a": {"b": [None, 3]}}
    assert loads_json((root / "memories/_index.json").read_bytes())["x_folder_note"]["ünï"] == [1, 2, "三"]
    # a second batch in the same process splices from the file the first one wrote
    assert store._old_texts(folder) is not None
    with store.batch():
        store.add(_entry(200, "again"))
        store.delete(ids[0])
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


def test_the_off_switch_parses_and_encodes_whole_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, ids = _workspace(tmp_path, 30)
    _add_unknown_keys(root)
    monkeypatch.setenv(_splice.ENV, "0")
    store = BoxMemoryProvider(str(root)).open()
    folder = store._loaded(store._folders["memories"])
    assert not store._splicing() and store._old_texts(folder) is None
    with store.batch():
        for i in range(30, 40):
            store.add(_entry(i, "more"))
        store.delete(ids[5])
    assert not store._rollup_scanned  # the rollup was parsed whole at the first write
    assert store._rollup_keep == {"x_rollup_note": "kept as is", "x_nested": {"a": {"b": [None, 3]}}}
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


def test_entry_spans_accept_the_writers_bytes_and_refuse_any_other_layout(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 15)
    data = (root / "memories/_index.json").read_bytes()
    parsed = json.loads(data)
    spans = _splice.entry_spans(data, 15)
    assert spans is not None
    for (start, end), entry in zip(zip(*spans, strict=True), parsed["entries"], strict=True):
        assert json.loads(data[start:end]) == entry
        assert data[start:end] == IndexWriter()._entry(entry, None).encode("utf-8")
    assert _splice.entry_spans(data, 14) is None  # not the count the file was parsed into
    rollup = (root / INDEX_FILE).read_bytes()
    assert _splice.entry_spans(rollup, 15) is None  # a rollup's head and entries are not a folder's
    rollup_spans = _splice.entry_spans(rollup, 15, rollup=True)
    assert rollup_spans is not None
    first = rollup[rollup_spans[0][0] : rollup_spans[1][0]]
    assert json.loads(first) == {**parsed["entries"][0], "folder_path": "memories/"}
    ascii_escaped = json.dumps(parsed, indent=2, ensure_ascii=True).encode() + b"\n"
    assert _splice.entry_spans(ascii_escaped, 15) is None  # \u00fc escapes: not the writer's text
    folded = data.replace(b'"tags": [\n        "tag-number-00",\n        ', b'"tags": ["tag-number-00", ', 1)
    assert folded != data and _splice.entry_spans(folded, 15) is None  # a long list on one line
    as_float = data.replace(b'"size_bytes": ', b'"size_bytes": 1.0e0 + ', 1)
    assert _splice.entry_spans(as_float, 15) is None


def test_a_foreign_layout_index_is_encoded_whole_and_then_spliced(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 12)
    index = root / "memories/_index.json"
    index.write_bytes(json.dumps(json.loads(index.read_bytes()), indent=4, ensure_ascii=True).encode())
    store = BoxMemoryProvider(str(root)).open()
    folder = store._loaded(store._folders["memories"])
    assert store._old_texts(folder) is None  # parsed, but not in the writer's layout
    with store.batch():
        store.add(_entry(50, "after"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    assert store._old_texts(folder) is not None  # memcore's own file now
    store.close()


def test_a_malformed_folder_index_is_never_spliced_and_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    root, ids = _workspace(tmp_path, 10)
    store = BoxMemoryProvider(str(root)).open()
    folder = store._loaded(store._folders["memories"])
    assert store._old_texts(folder) is not None
    index = root / "memories/_index.json"
    index.write_bytes(index.read_bytes()[:-200])  # truncated: not JSON
    store.close()
    store = BoxMemoryProvider(str(root)).open()
    folder = store._loaded(store._folders["memories"])
    assert folder.problem is not None and folder.problem.startswith("malformed")
    assert folder.source is None and store._old_texts(folder) is None
    with store.batch():
        added = store.add(_entry(60, "fix")).id
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    assert sorted(e["id"] for e in loads_json(index.read_bytes())["entries"]) == sorted([*ids, added])
    store.close()


def test_top_level_extras_match_a_full_parse_and_refuse_a_damaged_rollup(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 8)
    _add_unknown_keys(root)
    data = (root / INDEX_FILE).read_bytes()
    full = {k: v for k, v in json.loads(data).items() if k not in _ROLLUP_KEYS}
    assert (
        _splice.top_level_extras(data, _ROLLUP_KEYS)
        == full
        == {
            "x_rollup_note": "kept as is",
            "x_nested": {"a": {"b": [None, 3]}},
        }
    )
    assert _splice.top_level_extras(data[:-40] + b"\n}\n", _ROLLUP_KEYS) is None  # a value cut short
    assert _splice.top_level_extras(data[:-1], _ROLLUP_KEYS) is None
    one_line = json.dumps(json.loads(data)).encode() + b"\n"
    assert _splice.top_level_extras(one_line, _ROLLUP_KEYS) is None  # another layout: parsed whole


def test_a_truncated_rollup_is_reported_and_rebuilt_whole(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 8)
    rollup = root / INDEX_FILE
    rollup.write_bytes(rollup.read_bytes()[:-500])
    store = BoxMemoryProvider(str(root)).open()
    codes = {d.code: d.message for d in store.validate()}
    assert "malformed" in codes["box.rollup-missing"]
    with store.batch():
        store.add(_entry(70, "after"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


def test_validate_parses_a_scanned_rollup_whole(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 6)
    rollup = root / INDEX_FILE
    text = rollup.read_bytes()
    broken = text.replace(b'\n  "by_id": {', b'\n  "by_id": {"unclosed": ', 1)  # keys still scan, JSON does not
    rollup.write_bytes(broken)
    store = BoxMemoryProvider(str(root)).open()
    store._load_rollup()
    assert store._rollup_problem is None and store._rollup_scanned
    codes = {d.code: d.message for d in store.validate()}
    assert "malformed" in codes["box.rollup-missing"]
    store.close()


# -- the maps as text (memcore_box._maps) -------------------------------------------------
def _reference_maps(rows: list[IndexRow]) -> list[tuple[str, str]]:
    """The maps as row_maps builds them and _emit writes them at the index's top level."""
    out = []
    for name, value in row_maps(rows):
        text: list[str] = []
        _emit(value, 1, 2 + len(json.dumps(name)) + 2, text)
        out.append((name, "".join(text)))
    return out


def _row(i: int, **fields: Any) -> IndexRow:
    values: dict[str, Any] = {
        "id": f"mem_{i:04d}",
        "file_id": None,
        "filename": f"fact__s-{i}.md",
        "title": f"Title {i}",
        "slug": f"s-{i}",
        "kind": "fact",
        "status": "active",
        "team": None,
        "tags": ["auth"],
        "related": [],
        "companion_for": None,
        "sha256": None,
        "size_bytes": 10,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    values.update(fields)
    return row_from_json(values)


def test_map_texts_equal_the_dict_maps_encoded_by_emit() -> None:
    kinds = ("fact", "decision", "note", "task")
    rows = [
        _row(
            i,
            title=f"{TITLES[i % len(TITLES)]} {i}",
            kind=kinds[i % 4],
            status=("active", "superseded", "draft")[i % 3],
            tags=LONG_TAGS if i % 7 == 0 else ["", "ops", "ünï"][: i % 4],
            companion_for=f"files/f{i}.pdf" if i % 5 == 0 else None,
            slug="" if i == 3 else f"s-{i}",
        )
        for i in range(300)
    ]
    texts = map_texts(rows)
    assert texts is not None  # the fast path covers these rows
    assert [(name, str(text)) for name, text in texts] == _reference_maps(rows)
    assert '"ünï": [' in dict(texts)["by_tag"] and '"": [' in dict(texts)["by_tag"]  # an empty tag is a key
    few = rows[:2]  # short id lists: written on one line
    assert [(n, str(t)) for n, t in map_texts(few) or []] == _reference_maps(few)
    assert map_texts([]) is not None and [(n, str(t)) for n, t in map_texts([]) or []] == _reference_maps([])


def test_map_texts_leave_shared_titles_duplicate_ids_and_foreign_rows_to_the_dict_maps() -> None:
    rows = [_row(i) for i in range(5)]
    superseded_first = [_row(9, title="Same", status="superseded"), *rows, _row(10, title="Same")]
    assert map_texts(superseded_first) is None  # active-wins decides by_wikilink["Same"]
    assert dict(_reference_maps(superseded_first))["by_wikilink"].count('"Same": "mem_0010"') == 1
    assert map_texts([*rows, _row(11, slug="s-1")]) is None  # a shared slug
    assert map_texts([*rows, _row(1, title="again")]) is None  # a duplicate id
    assert map_texts([*rows, _row(12, kind=7)]) is None  # a key that is not a string
    foreign = row_from_json({"id": "mem_x", "filename": "x.md", "title": "X", "extra_key": 1})
    assert foreign.raw is not None and map_texts([*rows, foreign]) is None


def test_slug_and_title_collisions_with_superseded_and_active_entries_write_the_full_encoding(
    tmp_path: Path,
) -> None:
    root, ids = _workspace(tmp_path, 12)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.supersede(ids[2], _entry(2))  # same title and slug base as the superseded one: slug -2
        store.add(_entry(4))  # the title of an active memory again
        store.add(_entry(100, "fresh"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    index = loads_json((root / "memories/_index.json").read_bytes())
    title = f"{TITLES[2 % len(TITLES)]} m2"
    holders = [e for e in index["entries"] if e["title"] == title]
    assert [e["status"] for e in holders] == ["superseded", "active"]
    assert index["by_wikilink"][title] == holders[1]["id"]  # the active one wins
    with store.batch():  # then a batch of plain adds: the maps are text again, same bytes
        for i in range(200, 210):
            store.add(_entry(i, "late"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


# -- entries_region and Spans.plan ----------------------------------------------------------
def test_entries_region_is_where_entry_spans_put_the_entries_and_refuses_what_they_refuse(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 15)
    data = (root / "memories/_index.json").read_bytes()
    spans = _splice.entry_spans(data, 15)
    assert spans is not None
    assert _splice.entries_region(data, 15) == (spans[0][0], spans[1][-1])
    assert _splice.entries_region(data, 14) is None
    ascii_escaped = json.dumps(json.loads(data), indent=2, ensure_ascii=True).encode() + b"\n"
    assert _splice.entries_region(ascii_escaped, 15) is None
    folded = data.replace(b'"tags": [\n        "tag-number-00",\n        ', b'"tags": ["tag-number-00", ', 1)
    assert _splice.entries_region(folded, 15) is None  # a long list on one line
    unfolded = data.replace(b'"tags": ["auth"]', b'"tags": [\n        "auth"\n      ]', 1)
    assert unfolded != data and _splice.entries_region(unfolded, 15) is None  # a short list folded
    assert _splice.entries_region(data.replace(b'"size_bytes": ', b'"size_bytes": 1.0e0 + ', 1), 15) is None


def test_a_long_one_line_non_ascii_list_is_checked_entry_by_entry_and_still_spliced(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 6)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.add(MemoryEntry(kind=Kind.FACT, title="wide", body="\nb\n", tags=["東京都", "ü" * 70]))
    store.close()
    data = (root / "memories/_index.json").read_bytes()
    assert b'"tags": ["\xe6\x9d\xb1\xe4\xba\xac\xe9\x83\xbd", "' in data  # one line: 86 characters or fewer
    assert _splice.entries_region(data, 7) is None and _splice.entry_spans(data, 7) is not None
    store = BoxMemoryProvider(str(root)).open()
    assert store._old_texts(store._loaded(store._folders["memories"])) is not None
    with store.batch():
        store.add(_entry(80, "after"))
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


def test_spans_plan_copies_unchanged_runs_and_gives_changed_rows_to_encode(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, 6)
    data = (root / "memories/_index.json").read_bytes()
    region = _splice.entries_region(data, 6)
    assert region is not None
    store = BoxMemoryProvider(str(root)).open()
    rows = list(store._loaded(store._folders["memories"]).entries)
    spans = _splice.Spans(data, region, tuple(rows))
    new = _row(77)
    assert spans.plan([*rows, new]) == [region, new]  # adds: the old entries in one piece
    starts, ends = spans._offsets()
    assert [json.loads(data[a:b])["id"] for a, b in zip(starts, ends, strict=True)] == [r.id for r in rows]
    changed = [*rows[:2], new, *rows[3:5]]  # row 2 replaced, row 5 deleted
    assert spans.plan(changed) == [(starts[0], ends[1]), new, (starts[3], ends[4])]
    assert spans.plan(rows[::-1])[0] == (starts[5], ends[5])  # reordered: one entry per piece
    store.close()


# -- the drift check from the listing opening made (memcore_box._drift) ---------------------
def test_a_folder_unchanged_since_opening_is_not_listed_again_and_a_hand_change_still_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_drift, "SETTLED_NS", 0)  # the workspace was made a moment ago
    root, _ = _workspace(tmp_path, 8)
    store = BoxMemoryProvider(str(root)).open()
    assert "memories" in store._listed  # opening listed it and kept the names
    with store.batch():
        store.add(_entry(30, "quiet"))
    assert "memories" not in store._listed  # taken by the drift check
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()

    store = BoxMemoryProvider(str(root)).open()
    assert "memories" in store._listed
    (root / "memories" / "fact__by-hand.md").write_text(HAND_WRITTEN, encoding="utf-8")  # after opening
    gone = next((root / "memories").glob("*__plain-ascii-title-m4.md"))
    gone.unlink()
    with store.batch():
        store.add(_entry(31, "noisy"))
    index = loads_json((root / "memories/_index.json").read_bytes())
    names = {e["filename"] for e in index["entries"]}
    assert "fact__by-hand.md" in names and gone.name not in names  # both hand changes are in the index
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()


def test_a_drift_already_there_at_opening_is_repaired_from_the_kept_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_drift, "SETTLED_NS", 0)
    root, _ = _workspace(tmp_path, 5)
    (root / "memories" / "fact__by-hand.md").write_text(HAND_WRITTEN, encoding="utf-8")  # before opening
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.add(_entry(40, "x"))
    index = loads_json((root / "memories/_index.json").read_bytes())
    assert "fact__by-hand.md" in {e["filename"] for e in index["entries"]}
    store.close()


def test_a_folder_changed_just_before_the_listing_or_with_the_splice_off_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _workspace(tmp_path, 3)  # written a moment ago: within SETTLED_NS
    store = BoxMemoryProvider(str(root)).open()
    assert store._listed == {}
    store.close()
    monkeypatch.setattr(_drift, "SETTLED_NS", 0)
    monkeypatch.setenv(_splice.ENV, "0")
    store = BoxMemoryProvider(str(root)).open()
    assert store._listed == {}
    store.close()


def test_a_rollup_over_two_folders_builds_its_own_maps_with_the_same_bytes(tmp_path: Path) -> None:
    root, ids = _workspace(tmp_path, 10)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        for i in range(20, 26):
            entry = _entry(i, "team")
            entry.scope = "research"
            store.add(entry)
        store.add(_entry(27, "home"))
        store.delete(ids[1])
    expected = _full_encodings(store)
    assert {"memories/_index.json", "teams/research/memories/_index.json", INDEX_FILE} <= set(expected)
    assert _on_disk(root, expected) == expected
    rollup = loads_json((root / INDEX_FILE).read_bytes())
    assert rollup["entry_count"] == 10 - 1 + 7 and rollup["by_id"][rollup["entries"][-1]["id"]] == 15
    store.close()


def test_indexed_files_match_compares_the_index_with_the_memory_files_among_the_names() -> None:
    rows = [_row(i) for i in range(40)]
    names = {r.filename for r in rows} | {"_index.json", "README.md", ".x.md", "notes.txt", ".a.md.0123456789ab.tmp"}

    def slow(rows: list[IndexRow], names: set[str]) -> bool:
        return {r.filename for r in rows} == {n for n in names if is_memory_name(n)}

    cases = [
        (rows, names),
        (rows, names | {"fact__by-hand.md"}),  # a memory file nobody indexed
        (rows, names | {"Other.MD"}),
        (rows, names - {rows[3].filename}),  # an indexed file gone
        (rows[1:], names),
        ([*rows, _row(50, kind=".hidden")], names | {".hidden__s-50.md"}),  # not a memory name
        ([*rows, _row(51, filename="custom.md")], names | {"custom.md"}),
        ([*rows, _row(52, filename="notes.txt")], names),
    ]
    for case_rows, case_names in cases:
        assert _drift.indexed_files_match(case_rows, frozenset(case_names), is_memory_name) == slow(
            case_rows, case_names
        )
    assert _drift.indexed_files_match(rows, frozenset(names), is_memory_name)
    assert not _drift.indexed_files_match(rows, frozenset(names | {"fact__by-hand.md"}), is_memory_name)


def test_the_rollup_takes_the_folder_index_text_piece_by_piece_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_json, "_PIECE", 300)  # a few entries per piece, cut after an entry's brace
    root, ids = _workspace(tmp_path, 30)
    store = BoxMemoryProvider(str(root)).open()
    with store.batch():
        store.add(_entry(31, "p"))
        store.delete(ids[7])
    expected = _full_encodings(store)
    assert _on_disk(root, expected) == expected
    store.close()
