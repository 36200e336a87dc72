"""The index splice fast path (memcore_box._splice): its bytes are the full encoder's, or it is not taken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_box import _splice
from memcore_box._json import IndexWriter, dumps_json, loads_json
from memcore_box._state import _ROLLUP_KEYS
from memcore_box.index import INDEX_FILE
from memcore_box.provider import BoxMemoryProvider

TITLES = (
    "Zürich naïve café",
    "東京 meeting notes 😀",
    'He said "stop" \\ then left',
    "tab\tinside",
    "plain ascii title",
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
    """Return every index file as the full encoder writes the store's current state (no splice)."""
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
