"""Every validator rule, each on a small store that breaks exactly that rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore_rightmemory import RightMemoryProvider

PURSUITS = "# Pursuits\n\n## Focus\n\nNo Pursuit is focused yet.\n"


def _store(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(exist_ok=True)
    files = {"PURSUITS.md": PURSUITS, **files}
    for name, text in files.items():
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        (root / name).write_bytes(data)
    return root


def _codes(root: Path) -> list[tuple[str, str | None, int | None]]:
    with RightMemoryProvider(root) as provider:
        return [(d.code, d.path, d.line) for d in provider.validate()]


CASES: dict[str, tuple[dict[str, str | bytes], list[tuple[str, str | None, int | None]]]] = {
    "duplicate-id-across-trees": (
        {"MEMORY.md": "# M\n\n## A {#same}\n", "PURSUITS.md": "# Pursuits\n\n## B {#same}\n"},
        [("rm.duplicate-id", "PURSUITS.md", 3)],
    ),
    "duplicate-node-id": (
        {"MEMORY.md": "# M {#m}\n\n- `a` one → []\n- `a` two → []\n"},
        [("rm.duplicate-id", "MEMORY.md", 4)],
    ),
    "dangling-edge": ({"MEMORY.md": "# M {#m}\n\n- `a` x → [dep:nowhere]\n"}, [("rm.dangling-edge", "MEMORY.md", 3)]),
    "self-edge": ({"MEMORY.md": "# M {#m}\n\n- `a` x → [dep:a]\n"}, [("rm.self-edge", "MEMORY.md", 3)]),
    "duplicate-edge": (
        {"MEMORY.md": "# M {#m}\n\n- `a` x → []\n- `b` y → [dep:a, dep:a]\n"},
        [("rm.duplicate-edge", "MEMORY.md", 4)],
    ),
    "containment-rel": (
        {"MEMORY.md": "# M {#m}\n\n## S {#s}\n\n- `a` x → [rel:m]\n"},
        [("rm.containment-edge", "MEMORY.md", 5)],
    ),
    "containment-rel-across-f": (
        {"MEMORY.md": "# M {#m}\n\n## D {F#d}\n", "MEMORY_d.md": "### T {#t} → [rel:m]\n"},
        [("rm.containment-edge", "MEMORY_d.md", 1)],
    ),
    "unknown-edge-type": (
        {"MEMORY.md": "# M {#m}\n\n- `a` x → []\n- `b` y → [likes:a]\n"},
        [("rm.unknown-edge-type", "MEMORY.md", 4)],
    ),
    "unsupported-marker": ({"MEMORY.md": "# M {X#m}\n"}, [("rm.unsupported-marker", "MEMORY.md", 1)]),
    "malformed-heading-edges": (
        {"MEMORY.md": "# M {#m} trailing words\n"},
        [("rm.malformed-heading-edges", "MEMORY.md", 1)],
    ),
    "malformed-edge": ({"MEMORY.md": "# M {#m}\n\n- `a` x → [dep]\n"}, [("rm.malformed-edge", "MEMORY.md", 3)]),
    "invalid-heading-id": ({"MEMORY.md": "# M {#bad id}\n"}, [("rm.invalid-id", "MEMORY.md", 1)]),
    "invalid-node-id": ({"MEMORY.md": "# M {#m}\n\n- `bad id` x → []\n"}, [("rm.invalid-id", "MEMORY.md", 3)]),
    "node-without-edges": (
        {"MEMORY.md": "# M {#m}\n\n- `a` no edge list\n"},
        [("rm.node-missing-edges", "MEMORY.md", 3)],
    ),
    "h4-not-typed": (
        {"MEMORY.md": "# M\n\n## A\n\n### B {#b}\n\n#### C {#c}\n"},
        [("rm.terminal-marker", "MEMORY.md", 7)],
    ),
    "h4-under-h2": (
        {"MEMORY.md": "# M\n\n## A {#a}\n\n#### C {MF#c}\n"},
        [("rm.terminal-parent", "MEMORY.md", 5)],
    ),
    "h5": (
        {"MEMORY.md": "# M\n\n## A\n\n### B\n\n#### C {MQ#c}\n\n##### D\n"},
        [("rm.terminal-children", "MEMORY.md", 9), ("rm.heading-too-deep", "MEMORY.md", 9)],
    ),
    "node-under-terminal": (
        {"MEMORY.md": "# M\n\n## A\n\n### B\n\n#### C {MF#c}\n\n- `n` x → []\n"},
        [("rm.terminal-children", "MEMORY.md", 9)],
    ),
    "graph-content-under-f": (
        {
            "MEMORY.md": "# M\n\n## D {F#d}\n\nsummary\n\n- `n` x → []\n\n### Child\n",
            "MEMORY_d.md": "text\n",
        },
        # the detail file's text before any heading is in no entry
        [
            ("rm.node-under-f", "MEMORY.md", 7),
            ("rm.heading-under-f", "MEMORY.md", 9),
            ("rm.unread-text", "MEMORY_d.md", 1),
        ],
    ),
    "missing-f-backing": ({"MEMORY.md": "# M\n\n## D {F#d}\n"}, [("rm.missing-backing", "MEMORY.md", 3)]),
    "missing-m-backing": ({"MEMORY.md": "# M\n\n## E {M#e}\n"}, [("rm.missing-backing", "MEMORY.md", 3)]),
    "missing-s-backing": ({"MEMORY.md": "# M\n\n## K {S#k}\n"}, [("rm.missing-backing", "MEMORY.md", 3)]),
    "shared-backing": (
        {"MEMORY.md": "# M\n\n## D {F#d}\n\n## E {M#d}\n", "MEMORY_d.md": "x\n"},
        [
            ("rm.duplicate-id", "MEMORY.md", 5),
            ("rm.shared-backing", "MEMORY.md", 5),
            ("rm.unread-text", "MEMORY_d.md", 1),
        ],
    ),
    "cyclic-backing": (
        {"MEMORY.md": "# M\n\n## A {F#a}\n", "MEMORY_a.md": "### B {F#b}\n", "MEMORY_b.md": "### A2 {F#a}\n"},
        [("rm.duplicate-id", "MEMORY_b.md", 1), ("rm.cyclic-backing", "MEMORY_b.md", 1)],
    ),
    "m-marker-in-pursuit": (
        {"MEMORY.md": "# M\n", "PURSUITS.md": "# Pursuits\n\n## E {M#e}\n", "MEMORY_e.md": "x\n"},
        [("rm.memory-only-marker", "PURSUITS.md", 3)],
    ),
    "reserved-rules": (
        {"MEMORY.md": "# M\n", "PURSUITS.md": "# Pursuits\n\n## R {F#rules}\n"},
        [("rm.reserved-id", "PURSUITS.md", 3)],
    ),
    "focus-dangling-and-duplicate": (
        {
            "MEMORY.md": "# M {#m}\n",
            "PURSUITS.md": "# Pursuits\n\n## Focus\n\n- `p` now\n- `p` again\n- `ghost`\n- `m`\n\n## P {#p}\n",
        },
        [
            ("rm.focus-duplicate", "PURSUITS.md", 6),
            ("rm.focus-dangling", "PURSUITS.md", 7),
            ("rm.focus-not-pursuit", "PURSUITS.md", 8),
        ],
    ),
    "next-action": (
        {"MEMORY.md": "# M\n", "PURSUITS.md": "# Pursuits\n\n## P {#p}\n\n**Next:**\n- `do` a\n- `maybe` b\n"},
        [("rm.invalid-next-action", "PURSUITS.md", 7)],
    ),
    "missing-root": ({"MEMORY.md": "# M\n", "PURSUITS.md": b""}, []),
    "not-utf8": ({"MEMORY.md": b"# M {#m}\n\xff\xfe bad\n"}, [("rm.unreadable", "MEMORY.md", 2)]),
    "agent-corrections-limits": (
        {
            "MEMORY.md": "# M\n",
            "MEMORY_agent-corrections-design.md": "".join(f"### Case {n}\n\nline\n" for n in range(16))
            + "### Long\n"
            + "".join(f"l{n}\n" for n in range(17))
            + "x" * 201
            + "\n",
        },
        [
            ("rm.corrections-entries", "MEMORY_agent-corrections-design.md", None),
            ("rm.corrections-entry-lines", "MEMORY_agent-corrections-design.md", 49),
            ("rm.corrections-line-length", "MEMORY_agent-corrections-design.md", 67),
        ],
    ),
    "edit-feedback-shape": (
        {
            "MEMORY.md": "# M\n",
            "corrections.md": "# F\n\n### Orphan\n\n## Entry\n\n### Proposed edit\n\nx\n\n### Candidate\n\ny\n\n"
            "### Accepted edit\n\n## Second\n\n### Candidate\n\nz\n",
        },
        [
            ("rm.feedback-orphan-section", "corrections.md", 3),
            ("rm.feedback-order", "corrections.md", 5),
            ("rm.feedback-empty-section", "corrections.md", 15),
            ("rm.feedback-missing-section", "corrections.md", 17),
            ("rm.feedback-missing-section", "corrections.md", 17),
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rule(tmp_path: Path, case: str) -> None:
    files, expected = CASES[case]
    root = _store(tmp_path / "s", files)
    if case == "missing-root":
        (root / "PURSUITS.md").unlink()
        expected = [("rm.missing-root", "PURSUITS.md", None)]
    assert sorted(_codes(root), key=str) == sorted(expected, key=str)


def test_symlinked_detail_file_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("### Elsewhere {#elsewhere}\n")
    root = _store(tmp_path / "s", {"MEMORY.md": "# M\n\n## D {F#d}\n"})
    os.symlink(outside, root / "MEMORY_d.md")
    assert _codes(root) == [("rm.missing-backing", "MEMORY.md", 3)]
    with RightMemoryProvider(root) as provider:
        assert [e.id for e in provider.iter_entries()] == ["d"]


def test_membership_follows_references_not_globs(tmp_path: Path) -> None:
    root = _store(
        tmp_path / "s",
        {"MEMORY.md": "# M {#m}\n", "MEMORY_orphan.md": "## Orphan {#orphan}\n\n- `o` x → [dep:ghost]\n"},
    )
    assert _codes(root) == []
    with RightMemoryProvider(root) as provider:
        assert [e.id for e in provider.iter_entries()] == ["m"]


def test_code_and_html_never_yield_graph_syntax(tmp_path: Path) -> None:
    memory = (
        "# M {#m}\n\n"
        "```\n## Fenced {#fenced}\n- `fenced-node` x → [dep:ghost]\n```\n\n"
        "~~~~\n- `tilde-node` x → []\n~~~~\n\n"
        "    - `indented-code-node` x → []\n\n"
        "<div>\n- `html-node` x → []\n</div>\n\n"
        "## Inline `{#inline-code}` heading\n\n"
        "- `real` text with `→ [dep:ghost]` inside code → []\n"
        "- `commented` text <!-- → [dep:ghost] --> → [rel:real]\n"
        "> - `quoted` x → []\n"
    )
    root = _store(tmp_path / "s", {"MEMORY.md": memory})
    # the quoted line sits under the plain `## Inline` heading: in no entry, reported as such;
    # graph.py (which skips only fenced code) reads the indented and the HTML node, and calls
    # the inline-code anchor malformed
    assert _codes(root) == [
        ("rm.anchor-in-code", "MEMORY.md", 18),
        ("rm.reference-reads-syntax", "MEMORY.md", 12),
        ("rm.reference-reads-syntax", "MEMORY.md", 15),
        ("rm.unread-text", "MEMORY.md", 22),
    ]
    with RightMemoryProvider(root) as provider:
        entries = {e.id: e for e in provider.iter_entries()}
    assert list(entries) == ["m", "real", "commented"]
    assert entries["real"].title == "text with `→ [dep:ghost]` inside code"
    assert entries["commented"].relations[0].target == "real"


def test_ascii_arrow_and_spaces_after_colon(tmp_path: Path) -> None:
    root = _store(tmp_path / "s", {"MEMORY.md": "# M {#m} -> [doc: n]\n\n- `n` x -> [todo:m]\n"})
    assert _codes(root) == []
    with RightMemoryProvider(root) as provider:
        assert [(r.type, r.target) for r in provider.get("m").relations] == [("doc", "n")]


def test_every_code_is_declared_and_documented() -> None:
    import re as _re

    from memcore_rightmemory.mapping import DIAGNOSTIC_CODES

    src = Path(__file__).resolve().parents[1] / "src" / "memcore_rightmemory"
    used = set()
    for path in src.glob("*.py"):
        if path.name != "mapping.py":
            used |= set(_re.findall(r'"(rm\.[a-z-]+)"', path.read_text()))
    assert used <= set(DIAGNOSTIC_CODES), used - set(DIAGNOSTIC_CODES)
    doc = (Path(__file__).resolve().parents[3] / "docs" / "formats" / "rightmemory.md").read_text()
    assert [code for code in DIAGNOSTIC_CODES if f"`{code}`" not in doc] == []


def test_symlinked_root_file_is_irregular(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# M {#m}\n")
    root = _store(tmp_path / "s", {})
    os.symlink(outside, root / "MEMORY.md")
    assert _codes(root) == [("rm.irregular-file", "MEMORY.md", None)]


def test_bad_meta_comment_is_a_warning_and_left_alone(tmp_path: Path) -> None:
    from memcore.errors import InvalidEntryError
    from memcore.models import Severity

    root = _store(tmp_path / "s", {"MEMORY.md": "# M {#m}\n\n- `a` x → []\n  <!-- memcore: not json -->\n"})
    with RightMemoryProvider(root) as provider:
        (diag,) = provider.validate()
        assert (diag.code, diag.severity, diag.line) == ("rm.bad-meta", Severity.WARNING, 4)
        entry = provider.get("a")
        entry.title = "y"
        with pytest.raises(InvalidEntryError):
            provider.update(entry)
    assert (root / "MEMORY.md").read_text().endswith("<!-- memcore: not json -->\n")
