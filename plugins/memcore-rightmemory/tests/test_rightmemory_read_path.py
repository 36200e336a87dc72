"""The RightMemory read path: line scanner == markdown-it, read_all, per-file reads, released lines.

The line scanner (``_parse.scan_simple``) is only a shortcut: wherever it accepts a file, the
parsed document (headings, nodes, order, Focus references, per-file diagnostics) must equal
what the markdown-it path gives. These tests compare both paths on the authors' samples, the
project's examples, generated graphs, hand-written odd inputs and randomly assembled files.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import StoreSnapshot, read_all
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory._parse import Doc, Source, make_markdown, parse_doc, scan_simple

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / ".." / "shared" / "samples" / "rightmemory"
FIXTURE = SAMPLES / "test-fixture-extracted-test_graph"
EXAMPLES = REPO / "examples" / "rightmemory"
MD = make_markdown()


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
