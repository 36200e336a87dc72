"""HEADING_RE matched in linear time, with exactly the reference pattern's matches.

Maka's ``^##\\s+(.+?)\\s*$`` (JavaScript classes) is quadratic on a long whitespace run inside a
title: ``"## a" + " " * 60000 + "b"`` took 16.6 s for ``memcore ls``. The provider now matches
with a possessive pattern (and the reference only for an all-whitespace heading, where it is
linear); measured, not asserted: that file now lists in about 0.6 s including start-up.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from memcore_maka import MakaProvider
from memcore_maka._parse import HEADING_RE, HEADING_REFERENCE_RE

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "maka"


def _sig(m: re.Match[str] | None) -> tuple[str, tuple[int, int]] | None:
    return None if m is None else (m.group(1), m.span(1))


def test_same_matches_on_samples_and_examples() -> None:
    files = [p for p in [*SAMPLES.glob("*.md"), *EXAMPLES.rglob("*.md")] if p.is_file()]
    assert len(files) >= 7
    headings = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").split("\n"):
            assert _sig(HEADING_RE.match(line)) == _sig(HEADING_REFERENCE_RE.match(line)), repr(line)
            headings += HEADING_RE.match(line) is not None
    assert headings > 10


def test_same_matches_on_generated_lines() -> None:
    alphabet = ["#", " ", "\t", "a", "b", "\r", "\u2028", "\u2029", "\u00a0", "\u3000", "\ufeff", "\v", "\x85", "\u200b"]
    rng = random.Random(3)
    matched = 0
    for _ in range(40000):
        line = rng.choice(["##", "## ", "#", "###", "##\t", ""]) + "".join(
            rng.choice(alphabet) for _ in range(rng.randint(0, 10))
        )
        assert _sig(HEADING_RE.match(line)) == _sig(HEADING_REFERENCE_RE.match(line)), repr(line)
        matched += HEADING_RE.match(line) is not None
    assert matched > 5000


def test_long_whitespace_title_reads(tmp_path: Path) -> None:
    title = "a" + " " * 60000 + "b"
    m = HEADING_RE.match("## " + title + "  ")
    assert m is not None and m.group(1) == title
    assert HEADING_RE.match("## a" + " " * 60000 + "\rb") is None
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Maka Memory\n\n## " + title + "\n<!-- maka-memory: id=x1 origin=manual createdAt=1770000000000 "
        "updatedAt=1770000000000 status=active -->\nbody\n",
        encoding="utf-8",
    )
    (entry,) = MakaProvider(path).open().iter_entries()
    assert entry.id == "x1" and entry.title.startswith("a") and entry.title.endswith("b")
