"""Each fast path of the Box provider gives exactly what its reference (round-trip) path gives.

The reads, checks and writes that take plain frontmatter from libyaml, memcore's own layout
or a patch of the YAML text are compared, over the same inputs, with the round-trip ruamel path
(``fast_yaml = False``) and with the full reads they stand in for. Merged from three files
(issue 18: one ``test_equivalence.py`` per plugin):

- ``test_box_fast_writes.py``:

  The cheaper write and read paths give exactly what the slower ones gave.

  - ``load_own`` (the line reader for memcore's own frontmatter layout) equals the round-trip
    loader whenever it answers, and answers for what the provider writes;
  - ``_reads_as_str`` answers as ruamel's resolver does;
  - ``LocalStorage._path`` gives what ``safe_join`` gives (paths, errors, symbolic links);
  - ``update()`` from the plain frontmatter of the read path writes the bytes the round-trip
    path writes, on files in memcore's layout and on hand-written ones;
  - ``add()``/``update()`` leave the caller's entry untouched.

- ``test_box_read_path.py``:

  The streaming read path gives what the full round-trip read gives (same entries, same order).

  ``iter_entries`` reads in two passes and parses frontmatter with libyaml (``load_fast``) when it
  can; writes and ``validate`` keep ruamel's round-trip objects. These tests compare both, entry by
  entry, over the authors' examples, examples/box-workspace, a generated workspace and a workspace
  with drift, duplicates, orphans and YAML the fast loader must hand back to the round-trip one.

- ``test_box_check_path.py``:

  validate() and read_all() read frontmatter through libyaml and give what the round-trip parse gives.

  The checking path (``_check`` -> ``_scan(fast=True)``) takes plain frontmatter from
  ``load_fast`` with the top-level keys' lines, and falls back to ruamel's round-trip parse for
  anything else. These tests run validate(), read_all() and iter_entries() once with the fast
  path and once with it switched off (``fast_yaml = False``: every file parsed round-trip, as
  before) on the authors' samples, examples/box-workspace, a workspace written by the provider
  and a workspace of odd YAML and broken files, and compare diagnostics and entries.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import unicodedata
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode

from memcore.errors import ParseError, UnsafePathError
from memcore.frontmatter import _YAML, INDENTED, _reads_as_str, load_fast, load_own, load_yaml
from memcore.frontmatter import to_plain as plain
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.storage import LocalStorage, safe_join
from memcore_box._json import IndexWriter, dumps_json, loads_json
from memcore_box._parse import _File, _key_lines, _PlainMeta
from memcore_box.codec import _EPOCH, entry_from_meta, meta_from_entry
from memcore_box.index import row_from_json
from memcore_box.mapping import FIELD_ORDER
from memcore_box.provider import BoxMemoryProvider

dump_mapping, patch_yaml = INDENTED.dump_mapping, INDENTED.patch  # the Box-memory layout

# ==============================================================================================
# The cheaper write and read paths give exactly what the slower ones gave.
# (was test_box_fast_writes.py)
# ==============================================================================================


REPO = Path(__file__).resolve().parents[3]


SAMPLES = REPO / ".." / "shared" / "samples" / "box-memory"


GOLDEN = Path(__file__).resolve().parent / "golden"


class RoundTripBox(BoxMemoryProvider):
    """The provider with every file parsed round-trip (ruamel), as update() did before."""

    fast_yaml: ClassVar[bool] = False


def _round_trip(text: str) -> Any:
    return plain(load_yaml(text)) if text.strip() else {}


TRICKY = [
    "yes",
    "no",
    "on",
    "null",
    "Null",
    "~",
    "true",
    "True",
    "FALSE",
    "1.5",
    "0x1F",
    "0o17",
    "012",
    "1_000",
    "1e5",
    ".inf",
    "-.5",
    "+1",
    "-0",
    "0",
    "10:00",
    "2026-01-01",
    "2026-01-01T10:00:00Z",
    "a: b",
    "a #b",
    "C#",
    "#x",
    "it's",
    "'q'",
    '"q"',
    "x:",
    " lead",
    "trail ",
    "a  b",
    "[x]",
    "{x}",
    "- x",
    "? x",
    "@x",
    "`x",
    "%x",
    "!x",
    "&x",
    "*x",
    "|x",
    ">x",
    "=",
    "<<",
    "a,b",
    "a, b",
    "tab\tx",
    "é",
    "Companion — x",
    "",
    "http://x.y/z",
    "a:b",
    "-",
    "--- x",
    "...",
    "\\x",
    'a"b',
    "0.30",
    "00",
    "-1",
    "1.",
    "1.0e5",
]


_text = st.one_of(st.sampled_from(TRICKY), st.text(alphabet=string.printable, max_size=12))


_scalar = st.one_of(
    _text,
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.none(),
)


_key = st.one_of(
    st.sampled_from(["id", "title", "tags", "memcore", "null", "true", "yes", "a b", "1", "_x", "k"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
)


_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_key, inner, min_size=1, max_size=3)),
    max_leaves=8,
)


# Mostly what the direct renderer writes itself (so that load_own answers), with its edges.
_plain_text = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet=string.ascii_letters + string.digits + " -_.:/#'(),@%=+", min_size=1, max_size=14),
)


_plain_value = st.recursive(
    st.one_of(
        _plain_text,
        st.booleans(),
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
    ),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3), st.dictionaries(_key, inner, min_size=1, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.dictionaries(_key, _value, min_size=1, max_size=6),
        st.dictionaries(_key, _plain_value, min_size=1, max_size=6),
    )
)
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
        'a: 1\nb: "x"\nc: [a, b]\nd: 2026-01-01\ne: 0.5\nf: true\n',
        "a: 1\na: 2\n",
        "null: x\n",
        "true: x\n",
        "Null: x\n",
        "a:\n",
        "a: \n",
        "a:  x\n",
        "a:x\n",
        "a: x\n\nb: y\n",
        "a: x\n  y\n",
        "a:\n  b: 1\n    c: 2\n",
        "a:\n   b: 1\n",
        "a:\n- x\n",
        "a:\n  - x\n  -\n",
        "a:\n  - - x\n",
        "a:\n  - k: 1\n    j: [x, y]\n  - k: 2\n",
        "a:\n  - k:\n      n: 1\n",
        "a:\n  - k: 1\n   j: 2\n",
        "a: [x,y]\n",
        "a: [x , y]\n",
        "a: []\n",
        'a: ["x, y"]\n',
        'a: ["[[T]]", b]\n',
        "a: [x]] \n",
        "a: 'it''s'\n",
        "a: ' x '\n",
        'a: "\\x41"\n',
        'a: " q "\n',
        "a: x # c\n",
        "# c\na: x\n",
        "a: -0\nb: 00\nc: 012\nd: 0.30\ne: -0.0\nf: 1.\ng: +1\nh: 1_0\ni: 99999999999999999999\n",
        "a: yes\nb: no\nc: on\nd: ~\ne: null\nf: True\ng: .5\nh: 1e5\n",
        "a: x\n---\n",
        "%YAML 1.2\na: x\n",
        "a: x",
        "a: x\r\n",
        "a:\tx\n",
        "a: é\n",
        "- a\n",
        "x\n",
        "a: b: c\n",
        "a: http://x\n",
        "a: <<\n",
        "a: 10:00:00\nb: 2026-01-01T10:00:00Z\n",
        "a: x\nb:\n  c:\n    d:\n      e: [f]\n",
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
        id=f"mem_01JC0DDYAML00000000000{i:03d}",
        kind=(Kind.FACT, Kind.OBSERVATION, Kind.DECISION)[i % 3],
        title="" if i % 3 == 1 else f"Item {i}: what (and why)",
        body=f"Body {i}.\n",
        tags=[f"topic-{i % 4}", "bench"],
        confidence=(0.3, 0.5, 0.7, 0.9)[i % 4],
        source="bench",
        date_only=i % 3 == 1,
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
        yaml_text = text[4 : text.index("\n---", 3) + 1]
        own = load_own(yaml_text)
        if own is not None:
            answered += 1
            assert own[0] == _round_trip(yaml_text), path.name
    assert answered >= 3  # memcore's own golden files are in its layout


@pytest.mark.parametrize("text", [*TRICKY, "Item 7", "mem_01ABC", "0.5", "-3", "/x", "_y", "", "n", "t", "F"])
def test_reads_as_str_is_ruamels_answer(text: str) -> None:
    tag = _YAML.resolver.resolve(ScalarNode, text, (True, False))
    assert _reads_as_str(text) == (str(tag) == "tag:yaml.org,2002:str")


@pytest.mark.parametrize(
    "rel",
    [
        "memories/fact__x.md",
        "memories",
        "teams/core/memories/decision__a-b.md",
        "memories/new__y.md",
        "memories/a b.md",
        "memories/é.md",
        "memories/e\u0301.md",
        "memories/../x.md",
        "memories//x.md",
        "/etc/x",
        "memories/x.md.",
        "memories/con.md",
        "memories/a:b.md",
        "C:/x",
        "memories/a\\b.md",
        "memories/\x00",
        "./x",
        "x/.",
        "memories/nul",
        "memories/x.md ",
    ],
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


HAND_WRITTEN = [
    # comments, quoting and key order memcore would not write; a block list; a nested map
    "---\n# kept comment\nid: {id}\nslug: hand\ntitle: 'Quoted: title'\nkind: fact\nstatus: active\n"
    "tags: [a, \"b\"]   # tags comment\ncreated_at: 2026-01-02T10:00:00Z\nupdated_at: '2026-01-02T10:00:00Z'\n"
    "x_custom:\n  nested: yes\n  list:\n    - 1\n    - two\nconfidence: 0.50\n---\nBody.\n",
    # memcore's own layout
    "---\nid: {id}\nslug: own\ntitle: Own layout\nkind: decision\nstatus: active\nagent: bench\n"
    "created_at: 2026-01-02T10:00:00Z\nupdated_at: 2026-01-02T10:00:00Z\nconfidence: 0.3\ntags: [t1, bench]\n"
    'related:\n  - "[[Own layout]]"\nmemcore:\n  extra:\n    memcore:\n      migrated_from:\n        id: b1\n'
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


def test_add_and_update_leave_the_callers_entry_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    (root / "files").mkdir(exist_ok=True)
    (root / "files" / "r.pdf").write_bytes(b"%PDF fake\n")
    entry = MemoryEntry(
        kind=Kind.NOTE,
        title="Quoting",
        body="b\n",
        tags=["yes", "no"],
        relations=[Relation(type="depends_on", target="elsewhere", resolved=False)],
        extra={"box": {"x_list": ["on", "off", "1.5"], "x_map": {"k": ["null"]}}, "other": {"v": ["yes"]}},
    )
    companion = MemoryEntry(
        kind=Kind.COMPANION, title="R", body="c\n", extra={"box": {"companion_for": {"file_id": "files/r.pdf"}}}
    )
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
    folders = [
        loads_json(written[root / "memories" / "_index.json"]),
        loads_json(written[root / "teams" / "ops" / "memories" / "_index.json"]),
    ]
    assert rollup["entries"] == [{**e, "folder_path": f["folder_path"]} for f in folders for e in f["entries"]]


# ==============================================================================================
# The streaming read path gives what the full round-trip read gives (same entries, same order).
# (was test_box_read_path.py)
# ==============================================================================================


EXAMPLES = REPO / "examples" / "box-workspace"


SAMPLE_FILES = {
    "example-memory-decision.md": "decision__jwt-vs-sessions-decision.md",
    "example-memory-task.md": "task__rotate-jwt-keys-monthly.md",
    "example-companion.md": "companion__q2-2026-revenue-report-pdf-companion.md",
}


def _samples(root: Path) -> Path:
    (root / "memories").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "example-_box-memory.json", root / "_box-memory.json")
    shutil.copyfile(SAMPLES / "example-_index.json", root / "memories" / "_index.json")
    for sample, name in SAMPLE_FILES.items():
        shutil.copyfile(SAMPLES / sample, root / "memories" / name)
    return root


def _examples(root: Path) -> Path:
    shutil.copytree(EXAMPLES, root)
    return root


def _generated(root: Path) -> Path:
    BoxMemoryProvider.init_store(str(root), teams="default,ops")
    kinds = [Kind.DECISION, Kind.FACT, Kind.PREFERENCE, Kind.TASK, Kind.NOTE, Kind.REFERENCE]
    with BoxMemoryProvider(str(root)) as store, store.batch():
        first = store.add(MemoryEntry(kind=Kind.DECISION, title="Use Postgres", body="\nWe chose it.\n"))
        for i in range(60):
            entry = MemoryEntry(
                kind=kinds[i % len(kinds)],
                title=f"Memory {i} — ünïcode" if i % 7 else "",
                body=f"\nBody {i}\n",
                tags=[f"t{i % 3}", "shared"],
                confidence=(0.3, 0.5, 0.9)[i % 3],
                source="gen",
                scope="ops" if i % 5 == 0 else None,
                relations=[Relation(type="related", target=first.id or "", resolved=True)] if i % 4 == 0 else [],
            )
            store.add(entry)
        store.supersede(first.id or "", MemoryEntry(kind=Kind.DECISION, title="Use Postgres 16", body="\nNewer.\n"))
    return root


def _drifted(root: Path) -> Path:
    """A workspace with what a hand editor or a crash leaves: the read must not care."""
    _generated(root)
    mem = root / "memories"
    files = sorted(mem.glob("*.md"))
    text = files[0].read_text(encoding="utf-8")
    # Same id in a second file, created earlier: it comes first, so it is the one yielded.
    (mem / "decision__copy.md").write_text(
        text.replace("created_at: ", "created_at: 2020-01-01T00:00:00Z\nold_created_at: ", 1), encoding="utf-8"
    )
    # Hand edits the index does not know: created_at (order), title (wikilinks), YAML forms
    # only the round-trip loader reads (alias, octal, tag, duplicate key -> orphan).
    edited = files[1].read_text(encoding="utf-8").replace("created_at: ", "created_at: 2019-05-05\nx_was: ", 1)
    files[1].write_text(edited, encoding="utf-8")
    extra = (
        "---\nid: mem_01JAAAAAAAAAAAAAAAAAAAAAA1\nslug: alias\ntitle: &t Aliased title\nkind: fact\n"
        "status: active\ncreated_at: 2021-01-01T00:00:00Z\nupdated_at: 2021-01-01T00:00:00Z\n"
        "x_again: *t\nx_octal: 0o17\nx_tagged: !!str 12\n"
        'related: ["[[use postgres]]", "[[Aliased title]]", "[[Nobody]]", "[[mem_01JAAAAAAAAAAAAAAAAAAAAAA2]]"]\n'
        "---\nbody\n"
    )
    (mem / "fact__alias.md").write_text(extra, encoding="utf-8")
    (mem / "fact__dup-key.md").write_text(
        extra.replace("slug: alias\n", "slug: a\nslug: b\n").replace("AAA1", "AAA3"), encoding="utf-8"
    )
    (mem / "fact__no-frontmatter.md").write_text("just text\n", encoding="utf-8")
    (mem / "fact__bad-yaml.md").write_text("---\nid: [unclosed\n---\n", encoding="utf-8")
    (mem / "fact__no-kind.md").write_text("---\nid: mem_01JAAAAAAAAAAAAAAAAAAAAAA4\n---\n", encoding="utf-8")
    plain_one = (
        extra.replace("AAA1", "AAA2")
        .replace("&t ", "")
        .replace("*t", "again")
        .replace("!!str 12", "'12'")
        .replace("0o17", "15")
        .replace("slug: alias", "slug: plain")
    )
    (root / "teams" / "ops" / "memories" / "fact__plain.md").write_text(
        plain_one.replace("title: Aliased title", "title: Use Postgres"), encoding="utf-8"
    )
    (mem / "_index.json").unlink()  # and one folder without its index
    return root


SOURCES = {"samples": _samples, "examples": _examples, "generated": _generated, "drifted": _drifted}


@pytest.fixture(params=sorted(SOURCES))
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return SOURCES[request.param](tmp_path / "ws")


def _full_read(store: BoxMemoryProvider) -> list[MemoryEntry]:
    """The read as it was: every file parsed round-trip and held, sorted, first id wins."""
    files, _ = store._scan()
    resolve, known = store._file_resolver(files)
    entries = [store._entry_of(f, resolve, known)[0] for f in files]
    entries.sort(key=lambda e: (e.created_at or _EPOCH, e.id or ""))
    seen: set[str | None] = set()
    out = []
    for entry in entries:
        if entry.id not in seen:
            seen.add(entry.id)
            out.append(entry)
    return out


def test_iter_entries_equals_the_full_round_trip_read(workspace: Path) -> None:
    with BoxMemoryProvider(str(workspace)) as store:
        expected = _full_read(store)
        got = list(store.iter_entries())
    assert len(expected) >= 3
    assert [e.id for e in got] == [e.id for e in expected]
    assert got == expected


def test_fast_and_round_trip_parses_give_identical_entries(workspace: Path) -> None:
    fast = 0
    with BoxMemoryProvider(str(workspace)) as store:
        files, _ = store._scan()
        resolve, known = store._file_resolver(files)
        for path in store.source_files():
            data, version = store.storage.read(path)
            parsed = store._parse(path, data, version)
            found = store._read_meta(path, data)
            assert (found is None) == (not isinstance(parsed, _File)), path
            if not isinstance(parsed, _File) or found is None:
                continue
            quick = load_fast(parsed.yaml_text)
            if quick is not None:
                fast += 1
                assert quick == plain(parsed.meta), path
                assert list(quick) == [str(k) for k in parsed.meta], path
            slow_entry = entry_from_meta(
                parsed.meta, parsed.doc.body, path=path, version=version, resolve=resolve, is_known_id=known
            )[0]
            read_entry = entry_from_meta(
                found[0], found[1], path=path, version=version, resolve=resolve, is_known_id=known
            )[0]
            assert read_entry == slow_entry, path
            assert read_entry.model_dump() == slow_entry.model_dump(), path
            # One file on its own (memcore.index's refresh) resolves through the folder indexes.
            assert list(store.iter_file_entries(path)) == [store._entry_of(parsed)[0]], path
    assert fast >= 3  # the fast path was exercised, not only the fallback


def test_drifted_workspace_reads_what_the_files_say(tmp_path: Path) -> None:
    root = _drifted(tmp_path / "ws")
    with BoxMemoryProvider(str(root)) as store:
        entries = list(store.iter_entries())
    ids = [e.id for e in entries]
    assert len(ids) == len(set(ids))
    assert [e.created_at.year for e in entries[:2] if e.created_at] == [2019, 2020]
    assert entries[0].extra["box"]["x_was"]  # the hand-edited file, by its new created_at
    assert "old_created_at" in entries[1].extra["box"]  # the copy won its id over the original
    alias = next(e for e in entries if e.id == "mem_01JAAAAAAAAAAAAAAAAAAAAAA1")
    assert alias.title == "Aliased title"
    assert alias.extra["box"]["x_again"] == "Aliased title"
    assert alias.extra["box"]["x_octal"] == 15
    assert alias.extra["box"]["x_tagged"] == "12"
    related = [(r.target, r.resolved) for r in alias.relations if r.type == "related"]
    assert related[1] == ("mem_01JAAAAAAAAAAAAAAAAAAAAAA1", True)
    assert related[2] == ("Nobody", False)
    assert related[3] == ("mem_01JAAAAAAAAAAAAAAAAAAAAAA2", True)
    assert related[0][1] is True  # case-folded title
    assert "mem_01JAAAAAAAAAAAAAAAAAAAAAA3" not in ids  # duplicate key: an orphan, as validate says
    assert "mem_01JAAAAAAAAAAAAAAAAAAAAAA4" not in ids
    assert [e.created_at for e in entries] == sorted(e.created_at or _EPOCH for e in entries)


@pytest.mark.parametrize(
    "text",
    [
        'a: 1\nb: "x"\nc: [a, b]\nd: 2026-01-01\ne: 0.5\nf: true\ng: null\n',
        "a: 1\na: 2\n",
        "x: &a 1\ny: *a\n",
        "base: &b {k: 1}\nother:\n  <<: *b\n  j: 2\n",
        "t: |\n  hello\n  world\n",
        "t: >-\n  fold\n  ed\n\n  p\n",
        "k: .5\nl: 1.\nm: 1.0e5\nn: -0\no: +12\np: 1e5\nq: 1_000\nr: 0x1F\ns: 012\nt: .inf\nu: .nan\n",
        "n: no\nm: yes\no: ~\np:\nq: 10:00\nr: 2026-01-01T10:00:00Z\ns: Null\nt: FALSE\n",
        "- a\n",
        "just a string\n",
        "",
        "# only a comment\n",
        "a: !!str 1\nb: !custom x\n",
        "r: \"a\\u00e9\\/b\\x41\"\ns: 'it''s'\n",
        "1: x\ntrue: y\n",
        "? [a, b]\n: c\n",
        "a: b\n  c\n",
        "a:\n  - x\n  -\n  - {y: [1, 2.5, 'z']}\n",
        "a: x # comment\n# whole line\nb: 'q' #c\n",
        'a: "line\\u2028sep"\nb: x\u0085y\n',
        "a:\tb\n",
        "a: [unclosed\n",
        'title: "Companion — q2.pdf"\ntags: [companion, pdf]\n',
        "%YAML 1.1\n---\na: yes\n",
        "a: 1\n---\nb: 2\n",
        "a: 0.10\nb: 1.50e+3\nc: -0.0\nd: 00\ne: 0\n",
    ],
)
def test_load_fast_equals_the_round_trip_loader_or_declines(text: str) -> None:
    try:
        data = load_yaml(text) if text.strip() else {}  # as parse_frontmatter reads blank YAML
    except ParseError:
        assert load_fast(text) is None
        return
    fast = load_fast(text)
    if fast is not None:
        assert isinstance(data, dict)
        assert fast == plain(data)
        assert [type(v) for v in fast.values()] == [type(v) for v in plain(data).values()]


def test_titles_and_ids_are_nfc_in_the_stream(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    decomposed = unicodedata.normalize("NFD", "Café rules")
    with BoxMemoryProvider(str(root)) as store:
        target = store.add(MemoryEntry(kind=Kind.FACT, title="Café rules", body="x\n"))
        path = root / "memories" / "fact__link.md"
        path.write_text(
            "---\nid: mem_01JBBBBBBBBBBBBBBBBBBBBBB1\nslug: link\ntitle: Link\nkind: fact\nstatus: active\n"
            f'created_at: 2030-01-01T00:00:00Z\nupdated_at: 2030-01-01T00:00:00Z\nrelated: ["[[{decomposed}]]"]\n'
            "---\nbody\n",
            encoding="utf-8",
        )
        entries = list(store.iter_entries())
        assert entries == _full_read(store)
    link = entries[-1]
    assert link.relations[0].target == target.id and link.relations[0].resolved


# ==============================================================================================
# validate() and read_all() read frontmatter through libyaml and give what the round-trip parse gives.
# (was test_box_check_path.py)
# ==============================================================================================


class c_RoundTripBox(BoxMemoryProvider):
    """The provider with every file parsed round-trip (ruamel), as validate() did before."""

    fast_yaml: ClassVar[bool] = False


def c_generated(root: Path) -> Path:
    BoxMemoryProvider.init_store(str(root), teams="default,ops")
    (root / "files").mkdir(exist_ok=True)
    (root / "files" / "report.pdf").write_bytes(b"%PDF-1.4 fake\n")
    kinds = [Kind.DECISION, Kind.FACT, Kind.PREFERENCE, Kind.TASK, Kind.NOTE, Kind.REFERENCE]
    with BoxMemoryProvider(str(root)) as store, store.batch():
        first = store.add(MemoryEntry(kind=Kind.DECISION, title="Use Postgres", body="\nWe chose it.\n"))
        for i in range(40):
            store.add(
                MemoryEntry(
                    kind=kinds[i % len(kinds)],
                    title=f"Memory {i} — ünïcode" if i % 7 else "",
                    body=f"\nBody {i}\n",
                    tags=[f"t{i % 3}", "shared"],
                    confidence=(0.3, 0.5, 0.9)[i % 3],
                    source="gen",
                    scope="ops" if i % 5 == 0 else None,
                    relations=[Relation(type="related", target=first.id or "", resolved=True)] if i % 4 == 0 else [],
                )
            )
        store.supersede(first.id or "", MemoryEntry(kind=Kind.DECISION, title="Use Postgres 16", body="\nNewer.\n"))
        store.add_companion("files/report.pdf", MemoryEntry(title="Report", body="\nA report.\n"))
    # The binary changes after review: a stale companion.
    (root / "files" / "report.pdf").write_bytes(b"%PDF-1.4 changed\n")
    return root


def _memory(id_: str, slug: str, *, kind: str = "fact", extra: str = "", title: str | None = None) -> str:
    return (
        f"---\nid: {id_}\nslug: {slug}\ntitle: {title or slug.title()}\nkind: {kind}\nstatus: active\n"
        f"created_at: 2026-01-0{len(slug) % 9 + 1}T10:00:00Z\nupdated_at: 2026-02-01T00:00:00Z\n{extra}---\n"
        f"\nBody of {slug}.\n"
    )


ULID = "mem_01JC0DDYAML0000000000000"


def _odd(root: Path) -> Path:
    """A workspace of hand-written files: odd YAML, broken files, drift between files and index."""
    c_generated(root)
    mem = root / "memories"
    files = {
        # Quoted dates and timestamps, a date-only created_at.
        "fact__quoted-dates.md": _memory(ULID + "01", "quoted-dates")
        .replace("created_at: 2026-01-03T10:00:00Z", 'created_at: "2026-01-03T10:00:00Z"')
        .replace("updated_at: 2026-02-01T00:00:00Z", "updated_at: '2026-02-01'"),
        # Anchors and aliases (an anchored true is the integer 1 for ruamel).
        "fact__anchors.md": _memory(
            ULID + "02", "anchors", extra="x_flag: &f true\nx_same: *f\n", title="&t Anchored title"
        ),
        "fact__anchor-only.md": _memory(ULID + "03", "anchor-only", extra="x_flag: &f true\nx_n: &n 5\n"),
        # Multi-line strings: literal, folded, plain continued on an indented line, quoted.
        "fact__multi-line.md": _memory(
            ULID + "04",
            "multi-line",
            extra=(
                "x_literal: |\n  line one\n  line two\nx_folded: >-\n  folded\n  text\n\n  para\n"
                'x_plain: a plain\n  continued line\nx_quoted: "quoted\n  over lines"\n'
            ),
        ),
        # Comments, block lists at column 0 and indented, nested maps, a flow map.
        "fact__layout.md": _memory(
            ULID + "05",
            "layout",
            extra=(
                "# a comment at column 0\ntags:\n- alpha\n- beta\nlinks:\n  - url: https://example.com/x\n"
                '    label: X # trailing comment\nx_map: {a: 1, b: [2, 3.5]}\nrelated:\n  - "[[Use Postgres]]"\n'
                '  - "[[Nobody Here]]"\nsupersedes: [mem_01JC0DDYAML0000000000NOPE]\n'
            ),
        ),
        # Bad field values and a non-ULID id: diagnostics with lines.
        "fact__bad-values.md": _memory(
            "note-1", "bad-values", extra=("confidence: lots\ntags: not-a-list\nsource: 12\nexpires_at: next week\n")
        ),
        # Keys the line scanner cannot place: an indented mapping, a quoted key, a tab.
        "fact__indented.md": "---\n  id: " + ULID + "06\n  kind: fact\n  slug: indented\n---\nx\n",
        "fact__quoted-key.md": _memory(ULID + "07", "quoted-key", extra='"x_quoted_key": 1\n'),
        "fact__tab.md": _memory(ULID + "08", "tab", extra="x_tab:\t1\n"),
        "fact__col0-continuation.md": _memory(ULID + "09", "col0-continuation", extra='x_q: "abc\ndef: g"\n'),
        "fact__non-string-key.md": _memory(ULID + "10", "non-string-key", extra="1: one\n"),
        "fact__special-numbers.md": _memory(
            ULID + "11",
            "special-numbers",
            extra=("x_oct: 0o17\nx_hex: 0x1F\nx_inf: .inf\nx_under: 1_000\nx_float: 0.50\nx_exp: 1.5e+3\nx_neg: -0\n"),
        ),
        "fact__yes-no.md": _memory(ULID + "12", "yes-no", extra="x_yes: yes\nx_no: no\nx_null: ~\nx_time: 10:00\n"),
        # Duplicate ids (and a slug on two active memories).
        "fact__dup-a.md": _memory(ULID + "13", "dup"),
        "fact__dup-b.md": _memory(ULID + "13", "dup"),
        # Orphans: no id, no kind, blank id, bad YAML, unclosed, no frontmatter, empty, a list,
        # a duplicate key.
        "fact__no-id.md": "---\nkind: fact\nslug: no-id\n---\nx\n",
        "fact__no-kind.md": "---\nid: " + ULID + "14\n---\nx\n",
        "fact__blank-id.md": "---\nid: '  '\nkind: fact\n---\nx\n",
        "fact__bad-yaml.md": "---\nid: [unclosed\nkind: fact\n---\nx\n",
        "fact__unclosed.md": "---\nid: " + ULID + "15\nkind: fact\n",
        "fact__no-frontmatter.md": "Just text, no frontmatter.\n",
        "fact__empty.md": "---\n---\nbody\n",
        "fact__list.md": "---\n- a\n- b\n---\nbody\n",
        "fact__dup-key.md": _memory(ULID + "16", "dup-key", extra="slug: again\n"),
        # File name off the convention; a companion whose binary is gone.
        "odd-name.md": _memory(ULID + "17", "odd-name-slug"),
        "companion__gone.md": _memory(
            ULID + "18",
            "gone",
            kind="companion",
            extra=("companion_for:\n  file_id: files/gone.pdf\n  filename: gone.pdf\n  sha256: abc\n"),
        ),
    }
    for name, text in files.items():
        (mem / name).write_text(text, encoding="utf-8", newline="")
    # Encodings and line ends: CRLF, a BOM, Latin-1 bytes (not UTF-8).
    (mem / "fact__crlf.md").write_bytes(_memory(ULID + "19", "crlf").replace("\n", "\r\n").encode())
    (mem / "fact__bom.md").write_bytes(b"\xef\xbb\xbf" + _memory(ULID + "20", "bom").encode())
    (mem / "fact__latin1.md").write_bytes(_memory(ULID + "21", "latin1", title="Caf\xe9").encode("latin-1"))
    # Drift: a team folder loses its index; an indexed memory file is removed.
    (root / "teams" / "ops" / "memories" / "_index.json").unlink()
    indexed = sorted(p for p in mem.glob("*.md") if "__memory-" in p.name)
    indexed[0].unlink()
    return root


SOURCES_C = {"samples": _samples, "examples": _examples, "generated": c_generated, "odd": _odd}


@pytest.fixture(params=sorted(SOURCES_C))
def c_workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return SOURCES_C[request.param](tmp_path / "ws")


def test_validate_and_read_all_equal_the_round_trip_path(c_workspace: Path) -> None:
    with c_RoundTripBox(str(c_workspace)) as slow:
        slow_diags = slow.validate()
        slow_snapshot = slow.read_all()
        slow_entries = list(slow.iter_entries())
    with BoxMemoryProvider(str(c_workspace)) as fast:
        fast_diags = fast.validate()
        fast_snapshot = fast.read_all()
        fast_entries = list(fast.iter_entries())
    assert fast_diags == slow_diags  # same diagnostics, same order
    assert fast_snapshot.diagnostics == slow_snapshot.diagnostics == slow_diags
    assert fast_snapshot.entries == slow_snapshot.entries
    assert [e.model_dump() for e in fast_snapshot.entries] == [e.model_dump() for e in slow_snapshot.entries]
    assert fast_entries == slow_entries == slow_snapshot.entries
    assert len(slow_snapshot.entries) >= 3


def test_each_file_parses_alike_on_both_paths(c_workspace: Path) -> None:
    fast_files = 0
    with BoxMemoryProvider(str(c_workspace)) as store:
        for path in store.source_files():
            data, version = store.storage.read(path)
            slow = store._parse(path, data, version)
            quick = store._parse(path, data, version, fast=True)
            assert type(quick) is type(slow), path
            if not isinstance(slow, _File):
                assert quick == slow, path  # the same orphan diagnostic
                continue
            assert isinstance(quick, _File)
            if isinstance(quick.meta, _PlainMeta):
                fast_files += 1
            assert plain(quick.meta) == plain(slow.meta), path
            assert list(quick.meta) == list(slow.meta), path
            assert [type(v) for v in plain(quick.meta).values()] == [type(v) for v in plain(slow.meta).values()], path
            assert [quick.meta.lc.key(k) for k in quick.meta] == [slow.meta.lc.key(k) for k in slow.meta], path
            assert quick.body == slow.body == slow.doc.body, path
            assert quick.yaml_text == slow.yaml_text and quick.size == slow.size, path
            # The round-trip document is still there when asked for.
            assert quick.doc.dumps() == slow.doc.dumps(), path
    assert fast_files >= 3  # the libyaml path was taken, not only the fallback


def test_odd_workspace_diagnostics(tmp_path: Path) -> None:
    """The odd workspace says what it should (so the equality above compares something)."""
    root = _odd(tmp_path / "ws")
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
        taken = {}
        for path in store.source_files():
            parsed = store._parse(path, *store.storage.read(path), fast=True)
            taken[path] = isinstance(parsed, _File) and isinstance(parsed.meta, _PlainMeta)
    codes = {((d.path or "").rsplit("/", 1)[-1], d.code) for d in snapshot.diagnostics}
    for name in ("no-id", "no-kind", "blank-id", "bad-yaml", "unclosed", "no-frontmatter", "empty", "list", "dup-key"):
        assert (f"fact__{name}.md", "box.orphan") in codes, name
    assert ("fact__dup-a.md", "box.duplicate-id") in codes and ("fact__dup-b.md", "box.duplicate-id") in codes
    assert ("fact__dup-a.md", "box.slug-conflict") in codes
    assert ("odd-name.md", "box.filename") in codes
    assert ("companion__gone.md", "box.companion-vanished") in codes
    assert any(code == "box.companion-stale" for _, code in codes)
    assert ("_index.json", "box.index-missing") in codes  # teams/ops/memories/_index.json
    assert any(code == "box.index-missing-file" for _, code in codes)
    lines = {((d.path or "").rsplit("/", 1)[-1], d.code): d.line for d in snapshot.diagnostics}
    assert lines[("fact__bad-values.md", "box.id-format")] == 2
    assert lines[("fact__layout.md", "box.unresolved-wikilink")] == 17  # the related: line
    assert lines[("fact__layout.md", "box.dangling-id")] == 20
    # Fast where the text is plain, round-trip where it is not.
    assert taken["memories/fact__layout.md"] and taken["memories/fact__bad-values.md"]
    for name in ("crlf", "bom", "quoted-dates", "multi-line", "yes-no", "dup-a"):
        assert taken[f"memories/fact__{name}.md"], name
    for name in ("anchors", "anchor-only", "indented", "quoted-key", "col0-continuation", "special-numbers"):
        assert not taken[f"memories/fact__{name}.md"], name
    anchored = next(e for e in snapshot.entries if e.id == ULID + "03")
    assert anchored.extra["box"]["x_flag"] == 1  # ruamel's reading of an anchored true, kept


@pytest.mark.parametrize(
    ("text", "keys", "expected"),
    [
        ("id: x\nkind: fact\n", ["id", "kind"], {"id": 0, "kind": 1}),
        ("# c\nid: x\n\ntags:\n- a\n-\n- b\nkind: y\n", ["id", "tags", "kind"], {"id": 1, "tags": 3, "kind": 7}),
        ("id: x\nt: |\n  a\n\n  b\nkind: y", ["id", "t", "kind"], {"id": 0, "t": 1, "kind": 5}),
        ("id: x\nkind: y\n", ["kind", "id"], None),  # not in the mapping's order
        ("id: x\n", ["id", "kind"], None),  # a key not found
        ("  id: x\n  kind: y\n", ["id", "kind"], None),  # indented mapping
        ('"id": x\n', ["id"], None),  # quoted key
        ("id: x\r\nkind: y\n", ["id", "kind"], None),  # a carriage return
        ('id: "a\nkind: b"\nkind: c\n', ["id", "kind"], None),  # a continuation at column 0
        ("id: x\n-x: y\n", ["id"], None),
        ("? id\n: x\n", ["id"], None),
        ("id:x\n", ["id:x"], None),
    ],
)
def test_key_lines(text: str, keys: list[str], expected: dict[str, int] | None) -> None:
    assert _key_lines(text, keys) == expected


def test_writes_after_a_fast_check_keep_the_file_bytes(tmp_path: Path) -> None:
    """Files read by validate() are not the ones writes patch: an update keeps untouched lines."""
    root = _samples(tmp_path / "ws")
    path = root / "memories" / "task__rotate-jwt-keys-monthly.md"
    before = path.read_text(encoding="utf-8")
    with BoxMemoryProvider(str(root)) as store:
        store.validate()
        entry = next(e for e in store.read_all().entries if e.title == "Rotate JWT signing keys monthly")
        store.update(entry.model_copy(update={"body": entry.body + "\nOne more line.\n"}))
    after = path.read_text(encoding="utf-8")
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert after.endswith("\nOne more line.\n")
    assert all(line.startswith(("updated_at:", "One more line.")) for line in changed if line), changed
