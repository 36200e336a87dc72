"""The write path's shortcuts give exactly what the general path gives.

- :func:`meta_values` (plain type checks of a memcore comment) against pydantic's validation
  (:func:`apply_meta` on a scratch entry): the same problems, the same entries.
- :meth:`Source.from_lines` against :meth:`Source.from_bytes` of the same text.
- the provider's ``_require_unicode`` against ``require_unicode(entry.model_dump())``.
- entries whose ``extra`` is set without validation (``_with_extra``) against validating them.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import MemoryEntry, Relation, require_unicode
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory import _parse as parse_module
from memcore_rightmemory import provider as provider_module
from memcore_rightmemory._meta import apply_meta, meta_problems, meta_values
from memcore_rightmemory._parse import Source

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "rightmemory"

#: Values per key: plainly valid ones and every kind of bad or unusual one.
CHOICES: dict[str, list[Any]] = {
    "kind": ["fact", "decision", "pursuit", "Fact", "nope", 3, None],
    "status": ["active", "superseded", "done", "ACTIVE", 1, None],
    "tags": [["a", "b"], ["e\u0301t\u00e9"], [], [""], ["  "], ["a", 1], "a", None, ["\ud800"]],
    "confidence": [0, 1, 0.5, 0.3, 1.5, -0.1, True, False, "0.5", None, 1e400],
    "source": ["bench", "", "caf\u00e9", 5, None, "\udc80x", ["x"]],
    "scope": ["team", None, 1, "\ud83d\ude00"],
    "created_at": [
        "2026-01-05T09:00:00Z",
        "2026-01-05T09:00:00.123Z",
        "2026-01-05T09:00:00.123456Z",
        "2026-01-05",
        "2026-01-05T09:00:00+02:00",
        "2026-01-05T09:00:00",
        "2026-13-05T09:00:00Z",
        "0000-01-01T00:00:00Z",
        "\u0662026-01-05T09:00:00Z",
        "bad",
        0,
        None,
    ],
    "updated_at": ["2026-02-01T00:00:00Z", "2026-02-01T00:00:00.5Z", None, "x"],
    "expires_at": ["2027-01-01T00:00:00Z", None, 1.5],
    "date_only": [True, False, 1, None, "true"],
    "relations": [
        [["supersedes", "x"]],
        [["related", "ghost", False]],
        [["a", "b"], ["a", "b"]],
        [["a"]],
        [["", "x"]],
        [["a", "b", "no"]],
        [["a", 1]],
        "x",
        [],
        [["t", "e\u0301"]],
    ],
    "extra": [
        {"box": {"slug": "x", "n": [1, 2.5, None, True, {"k": "v"}]}},
        {"rightmemory": {"custom": 1}},
        {"rightmemory": {"custom": 1}, "memcore": {"migrated_from": {"id": "a"}}},
        {"rightmemory": 5},
        {"box": 1},
        {"box": {"s": "\ud800"}},
        {"box": {"big": 1e400}},
        {},
        [],
    ],
    "body_pad": [["", "\n\n"], ["\n", ""], "x", ["a"], [1, 2]],
    "body_close": [1, 2, 5, 0, -1, True, "1", 1.5, None],
    "unknown": [1],
}


def _random_meta(rng: random.Random) -> dict[str, Any]:
    keys = rng.sample(sorted(CHOICES), rng.randint(0, len(CHOICES)))
    if rng.random() < 0.5:  # half of them without any odd key: mostly plainly valid
        keys = [k for k in keys if k != "unknown"]
    return {key: rng.choice(CHOICES[key]) for key in keys}


def _metas() -> list[dict[str, Any]]:
    rng = random.Random(20261129)
    metas = [_random_meta(rng) for _ in range(400)]
    # every value alone, and every value in a comment that is otherwise plainly valid
    base = {"tags": ["x"], "created_at": "2026-01-05T09:00:00Z", "extra": {"box": {"a": 1}}}
    for key, values in CHOICES.items():
        for value in values:
            metas.append({key: value})
            metas.append({**base, key: value})
    return metas


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=lambda name: name)  # as the parser reads a comment


@pytest.mark.parametrize("meta", _metas(), ids=lambda m: json.dumps(m)[:60])
def test_meta_values_agree_with_pydantic(meta: dict[str, Any]) -> None:
    meta = _loads(json.dumps(meta))
    reference = apply_meta(MemoryEntry(), meta)
    assert meta_problems(meta) == reference
    fields = meta_values(meta)
    if fields is None:
        return
    assert set(reference) <= {"body_pad", "body_close"}, "meta_values accepted what pydantic refuses"
    slow = MemoryEntry(id="i", title="T", relations=[Relation(type="dep", target="e")])
    apply_meta(slow, meta)
    relations = [Relation(type="dep", target="e"), *fields.pop("relations", [])]
    fast = MemoryEntry(id="i", title="T", relations=relations, **fields)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()


def _store(tmp_path: Path, metas: list[dict[str, Any]]) -> Path:
    lines = ["# Memory", ""]
    for i, meta in enumerate(metas):
        blob = json.dumps(meta, separators=(",", ":")).replace("-->", "--\\u003e")
        if i % 2:
            lines += [f"- `n{i}` Node {i} \u2192 []", f"  <!-- memcore: {blob} -->"]
        else:
            lines += ["", f"## Heading {i} {{#h{i}}}", f"<!-- memcore: {blob} -->", "", f"Body {i}.", ""]
    (tmp_path / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "PURSUITS.md").write_text("# Pursuits\n", encoding="utf-8")
    return tmp_path


def test_entries_built_from_checked_comments_equal_the_pydantic_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every item of a store of odd comments reads the same with the shortcut and without it."""
    root = _store(tmp_path, _metas())
    with RightMemoryProvider(root) as p:
        fast = p.read_all()
    monkeypatch.setattr(parse_module, "meta_values", lambda meta: None)  # the parser keeps no fields
    with RightMemoryProvider(root) as p:
        slow = p.read_all()
    assert len(fast.entries) == len(_metas())
    assert fast.entries == slow.entries
    assert [e.model_dump() for e in fast.entries] == [e.model_dump() for e in slow.entries]
    assert fast.diagnostics == slow.diagnostics
    assert any(d.code == "rm.bad-meta" for d in fast.diagnostics)


def test_add_returns_what_the_pydantic_path_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    RightMemoryProvider.init_store(str(tmp_path))
    entries = [
        MemoryEntry(
            id=f"e{i}",
            title=f"Title {i} caf\u00e9",
            body="Body.\n" if i % 2 else "",
            tags=["t", "e\u0301"],
            confidence=(None, 0.3, 1, 0)[i % 4],
            source="s",
            relations=[Relation(type="supersedes", target="x"), Relation(type="rel", target="ghost", resolved=False)],
            extra={"box": {"slug": "s", "list": [1, 2.5, None]}, "rightmemory": {"custom": True}},
        )
        for i in range(8)
    ]
    with RightMemoryProvider(tmp_path) as p, p.batch():
        returned = [p.add(e) for e in entries]
    monkeypatch.setattr(parse_module, "meta_values", lambda meta: None)
    with RightMemoryProvider(tmp_path) as p:
        assert {e.id: e for e in p.read_all().entries} == {e.id: e for e in returned}


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [""],
        ["# A {#a}", "", "- `n` x \u2192 []"],
        ["caf\u00e9 \u2192 [dep:x]", "  indented", ""],
        ["\ufeffBOM first", "x"],
        ["a\rb", "c"],
        ["a\nb"],
        ["tab\tline", "\x0cform feed", "\u2028line separator"],
    ],
)
def test_source_from_lines_equals_from_bytes(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    expected = Source.from_bytes("X.md", text.encode("utf-8"))
    got = Source.from_lines("X.md", lines)
    assert (got.data, got.bom, got.newline, got.lines) == (
        expected.data,
        expected.bom,
        expected.newline,
        expected.lines,
    )


@pytest.mark.parametrize(
    "entry",
    [
        MemoryEntry(title="plain", tags=["a"], extra={"box": {"k": ["v", 1]}}),
        MemoryEntry.model_construct(title="bad \ud800 title"),
        MemoryEntry.model_construct(body="x\udc80"),
        MemoryEntry.model_construct(tags=["ok", "\ud800"]),
        MemoryEntry.model_construct(relations=[Relation.model_construct(type="dep", target="\ud800")]),
        MemoryEntry.model_construct(extra={"box": {"\ud800": 1}}),
        MemoryEntry.model_construct(extra={"box": {"k": ["\ud800"]}}),
        MemoryEntry.model_construct(version="\ud800"),
    ],
)
def test_require_unicode_shortcut_raises_as_the_dump_walk(entry: MemoryEntry) -> None:
    def outcome(check: Any) -> str | None:
        try:
            check()
        except InvalidEntryError as exc:
            return str(exc)
        return None

    expected = outcome(lambda: require_unicode(entry.model_dump(), "entry", prefix="rightmemory"))
    assert outcome(lambda: provider_module._require_unicode(entry)) == expected


def _assert_validated(entries: list[MemoryEntry]) -> None:
    """Each entry equals the entry validation makes of its values (``extra`` included)."""
    for entry in entries:
        again = MemoryEntry.model_validate(dict(entry.__dict__))
        assert again == entry
        assert again.model_dump() == entry.model_dump()


def test_entries_equal_fully_validated_ones(tmp_path: Path) -> None:
    """Samples (nodes, headings, F# files, Pursuit fields, plain sections) and odd comments."""
    fixture = tmp_path / "fixture"
    shutil.copytree(SAMPLES / "test-fixture-extracted-test_graph", fixture)
    example = tmp_path / "example"
    example.mkdir()
    shutil.copyfile(SAMPLES / "MEMORY.example.at-0fad0d5.md", example / "MEMORY.md")
    shutil.copyfile(SAMPLES / "PURSUITS.example.at-23141ba.md", example / "PURSUITS.md")
    (tmp_path / "odd").mkdir()
    odd = _store(tmp_path / "odd", _metas())
    for root in (fixture, example, odd):
        with RightMemoryProvider(root) as p:
            entries = p.read_all().entries
            assert entries
            _assert_validated(entries)
            with p.batch():  # entries add() returns (built from the write window's parse)
                added = p.add(MemoryEntry(title="New", body="Uncertain: body\n", tags=["t"], extra={"x": {"k": [1]}}))
                _assert_validated([added])
    with RightMemoryProvider(example) as p:
        assert any(isinstance(e.extra["rightmemory"].get("fields"), dict) for e in p.read_all().entries)
        assert any(e.extra["rightmemory"].get("sections") for e in p.read_all().entries)


def test_entries_share_no_extra_with_the_parsed_store(tmp_path: Path) -> None:
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as p:
        added = p.add(MemoryEntry(id="a", title="A", extra={"box": {"nested": {"list": [1, {"k": "v"}]}}}))
        first = p.get("a")
        second = p.get("a")
        assert first == second == added
        first.extra["box"]["nested"]["list"][1]["k"] = "changed"
        first.extra["rightmemory"]["file"] = "changed"
        first.extra["box"]["new"] = 1
        assert p.get("a") == second
        assert second.extra["box"] == {"nested": {"list": [1, {"k": "v"}]}}


def test_plain_section_chains_are_remembered_not_rescanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Adds under plain section headings (``extra.rightmemory.sections``) find the section without
    scanning every heading each time, and write the same bytes as fresh providers one by one."""
    start = "# Top\n\n## Sub\n\n- `first` First \u2192 []\n"
    entries = []
    for section, count in ((["Domain A"], 30), (["Top", "Sub"], 20), (["Domain B"], 30), (["Domain A"], 5)):
        for i in range(count):
            n = len(entries)
            body = f"Body {n}.\n" if i % 3 == 0 else ""
            entries.append(
                MemoryEntry(
                    id=f"e{n}",
                    title=f"T {n}",
                    body=body,
                    created_at="2026-01-05T09:00:00Z",
                    updated_at="2026-01-05T09:00:00Z",
                    extra={"rightmemory": {"sections": section}},
                )
            )
    scans = []
    real = RightMemoryProvider._scan_plain_chain

    def counting(doc: Any, titles: list[str]) -> int | None:
        scans.append(tuple(titles))
        return real(doc, titles)

    stores = []
    for name in ("batch", "one-by-one"):
        root = tmp_path / name
        RightMemoryProvider.init_store(str(root))
        (root / "MEMORY.md").write_text(start)
        stores.append(root)
    monkeypatch.setattr(RightMemoryProvider, "_scan_plain_chain", staticmethod(counting))
    with RightMemoryProvider(stores[0]) as p, p.batch():
        batch = [p.add(e) for e in entries]
    # per chain: a miss (the section is then created), the first find, and once more when a
    # write's window parsed the section heading again (a new object); never once per add
    assert len(scans) <= 3 * 3
    for entry in entries:
        with RightMemoryProvider(stores[1]) as p:
            p.add(entry)
    assert (stores[0] / "MEMORY.md").read_bytes() == (stores[1] / "MEMORY.md").read_bytes()
    with RightMemoryProvider(stores[0]) as p:
        assert p.validate() == []
        assert {e.id: e for e in p.read_all().entries if e.id in {b.id for b in batch}} == {e.id: e for e in batch}
        assert [e.extra["rightmemory"].get("sections") for e in batch] == [
            e.extra["rightmemory"]["sections"] for e in entries
        ]


def test_nodes_between_returns_the_tail_the_old_scan_placed_after(tmp_path: Path) -> None:
    """``_nodes_between`` walks back from the end instead of filtering every node of the region:
    the same nodes as ``direct[_last_top(direct):]`` of the full list, for every heading."""
    from memcore_rightmemory._parse import make_markdown, parse_doc

    text = (
        "- `top` t \u2192 []\n\n# A\n\n- `a1` x \u2192 []\n- `a2` x \u2192 []\n  - `a2n` nested \u2192 []\n"
        "- `a3` x \u2192 []\n  <!-- memcore: {} -->\n  - `a3n` nested \u2192 []\n\n## B {#b}\n\n- `b1` x \u2192 []\n\n"
        "# C\n\nText.\n\n# D\n\n  - `dn` only nested \u2192 []\n"
    )
    doc = parse_doc(Source.from_bytes("MEMORY.md", text.encode()), "memory", make_markdown())
    regions = [(1, doc.headings[0].line - 1, None)]
    for index, heading in enumerate(doc.headings):
        end = heading.first_child - 1 if heading.first_child is not None else heading.end
        regions.append((heading.line + 1, end, index))
    seen = []
    for first, last, parent in regions:
        direct = [n for n in doc.nodes if first <= n.line <= last and n.parent == parent]
        expected = direct[provider_module._last_top(direct) :]
        got = provider_module._nodes_between(doc, first, last, parent)
        assert [n.id for n in got] == [n.id for n in expected]
        seen.append([n.id for n in got])
    # top of file; A (after a2n, from a3: its last top-level node); B; C (none); D (only nested)
    assert seen == [["top"], ["a3", "a3n"], ["b1"], [], ["dn"]]
