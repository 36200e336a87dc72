"""memcore.frontmatter's fast read path (libyaml) gives what the round-trip path gives.

``read_frontmatter`` / ``load_plain_yaml`` must equal ``to_plain`` of ``parse_frontmatter`` /
``load_yaml`` (same values, dates as text, same ParseError and line) on the authors' samples,
the project's examples, a list of odd documents and generated ones; and they must take the
fast path for the plain documents the formats write (else there is no point).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import memcore.frontmatter as fm
from memcore.errors import ParseError
from memcore.frontmatter import (
    LIBYAML,
    load_plain_yaml,
    load_yaml,
    parse_frontmatter,
    read_frontmatter,
    split_frontmatter,
    to_plain,
)
from memcore.storage import TextFile

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / ".." / "shared" / "samples"


def _slow(text: str) -> tuple[str, Any]:
    try:
        doc = parse_frontmatter(text, path="x.md")
    except ParseError as exc:
        return "error", (str(exc), exc.line)
    return "ok", (to_plain(doc.metadata), doc.body, doc.has_frontmatter, doc.body_line)


def _fast(text: str) -> tuple[str, Any]:
    try:
        got = read_frontmatter(text, path="x.md")
    except ParseError as exc:
        return "error", (str(exc), exc.line)
    return "ok", (got.metadata, got.body, got.has_frontmatter, got.body_line)


def _took_fast_path(text: str) -> bool:
    yaml_text, _, _ = split_frontmatter(text)
    if yaml_text is None or not yaml_text.strip():
        return True
    try:
        fm._load_fast(yaml_text)
    except fm._Unsure:
        return False
    return True


def _markdown_files() -> list[Path]:
    files: list[Path] = []
    for base in (SAMPLES, ROOT / "examples"):
        if base.is_dir():
            files.extend(sorted(p for p in base.rglob("*.md") if p.is_file() and not p.is_symlink()))
    return files


FILES = _markdown_files()


def test_corpus_found() -> None:
    """The samples and examples are there (CI has ../shared beside the clone)."""
    assert len(FILES) >= 50
    with_frontmatter = [p for p in FILES if p.read_bytes().startswith(b"---")]
    assert len(with_frontmatter) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_files_read_the_same(path: Path) -> None:
    """Every sample and example document reads the same through both paths."""
    try:
        text = TextFile.decode(path.read_bytes(), path=str(path)).text
    except ParseError:
        pytest.skip("not UTF-8")
    assert _fast(text) == _slow(text)


@pytest.mark.skipif(not LIBYAML, reason="libyaml (PyYAML's C binding) is not installed")
def test_plain_samples_take_the_fast_path() -> None:
    """Most documents with frontmatter are read by libyaml, not by the round-trip loader."""
    texts = [TextFile.decode(p.read_bytes()).text for p in FILES if p.read_bytes().startswith(b"---\n")]
    fast = [t for t in texts if _took_fast_path(t)]
    assert len(texts) >= 20
    assert len(fast) >= 0.8 * len(texts)


ODD = [
    # scalars YAML 1.1 and 1.2 read differently, dates, times, numbers
    "a: yes\nb: no\nc: on\nd: off\ne: y\nf: N\n",
    "a: true\nb: False\nc: TRUE\nd: null\ne: ~\nf: Null\ng:\n",
    "date: 2026-04-19\nwhen: 2026-04-19T10:00:00Z\nspaced: 2026-04-19 10:00:00\nclock: 10:00\n",
    "a: 0\nb: -0\nc: +5\nd: 007\ne: 0o17\nf: 0x1F\ng: 1_000\nh: 12345678901234567890\n",
    "a: 1.5\nb: .5\nc: 1.\nd: 1e3\ne: 1.0e+3\nf: -2.5E-3\ng: .inf\nh: -.Inf\ni: .nan\nj: 1_0.5\n",
    "a: 0.1\nb: 3.14159265358979323846\nc: -0.0\n",
    "version: 1.0\nratio: 1:2\nsexagesimal: 190:20:30\n",
    # quoting and escapes
    "a: 'single ''quoted'''\nb: \"double \\\"quoted\\\" \\t \\n \\u00e9 \\x41 \\/\"\nc: \"\\N\\L\\P\"\n",
    'a: "\\_ nbsp"\nb: "\\e\\a\\b\\0"\n',
    "title: 'R&D: *the* plan'\nother: R&D notes\nstars: '**bold**'\n",
    "url: https://example.com/a?b=c#frag\nhash: a#b\ncomment: value # a comment\n",
    "colon: a:b\nspace_colon: 'a: b'\n",
    # multi-line
    "a: |\n  line one\n  line two\nb: >\n  folded\n  text\n\n  para\nc: |-\n  strip\nd: |+\n  keep\n\ne: x\n",
    'a: plain\n  continued\n  lines\nb: "dq\n  continued"\n',
    "a: |2\n   indented\n  less\n",
    # collections
    "tags: [a, b, 'c d', \"e\"]\nnested: {x: 1, y: [1, 2, {z: null}]}\nempty: []\nempty_map: {}\n",
    "list:\n- a\n- b\n-\n- - nested\n  - deeper\nmap:\n  k: v\n  k2:\n    k3: v3\n",
    "related:\n  - id: a\n    type: supersedes\n  - id: b\n",
    "flow: [a, [b, c], {d: e}]\nflow2: {a: [1, 2], b: {c: d}}\n",
    # keys
    "1: one\n2.5: float key\ntrue: bool key\nnull: null key\n",
    "? complex\n: value\n",
    "'quoted key': 1\n\"dq key\": 2\nkey with spaces: 3\n",
    "dup: 1\ndup: 2\n",
    # anchors, aliases, merges, tags
    "a: &x 1\nb: *x\n",
    "a: &x true\nb: &y [1, 2]\nc: &z\n",
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
    "a: !!str 123\nb: !custom value\nc: !!binary aGVsbG8=\n",
    "a: =\nb: <<\n",
    # comments, blank lines, odd whitespace
    "# only a comment\n",
    "# lead\na: 1 # trailing\n\n# between\nb: 2\n",
    "a:\tb\n",
    "a: b\t\n",
    "a: \u2028b\n",
    "a: b\u0085c\n",
    "a: \ufeffb\n",
    "a: caf\u00e9 \u2014 \u6f22\u5b57 \U0001f600\n",
    # not mappings / malformed
    "- a\n- b\n",
    "just a string\n",
    "42\n",
    "a: [unclosed\n",
    "a: b: c\n",
    "a: 'unclosed\n",
    "  indented: 1\nback: 2\n",
    "a:\n  - x\n  y: z\n",
    "a: 1\n b: 2\n",
    "%YAML 1.1\n",
    "a: @reserved\n",
    "a: `backtick\n",
    "a: \x07bell\n",
    'a: "\\ud800"\n',
    "[a, b]: c\n",
    "{a: b}\n",
    "a: {b: c, b: d}\n",
    "? [a]\n: b\n",
]


@pytest.mark.parametrize("yaml_text", ODD, ids=range(len(ODD)))
def test_odd_documents_read_the_same(yaml_text: str) -> None:
    """Odd YAML: same values, or the same ParseError, through both paths."""
    text = f"---\n{yaml_text}---\nbody\n"
    assert _fast(text) == _slow(text)
    try:
        expected: Any = ("ok", to_plain(load_yaml(yaml_text)))
    except ParseError as exc:
        expected = ("error", str(exc))
    try:
        got: Any = ("ok", load_plain_yaml(yaml_text))
    except ParseError as exc:
        got = ("error", str(exc))
    assert got == expected


def test_splitter_cases() -> None:
    """No frontmatter, empty frontmatter, unterminated frontmatter: as parse_frontmatter."""
    for text in ("no frontmatter\n", "---\n---\nbody", "---\n\n---\n", "---\na: 1\n", "---\na: 1\n...\nbody\n", ""):
        assert _fast(text) == _slow(text), text


@pytest.mark.skipif(not LIBYAML, reason="libyaml (PyYAML's C binding) is not installed")
def test_fast_path_is_taken_for_plain_frontmatter() -> None:
    """What memcore's writers produce is read by libyaml (else the fast path is useless)."""
    plain = (
        'schema: whitebox/1.0\ntitle: Working style\ntags: [style, "prefs"]\nsource: claude\n'
        "confidence: high\nmemcore: {created_at: '2026-01-05T09:00:00Z', kind: decision, "
        "relations: [{target: a.md, type: related}], confidence: 0.55}\n"
    )
    assert fm._load_fast(plain)["memcore"]["confidence"] == 0.55
    assert _fast(f"---\n{plain}---\n") == _slow(f"---\n{plain}---\n")


@pytest.mark.skipif(not LIBYAML, reason="libyaml (PyYAML's C binding) is not installed")
def test_without_libyaml_everything_takes_the_round_trip_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no libyaml the reads still work, through ruamel."""
    text = "---\na: 1\nb: [x, y]\nwhen: 2026-01-01\n---\nbody\n"
    expected = _fast(text)
    monkeypatch.setattr(fm, "_CParser", None)
    assert not _took_fast_path(text)
    assert _fast(text) == expected == _slow(text)


_KEYS = ["title", "tags", "a", "b-c", "d_e", "'q k'", '"dq"', "x1"]
_SCALARS = [
    "plain",
    "two words",
    "'single'",
    '"double \\u00e9"',
    "''",
    '""',
    "1",
    "-3",
    "1.5",
    "1e3",
    ".5",
    "0x10",
    "0o7",
    "007",
    "true",
    "no",
    "Yes",
    "null",
    "~",
    "2026-01-02",
    "2026-01-02T03:04:05Z",
    "10:30",
    "1:2:3",
    "a: b",
    "a #b",
    "a#b",
    "http://x/y",
    "caf\u00e9",
    "\U0001f600",
    ".inf",
    "-.nan",
    "+1",
    "1_000",
    "=",
    "[]",
    "{}",
    "[a, 1, true]",
    "{k: v, n: 1}",
    "[a, [b, {c: d}]]",
    "|\n  block\n  text",
    ">-\n  folded\n  text",
    "",
    "&anchor v",
    "R&D",
    "*",
    "'*'",
    "-",
    "- x",
    "?",
    "a:b",
    '"multi\n  line"',
]


def _generated(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    docs = []
    for _ in range(count):
        lines = []
        for _ in range(rnd.randint(1, 6)):
            key = rnd.choice(_KEYS)
            shape = rnd.random()
            if shape < 0.7:
                value = rnd.choice(_SCALARS)
                lines.append(f"{key}: {value}" if value else f"{key}:")
            elif shape < 0.85:
                items = [rnd.choice(_SCALARS[:34]) for _ in range(rnd.randint(0, 3))]
                lines.append(f"{key}:" + "".join(f"\n  - {i}" for i in items) if items else f"{key}: []")
            else:
                sub = [f"  {rnd.choice(_KEYS)}: {rnd.choice(_SCALARS[:34])}" for _ in range(rnd.randint(1, 3))]
                lines.append(f"{key}:\n" + "\n".join(sub))
        docs.append("\n".join(lines) + "\n")
    return docs


@pytest.mark.parametrize("seed", range(8))
def test_generated_documents_read_the_same(seed: int) -> None:
    """Generated frontmatter (random keys, scalars, lists, maps, duplicates): both paths agree."""
    fast_hits = 0
    docs = _generated(seed, 150)
    for yaml_text in docs:
        text = f"---\n{yaml_text}---\n\n# Body\n"
        assert _fast(text) == _slow(text), yaml_text
        fast_hits += _took_fast_path(text)
    if LIBYAML:
        assert fast_hits > 0


# -- fast dump of new documents ------------------------------------------------------------
_DUMP_STRINGS = [
    "plain",
    "Item 18",
    "whitebox/1.0",
    "topic-5",
    "a b",
    "a  b",
    "trailing ",
    " lead",
    "yes",
    "No",
    "true",
    "null",
    "~",
    "2026-01-06T03:00:00Z",
    "2026-01-06",
    "10:30",
    "1.0",
    "0.5",
    "007",
    "1e3",
    "-x",
    "- x",
    "x: y",
    "x #y",
    "a#b",
    "R&D",
    "*x",
    "!x",
    "%x",
    "@x",
    "`x",
    "'q'",
    '"dq"',
    "a,b",
    "[x]",
    "{x}",
    "a|b",
    "a>b",
    "?x",
    "x?",
    "caf\u00e9",
    "tab\there",
    "line\nbreak",
    "",
    "=",
    "<<",
    ".inf",
    "_under",
    "/path/x.md",
    "x.md#3",
    "a(b)",
    "a+b",
    "e@mail.com",
    "x" * 1200,
    "y" * 300 + " " + "z" * 300,
    "back\\slash",
    "snake_case-1",
    "UPPER",
    "Null",
    "n",
    "1a",
    "3fa9c0",
    "007x",
    "1-2",
    "12 monkeys",
    "0b101",
    "0o17",
    "0x1F",
    "1_000",
    "+1",
    "1e",
    "9:30 am",
    "a #b",
    "x.md#13",
    "#x",
    "a#",
    "2026",
    "2026-1-5",
    "1.2.3",
    "v1.2",
    ".5",
    "1.",
    "-1",
    "e1",
    "1e-5x",
    "#",
    "#a: b",
    "# x",
    "[x] y",
    "{a",
    "}",
    "|",
    ">",
    "&",
    "@",
    "`",
    ",",
    ",x",
    "%",
    "!",
    "!!str x",
    "#  two",
    '#x"y',
    "#x'y",
    "#x\\y",
    "#x ",
    "# ",
    "*",
    "&a b",
    "[",
    "]x",
    "@ x: y",
    "`a` b",
    "#\u00e9",
    "{}",
    "[]",
]


_EASY_STRINGS = [
    "plain",
    "Item 18",
    "whitebox/1.0",
    "topic-5",
    "a b",
    "yes",
    "2026-01-06T03:00:00Z",
    "x.md#3",
    "0.5",
    "3fa9c0",
]


def _string(rnd: random.Random) -> str:
    return rnd.choice(_EASY_STRINGS if rnd.random() < 0.7 else _DUMP_STRINGS)


def _random_meta(rnd: random.Random, depth: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for _ in range(rnd.randint(1, 5)):
        key = rnd.choice(["title", "tags", "source", "k", "a-b", "yes", "1", "memcore", "relations", "x y", "_p"])
        roll = rnd.random()
        if roll < 0.45:
            meta[key] = _string(rnd)
        elif roll < 0.6:
            meta[key] = rnd.choice([True, False, 0, 7, -3, 0.55, 1.0, 0.1 + 0.2, 1e-7, 1e16, float("inf"), None])
        elif roll < 0.7:
            meta[key] = fm.flow_list(_string(rnd) for _ in range(rnd.randint(0, 3)))
        elif roll < 0.85 and depth < 3:
            meta[key] = [
                _random_meta(rnd, depth + 1) if rnd.random() < 0.5 else _string(rnd) for _ in range(rnd.randint(0, 3))
            ]
        elif depth < 3:
            meta[key] = _random_meta(rnd, depth + 1) if rnd.random() < 0.9 else {}
        else:
            meta[key] = "leaf"
    return meta


def _dump_both(meta: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    import copy

    fast = fm.FrontmatterDocument.new(copy.deepcopy(meta), "body\n").dumps()
    with monkeypatch.context() as m:
        m.setattr(fm, "_dump_simple", lambda mapping: None)
        slow = fm.FrontmatterDocument.new(copy.deepcopy(meta), "body\n").dumps()
    return fast, slow


def test_new_documents_dump_as_ruamel_dumps_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated metadata (every string style, numbers, nesting, flow lists): same text as ruamel."""
    rnd = random.Random(11)
    simple = 0
    for _ in range(1500):
        meta = _random_meta(rnd)
        fast, slow = _dump_both(meta, monkeypatch)
        assert fast == slow, meta
        import copy

        doc = fm.FrontmatterDocument.new(copy.deepcopy(meta), "")
        for key in list(doc.metadata):
            doc.metadata[key] = fm.quote_ambiguous(doc.metadata[key])
        simple += fm._dump_simple(doc.metadata) is not None
    assert simple >= 200  # the fast writer is used, not only its fallback


def test_memcore_shaped_documents_take_the_fast_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the WhiteBox writer produces for a stable fact is written without ruamel, identically."""
    meta = {
        "schema": "whitebox/1.0",
        "title": "Item 18",
        "tags": fm.flow_list(["topic-5", "bench", "2026"]),
        "source": "bench",
        "confidence": "high",
        "memcore": {
            "kind": "decision",
            "relations": [{"type": "related", "target": "item-9.md"}, {"type": "x", "target": "y", "resolved": False}],
            "updated_at": "2026-01-06T03:00:00Z",
            "confidence": 0.55,
            "extra": {"box": {"k": [1, 2.5, True], "deep": {"z": ["w", {"a": "b"}]}}},
        },
    }
    fast, slow = _dump_both(meta, monkeypatch)
    assert fast == slow
    doc = fm.FrontmatterDocument.new(meta, "")
    for key in list(doc.metadata):
        doc.metadata[key] = fm.quote_ambiguous(doc.metadata[key])
    assert fm._dump_simple(doc.metadata) is not None


SHAPES: list[dict[str, Any]] = [
    {"a": [{"k": {"z": "w"}, "num": 1}, {"k": ["x", "q"]}, "s"]},
    {"a": {"b": [{"c": [{"d": "e"}]}]}},
    {"a": [{"k": "v"}], "b": {"c": {"d": {"e": [1, 2]}}}},
    {"list": ["x", "q"], "flow": fm.flow_list(["x", "y z"]), "f": [1.5, -0.25, 100.0]},
]


@pytest.mark.parametrize("meta", SHAPES, ids=range(len(SHAPES)))
def test_nested_shapes_dump_as_ruamel_dumps_them(meta: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Sequences of mappings, mappings whose first value is a container, deep nesting."""
    fast, slow = _dump_both(meta, monkeypatch)
    assert fast == slow
    import copy

    assert fm._dump_simple(fm.CommentedMap(copy.deepcopy(meta))) is not None


def test_containers_with_a_style_or_comments_go_to_ruamel(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flow-style mapping or a commented one (as loaded round-trip) is dumped by ruamel, as before."""
    loaded = fm.load_yaml("flow: {a: 1, b: [x, q]}\nblock:\n  k: v  # note\n")
    fast, slow = _dump_both({"title": "T", "flow": loaded["flow"]}, monkeypatch)
    assert fast == slow
    assert "flow: {a: 1, b: [x, q]}" in fast
    fast, slow = _dump_both({"title": "T", "block": loaded["block"]}, monkeypatch)
    assert fast == slow
    assert "# note" in fast


@pytest.mark.parametrize("value", ["#", "#a: b", "[x] y", "{a", "|", ">", "&a b", "@ x: y", "`a` b", ",x", "%", "!x"])
def test_indicator_strings_dump_single_quoted_without_ruamel(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A string opening with a YAML indicator (RightMemory's heading marker ``#``): written directly, as ruamel does."""
    meta = {"title": "T", "memcore": {"extra": {"rightmemory": {"marker": value, "items": [value]}}}}
    doc = fm.FrontmatterDocument.new(dict(meta), "")
    assert fm._dump_simple(doc.metadata) is not None
    fast, slow = _dump_both(meta, monkeypatch)
    assert fast == slow
    assert f"marker: '{value}'\n" in fast
    assert fm.read_frontmatter(fast).metadata["memcore"]["extra"]["rightmemory"]["marker"] == value
