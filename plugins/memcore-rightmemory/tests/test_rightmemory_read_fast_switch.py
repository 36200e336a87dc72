"""``read_all``'s shortcuts give what the general way gives (MEMCORE_RIGHTMEMORY_READ_FAST).

The unread-text check of one search per file (``validate._scan_fast``) reports the same
warnings, in the same order, as the look at every line (``validate._scan``); the bytes
``read_all`` hands core's control-character check give the same findings as core's own read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memcore.models import Diagnostic, Kind, MemoryEntry
from memcore.provider import BaseProvider
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory._parse import Source, make_markdown, parse_doc
from memcore_rightmemory.validate import unread_in

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "rightmemory"

#: Files that hold every kind of line the unread-text check tells apart.
TEXTS = {
    "fences": (
        "# Memory\n\n## Kept {#kept}\n\nBody.\n\n```\n- `n1` in code → [dep:kept]\n## Not {#x}\n```\n\n"
        "stray text\n~~~~\n```\nstill code\n~~~\nstill code too\n~~~~\n\n- `n2` node → [dep:kept]\n"
        "  continued line\n\n```py\nunclosed code\n\nafter a blank line\n"
    ),
    "html and syntax graph.py alone reads": (
        "# Memory\n\n<div>\n- `hidden` x → [dep:a]\n## Hidden {#h}\n</div>\n\n   ```\nindented fence\n   ```\n"
        "\u00a0- `nbsp` node → [dep:a]\n\t- `tab` node -> [rel:a]\n\n---\n\nNo Pursuit is focused yet.\n"
        "<!-- rightmemory:example:start -->\nexample text\n<!-- rightmemory:example:end -->\n"
    ),
    "comments and plain headings": (
        'intro before any heading\n\n# Memory\n\n## A {#a}\n<!-- memcore: {"kind": "fact"} -->\nBody a.\n'
        "### Plain\n\ntext under a plain heading\nmore\n\n- `n` node → [dep:a]\n"
        '  <!-- memcore: {"tags": ["t"]} -->\n  - plain bullet\n\n<!-- memcore: items\n-->\n'
    ),
    "a character graph.py splits lines at": "# Memory\n\n## A {#a}\n\nBody\u2028- `x` → [dep:a]\n\nstray\x0c\n",
    "empty": "",
}


def _sample_texts() -> dict[str, str]:
    return {str(path): path.read_text(encoding="utf-8") for path in sorted(SAMPLES.rglob("*.md"))}


def _unread(text: str, family: str) -> list[Diagnostic]:
    doc = parse_doc(Source.from_bytes("MEMORY.md", text.encode("utf-8")), family, make_markdown())
    return unread_in("MEMORY.md", doc)


@pytest.mark.parametrize("family", ["memory", "pursuit"])
def test_the_unread_text_check_reports_the_same_warnings_in_the_same_order_both_ways(
    monkeypatch: pytest.MonkeyPatch, family: str
) -> None:
    texts = {**TEXTS, **_sample_texts()}
    assert len(texts) > len(TEXTS)  # the authors' samples are there
    for name, text in texts.items():
        monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_FAST", "1")
        fast = _unread(text, family)
        monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_FAST", "0")
        assert fast == _unread(text, family), name
    monkeypatch.delenv("MEMCORE_RIGHTMEMORY_READ_FAST")
    # a node's continuation line, then an unclosed fence: the rest of the file is one passage;
    # graph syntax inside fenced code (lines 8, 9, 14-17) is code, in the body of `kept`
    codes = [(d.line, d.code) for d in _unread(TEXTS["fences"], family)]
    assert codes == [(21, "rm.unread-text"), (23, "rm.unread-text")]
    found = [(d.line, d.code) for d in _unread(TEXTS["html and syntax graph.py alone reads"], family)]
    syntax = [line for line, code in found if code == "rm.reference-reads-syntax"]
    assert syntax == [4, 5, 11, 12]  # in an HTML block; after a no-break space or a tab
    assert [line for line, code in found if code == "rm.unread-text"] == [3, 8, 18]
    breaks = _unread(TEXTS["a character graph.py splits lines at"], family)
    assert [d.code for d in breaks if d.code == "rm.reference-line-break"] == ["rm.reference-line-break"] * 2


def _store(root: Path) -> Path:
    RightMemoryProvider.init_store(str(root))
    with RightMemoryProvider(root) as store:
        store.add(MemoryEntry(kind=Kind.FACT, title="Tabs", body="Width 4.\n"))
    memory = root / "MEMORY.md"
    memory.write_bytes(memory.read_bytes() + b"\nstray text with a bell \x07 in it\n")
    return root


def test_read_all_hands_core_the_bytes_it_read_and_reads_the_same_snapshot_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _store(tmp_path / "store")
    handed: list[set[str]] = []
    core_diagnostics = BaseProvider._core_diagnostics

    def spy(self: BaseProvider, found: Any, checked: dict[str, list[Diagnostic]] | None = None) -> list[Diagnostic]:
        handed.append(set(checked or {}))
        return core_diagnostics(self, found, checked)

    monkeypatch.setattr(BaseProvider, "_core_diagnostics", spy)
    snapshots = []
    for switch in ("1", "0"):
        monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_FAST", switch)
        with RightMemoryProvider(root) as store:
            snapshots.append(store.read_all())
    assert handed == [{"MEMORY.md", "PURSUITS.md"}, set()]
    assert snapshots[0] == snapshots[1]
    codes = [(d.code, d.line) for d in snapshots[0].diagnostics]
    assert ("rightmemory.control-char", 7) in codes  # the bell's line, found in the bytes handed over
    assert [e.title for e in snapshots[0].entries] == ["Tabs"]
