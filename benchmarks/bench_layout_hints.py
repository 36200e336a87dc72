"""What reading pays for the layout hints (``extra.basicmemory.layout``, ``extra.claudecode.layout``).

Run: ``python benchmarks/bench_layout_hints.py [--notes 2000] [--topics 150] [--rounds 15]``

Builds a basic-memory project (``--notes`` notes written by memcore, plus the authors' fixtures)
and a Claude Code store (``--topics`` topics written by memcore, plus the 0WAQ sample's two
topics) in a temporary folder, then reads each whole store with a fresh provider, the hint step
(:func:`memcore.layout.read_layout`, Claude Code's ``written_order``) as it is and stubbed out,
alternating in one process. Reports CPU time (``time.process_time``), the median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import memcore_basicmemory.codec as bm_codec
import memcore_claudecode.codec as cc_codec
from memcore.models import Kind, MemoryEntry
from memcore_basicmemory.provider import BasicMemoryProvider
from memcore_claudecode.provider import ClaudeCodeProvider

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
_REAL = (bm_codec.read_layout, cc_codec.read_layout, cc_codec.written_order)


def _hints(on: bool) -> None:
    stubs: tuple[Any, ...] = (lambda *a: {}, lambda *a: {}, lambda *a: ([], None))
    bm_codec.read_layout, cc_codec.read_layout, cc_codec.written_order = _REAL if on else stubs


def _build(root: Path, notes: int, topics: int) -> tuple[Path, Path]:
    bm, cc = root / "bm", root / "cc"
    bm.mkdir()
    with BasicMemoryProvider(bm) as store, store.batch():
        for i in range(notes):
            body = f"Body {i}\n- [fact] x #t\n"
            store.add(MemoryEntry(title=f"Note {i}", kind=Kind.DECISION, body=body, tags=["a", "b"]))
    fixtures = SAMPLES / "basic-memory" / "fixtures"
    if fixtures.is_dir():
        shutil.copytree(fixtures, bm / "fixtures")
    ClaudeCodeProvider.init_store(str(cc))
    with ClaudeCodeProvider(cc) as store:
        for i in range(topics):
            store.add(MemoryEntry(title=f"topic {i}", kind=Kind.PREFERENCE, body=f"Body {i}\n"))
    for topic in (SAMPLES / "claude-code-memory" / "auto-memory" / "0WAQ-gsim-ops").glob("*_*.md"):
        shutil.copyfile(topic, cc / topic.name)
    return bm, cc


def _reader(cls: type[Any], location: Path) -> Callable[[], int]:
    def read() -> int:
        with cls(location, read_only=True) as store:
            return len(list(store.iter_entries()))

    return read


def main(argv: list[str] | None = None) -> int:
    """Print the read CPU time with and without the layout hints."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--topics", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bm, cc = _build(Path(tmp), args.notes, args.topics)
        readers = {
            "basicmemory": (_reader(BasicMemoryProvider, bm), 1),
            "claudecode": (_reader(ClaudeCodeProvider, cc), 10),
        }
        times: dict[tuple[str, bool], list[float]] = {(name, on): [] for name in readers for on in (False, True)}
        counts: dict[str, int] = {}
        for _ in range(args.rounds):
            for on in (False, True):
                _hints(on)
                for name, (read, reps) in readers.items():
                    start = time.process_time()
                    for _ in range(reps):
                        counts[name] = read()
                    times[(name, on)].append((time.process_time() - start) / reps)
        _hints(True)
    for name in readers:
        off, on = statistics.median(times[(name, False)]), statistics.median(times[(name, True)])
        print(
            f"{name}: {counts[name]} entries, one read without hints {off * 1e3:.1f} ms, with {on * 1e3:.1f} ms "
            f"(CPU, median of {args.rounds}): {(on / off - 1) * 100:+.1f}%"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
