"""Every shortcut of the RightMemory read and write paths gives exactly what the general path gives.

Read path:

- the line scanner (``_parse.scan_simple``) is only a shortcut: wherever it accepts a file, the
  parsed document (headings, nodes, order, Focus references, per-file diagnostics) must equal
  what the markdown-it path gives, on the authors' samples, the project's examples, generated
  graphs, hand-written odd inputs and randomly assembled files;
- ``read_all`` equals ``iter_entries`` + ``validate``; per-file reads; released split lines;
  a bounded parse cache.

- :func:`match_anchor`, :func:`match_node` and :func:`match_anchor_candidate` (linear time: the
  reference patterns are quadratic on one long line, a 48 KB node line of `` -> [x`` took
  3.6 s) give exactly the reference patterns' groups and spans on every line of the samples,
  the examples and seeded generated lines, and read long lines right.

Write path:

- :func:`meta_values` (plain type checks of a memcore comment) against pydantic's validation
  (:func:`apply_meta` on a scratch entry): the same problems, the same entries.
- :meth:`Source.from_lines` against :meth:`Source.from_bytes` of the same text.
- the codec's ``require_unicode_fast`` against ``require_unicode(entry.model_dump())``.
- entries whose ``extra`` is set without validation (``_with_extra``) against validating them.
- remembered plain-section chains and the backward node walk against full scans.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import Kind, MemoryEntry, Relation, require_unicode
from memcore.provider import StoreSnapshot, read_all
from memcore_conformance import assert_equivalent
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory import _parse as parse_module
from memcore_rightmemory import _render as render_module
from memcore_rightmemory import codec as codec_module
from memcore_rightmemory._meta import apply_meta, meta_problems, meta_values
from memcore_rightmemory._parse import (
    ANCHOR_CANDIDATE_RE,
    ANCHOR_RE,
    NODE_RE,
    UNSUPPORTED_ANCHOR_RE,
    Doc,
    Source,
    make_markdown,
    match_anchor,
    match_anchor_candidate,
    match_node,
    parse_doc,
    scan_simple,
)

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / ".." / "shared" / "samples" / "rightmemory"
FIXTURE = SAMPLES / "test-fixture-extracted-test_graph"
EXAMPLES = REPO / "examples" / "rightmemory"
MD = make_markdown()

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
    def view(source: Source) -> tuple[Any, ...]:
        return source.data, source.bom, source.newline, source.lines

    assert_equivalent(
        lambda given: view(Source.from_lines("X.md", given)),
        lambda given: view(Source.from_bytes("X.md", ("\n".join(given) + "\n").encode("utf-8"))),
        [lines],
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
    assert outcome(lambda: codec_module.require_unicode_fast(entry)) == expected


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
    real = render_module.scan_plain_chain

    def counting(doc: Any, titles: list[str]) -> int | None:
        scans.append(tuple(titles))
        return real(doc, titles)

    stores = []
    for name in ("batch", "one-by-one"):
        root = tmp_path / name
        RightMemoryProvider.init_store(str(root))
        (root / "MEMORY.md").write_text(start)
        stores.append(root)
    monkeypatch.setattr(render_module, "scan_plain_chain", counting)
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
        expected = direct[render_module.last_top(direct) :]
        got = render_module.nodes_between(doc, first, last, parent)
        assert [n.id for n in got] == [n.id for n in expected]
        seen.append([n.id for n in got])
    # top of file; A (after a2n, from a3: its last top-level node); B; C (none); D (only nested)
    assert seen == [["top"], ["a3", "a3n"], ["b1"], [], ["dn"]]


# -- the read path ------------------------------------------------------------------------
def _facts(doc: Doc) -> tuple[object, ...]:
    return (doc.headings, doc.nodes, doc.order, doc.focus, doc.diags)


def _both(data: bytes, family: str) -> tuple[Doc, Doc, bool]:
    """Parse ``data`` with markdown-it and with the scanner; return both and whether it scanned."""
    slow = parse_doc(Source.from_bytes("X.md", data), family, MD, scan=False)
    fast = parse_doc(Source.from_bytes("X.md", data), family, MD, scan=True)
    scanned = scan_simple(Source.from_bytes("X.md", data).lines) is not None
    return slow, fast, scanned


def _assert_same(data: bytes, family: str) -> bool:
    slow, fast, scanned = _both(data, family)
    assert _facts(fast) == _facts(slow), data.decode("utf-8", "replace")
    return scanned


def _sample_files() -> list[Path]:
    return sorted(p for root in (SAMPLES, EXAMPLES) for p in root.rglob("*.md"))


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("family", ["memory", "pursuit"])
def test_scanner_equals_markdown_it_on_samples_and_examples(path: Path, family: str) -> None:
    _assert_same(path.read_bytes(), family)


def test_scanner_takes_the_examples_and_the_fixture() -> None:
    """The shapes memcore and RightMemory's tests write are simple: the fast path really runs."""
    taken = [p.name for p in [*EXAMPLES.glob("*.md"), *FIXTURE.glob("*.md")] if _both(p.read_bytes(), "memory")[2]]
    assert sorted(taken) == ["MEMORY.md", "MEMORY.md", "MEMORY_details.md", "PURSUITS.md", "PURSUITS.md"]


def _generated_graph(rng: random.Random, nodes: int) -> str:
    lines = ["# Bench Memory {#bench}", "", "Generated graph.", ""]
    for h in range(nodes // 20 + 1):
        lines += [f"## Section {h} {{#s{h}}} \u2192 [rel:bench]", "", f"Body of section {h}.", ""]
        if h % 3 == 0:
            lines += ["```text", "- `not-a-node` inside a fence \u2192 [dep:ghost]", "```", ""]
        for i in range(h * 20, min(nodes, h * 20 + 20)):
            text = f"Fact {i} about `c{i % 7}`, with *emphasis* and a [link](https://example.com/{i})."
            if i % 5 == 0:
                text = "Uncertain: " + text
            lines.append(f"- `n{i}` {text} \u2192 [dep:n{rng.randrange(nodes)}, in:n{rng.randrange(nodes)}]")
            if i % 7 == 0:
                lines.append('<!-- memcore: {"tags":["x"]} -->')
        lines.append("")
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(3))
def test_scanner_equals_markdown_it_on_generated_graphs(seed: int) -> None:
    text = _generated_graph(random.Random(seed), 400)
    assert _assert_same(text.encode(), "memory")
    assert _assert_same(text.replace("\n", "\r\n").encode(), "memory")
    assert _assert_same(("\ufeff" + text).encode(), "memory")


#: Odd inputs: (text, whether the scanner should take it). Both paths must agree on every one.
ODD: list[tuple[str, bool]] = [
    ("# A {#a}\n\n- `x` one \u2192 []\n", True),
    ("# A {#a}\r\n\r\n- `x` one \u2192 []\r\n", True),
    ("\ufeff# A {#a}\n- `x` one \u2192 [dep:y]\n- `y` two \u2192 []\n", True),
    ("# A {#a}\n```\n- `x` fenced \u2192 []\n```\n- `y` out \u2192 []\n", True),
    ("# A {#a}\n````md\n```\n- `x` still fenced \u2192 []\n````\n- `y` out \u2192 []\n", True),
    ("# A {#a}\n~~~\n# not a heading {#n}\n~~~~\n## B {#b}\n", True),
    ("# A {#a}\n```\n- `x` unclosed \u2192 []\n", True),
    ("# A {#a}\n``` info `tick`\n- `x` not a fence \u2192 []\n", True),
    ("# A {#a}\n- `x` one \u2192 []\n  - `y` nested \u2192 []\n", False),
    ("# A {#a}\n- `x` one \u2192 []\ncontinued lazily \u2192 [dep:z]\n", False),
    ("# A {#a}\n- `x` one \u2192 []\n\n  more of x\n", False),
    ("# A {#a}\n<div>\n- `x` in html \u2192 []\n</div>\n", False),
    ("# A {#a}\n- `x` <b>\u2192 [dep:y]</b> \u2192 []\n", False),
    ("# A `{#a}` {#b}\n- `x` a `\u2192 [dep:q]` b \u2192 []\n", True),
    ("# A `b\n- `x` a ` \u2192 [dep:q]\n", True),
    ("# A \\`{#a}` {#b}\n", False),
    ("- `x` see [t](u`v`) \u2192 []\n", False),
    ("- `x` see [t`v`](u) \u2192 []\n", True),
    ("> # Quoted {#q}\n> - `x` quoted \u2192 []\n", False),
    ("# A {#a}\n* `x` star \u2192 []\n+ `y` plus \u2192 []\n", False),
    ("# A {#a}\n-\t`x` tab \u2192 []\n", False),
    ("# A {#a}\n1. `x` ordered \u2192 []\n", False),
    ("Title\n=====\n- `x` a \u2192 []\n", False),
    ("# A {#a}\n\n---\n- `x` a \u2192 []\n", False),
    ("####### Seven {#s}\n", False),
    ("    # indented code {#i}\n- `x` a \u2192 []\n", False),
    ("[ref]: /url\n# A {#a}\n", False),
    ('# A {#a}\n<!-- memcore: {"tags":["t"]} -->\n\nBody.\n- `x` a \u2192 []\n<!-- memcore: [1] -->\n', True),
    ("# A {#a}\n- `bad id!` a \u2192 []\n- `x` no edges\n- `y` bad \u2192 [dep y, :z]\n", True),
    ("#### T {F#t}\n- `x` under terminal \u2192 []\n##### deep {#d}\n", True),
    ("# A {#a}\n## B {F#b}\n### C {#c}\n- `x` a \u2192 []\n", True),
    ("# A {Q#a}\n# B {#bad id}\n# C {#c} trailing\n", True),
    ("- plain bullet\n**Next:**\n- `do` act\n- `x` \u2192 []\n", True),
    ("# A {#a}\n\n**State:** s\n**Next:**\n\n- `do` go\n- `jump` bad\n\n## Focus\n\n- `a` ref\n- `b!` bad\n", True),
    ("# A {#a}\nText with `code` and <b>html</b> is fine in prose.\n- `x` a \u2192 []\n", True),
    ("#\n# A {#a}\n", False),
    ("#tag line\n# A {#a}\n", False),
    ("- 1. nested ordered\n- `x` a \u2192 []\n", False),
    ("- - nested\n- `x` a \u2192 []\n", False),
    ("- **Bold** item\n- [link](u) item\n- `x` a \u2192 []\n", True),
    ("# A {#a}\n- `x` a -> [dep:y]\n- `y` b \u2192 [dep:x,dep:x]\n", True),
    (
        '- `x` a \u2192 []\n  <!-- memcore: {"tags":["t"]} -->\n- `y` b \u2192 []\n  <!-- memcore: {} -->\n\n# H {#h}\n',
        True,
    ),
    ('- `x` a \u2192 []\n  <!-- memcore: {"tags":["t"]} -->\nlazy?\n', False),
    ('- `x` a \u2192 []\n   <!-- memcore: {"tags":["t"]} -->\n', False),
    ('- `x` a \u2192 []\n\n  <!-- memcore: {"tags":["t"]} -->\n', False),
    ('# H {#h}\n  <!-- memcore: {"tags":["t"]} -->\n', False),
]


@pytest.mark.parametrize("text, simple", ODD, ids=[str(i) for i in range(len(ODD))])
@pytest.mark.parametrize("family", ["memory", "pursuit"])
def test_scanner_equals_markdown_it_on_odd_inputs(text: str, simple: bool, family: str) -> None:
    assert _assert_same(text.encode(), family) is simple


_SHAPES = [
    "",
    "   ",
    "# H {#h%d}",
    "## H {F#f%d} \u2192 [rel:h1]",
    "### H `code` {#c%d}",
    "#### T {M#m%d}",
    "# Plain %d",
    "- `n%d` text \u2192 [dep:n1]",
    "- `n%d` with `code` and [link](u) \u2192 [dep:n2, in:n3]",
    "- `n%d` no edges",
    "- `n%d` <i>html</i> \u2192 []",
    "- `n%d` link [a](b`c`) \u2192 []",
    "- plain bullet %d",
    "- **bold** bullet %d",
    "  - `i%d` indented \u2192 []",
    "    code %d",
    "Paragraph text %d.",
    "**Next:**",
    "**State:** running %d",
    "**Status:** open",
    "- `do` act %d",
    "- `wait` for %d",
    "## Focus",
    "```",
    "~~~",
    "````",
    "> quote %d",
    "1. ordered %d",
    "* star %d",
    "---",
    "===",
    '<!-- memcore: {"tags":["t%d"]} -->',
    '  <!-- memcore: {"tags":["n%d"]} -->',
    "<!-- other comment -->",
    "<div>",
    "Text with `tick",
    "\\# escaped %d",
    "- \\`n%d` escaped \u2192 []",
]


@pytest.mark.parametrize("seed", range(4))
def test_scanner_equals_markdown_it_on_random_files(seed: int) -> None:
    """Random files assembled from the shapes the scanner must either get right or refuse."""
    rng = random.Random(seed)
    taken = 0
    for n in range(150):
        count = rng.randint(1, 25)
        # Half of the files draw only from shapes the scanner accepts, so the fast path runs.
        pool = (
            _SHAPES
            if n % 2
            else [s for s in _SHAPES if not s.startswith(("  -", ">", "1.", "* ", "---", "===", "<d", "<!-- o"))]
        )
        lines = [rng.choice(pool).replace("%d", str(rng.randrange(30))) for _ in range(count)]
        text = "\n".join(lines) + rng.choice(["", "\n"])
        for family in ("memory", "pursuit"):
            taken += _assert_same(text.encode(), family)
    assert taken > 50


# -- read_all, per-file reads, released lines ---------------------------------------------------
def _copy(files: dict[str, Path], dest: Path) -> Path:
    dest.mkdir()
    for name, src in files.items():
        shutil.copyfile(src, dest / name)
    return dest


STORES = {
    "fixture": {p.name: p for p in FIXTURE.iterdir()},
    "authors-examples": {
        "MEMORY.md": SAMPLES / "MEMORY.example.at-0fad0d5.md",
        "PURSUITS.md": SAMPLES / "PURSUITS.example.at-23141ba.md",
        "corrections.md": SAMPLES / "RIGHTMEMORY_EDIT_CORRECTIONS.example.md",
        "MEMORY_agent-corrections-writing.md": SAMPLES / "AGENT_CORRECTIONS_EXAMPLES.md",
    },
    "project-examples": {p.name: p for p in EXAMPLES.iterdir()},
}


@pytest.mark.parametrize("name", sorted(STORES))
def test_read_all_is_iter_entries_plus_validate_on_samples(tmp_path: Path, name: str) -> None:
    store = _copy(STORES[name], tmp_path / name)
    with RightMemoryProvider(store) as provider:
        snapshot = provider.read_all()
        assert isinstance(snapshot, StoreSnapshot)
        assert [e.model_dump() for e in snapshot.entries] == [e.model_dump() for e in provider.iter_entries()]
        assert snapshot.diagnostics == provider.validate()
        assert read_all(provider) == snapshot
        assert snapshot.entries
        if name == "authors-examples":
            assert [d.code for d in snapshot.diagnostics].count("rm.missing-backing") == 2
            assert any(e.kind == Kind.CORRECTION for e in snapshot.entries)


def test_read_all_on_a_broken_graph_reports_what_validate_reports(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(
        "# A {#a} \u2192 [dep:ghost]\n\n- `x` one \u2192 [rel:a]\n- `x` again \u2192 []\n\n"
        "## D {F#d}\n\n> - `q` quoted, not a node \u2192 []\n",
        encoding="utf-8",
    )
    (tmp_path / "MEMORY_d.md").write_text("# Inner {#inner}\n\n- `y` \u2192 [dep:x, dep:x]\n", encoding="utf-8")
    (tmp_path / "PURSUITS.md").write_text("# Pursuits\n\n## Focus\n\n- `a` not a pursuit\n", encoding="utf-8")
    with RightMemoryProvider(tmp_path) as provider:
        snapshot = provider.read_all()
        assert snapshot.diagnostics == provider.validate()
        assert [e.model_dump() for e in snapshot.entries] == [e.model_dump() for e in provider.iter_entries()]
    codes = [d.code for d in snapshot.diagnostics]
    assert codes == [
        "rm.duplicate-id",
        "rm.dangling-edge",
        "rm.containment-edge",
        "rm.duplicate-edge",
        "rm.focus-not-pursuit",
    ]
    # the second `x` is read too (issue 17 item 1: an item repeating an id is never dropped)
    assert [(e.id, e.title) for e in snapshot.entries] == [
        ("a", "A"),
        ("x", "one"),
        ("x", "again"),
        ("d", "D"),
        ("inner", "Inner"),
        ("y", ""),
    ]
    assert next(e for e in snapshot.entries if e.id == "inner").parent == "d"


@pytest.mark.parametrize("name", sorted(STORES))
def test_iter_file_entries_is_the_files_share_of_iter_entries(tmp_path: Path, name: str) -> None:
    store = _copy(STORES[name], tmp_path / name)
    with RightMemoryProvider(store) as provider:
        everything = [e.model_dump() for e in provider.iter_entries()]
        files = provider.source_files()
        per_file = {rel: [e.model_dump() for e in provider.iter_file_entries(rel)] for rel in files}
        by_file: dict[str, list[dict[str, object]]] = {}
        for entry in provider.iter_entries():
            by_file.setdefault(provider.file_of(entry), []).append(entry.model_dump())
    for rel in files:
        assert per_file[rel] == by_file.get(rel, [])
    assert sum(len(v) for v in by_file.values()) == len(everything)


def test_iteration_releases_split_lines_and_they_split_again_the_same(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(
        "\ufeff# A {#a}\r\n\r\nBody.\r\n\r\n## D {F#d}\r\n\r\nSummary.\r\n- `z` after \u2192 []".encode()
    )
    (tmp_path / "MEMORY_d.md").write_bytes(b"# Inner {#inner}\n\nInner body.\n")
    (tmp_path / "PURSUITS.md").write_text("# Pursuits\n", encoding="utf-8")
    with RightMemoryProvider(tmp_path) as provider:
        entries = {e.id: e for e in provider.iter_entries()}
        graph = provider.graph()
        source = graph.docs["MEMORY.md"].source
        assert source._lines is None and source._raw is None  # released after the walk
        assert source.lines[:3] == ["# A {#a}", "", "Body."]
        assert source.raw[-1] == "- `z` after \u2192 []" and source.raw[0] == "# A {#a}\r\n"
        assert source.splice([]) == (tmp_path / "MEMORY.md").read_bytes()
    assert (entries["a"].body, entries["d"].body, entries["inner"].body) == ("Body.\n", "Summary.\n", "Inner body.\n")
    assert [entries[k].parent for k in ("a", "d", "inner", "z")] == [None, "a", "d", "d"]


def test_written_entries_read_back_through_the_scanner(tmp_path: Path) -> None:
    """What memcore writes is simple: a store it wrote reads the same through both paths."""
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as provider:
        top = provider.add(MemoryEntry(kind=Kind.FACT, title="Top", body="Body with `code`.\n", tags=["t"]))
        provider.add(MemoryEntry(title="Child", parent=top.id, relations=[Relation(type="dep", target=top.id)]))
        provider.add(MemoryEntry(kind=Kind.PURSUIT, title="Goal", body="**Next:**\n\n- `do` ship it\n"))
    for path in sorted(tmp_path.glob("*.md")):
        family = "pursuit" if path.name.startswith("PURSUIT") else "memory"
        assert _assert_same(path.read_bytes(), family), path.read_text(encoding="utf-8")


def test_reads_with_a_bounded_parse_cache_give_the_same_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond READ_CACHE_BYTES a read parses files again: same entries, diagnostics, versions."""
    import memcore_rightmemory.provider as provider_module

    store = _copy(STORES["authors-examples"], tmp_path / "s")
    with RightMemoryProvider(store) as provider:
        whole = provider.read_all()
    monkeypatch.setattr(provider_module, "READ_CACHE_BYTES", 1)
    with RightMemoryProvider(store) as provider:
        first = provider.read_all()
        assert list(provider._cache) == []  # nothing kept between reads
        second = provider.read_all()
        entries = list(provider.iter_entries())
        assert provider.get("sample-app").model_dump() == next(e for e in entries if e.id == "sample-app").model_dump()
    for snapshot in (first, second):
        assert [e.model_dump() for e in snapshot.entries] == [e.model_dump() for e in whole.entries]
        assert snapshot.diagnostics == whole.diagnostics


# -- linear-time line matchers against the reference patterns ---------------------------------
def _sig(m: re.Match[str] | None) -> list[tuple[str | None, tuple[int, int]]] | None:
    if m is None:
        return None
    return [(m.group(i), m.span(i)) for i in range(1, (m.re.groups or 0) + 1)]


def _same(line: str) -> None:
    assert _sig(match_anchor(line)) == _sig(ANCHOR_RE.match(line)), repr(line)
    assert _sig(match_node(line)) == _sig(NODE_RE.match(line)), repr(line)
    for pattern in (ANCHOR_CANDIDATE_RE, UNSUPPORTED_ANCHOR_RE):
        assert _sig(match_anchor_candidate(pattern, line)) == _sig(pattern.match(line)), repr(line)


def test_same_matches_as_the_reference_on_samples_and_examples() -> None:
    files = [p for p in SAMPLES.rglob("*") if p.is_file()] + [
        p for p in (REPO / "examples" / "rightmemory").rglob("*.md") if p.is_file()
    ]
    assert len(files) >= 4
    matched = 0
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            _same(line)
            matched += ANCHOR_RE.match(line) is not None or NODE_RE.match(line) is not None
    assert matched > 20


ALPHABET = ["#", " ", "\t", "a", "{", "}", "{#", "{#a}", "{F#b}", "{Z#", "->", "\u2192", "[", "]", "`", "`a`", "-", ":"]
PREFIXES = ["", "#", "## ", "### ", "- ", "  - ", "- `a` ", "-  `n.1`", "## T {#a}"]


def test_same_matches_as_the_reference_on_generated_lines() -> None:
    rng = random.Random(7)
    matched = 0
    for _ in range(30000):
        line = rng.choice(PREFIXES) + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
        _same(line)
        matched += ANCHOR_RE.match(line) is not None or NODE_RE.match(line) is not None
    assert matched > 300


def test_long_lines_read_right() -> None:
    node = "- `a` " + " -> [x" * 8000
    assert match_node(node) is None and NODE_RE.match(node[:600]) is None
    closed = node + "]"
    m = match_node(closed)
    assert m is not None and m.group(2) == "a" and m.group(3) == " " and m.group(4) == "x" + " -> [x" * 7999
    heading = "## T " + "{#a} -> [" * 10000
    assert match_anchor(heading) is None
    m = match_anchor(heading + "dep:b]  ")
    assert m is not None and (m.group(2), m.group(4)) == ("T ", "a")
    assert m.group(5) == "{#a} -> [" * 9999 + "dep:b"
    spaced = "## T {#a}" + " " * 50000 + "x"
    assert match_anchor(spaced) is None
    assert match_anchor_candidate(ANCHOR_CANDIDATE_RE, spaced) is not None
    assert match_anchor_candidate(UNSUPPORTED_ANCHOR_RE, "## T " + "{#" * 50000) is None


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("- `a` " + " -> [x" * 8000, "rm.node-missing-edges"),
        ("## T " + "{#a} -> [" * 10000, "rm.malformed-heading-edges"),
    ],
)
def test_a_store_with_a_long_line_reads(tmp_path: Path, line: str, code: str) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n## Base {#base}\n\n" + line + "\n", encoding="utf-8")
    (tmp_path / "PURSUITS.md").write_text("# Pursuits\n", encoding="utf-8")
    snap = RightMemoryProvider(tmp_path).open().read_all()
    assert code in [d.code for d in snap.diagnostics]
    assert "base" in [e.id for e in snap.entries]
