"""Byte-level behaviour of Box-memory files: minimal YAML patches, BOM/CRLF, JSON layout, kept keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.frontmatter import INDENTED, parse_frontmatter, split_frontmatter
from memcore.models import MemoryEntry
from memcore_box._json import IndexWriter, dumps_json, loads_json
from memcore_box.mapping import FIELD_ORDER
from memcore_box.provider import BoxMemoryProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "box-memory"

ORIGINAL = (
    "---\n"
    "id: mem_01HXYZA1B2C3D4E5F6G7H8J9K0\n"
    "slug: x  # a comment after a value\n"
    "title: 'Quoted title'\n"
    "kind: note\n"
    "# a comment line between keys\n"
    "status: active\n"
    "created_at: 2026-05-22T18:32:00Z\n"
    "updated_at: 2026-05-22T18:32:00Z\n"
    "related:\n"
    '    - "[[Deeply indented]]"\n'
    "custom: {a: 1}\n"
    "---\n"
)


def _patched(change: dict) -> str:
    yaml_text = split_frontmatter(ORIGINAL)[0] or ""
    old = parse_frontmatter(ORIGINAL).metadata
    new = {str(k): v for k, v in old.items()}
    new.update(change)
    for key in [k for k, v in change.items() if v is None]:
        del new[key]
    return INDENTED.patch(yaml_text, old, new, FIELD_ORDER)


def test_patch_touches_only_changed_keys() -> None:
    before = (split_frontmatter(ORIGINAL)[0] or "").splitlines(keepends=True)
    after = _patched({"status": "archived"}).splitlines(keepends=True)
    assert [b for a, b in zip(before, after, strict=True) if a != b] == ["status: archived\n"]


def test_patch_inserts_new_keys_at_their_place_and_removes_dropped_ones() -> None:
    text = _patched({"confidence": 0.5, "tags": ["a", "no"], "custom": None})
    lines = text.splitlines()
    at = lines.index("updated_at: 2026-05-22T18:32:00Z")
    assert lines[at + 1 : at + 6] == ["confidence: 0.5", "tags:", "  - a", '  - "no"', "related:"]
    assert "custom: {a: 1}" not in text
    assert "slug: x  # a comment after a value" in lines and "# a comment line between keys" in lines
    assert '    - "[[Deeply indented]]"' in lines  # untouched key keeps its indentation
    assert parse_frontmatter(f"---\n{text}---\n").metadata["tags"] == ["a", "no"]


def test_update_keeps_bom_and_crlf(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store:
        stored = store.add(MemoryEntry(title="Windows file", body="line one\nline two\n"))
        path = root / "memories" / "note__windows-file.md"
        raw = path.read_bytes()
        path.write_bytes(b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
        store.reindex()
        entry = store.get(stored.id or "")
        assert entry.body == "line one\nline two\n"
        entry.tags = ["crlf"]
        store.update(entry)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"tags: [crlf]\r\n" in data and data.endswith(b"line one\r\nline two\r\n")


@pytest.mark.parametrize("name", ["example-_index.json", "example-_box-memory.json"])
def test_json_layout_matches_the_authors_bytes(name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    assert dumps_json(loads_json(data)) == data


def test_index_writer_equals_plain_dump_and_reuses_entries() -> None:
    index = loads_json((SAMPLES / "example-_index.json").read_bytes())
    writer = IndexWriter()
    first = writer.dumps(index, [(e, None) for e in index["entries"]])
    assert first == dumps_json(index)
    changed = dict(index["entries"][1], tags=["one", "two"])
    index["entries"][1] = changed
    assert writer.dumps(index, [(e, None) for e in index["entries"]]) == dumps_json(index)
    rollup = {**index, "entries": [{**e, "folder_path": "memories/"} for e in index["entries"]]}
    assert writer.dumps(rollup, [(e, "memories/") for e in index["entries"]]) == dumps_json(rollup)
    assert json.loads(dumps_json({"s": 'a\u2028b\x00"', "n": [1.5, None, True]})) == {
        "s": 'a\u2028b\x00"',
        "n": [1.5, None, True],
    }


def test_unknown_index_keys_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    index_path = root / "memories" / "_index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    index["x_custom"] = {"kept": True}
    index_path.write_text(json.dumps(index), encoding="utf-8")
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(title="Any"))
    after = json.loads(index_path.read_text(encoding="utf-8"))
    assert after["x_custom"] == {"kept": True} and list(after)[-1] == "x_custom"
    assert after["entry_count"] == 1


def test_fast_frontmatter_renderer_writes_ruamels_bytes() -> None:
    """Wherever the direct renderer answers, its text equals ruamel's dump of the same mapping."""
    import random

    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    from memcore.frontmatter import flow_list, load_yaml, plain_text

    _fast_dump, _ruamel_dump = INDENTED.fast_dump, INDENTED.general_dump

    rnd = random.Random(11)
    alphabet = "abcXYZ019 _.,/()+'-:#\"!&*?|>%@`[]{}\t~=<ü\u2028"
    words = [
        "yes",
        "no",
        "on",
        "null",
        "true",
        "False",
        "y",
        "N",
        "~",
        "1.5",
        "0x1f",
        "2026-01-01",
        "1e5",
        ".inf",
        "a",
        "it's",
        "a  b",
        "a,",
        "x - y",
        "a.b.",
        "e.g. this",
        "Q2 (draft)",
        "v1/v2",
        "c++",
        "x'",
        "A-",
        "0o17",
        "1_000",
        "12:30",
        "1e-5",
        "/tmp/x y",
        "a:b",
        "a: b",
        "a:",
        "a #b",
        "a#b",
        "=",
        "x=y",
        "@a",
        "%x",
        "observations/2026-01.md#37",
        "d4378506a931ebd845ca9f83",
        "1234567",
        "_x",
        ".hidden",
        "..",
        "-",
        "a/",
        " lead",
        "trail ",
        "-x",
        "- x",
        "?x",
        "? x",
        "&a",
        "*a",
        "!a",
        "|a",
        ">a",
        "'a",
        '"a',
        "%a",
        "@a",
        "`a",
        "a: b",
        "a #b",
        "a:",
        "it's: x",
        "[x]",
        "{x}",
        "a\\b",
        'say "hi"',
        "x: 'y'",
        "a\tb",
        "é: x",
    ]

    def text() -> str:
        roll = rnd.random()
        if roll < 0.2:
            return rnd.choice(words)
        if roll < 0.9:  # mostly letters: the direct path's territory, with its edge characters
            return rnd.choice("abXY09_/.") + "".join(
                rnd.choice("abcXYZ019 _.,/()+'-:#=@%") for _ in range(rnd.randrange(0, 10))
            )
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 12)))

    taken = nested_taken = 0
    for _ in range(6000):
        mapping: dict[str, object] = {"id": f"mem_{rnd.randrange(10**6)}", "title": text()}
        if rnd.random() < 0.5:
            mapping["created_at"] = plain_text(
                rnd.choice(
                    ["2026-05-22T18:32:00Z", "2026-05-22T18:32:00.123Z", "2026-05-22T18:32:00.123456Z", "2026-05-22"]
                )
            )
        mapping["tags"] = flow_list([text() for _ in range(rnd.randrange(1, 4))])
        mapping["confidence"] = rnd.choice(
            [0.1, 0.5, 0.7, 0.9, 1.0, 0.0, 1e-7, 3, True, False, 10**20, 0.30000000000000004]
        )
        mapping[rnd.choice(["agent", "team", "x_key", "weird key", "2nd"])] = text()
        if rnd.random() < 0.5:  # a nested block like memcore: {extra: {memcore: {migrated_from: …}}, relations: […]}
            nested: dict[str, object] = {"migrated_from": {"format": text(), "location": text(), "n": rnd.randrange(9)}}
            if rnd.random() < 0.5:
                nested["relations"] = [
                    {"type": text(), "target": text(), "resolved": rnd.random() < 0.5}
                    for _ in range(rnd.randrange(1, 3))
                ]
            if rnd.random() < 0.3:
                nested["items"] = [text() for _ in range(rnd.randrange(0, 3))]
            if rnd.random() < 0.3:  # related: ["[[Title]]", …] as the provider writes it
                mapping["related"] = CommentedSeq(DoubleQuotedScalarString(f"[[{text()}]]") for _ in range(2))
            mapping["memcore"] = {"extra": nested} if rnd.random() < 0.5 else nested
        fast = _fast_dump(mapping)
        if fast is None:
            continue
        taken += 1
        nested_taken += "memcore" in mapping
        assert fast == _ruamel_dump(mapping), mapping
        assert load_yaml(fast) is not None
    assert taken > 200 and nested_taken > 40  # the mix reaches the direct path often enough to mean something
    # What a new memory usually is goes the direct way.
    meta = {
        "id": "mem_01HXYZA1B2C3D4E5F6G7H8J9K0",
        "slug": "memo-1-we-decided",
        "title": "memo 1 we decided",
        "kind": "decision",
        "status": "active",
        "team": "default",
        "agent": "bench-agent",
        "created_at": plain_text("2026-11-29T21:00:00.123456Z"),
        "updated_at": plain_text("2026-11-29T21:00:00Z"),
        "confidence": 0.7,
        "tags": flow_list(["auth", "ops"]),
    }
    assert _fast_dump(meta) == _ruamel_dump(meta) is not None


def test_index_rows_give_back_the_entries_they_were_read_from() -> None:
    from memcore_box.index import ENTRY_FIELDS, IndexRow, row_from_json

    example = loads_json((SAMPLES / "example-_index.json").read_bytes())
    for entry in example["entries"]:
        row = row_from_json(entry)
        assert isinstance(row, IndexRow) and row.as_dict() == entry and list(row.as_dict()) == list(entry)
        assert row.filename == entry["filename"] and row.id == entry["id"]
    ours = dict(
        zip(
            ENTRY_FIELDS,
            [
                "mem_1",
                None,
                "fact__x.md",
                "X",
                "x",
                "fact",
                "active",
                None,
                ["a"],
                [],
                None,
                None,
                12,
                "2026-01-01T00:00:00Z",
                "2026-01-01T00:00:00Z",
            ],
            strict=True,
        )
    )
    row = row_from_json(ours)
    assert row.raw is None and row.fname is None and row.updated_at is row.created_at  # compact
    assert row.as_dict() == ours and list(row.as_dict()) == list(ours)
    foreign = {"filename": "fact__x.md", "id": "mem_2", "tags": "solo", "x_extra": {"k": 1}}
    row = row_from_json(foreign)
    assert row.raw is foreign and row.as_dict() is foreign and row.tags == "solo" and row.title is None


def test_open_and_iterate_read_no_index(tmp_path: Path) -> None:
    """Opening and iterating read only memory files; a get reads each folder index once."""
    from memcore.storage import LocalStorage

    class Recording(LocalStorage):
        def __init__(self, root: Path) -> None:
            super().__init__(root)
            self.reads: list[str] = []

        def read(self, path: str) -> tuple[bytes, str]:
            self.reads.append(path)
            return super().read(path)

    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store, store.batch():
        ids = [store.add(MemoryEntry(title=f"Note {n}", body="b\n")).id for n in range(3)]
    storage = Recording(root)
    with BoxMemoryProvider(str(root), storage=storage) as store:
        entries = list(store.iter_entries())
        assert [e.id for e in entries] == ids
        assert [store.file_of(e) for e in entries] == [f"memories/note__note-{n}.md" for n in range(3)]
        assert not [p for p in storage.reads if p.endswith("_index.json")]
        assert store.get(ids[1] or "").title == "Note 1"
        store.get(ids[2] or "")
        assert [p for p in storage.reads if p.endswith("_index.json")] == [
            "memories/_index.json",
            "teams/default/memories/_index.json",
        ]
