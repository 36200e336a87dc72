"""``read_all`` and ``validate`` with the checking pass's fast paths on and off (``MEMCORE_BOX_READ_ALL_FAST``).

:mod:`memcore_box._readall` reads the files through :func:`memcore.storage.file_reader` (with
the listings :meth:`open` made), maps plain frontmatter with
:func:`~memcore_box.codec.entry_from_plain` and :func:`~memcore_box.codec.plain_diagnostics`,
compares index rows from the plain values and pauses the cyclic collector. Both ways give the
same entries (fields, fields set, versions, order) and the same diagnostics in the same order,
on a workspace holding what memcore writes and what hands and other tools leave.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_box import _drift, _readall
from memcore_box import validate as box_validate
from memcore_box._parse import _File, _PlainMeta, parse
from memcore_box.codec import entry_from_meta, entry_from_plain, plain_diagnostics
from memcore_box.index import _Titles, index_row, row_from_json
from memcore_box.provider import BoxMemoryProvider
from memcore_box.validate import _drift_key, _plain_row_matches

HAND = (
    b"---\nid: mem_01J0000000000000000000000H\nslug: by-hand\ntitle: By hand\nkind: fact\nstatus: active\n"
    b"created_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\ntags: [a, b]\n---\nx\n"
)

# (file name, what replaces what in HAND): the hand-written files beside memcore's own
HAND_FILES = [
    ("fact__by-hand.md", b"", b""),
    ("fact__short-id.md", b"mem_01J0000000000000000000000H", b"mem_short"),
    ("fact__no-title.md", b"title: By hand\n", b""),
    ("fact__no-dates.md", b"created_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n", b""),
    ("fact__links.md", b"tags: [a, b]", b'related:\n  - "[[Nowhere]]"\n  - "[[Tokens]]"\nsupersedes: [mem_GONE]'),
    ("fact__flow-links.md", b"tags: [a, b]", b'related: ["[[Nowhere]]", "[[tokens]]"]\nsuperseded_by: mem_GONE'),
    ("fact__bad-kind.md", b"kind: fact", b"kind: essay"),
    ("fact__bad-status.md", b"status: active", b"status: done"),
    ("fact__date-only.md", b"created_at: 2026-01-01T00:00:00Z", b"created_at: 2026-01-01"),
    ("fact__custom.md", b"tags: [a, b]", b"custom: value"),
    ("fact__memcore.md", b"tags: [a, b]", b"memcore:\n  kind: preference\n  date_only: true"),
    ("fact__memcore-other.md", b"tags: [a, b]", b"memcore:\n  parent: mem_GONE"),
    ("fact__non-ascii.md", b"title: By hand", b"title: Caf\xc3\xa9"),
    ("fact__crlf.md", b"\n", b"\r\n"),
    ("fact__comment.md", b"status: active", b"status: active # checked"),
    ("wrong-name.md", b"slug: by-hand", b"slug: named-otherwise"),
    ("fact__orphan.md", b"---\nid:", b"no frontmatter\nid:"),
    ("fact__no-kind.md", b"kind: fact\n", b""),
    ("fact__not-utf8.md", b"x\n", b"\xff\n"),
    ("fact__bell.md", b"x\n", b"x\x07y\n"),
]


def _memcore_entries() -> list[MemoryEntry]:
    rel = Relation(type="related", target="mem_01AAAAAAAAAAAAAAAAAAAAAAAA", resolved=True)
    return [
        MemoryEntry(id="mem_01AAAAAAAAAAAAAAAAAAAAAAAA", kind=Kind.DECISION, title="Tokens", body="Stateless.\n"),
        MemoryEntry(kind=Kind.TASK, title="Rotate keys", body="Monthly.\n", tags=["ops"], confidence=0.5),
        MemoryEntry(kind=Kind.OBSERVATION, title="", body="Untitled.\n", date_only=True, relations=[rel]),
        MemoryEntry(kind=Kind.PREFERENCE, title="A preference", body="Not a box kind.\n", source="agent"),
        MemoryEntry(kind=Kind.FACT, title="Caf\u00e9", body="Non-ASCII.\n", tags=["caf\u00e9"]),
        MemoryEntry(kind=Kind.NOTE, title="Draft", body="d\n", status=Status.DRAFT, extra={"other": {"k": 1}}),
        MemoryEntry(kind=Kind.NOTE, title="Team memo", body="t\n", scope="eng"),
        MemoryEntry(kind=Kind.NOTE, title="Edited later", body="e\n"),
        MemoryEntry(kind=Kind.NOTE, title="Deleted by hand", body="gone\n"),
    ]


def _hand_id(number: int) -> bytes:
    return f"mem_01J{number:023d}".encode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _hand_edited_workspace(tmp_path / "ws")


@pytest.fixture
def recorded_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The same workspace, its folder indexes' layouts and its rollup recorded whatever their size."""
    from memcore_box import _patch

    monkeypatch.setattr(_patch, "SAVE_FROM_BYTES", 0)
    monkeypatch.setattr(_drift, "KNOWN_FROM_BYTES", 0)
    return _hand_edited_workspace(tmp_path / "ws")


def _hand_edited_workspace(path: Path) -> Path:
    BoxMemoryProvider.init_store(str(path))
    with BoxMemoryProvider(str(path)) as store, store.batch():
        for entry in _memcore_entries():
            store.add(entry)
    memories = path / "memories"
    for number, (name, old, new) in enumerate(HAND_FILES):
        assert old in HAND
        data = HAND.replace(old, new, 1).replace(b"mem_01J0000000000000000000000H", _hand_id(number))
        (memories / name).write_bytes(data)
    (memories / "fact__twin.md").write_bytes(HAND.replace(b"mem_01J0000000000000000000000H", _hand_id(0)))
    edited = memories / "note__edited-later.md"
    edited.write_bytes(edited.read_bytes().replace(b"title: Edited later", b"title: Edited by hand"))
    (memories / "note__deleted-by-hand.md").unlink()
    return path


def _read(root: Path, monkeypatch: pytest.MonkeyPatch, fast: bool) -> tuple[Any, Any, Any]:
    monkeypatch.setenv(_readall.ENV, "1" if fast else "0")
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
    with BoxMemoryProvider(str(root)) as store:
        diagnostics = store.validate()
    entries = [(e.model_dump(mode="json"), sorted(e.model_fields_set), list(e.__dict__)) for e in snapshot.entries]
    return entries, [d.model_dump(mode="json") for d in snapshot.diagnostics], [d.model_dump() for d in diagnostics]


def test_read_all_and_validate_give_the_same_entries_and_diagnostics_with_the_fast_paths_on_and_off(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on = _read(root, monkeypatch, fast=True)
    off = _read(root, monkeypatch, fast=False)
    assert on == off
    entries, diagnostics, validated = on
    assert len(entries) == 8 + len(HAND_FILES) - 3  # the orphans: no frontmatter, no kind, not UTF-8
    assert [d["code"] for d in diagnostics] == [d["code"] for d in validated]
    codes = {d["code"] for d in diagnostics}
    assert {
        "box.orphan",
        "box.duplicate-id",
        "box.slug-conflict",
        "box.filename",
        "box.id-format",
        "box.missing-field",
        "box.unresolved-wikilink",
        "box.dangling-id",
        "box.bad-kind",
        "box.bad-status",
        "box.index-stale-entry",
        "box.index-unindexed",
        "box.index-missing-file",
        "box.control-char",
    } <= codes
    lines = {(d["path"], d["code"]): d["line"] for d in diagnostics}
    assert lines[("memories/fact__links.md", "box.unresolved-wikilink")] == 9  # the "related:" line
    assert lines[("memories/fact__links.md", "box.dangling-id")] == 12  # "supersedes:", after the list
    assert lines[("memories/fact__short-id.md", "box.id-format")] == 2


def test_indexes_and_rollup_with_records_give_the_same_entries_and_diagnostics_both_ways(
    recorded_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on = _read(recorded_root, monkeypatch, fast=True)
    assert on == _read(recorded_root, monkeypatch, fast=False)
    codes = {d["code"] for d in on[1]}
    assert {"box.index-stale-entry", "box.index-unindexed", "box.index-missing-file"} <= codes


def test_core_checks_take_the_bytes_the_pass_read_and_read_no_memory_file_again(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_again: list[str] = []
    read_bytes = Path.read_bytes

    def recording(path: Path) -> bytes:
        read_again.append(path.name)
        return read_bytes(path)

    monkeypatch.setenv(_readall.ENV, "1")
    monkeypatch.setattr(Path, "read_bytes", recording)
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
    assert not [name for name in read_again if name.endswith(".md")]
    bell = [d for d in snapshot.diagnostics if d.code == "box.control-char"]
    assert [(d.path, d.line, d.column) for d in bell] == [("memories/fact__bell.md", 11, 2)]
    store.source_bytes_read("memories/fact__bell.md", b"\x07")  # outside a pass: nothing kept, nothing raised


def test_the_fast_paths_map_memcore_files_without_the_general_mapping(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"plain": 0}
    real = box_validate.entry_from_plain

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls["plain"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(box_validate, "entry_from_plain", counted)
    _read(root, monkeypatch, fast=False)
    assert calls["plain"] == 0
    _read(root, monkeypatch, fast=True)
    assert calls["plain"] > 2 * 8  # read_all and validate, each every plain file at least


def test_listings_opening_made_are_reused_by_the_pass_and_source_files_with_the_same_result(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_drift, "SETTLED_NS", 0)  # every listing counts as settled
    walks = {"n": 0}
    real = BoxMemoryProvider._discover

    def counted(self: BoxMemoryProvider, **kwargs: Any) -> Any:
        walks["n"] += 1
        return real(self, **kwargs)

    monkeypatch.setattr(BoxMemoryProvider, "_discover", counted)
    monkeypatch.setenv(_readall.ENV, "1")
    with BoxMemoryProvider(str(root)) as store:
        files, orphans = _readall.scan(store)
        listed = store.source_files()
    assert walks["n"] == 1  # open's walk only: the pass and core's checks after it reuse it
    monkeypatch.setenv(_readall.ENV, "0")
    with BoxMemoryProvider(str(root)) as store:
        general = store._scan(fast=True)
        assert store.source_files() == listed
    assert walks["n"] == 4  # open, the scan, source_files
    assert orphans == general[1]
    assert [_file_view(f) for f in files] == [_file_view(f) for f in general[0]]


def _file_view(f: _File) -> tuple[Any, ...]:
    lines = dict(f.meta.lc.lines) if isinstance(f.meta, _PlainMeta) else None
    return (f.path, f.version, f.size, f.text, f.yaml_text, type(f.meta), dict(f.meta), lines, f.body, f.file_id)


def _parsed(name: str, old: bytes, new: bytes) -> _File | None:
    found = parse(f"memories/{name}", HAND.replace(old, new, 1), "v1", fast=True)
    return found if isinstance(found, _File) else None


@pytest.mark.parametrize(("name", "old", "new"), HAND_FILES)
def test_plain_diagnostics_are_the_general_mappings_diagnostics(name: str, old: bytes, new: bytes) -> None:
    f = _parsed(name, old, new)
    if f is None or type(f.meta) is not _PlainMeta:
        return
    titles = _Titles()
    titles.add({"id": "mem_01AAAAAAAAAAAAAAAAAAAAAAAA", "title": "Tokens"})
    entry = entry_from_plain(dict(f.meta), f.body, version="v1", resolve=titles.resolve, is_known_id=titles.known)
    if entry is None:
        return
    general = entry_from_meta(
        f.meta, f.body, path=f.path, version="v1", resolve=titles.resolve, is_known_id=titles.known
    )
    assert entry == general[0]
    assert plain_diagnostics(f.meta, entry, path=f.path) == general[1]


def test_plain_row_comparison_matches_only_rows_the_general_comparison_finds_equal() -> None:
    files = [f for f in (_parsed(*case) for case in HAND_FILES) if f is not None and type(f.meta) is _PlainMeta]
    rows = [index_row(f.meta, filename=f.name, file_id="id-1", size=f.size + 1) for f in files]
    matched = 0
    for f in files:
        own = index_row(f.meta, filename=f.name, file_id=None, size=f.size)
        for row in rows:
            if _plain_row_matches(row, f.meta, f.name):
                assert _drift_key(row) == _drift_key(own)
                matched += 1
    assert matched >= len(files) - 2  # each plain file matches its own row (file id and size aside)


def test_the_switch_reads_zero_and_off_as_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, on in (("0", False), ("off", False), ("no", False), ("1", True), ("", True)):
        monkeypatch.setenv(_readall.ENV, value)
        assert _readall.enabled() is on
    monkeypatch.setenv(_readall.ENV, "1")
    monkeypatch.setenv("MEMCORE_BOX_STREAM_FAST", "0")
    assert _readall.enabled() is False
    assert os.environ[_readall.ENV] == "1"


def _rollup_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the whole-file JSON parses of a rollup-sized text (the folder index is smaller here)."""
    from memcore_box import _state

    sizes: list[int] = []
    real = _state.loads_json

    def counted(data: bytes) -> Any:
        if b'"child_indexes"' in data:
            sizes.append(len(data))
        return real(data)

    monkeypatch.setattr(_state, "loads_json", counted)
    return sizes


def test_a_rollup_memcore_wrote_is_checked_from_its_record_with_the_same_diagnostics(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_drift, "KNOWN_FROM_BYTES", 0)  # every rollup is recorded
    monkeypatch.setenv(_readall.ENV, "1")
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(kind=Kind.NOTE, title="Recorded", body="r\n"))  # writes the rollup, records it
    parses = _rollup_parses(monkeypatch)
    on = _read(root, monkeypatch, fast=True)
    assert parses == []  # the rollup's record vouches for its bytes: not parsed whole
    off = _read(root, monkeypatch, fast=False)
    assert parses  # the general check parses it
    assert on == off
    rollup = root / "_index.json"
    rollup.write_bytes(rollup.read_bytes()[:-3])  # another version: the record no longer applies
    parses.clear()
    monkeypatch.setenv(_readall.ENV, "1")
    with BoxMemoryProvider(str(root)) as store:
        found = [d for d in store.read_all().diagnostics if d.code == "box.rollup-missing"]
    assert parses
    assert [d.message.split(":")[0] for d in found] == ["workspace rollup index is malformed"]


def test_a_rollup_is_neither_recorded_nor_recognised_with_the_switch_off(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_drift, "KNOWN_FROM_BYTES", 0)
    monkeypatch.setenv(_readall.ENV, "0")
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(kind=Kind.NOTE, title="Unrecorded", body="u\n"))
    data = (root / "_index.json").read_bytes()
    from memcore.storage import version_token

    assert not _drift.rollup_known(str(root / "_index.json"), version_token(data), len(data))
    monkeypatch.setenv(_readall.ENV, "1")
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(kind=Kind.NOTE, title="Recorded", body="r\n"))
    data = (root / "_index.json").read_bytes()
    assert _drift.rollup_known(str(root / "_index.json"), version_token(data), len(data))
    assert not _drift.rollup_known(str(root / "_index.json"), version_token(data + b" "), len(data) + 1)


def _recorded_workspace(path: Path) -> Path:
    BoxMemoryProvider.init_store(str(path))
    with BoxMemoryProvider(str(path)) as store, store.batch():
        for entry in _memcore_entries():
            store.add(entry)
    return path


def test_a_folder_index_memcore_wrote_is_checked_from_its_entries_without_building_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcore_box import _patch

    monkeypatch.setattr(_patch, "SAVE_FROM_BYTES", 0)  # every index's layout is recorded
    monkeypatch.setattr(_drift, "KNOWN_FROM_BYTES", 0)
    root = _recorded_workspace(tmp_path / "ws")
    monkeypatch.setenv(_readall.ENV, "1")
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
        assert not store._folders["memories"].loaded  # checked from the entries, rows left unbuilt
        assert store.get(snapshot.entries[0].id) == snapshot.entries[0]  # read when needed
    assert _read(root, monkeypatch, fast=True) == _read(root, monkeypatch, fast=False)
    memories = root / "memories"
    (memories / "note__draft.md").write_bytes((memories / "note__draft.md").read_bytes().replace(b"d\n", b"e\n"))
    edited = memories / "task__rotate-keys.md"
    edited.write_bytes(edited.read_bytes().replace(b"title: Rotate keys", b"title: Rotated"))
    on = _read(root, monkeypatch, fast=True)
    assert on == _read(root, monkeypatch, fast=False)
    assert [d["code"] for d in on[1] if d["code"].startswith("box.index")] == ["box.index-stale-entry"]


def _entry_and_meta() -> tuple[dict[str, Any], dict[str, Any]]:
    meta = {
        "id": "mem_01J00000000000000000000001",
        "slug": "x",
        "title": "X",
        "kind": "fact",
        "status": "active",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-02T00:00:00Z",
        "tags": ["a", "b"],
        "related": ["[[Y]]"],
    }
    entry = index_row(meta, filename="fact__x.md", file_id=None, size=10).as_dict()
    return entry, meta


_ODD_VALUES: list[Any] = [None, "", "other", 0, 1, 1.5, True, [], ["a", "b"], ["[[Y]]"], {}, "X", "x", "fact"]


@pytest.mark.parametrize("field", ["id", "slug", "title", "kind", "status", "team", "tags", "related", "created_at"])
def test_an_index_entry_matches_its_file_exactly_when_its_row_does(field: str) -> None:
    base_entry, base_meta = _entry_and_meta()
    cases = 0
    for value in [*_ODD_VALUES, base_meta.get(field)]:
        for side in ("entry", "meta"):
            entry, meta = dict(base_entry), dict(base_meta)
            (entry if side == "entry" else meta)[field] = value
            meta_view = _PlainMeta(meta, {})
            row = row_from_json(entry)
            want = _plain_row_matches(row, meta_view, "fact__x.md") and entry["filename"] == "fact__x.md"
            assert box_validate._plain_entry_matches(entry, meta_view, "fact__x.md") is want, (side, value)
            cases += want
    assert cases >= 2  # the unchanged values match both ways
    entry, meta = _entry_and_meta()
    moved = {key: entry[key] for key in reversed(list(entry))}  # another key order: a raw row
    assert not box_validate._plain_entry_matches(moved, _PlainMeta(meta, {}), "fact__x.md")
    assert not box_validate._plain_entry_matches(entry, _PlainMeta(meta, {}), "fact__y.md")


def test_an_index_naming_one_file_twice_is_checked_the_general_way(monkeypatch: pytest.MonkeyPatch) -> None:
    entry, meta = _entry_and_meta()
    other = dict(meta, id="mem_01J00000000000000000000002")
    files = {
        "fact__x.md": parse("memories/fact__x.md", _frontmatter(meta), "v", fast=True),
        "fact__x-2.md": parse("memories/fact__x-2.md", _frontmatter(other), "v", fast=True),
    }
    assert all(type(f.meta) is _PlainMeta for f in files.values())  # type: ignore[union-attr]

    class Store:
        entries: list[Any] = [entry, dict(entry)]

        def _known_index_entries(self, path: str) -> list[Any]:
            return self.entries

    store: Any = Store()
    assert not box_validate._known_index_clean(store, "memories", files)  # type: ignore[arg-type]
    second = index_row(other, filename="fact__x-2.md", file_id=None, size=1).as_dict()
    store.entries = [entry, second]
    assert box_validate._known_index_clean(store, "memories", files)  # type: ignore[arg-type]
    store.entries = [entry]
    assert not box_validate._known_index_clean(store, "memories", files)  # type: ignore[arg-type]


def _frontmatter(meta: dict[str, Any]) -> bytes:
    lines = [f"{k}: [{', '.join(v)}]" if isinstance(v, list) else f"{k}: {v}" for k, v in meta.items()]
    text = "\n".join(lines).replace("[[[Y]]]", '["[[Y]]"]')
    return f"---\n{text}\n---\nbody\n".encode()
