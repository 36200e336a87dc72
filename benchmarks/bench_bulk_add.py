"""RightMemory's ``add_many`` beside one ``add`` each: CPU seconds, alternating, one process.

``python benchmarks/bench_bulk_add.py --entries 10000 --rounds 3 [--run 0 16]``

Each round adds the same entries (what a migration sends: the generated entries of
``bench_migrate.py``, ids kept or left to the target) to new RightMemory stores, in one
``batch()``: one ``add`` per entry, and ``add_many`` in calls of ``--run`` entries (0: all in
one call), alternating which goes first. It prints the median CPU seconds of each and checks
that both stores hold the same bytes. fsync is off (``scratch_writes``) on both sides.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_migrate import entries as generated

from memcore.models import MemoryEntry
from memcore.storage import scratch_writes
from memcore_rightmemory.provider import RightMemoryProvider


def _entries(n: int, *, with_ids: bool) -> list[MemoryEntry]:
    out = []
    for entry in generated(n):
        entry.relations = []  # a relation to an entry a run has not written ends the run: none here
        if not with_ids:
            entry.id = None
        out.append(entry)
    return out


def _one_by_one(root: Path, entries: list[MemoryEntry]) -> float:
    RightMemoryProvider.init_store(str(root))
    with RightMemoryProvider(str(root)) as store:
        c0 = time.process_time()
        with store.batch():
            for entry in entries:
                store.add(entry)
        return time.process_time() - c0


def _bulk(root: Path, entries: list[MemoryEntry], run: int) -> float:
    RightMemoryProvider.init_store(str(root))
    size = run or len(entries)
    with RightMemoryProvider(str(root)) as store:
        c0 = time.process_time()
        with store.batch():
            for start in range(0, len(entries), size):
                chunk = entries[start : start + size]
                done = store.add_many(chunk)
                assert len(done) == len(chunk) and all(isinstance(r, MemoryEntry) for r in done), done[-1]
        return time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run", type=int, nargs="+", default=[0], help="entries per add_many call (0: all)")
    parser.add_argument("--no-ids", action="store_true", help="send entries without ids (RightMemory derives them)")
    args = parser.parse_args(argv)
    entries = _entries(args.entries, with_ids=not args.no_ids)
    work = Path(tempfile.mkdtemp(prefix="memcore-bulk-add-"))
    try:
        with scratch_writes():
            for run in args.run:
                one: list[float] = []
                many: list[float] = []
                for r in range(args.rounds):
                    a, b = work / f"one-{run}-{r}", work / f"many-{run}-{r}"
                    a.mkdir()
                    b.mkdir()
                    if r % 2:
                        many.append(_bulk(b, entries, run))
                        one.append(_one_by_one(a, entries))
                    else:
                        one.append(_one_by_one(a, entries))
                        many.append(_bulk(b, entries, run))
                    same = (a / "MEMORY.md").read_bytes() == (b / "MEMORY.md").read_bytes()
                    assert same, "add_many wrote other bytes than one add each"
                    shutil.rmtree(a)
                    shutil.rmtree(b)
                m1, m2 = statistics.median(one), statistics.median(many)
                print(
                    f"rightmemory n={args.entries} ids={'given' if not args.no_ids else 'derived'} "
                    f"run={run or args.entries}: one add each {m1:.2f} s CPU, add_many {m2:.2f} s CPU "
                    f"({m2 / m1:.2f}x; rounds one {[round(x, 2) for x in one]}, many {[round(x, 2) for x in many]}); "
                    "same bytes",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
