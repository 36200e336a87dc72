"""Frontmatter values no entry field can hold are a diagnostic, never a reader crash."""

from __future__ import annotations

from pathlib import Path

import pytest

import memcore
from memcore.errors import ParseError
from memcore.models import Severity

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
