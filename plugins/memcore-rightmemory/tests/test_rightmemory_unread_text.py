"""rm.unread-text: text that no entry reads is reported (conversions would drop it)."""

from __future__ import annotations

import shutil
from pathlib import Path

from memcore.models import Severity
from memcore_rightmemory import RightMemoryProvider

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples" / "rightmemory"


def _unread(root: Path) -> list[tuple[str | None, int | None]]:
    provider = RightMemoryProvider(root, read_only=True).open()
    found = [(d.path, d.line) for d in provider.validate() if d.code == "rm.unread-text"]
    snap = provider.read_all()
    assert [(d.path, d.line) for d in snap.diagnostics if d.code == "rm.unread-text"] == found
    return found


def test_authors_samples_and_examples_have_none(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    root.mkdir()
    shutil.copyfile(SAMPLES / "MEMORY.example.at-0fad0d5.md", root / "MEMORY.md")
    shutil.copyfile(SAMPLES / "PURSUITS.example.at-23141ba.md", root / "PURSUITS.md")
    # the starter-template notes, `---` breaks and the Focus placeholder are format text
    assert _unread(root) == []
    assert _unread(SAMPLES / "test-fixture-extracted-test_graph") == []
    assert _unread(ROOT / "examples" / "rightmemory") == []


def test_a_new_store_has_none(tmp_path: Path) -> None:
    RightMemoryProvider.init_store(str(tmp_path / "s"))
    assert _unread(tmp_path / "s") == []


def test_node_continuations_and_trailing_paragraphs_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "rm"
    root.mkdir()
    (root / "MEMORY.md").write_text(
        "# Memory\n\n## Facts {#facts}\n\nIntro paragraph.\n\n"
        "- `n1` first node \u2192 []\n  more detail about n1\n  - a plain nested bullet\n"
        "- `n2` second node \u2192 [dep:n1]\n\nClosing paragraph after the list.\n\n"
        "```\ncode after the list\n\nstill code\n```\n",
        encoding="utf-8",
    )
    (root / "PURSUITS.md").write_text("# Pursuits\n", encoding="utf-8")
    assert _unread(root) == [("MEMORY.md", 8), ("MEMORY.md", 12), ("MEMORY.md", 14)]
    (d,) = [d for d in RightMemoryProvider(root).open().validate() if d.line == 8]
    assert d.severity is Severity.WARNING
    assert "more detail about n1" in d.message and "not part of any entry" in d.message
    # the heading's intro is its body: read, so not reported
    assert RightMemoryProvider(root).open().get("facts").body == "Intro paragraph.\n"
