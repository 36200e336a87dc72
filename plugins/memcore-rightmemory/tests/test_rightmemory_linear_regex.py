"""ANCHOR_RE / NODE_RE / the anchor-candidate patterns, matched in linear time.

The reference patterns are quadratic on one long line (a 48 KB node line of `` -> [x`` took
3.6 s, a 90 KB heading of ``{#a} -> [`` 10 s). :func:`match_anchor`, :func:`match_node` and
:func:`match_anchor_candidate` cut the line with string methods first; these tests check they
give exactly the reference's groups and spans on every line of the authors' samples, the
examples and seeded generated lines, and read the long lines right. Measured (not asserted,
tests never time): each 40-100 KB line below parses in about 0.01 s, against 3-10 s before.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory._parse import (
    ANCHOR_CANDIDATE_RE,
    ANCHOR_RE,
    NODE_RE,
    UNSUPPORTED_ANCHOR_RE,
    match_anchor,
    match_anchor_candidate,
    match_node,
)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples" / "rightmemory"


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
        p for p in (ROOT / "examples" / "rightmemory").rglob("*.md") if p.is_file()
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
