"""The cheaper write and read paths give exactly what the slower ones gave.

- ``load_own`` (the line reader for memcore's own frontmatter layout) equals the round-trip
  loader whenever it answers, and answers for what the provider writes;
- ``_reads_as_str`` answers as ruamel's resolver does;
- ``LocalStorage._path`` gives what ``safe_join`` gives (paths, errors, symbolic links);
- ``update()`` from the plain frontmatter of the read path writes the bytes the round-trip
  path writes, on files in memcore's layout and on hand-written ones;
- ``add()``/``update()`` leave the caller's entry untouched.
"""

from __future__ import annotations

import os
import re
import shutil
import string
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode

from memcore.errors import ParseError, UnsafePathError
from memcore.frontmatter import load_yaml
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.storage import LocalStorage, safe_join
from memcore_box._json import IndexWriter, dumps_json, loads_json
from memcore_box._parse import _key_lines, _PlainMeta
from memcore_box._yaml import _YAML, _reads_as_str, dump_mapping, load_own, patch_yaml, plain
from memcore_box.codec import meta_from_entry
from memcore_box.index import row_from_json
from memcore_box.mapping import FIELD_ORDER
from memcore_box.provider import BoxMemoryProvider

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / ".." / "shared" / "samples" / "box-memory"
GOLDEN = Path(__file__).resolve().parent / "golden"


class RoundTripBox(BoxMemoryProvider):
    """The provider with every file parsed round-trip (ruamel), as update() did before."""

    fast_yaml: ClassVar[bool] = False


def _round_trip(text: str) -> Any:
    return plain(load_yaml(text)) if text.strip() else {}


# -- load_own ------------------------------------------------------------------------------

TRICKY = ["yes", "no", "on", "null", "Null", "~", "true", "True", "FALSE", "1.5", "0x1F", "0o17", "012", "1_000",
          "1e5", ".inf", "-.5", "+1", "-0", "0", "10:00", "2026-01-01", "2026-01-01T10:00:00Z", "a: b", "a #b",
          "C#", "#x", "it's", "'q'", '"q"', "x:", " lead", "trail ", "a  b", "[x]", "{x}", "- x", "? x", "@x",
          "`x", "%x", "!x", "&x", "*x", "|x", ">x", "=", "<<", "a,b", "a, b", "tab\tx", "é", "Companion — x",
          "", "http://x.y/z", "a:b", "-", "--- x", "...", "\\x", "a\"b", "0.30", "00", "-1", "1.", "1.0e5"]
_text = st.one_of(st.sampled_from(TRICKY), st.text(alphabet=string.printable, max_size=12))
_scalar = st.one_of(_text, st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=False, allow_infinity=False, width=32), st.none())
_key = st.one_of(st.sampled_from(["id", "title", "tags", "memcore", "null", "true", "yes", "a b", "1", "_x", "k"]),
                 st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True))
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_key, inner, min_size=1, max_size=3)),
    max_leaves=8,
)


# Mostly what the direct renderer writes itself (so that load_own answers), with its edges.
_plain_text = st.one_of(st.sampled_from(TRICKY), st.text(alphabet=string.ascii_letters + string.digits + " -_.:/#'(),@%=+",
                                                           min_size=1, max_size=14))
_plain_value = st.recursive(
    st.one_of(_plain_text, st.booleans(), st.integers(-10**6, 10**6),
              st.floats(allow_nan=False, allow_infinity=False, width=32)),
    lambda inner: st.one_of(st.lists(inner, min_size=1, max_size=3),
                            st.dictionaries(_key, inner, min_size=1, max_size=3)),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.dictionaries(_key, _value, min_size=1, max_size=6),
                 st.dictionaries(_key, _plain_value, min_size=1, max_size=6)))
def test_load_own_equals_the_round_trip_loader_on_dumped_mappings(mapping: dict[str, Any]) -> None:
    text = dump_mapping(mapping)
    own = load_own(text)
    if own is None:
        return
    expected = _round_trip(text)
    assert own[0] == expected
    assert [type(v) for v in own[0].values()] == [type(v) for v in expected.values()]
    assert own[1] == _key_lines(text, list(own[0]))


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: \"x\"\nc: [a, b]\nd: 2026-01-01\ne: 0.5\nf: true\n",
        "a: 1\na: 2\n",
        "null: x\n", "true: x\n", "Null: x\n", "a:\n", "a: \n", "a:  x\n", "a:x\n", "a: x\n\nb: y\n",
        "a: x\n  y\n", "a:\n  b: 1\n    c: 2\n", "a:\n   b: 1\n", "a:\n- x\n", "a:\n  - x\n  -\n", "a:\n  - - x\n",
        "a:\n  - k: 1\n    j: [x, y]\n  - k: 2\n", "a:\n  - k:\n      n: 1\n", "a:\n  - k: 1\n   j: 2\n",
        "a: [x,y]\n", "a: [x , y]\n", "a: []\n", "a: [\"x, y\"]\n", "a: [\"[[T]]\", b]\n", "a: [x]] \n",
        "a: 'it''s'\n", "a: ' x '\n", "a: \"\\x41\"\n", "a: \" q \"\n", "a: x # c\n", "# c\na: x\n",
        "a: -0\nb: 00\nc: 012\nd: 0.30\ne: -0.0\nf: 1.\ng: +1\nh: 1_0\ni: 99999999999999999999\n",
        "a: yes\nb: no\nc: on\nd: ~\ne: null\nf: True\ng: .5\nh: 1e5\n", "a: x\n---\n", "%YAML 1.2\na: x\n",
        "a: x", "a: x\r\n", "a:\tx\n", "a: é\n", "- a\n", "x\n", "a: b: c\n", "a: http://x\n", "a: <<\n",
        "a: 10:00:00\nb: 2026-01-01T10:00:00Z\n", "a: x\nb:\n  c:\n    d:\n      e: [f]\n",
    ],
)
def test_load_own_equals_the_round_trip_loader_or_declines(text: str) -> None:
    try:
        expected = _round_trip(text)
    except ParseError:
        assert load_own(text) is None
        return
    own = load_own(text)
    if own is not None:
        assert own[0] == expected
        assert [type(v) for v in own[0].values()] == [type(v) for v in expected.values()]


def _entry(i: int, **changes: Any) -> MemoryEntry:
    entry = MemoryEntry(
        id=f"mem_01JC0DDYAML00000000000{i:03d}", kind=(Kind.FACT, Kind.OBSERVATION, Kind.DECISION)[i % 3],
        title="" if i % 3 == 1 else f"Item {i}: what (and why)", body=f"Body {i}.\n", tags=[f"topic-{i % 4}", "bench"],
        confidence=(0.3, 0.5, 0.7, 0.9)[i % 4], source="bench", date_only=i % 3 == 1,
        status=Status.SUPERSEDED if i % 5 == 0 else Status.ACTIVE,
        relations=[Relation(type="related", target="mem_01JC0DDYAML00000000000000")] if i % 2 else [],
        extra={"memcore": {"migrated_from": {"format": "whitebox", "id": f"b{i}", "sha256": "ab" * 32}}},
    )
    from datetime import UTC, datetime, timedelta

    entry.created_at = entry.updated_at = datetime(2026, 1, 5, tzinfo=UTC) + timedelta(hours=i)
    return entry.model_copy(update=changes)


def test_load_own_reads_what_the_provider_writes() -> None:
    for i in range(12):
        meta = meta_from_entry(_entry(i), slug=f"item-{i}", title_of=lambda _id: "Item 0")
        text = dump_mapping(meta)
        own = load_own(text)
        assert own is not None, text
        assert own[0] == _round_trip(text) == plain(meta)
        assert own[1] == _key_lines(text, list(own[0]))


def test_golden_and_sample_files_read_the_same() -> None:
    files = sorted(GOLDEN.glob("*.md")) + sorted(SAMPLES.glob("*.md"))
    assert len(files) >= 5
    answered = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        yaml_text = text[4:text.index("\n---", 3) + 1]
        own = load_own(yaml_text)
        if own is not None:
            answered += 1
            assert own[0] == _round_trip(yaml_text), path.name
    assert answered >= 3  # memcore's own golden files are in its layout


@pytest.mark.parametrize("text", [*TRICKY, "Item 7", "mem_01ABC", "0.5", "-3", "/x", "_y", "", "n", "t", "F"])
def test_reads_as_str_is_ruamels_answer(text: str) -> None:
    tag = _YAML.resolver.resolve(ScalarNode, text, (True, False))
    assert _reads_as_str(text) == (str(tag) == "tag:yaml.org,2002:str")


# -- LocalStorage._path ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "rel",
    ["memories/fact__x.md", "memories", "teams/core/memories/decision__a-b.md", "memories/new__y.md",
     "memories/a b.md", "memories/é.md", "memories/e\u0301.md", "memories/../x.md", "memories//x.md", "/etc/x",
     "memories/x.md.", "memories/con.md", "memories/a:b.md", "C:/x", "memories/a\\b.md", "memories/\x00",
     "./x", "x/.", "memories/nul", "memories/x.md "],
)
def test_path_is_what_safe_join_gives(tmp_path: Path, rel: str) -> None:
    root = tmp_path / "ws"
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "fact__x.md").write_text("x", encoding="utf-8")
    storage = LocalStorage(root)
    try:
        expected: Path | str = safe_join(root, rel)
    except UnsafePathError as exc:
        expected = f"refused: {exc}"
    try:
        got: Path | str = storage._path(rel)
        got = storage._path(rel)  # the second call answers from the component cache
    except UnsafePathError as exc:
        got = f"refused: {exc}"
    assert got == expected


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_path_follows_links_only_as_safe_join_does(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "memories").mkdir(parents=True)
    (root / "real").mkdir()
    os.symlink(outside, root / "escape")
    os.symlink(root / "real", root / "inside")
    os.symlink(outside / "f.md", root / "memories" / "fact__link.md")
    storage = LocalStorage(root)
    with pytest.raises(UnsafePathError):
        storage._path("escape/x.md")
    with pytest.raises(UnsafePathError):
        storage._path("memories/fact__link.md")
    assert storage._path("inside/x.md") == safe_join(root, "inside/x.md") == root / "inside" / "x.md"
    # a folder that becomes a link later is checked again (nothing about the disk is cached)
    (root / "later").mkdir()
    assert storage._path("later/x.md") == root / "later" / "x.md"
    (root / "later").rmdir()
    os.symlink(outside, root / "later")
    with pytest.raises(UnsafePathError):
        storage._path("later/x.md")


# -- update() from plain frontmatter -----------------------------------------------------------

HAND_WRITTEN = [
    # comments, quoting and key order memcore would not write; a block list; a nested map
    "---\n# kept comment\nid: {id}\nslug: hand\ntitle: 'Quoted: title'\nkind: fact\nstatus: active\n"
    "tags: [a, \"b\"]   # tags comment\ncreated_at: 2026-01-02T10:00:00Z\nupdated_at: '2026-01-02T10:00:00Z'\n"
    "x_custom:\n  nested: yes\n  list:\n    - 1\n    - two\nconfidence: 0.50\n---\nBody.\n",
    # memcore's own layout
    "---\nid: {id}\nslug: own\ntitle: Own layout\nkind: decision\nstatus: active\nagent: bench\n"
    "created_at: 2026-01-02T10:00:00Z\nupdated_at: 2026-01-02T10:00:00Z\nconfidence: 0.3\ntags: [t1, bench]\n"
    "related:\n  - \"[[Own layout]]\"\nmemcore:\n  extra:\n    memcore:\n      migrated_from:\n        id: b1\n"
    "---\nBody.\n",
    # CRLF: the round-trip path only
    "---\r\nid: {id}\r\nslug: crlf\r\ntitle: CRLF\r\nkind: fact\r\nstatus: active\r\n"
    "created_at: 2026-01-02T10:00:00Z\r\nupdated_at: 2026-01-02T10:00:00Z\r\n---\r\nBody.\r\n",
    # an anchor: the round-trip path only
    "---\nid: {id}\nslug: anchor\ntitle: Anchor\nkind: fact\nstatus: active\nx_flag: &f true\n"
    "created_at: 2026-01-02T10:00:00Z\nupdated_at: 2026-01-02T10:00:00Z\n---\nBody.\n",
]


def _changes(entry: MemoryEntry, n: int) -> MemoryEntry:
    entry = entry.model_copy(deep=True)
    if n == 0:
        entry.body = "Changed body.\n"
    elif n == 1:
        entry.tags = [*entry.tags, "new-tag"]
    elif n == 2:
        entry.title = "A new title"
        entry.confidence = 0.9
    else:
        entry.relations = [*entry.relations, Relation(type="supersedes", target="mem_01JC0DDYAML0000000000GONE")]
        entry.extra.setdefault("box", {})["x_more"] = "text: with colon"
    return entry


@pytest.mark.parametrize("layout", range(len(HAND_WRITTEN)))
@pytest.mark.parametrize("change", range(4))
def test_update_writes_the_bytes_the_round_trip_path_writes(tmp_path: Path, layout: int, change: int) -> None:
    results = []
    for cls in (BoxMemoryProvider, RoundTripBox):
        root = tmp_path / cls.__name__
        cls.init_store(str(root))
        entry_id = "mem_01JC0DDYAML0000000000000A"
        name = HAND_WRITTEN[layout].split("slug: ")[1].split("\n")[0].strip("\r")
        path = root / "memories" / f"{'decision' if name == 'own' else 'fact'}__{name}.md"
        path.write_bytes(HAND_WRITTEN[layout].replace("{id}", entry_id).encode())
        with cls(str(root)) as store:
            store.reindex()
            current = store.get(entry_id)
            stored = store.update(_changes(current, change))
            again = store.get(entry_id)
        # the update stamps updated_at with the time of each run
        results.append(re.sub(rb"(?!2026-01-0)[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z", b"NOW", path.read_bytes()))
        assert stored == again
    assert results[0] == results[1]
    assert b"NOW" in results[0]


def test_patch_yaml_without_fallback_declines_what_it_cannot_patch() -> None:
    text = "id: x\ntitle: old\nkind: fact\n"
    new = {"id": "x", "title": "new", "kind": "fact"}
    right = _PlainMeta({"id": "x", "title": "old", "kind": "fact"}, {"id": 0, "title": 1, "kind": 2})
    assert patch_yaml(text, right, new, FIELD_ORDER, fallback=False) == "id: x\ntitle: new\nkind: fact\n"
    # lines that do not fit the text (the patch would not read back as ``new``)
    wrong = _PlainMeta({"id": "x", "title": "old", "kind": "fact"}, {"id": 0, "title": 2, "kind": 1})
    assert patch_yaml(text, wrong, new, FIELD_ORDER, fallback=False) is None
    assert load_yaml(patch_yaml(text, wrong, new, FIELD_ORDER)) == new  # the default dumps it whole


# -- the caller's entry ------------------------------------------------------------------------

def test_add_and_update_leave_the_callers_entry_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    (root / "files").mkdir(exist_ok=True)
    (root / "files" / "r.pdf").write_bytes(b"%PDF fake\n")
    entry = MemoryEntry(
        kind=Kind.NOTE, title="Quoting", body="b\n", tags=["yes", "no"],
        relations=[Relation(type="depends_on", target="elsewhere", resolved=False)],
        extra={"box": {"x_list": ["on", "off", "1.5"], "x_map": {"k": ["null"]}}, "other": {"v": ["yes"]}},
    )
    companion = MemoryEntry(kind=Kind.COMPANION, title="R", body="c\n",
                            extra={"box": {"companion_for": {"file_id": "files/r.pdf"}}})
    before = entry.model_copy(deep=True)
    companion_before = companion.model_copy(deep=True)
    with BoxMemoryProvider(str(root)) as store, store.batch():
        stored = store.add(entry)
        store.add(companion)
        changed = stored.model_copy(deep=True)
        changed.extra["box"]["x_list"] = ["yes", "y"]
        changed_before = changed.model_copy(deep=True)
        store.update(changed)
    for got, want in ((entry, before), (companion, companion_before), (changed, changed_before)):
        assert got == want
        assert got.model_dump() == want.model_dump()
        assert all(type(v) is str for v in got.extra.get("box", {}).get("x_list", []))
    assert "sha256" not in companion.extra["box"]["companion_for"]


def test_read_all_and_iter_entries_agree_on_a_written_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store, store.batch():
        added = [store.add(_entry(i).model_copy(update={"id": None})) for i in range(30)]
    shutil.copytree(root, tmp_path / "copy")
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
        streamed = list(store.iter_entries())
    with RoundTripBox(str(tmp_path / "copy")) as slow:
        slow_snapshot = slow.read_all()
    assert snapshot.entries == streamed == slow_snapshot.entries
    assert sorted(added, key=lambda e: (e.created_at or 0, e.id or "")) == snapshot.entries
    assert snapshot.diagnostics == slow_snapshot.diagnostics


# -- index writes ----------------------------------------------------------------------------

def test_rollup_borrowing_the_folder_texts_writes_the_same_bytes() -> None:
    index = loads_json((SAMPLES / "example-_index.json").read_bytes())
    rows = [row_from_json(e) for e in index["entries"]]
    folder = IndexWriter()
    assert folder.dumps(index, [(r, None) for r in rows]) == dumps_json(index)
    rollup = {**index, "entries": [{**e, "folder_path": "memories/"} for e in index["entries"]]}
    expected = dumps_json(rollup)
    borrowing, alone = IndexWriter(), IndexWriter()
    assert borrowing.dumps(rollup, groups=[(rows, "memories/")], borrow=[folder]) == expected
    assert alone.dumps(rollup, groups=[(rows, "memories/")]) == expected
    # an entry the folder writer never saw (another object) is encoded, not borrowed
    changed = [rows[0]._replace(title="Changed"), *rows[1:]]
    rollup["entries"][0]["title"] = "Changed"
    assert IndexWriter().dumps(rollup, groups=[(changed, "memories/")], borrow=[folder]) == dumps_json(rollup)


def test_workspace_indexes_equal_a_reindex(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root), teams="default,ops")
    with BoxMemoryProvider(str(root)) as store, store.batch():
        for i in range(12):
            store.add(_entry(i).model_copy(update={"id": None, "scope": "ops" if i % 3 == 0 else None}))
    written = {p: p.read_bytes() for p in root.rglob("_index.json")}
    with BoxMemoryProvider(str(root)) as store:
        assert store.reindex() == []  # nothing differs: no index is rewritten
        assert [d for d in store.validate() if d.code.startswith("box.index") or d.code == "box.rollup-missing"] == []
    assert {p: p.read_bytes() for p in root.rglob("_index.json")} == written
    rollup = loads_json(written[root / "_index.json"])
    folders = [loads_json(written[root / "memories" / "_index.json"]),
               loads_json(written[root / "teams" / "ops" / "memories" / "_index.json"])]
    assert rollup["entries"] == [{**e, "folder_path": f["folder_path"]} for f in folders for e in f["entries"]]
