"""Frontmatter values no entry field can hold are a diagnostic, never a reader crash."""

from __future__ import annotations

from pathlib import Path

import pytest

import memcore
from memcore.errors import ParseError
from memcore.models import MemoryEntry, Severity

VALUES = {
    "not-a-number": "x: .nan",
    "5000-digit integer": "x: " + "9" * 5000,
    "lone surrogate": 'name: "\\ud800"',
}


@pytest.mark.parametrize("line", VALUES.values(), ids=VALUES.keys())
def test_a_frontmatter_value_memcore_cannot_hold_reads_as_text_with_an_error_and_blocks_writes(
    tmp_path: Path, line: str
) -> None:
    text = f"---\nname: a\ndescription: d\ntype: user\n{line}\n---\nbody\n".replace("name: a\n", "", "name:" in line)
    (tmp_path / "a.md").write_text(text, encoding="utf-8")
    (tmp_path / "b.md").write_text("---\nname: b\ndescription: d\ntype: user\n---\nfine\n", encoding="utf-8")
    before = (tmp_path / "a.md").read_bytes()
    with memcore.open(f"claudecode:{tmp_path}") as store:
        entries = {e.id: e for e in store.iter_entries()}
        assert set(entries) == {"a.md", "b.md"} and entries["a.md"].body == text
        errors = [d for d in store.validate() if d.severity is Severity.ERROR and d.path == "a.md"]
        assert errors and errors[0].line in (1, 2) and "read as text" in errors[0].message
        with pytest.raises(ParseError, match=r"a\.md"):
            store.update(entries["a.md"].model_copy(update={"body": "changed"}))
    assert (tmp_path / "a.md").read_bytes() == before


COMMENTS = {
    "NaN": ('{"a": NaN}', "the memcore comment.a is nan, which is not a JSON number"),
    "5000-digit integer": ('{"a": ' + "9" * 5000 + "}", "the memcore comment is not readable JSON (Exceeds the limit"),
    "not an object": ("[1, 2]", "the memcore comment is not a JSON object"),
}


@pytest.mark.parametrize(("data", "said"), COMMENTS.values(), ids=COMMENTS.keys())
def test_a_memcore_comment_no_entry_can_hold_is_an_error_and_the_file_is_never_rewritten(
    tmp_path: Path, data: str, said: str
) -> None:
    text = f"<!-- memcore: {data} -->\nbody\n"
    (tmp_path / "project_a.md").write_text(text, encoding="utf-8")
    with memcore.open(f"claudecode:{tmp_path}") as store:
        (entry,) = store.iter_entries()
        assert entry.body == text
        errors = [d for d in store.validate() if d.code == "claudecode.free-data"]
        assert [(d.path, d.line) for d in errors] == [("project_a.md", 1)] and said in errors[0].message
        with pytest.raises(ParseError, match=r"project_a\.md"):
            store.update(entry.model_copy(update={"body": "changed"}))
    assert (tmp_path / "project_a.md").read_text(encoding="utf-8") == text


def test_index_links_outside_the_folder_are_warned_by_line_never_read_and_kept_as_written(tmp_path: Path) -> None:
    (tmp_path / "project_a.md").write_text("---\nname: a\ndescription: d\ntype: project\n---\nA\n", encoding="utf-8")
    index = "- [A](project_a.md) — a\n- [Out](../../etc/passwd) — x\n- [Abs](/etc/hosts) — y\n- [Home](~/.ssh/k) — z\n"
    (tmp_path / "MEMORY.md").write_text(index, encoding="utf-8")
    with memcore.open(f"claudecode:{tmp_path}") as store:
        warned = [(d.line, d.message.split(",")[0]) for d in store.validate() if d.code.endswith("index-outside-link")]
        assert warned == [(2, "links to ../../etc/passwd"), (3, "links to /etc/hosts"), (4, "links to ~/.ssh/k")]
        assert [e.id for e in store.iter_entries()] == ["project_a.md"]
        store.add(MemoryEntry(title="B", body="B\n"))
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8").startswith(index)
