"""A graph file keeps its items' memcore comments in its header, and reads back exactly as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memcore.models import Kind, MemoryEntry, Relation, Severity, Status
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory._header import HEADER_OPEN, inline_text, to_file, to_inline
from memcore_rightmemory._parse import split_lines

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "rightmemory"
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rightmemory" / "MEMORY.md"

INLINE = (
    "# Memory\n\n"
    "# Amara {#amara}\n"
    '<!-- memcore: {"tags":["x"]} -->\n\n'
    "Owns the warehouse.\n\n"
    "- `n1` a node → []\n"
    '  <!-- memcore: {"tags":["y"]} -->\n'
    "  - `n2` nested → []\n"
    '    <!-- memcore: {"source":"z"} -->\n'
    "```\n# Fenced {#fenced}\n"
    '<!-- memcore: {"tags":["in-code"]} -->\n'
    "```\n"
)


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    return root


def test_comments_move_to_the_header_and_back_line_for_line() -> None:
    raw = split_lines(INLINE)
    written = "".join(to_file(raw, "\n"))
    assert written.startswith(
        f'{HEADER_OPEN}\namara {{"tags":["x"]}}\nn1 {{"tags":["y"]}}\nn2 {{"source":"z"}}\n-->\n\n# Memory\n'
    )
    # the comment inside fenced code is text, not an item's: it stays where it is
    assert '```\n# Fenced {#fenced}\n<!-- memcore: {"tags":["in-code"]} -->\n```\n' in written
    assert written.count("<!-- memcore: {") == 1
    back, found = to_inline(split_lines(written), "\n")
    assert back == raw
    assert found is not None
    lines = written.splitlines()
    for number, line in enumerate(raw, start=1):
        on_disk = lines[found.file_line(number) - 1]  # type: ignore[operator]
        if "<!-- memcore: {" in line and "in-code" not in line:
            assert line.strip().endswith(on_disk.split(" ", 1)[1] + " -->")
        else:
            assert on_disk == line.rstrip("\n")


@pytest.mark.parametrize(
    "text",
    [
        INLINE.replace("\n", "\r\n"),
        INLINE.rstrip("\n"),
        "- `a` x → []\n" + '  <!-- memcore: {"tags":["t"]} -->',  # last line without a line break
        "# H {#h}\n" + '<!-- memcore: {"kind":"decision"} -->\n',
        "# H {#h}\n# H again {#h}\n" + '<!-- memcore: {"kind":"decision"} -->\n',  # an id used twice
        "# H {#h}\n" + '<!-- memcore: {"kind":"decision"} -->  \n',  # not the writer's own line
        "no items at all\n",
        "",
    ],
)
def test_whatever_to_file_writes_reads_back_as_the_same_lines(text: str) -> None:
    raw = split_lines(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    assert to_inline(to_file(raw, newline), newline)[0] == raw


_LINES = st.sampled_from(
    [
        "# T {#a}",
        "## U {#b} → [rel:a]",
        "# Plain",
        "- `a` node → []",
        "  - `c` nested → []",
        '<!-- memcore: {"tags":["x"]} -->',
        '  <!-- memcore: {"source":"s"} -->',
        '    <!-- memcore: {"k":1} -->',
        "```",
        "~~~~",
        "",
        "text",
        HEADER_OPEN,
        "-->",
        'a {"tags":["h"]}',
        "zz {}",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=14), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_to_file_is_always_undone_by_to_inline(lines: list[str], newline: str, last_break: bool) -> None:
    text = newline.join(lines) + (newline if last_break and lines else "")
    raw = split_lines(text)
    # inline text as the reader gives it (to_inline of it is itself): text that starts with a
    # header an item would take (its id's one item, no comment under it) reads as that item's
    # metadata whatever is written, the header layout's own rule (next test)
    assume(to_inline(raw, newline)[0] == raw)
    assert to_inline(to_file(raw, newline), newline)[0] == raw


def test_a_header_entry_left_at_the_top_goes_to_the_one_item_its_id_names_once_there_is_one() -> None:
    kept = [HEADER_OPEN + "\n", 'a {"tags":["h"]}\n', "-->\n", "\n", "# T {#a}\n", "# T {#a}\n"]
    assert to_inline(kept, "\n")[0] == kept  # two items under id a: the entry stays in the header
    one = kept[:-1]
    assert to_inline(one, "\n")[0] == ["# T {#a}\n", '<!-- memcore: {"tags":["h"]} -->\n']
    assert to_file(one, "\n") == one  # no other file reads back as these lines: written as they are


def test_a_written_store_reads_the_same_and_graph_py_sees_no_comment(tmp_path: Path) -> None:
    root = _store(tmp_path)
    with RightMemoryProvider(root) as store:
        old = store.add(MemoryEntry(kind=Kind.FACT, id="old", title="Old", body="Was so.\n"))
        new = store.add(
            MemoryEntry(
                kind=Kind.DECISION,
                id="new",
                title="New",
                body="Is so.\n",
                tags=["db"],
                status=Status.ACTIVE,
                relations=[Relation(type="supersedes", target="old")],
            )
        )
        store.add(MemoryEntry(kind=Kind.FACT, id="plain", title="Plain", body="Fits.\n"))
        expected = {e.id: e for e in store.iter_entries()}
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith(f"{HEADER_OPEN}\nnew {{")
    assert text.count("\n") == inline_text(text).count("\n") + 3  # the header: open, close, blank line
    with RightMemoryProvider(root, read_only=True) as again:
        assert {e.id: e for e in again.iter_entries()} == expected
        assert again.get("new").tags == ["db"] and again.get("new").version == new.version
        assert again.get("old").version == old.version
        assert again.locate("new") == ("MEMORY.md", text.splitlines().index("# New {#new}") + 1)
        assert again.validate() == []


def test_an_update_of_an_older_inline_file_keeps_every_entry(tmp_path: Path) -> None:
    root = _store(tmp_path)
    (root / "MEMORY.md").write_text(
        '# Memory\n\n# A {#a}\n<!-- memcore: {"tags":["x"]} -->\n\nBody a.\n\n# B {#b}\n'
        '<!-- memcore: {"kind":"decision"} -->\n\nBody b.\n',
        encoding="utf-8",
    )
    with RightMemoryProvider(root) as store:
        before = {e.id: (e.kind, e.tags, e.body) for e in store.iter_entries()}
        b = store.get("b")
        store.update(b.model_copy(update={"body": "Body b, edited.\n"}), expected_version=b.version)
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith(f'{HEADER_OPEN}\na {{"tags":["x"]}}\nb {{"kind":"decision"}}\n-->\n\n# Memory\n')
    with RightMemoryProvider(root, read_only=True) as again:
        after = {e.id: (e.kind, e.tags, e.body) for e in again.iter_entries()}
    assert after == {**before, "b": (Kind.DECISION, [], "Body b, edited.\n")}


def test_a_header_line_naming_no_item_stays_and_is_reported(tmp_path: Path) -> None:
    root = _store(tmp_path)
    (root / "MEMORY.md").write_text(
        f'{HEADER_OPEN}\ngone {{"tags":["lost"]}}\na {{"tags":["x"]}}\n-->\n\n# Memory\n\n# A {{#a}}\n\nBody a.\n',
        encoding="utf-8",
    )
    with RightMemoryProvider(root) as store:
        assert store.get("a").tags == ["x"]
        unread = [(d.code, d.line, d.severity) for d in store.validate() if d.code == "rm.unread-text"]
        assert unread == [("rm.unread-text", 2, Severity.WARNING)]
        store.add(MemoryEntry(kind=Kind.FACT, id="c", title="C", body="New.\n", tags=["y"]))
    lines = (root / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert lines[:5] == [HEADER_OPEN, 'gone {"tags":["lost"]}', 'a {"tags":["x"]}', 'c {"tags":["y"]}', "-->"]


def test_diagnostics_name_the_lines_of_the_file_on_disk(tmp_path: Path) -> None:
    root = _store(tmp_path)
    (root / "MEMORY.md").write_text(
        f'{HEADER_OPEN}\nb {{"tags":["t"]}}\na {{"status":5}}\n-->\n\n# Memory\n\n# A {{#a}}\n\nBody.\n\n'
        "# B {#b}\n\n# Again {#b}\n",
        encoding="utf-8",
    )
    with RightMemoryProvider(root, read_only=True) as store:
        found = {(d.code, d.line) for d in store.validate()}
        assert store.locate("a") == ("MEMORY.md", 8)
    assert ("rm.bad-meta", 3) in found  # the header line holding the bad value
    assert ("rm.duplicate-id", 14) in found  # the second heading, as the file numbers it
    assert ("rm.unread-text", 2) in found  # `b` names two items: its line applies to neither


def test_the_switch_writes_the_inline_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_HEADER", "0")
    root = _store(tmp_path)
    with RightMemoryProvider(root) as store:
        store.add(MemoryEntry(kind=Kind.DECISION, id="d", title="D", body="Body.\n"))
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert HEADER_OPEN not in text
    assert '# D {#d}\n<!-- memcore: {"kind":"decision"' in text
    monkeypatch.delenv("MEMCORE_RIGHTMEMORY_HEADER")
    with RightMemoryProvider(root, read_only=True) as store:
        assert store.get("d").kind is Kind.DECISION


@pytest.mark.parametrize("path", [*sorted(SAMPLES.rglob("*.md")), EXAMPLE], ids=lambda p: p.name)
def test_the_samples_and_the_example_read_back_from_their_layout(path: Path) -> None:
    raw = split_lines(path.read_text(encoding="utf-8"))
    inline, _map = to_inline(raw, "\n")
    assert "".join(to_file(inline, "\n")) == "".join(raw)
