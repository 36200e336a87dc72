"""Where RightMemory's graph.py and CommonMark read a file differently, `validate` says so.

graph.py skips only fenced code and splits lines with ``str.splitlines()``; memcore reads the
files as Markdown (docs/formats/rightmemory.md, "Where memcore and graph.py differ").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore_rightmemory import RightMemoryProvider

PURSUITS = "# Pursuits\n\n## Focus\n\nNo Pursuit is focused yet.\n"


def _read(root: Path, memory: str) -> tuple[list[tuple[str, int | None, str]], list[str]]:
    root.mkdir()
    (root / "PURSUITS.md").write_text(PURSUITS, encoding="utf-8")
    (root / "MEMORY.md").write_bytes(memory.encode("utf-8"))
    with RightMemoryProvider(root) as provider:
        diags = [(d.code, d.line, d.severity.value) for d in provider.validate() if d.path == "MEMORY.md"]
        ids = [e.id or "" for e in provider.iter_entries()]
    return diags, ids


@pytest.mark.parametrize(
    "hidden",
    [
        "<!--\n- `b` hidden → [dep:a]\n-->\n",
        "<div>\n- `b` hidden → [dep:a]\n</div>\n",
        "<!--\n## Hidden {#b}\n-->\n",
    ],
    ids=["comment-node", "html-block-node", "comment-heading"],
)
def test_graph_syntax_inside_html_is_no_item_and_is_reported(tmp_path: Path, hidden: str) -> None:
    diags, ids = _read(tmp_path / "s", f"# Mem {{#mem}}\n\n- `a` first → []\n\n{hidden}")
    assert "b" not in ids
    assert ("rm.reference-reads-syntax", 6, "warning") in diags
    assert ("rm.unread-text", 5, "warning") in diags


def test_graph_syntax_in_fenced_code_is_skipped_by_both(tmp_path: Path) -> None:
    diags, ids = _read(tmp_path / "s", "# Mem {#mem}\n\n```\n- `b` code → []\n```\n")
    assert ids == ["mem"]
    assert not [d for d in diags if d[0] == "rm.reference-reads-syntax"]


def test_an_anchor_inside_inline_code_is_an_error_as_graph_py_reports(tmp_path: Path) -> None:
    diags, ids = _read(tmp_path / "s", "# Mem {#mem}\n\n## Title `{#x}`\n\n- `a` first → []\n")
    assert ids == ["mem", "a"]
    assert diags == [("rm.anchor-in-code", 3, "error")]


def test_an_anchor_after_inline_code_is_read_by_both(tmp_path: Path) -> None:
    diags, ids = _read(tmp_path / "s", "# Mem {#mem}\n\n## Use `{#x}` here {#real}\n")
    assert ids == ["mem", "real"]
    assert diags == []


@pytest.mark.parametrize(("char", "name"), [("\u2028", "U+2028"), ("\x85", "U+0085")])
def test_a_line_break_only_graph_py_sees_is_reported(tmp_path: Path, char: str, name: str) -> None:
    diags, ids = _read(tmp_path / "s", f"# Mem {{#mem}}\n\n- `a` first{char}- `b` second → []\n")
    assert ids == ["mem", "a"]  # one node to Markdown; graph.py reads `a` (no edge list) and `b`
    assert ("rm.reference-line-break", 3, "warning") in diags
    with RightMemoryProvider(tmp_path / "s") as provider:
        (message,) = [d.message for d in provider.validate() if d.code == "rm.reference-line-break"]
    assert name in message
