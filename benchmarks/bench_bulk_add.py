"""RightMemory's (or Maka's) ``add_many`` beside one ``add`` each: CPU seconds, alternating, one process.

``python benchmarks/bench_bulk_add.py --entries 10000 --rounds 3 [--run 0 16]``
``python benchmarks/bench_bulk_add.py --format maka --entries 600 --rounds 9 --no-ids [--run 0 8]``
(Maka: the compact entries ``bench_migrate.py`` writes to Maka, as many as fit in its 128 KiB file)

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

from memcore.errors import StoreLimitError
from memcore.models import MemoryEntry
from memcore.storage import scratch_writes
from memcore_maka.provider import MakaProvider
from memcore_rightmemory.provider import RightMemoryProvider

#: The provider benchmarked (``--format``) and where its store is in a folder.
PROVIDERS: dict[str, tuple[type[RightMemoryProvider] | type[MakaProvider], str]] = {
    "rightmemory": (RightMemoryProvider, ""),
    "maka": (MakaProvider, "MEMORY.md"),
}
_provider, _file = PROVIDERS["rightmemory"]


def _location(root: Path) -> str:
    return str(root / _file) if _file else str(root)


def _entries(n: int, *, with_ids: bool) -> list[MemoryEntry]:
    out = []
    for entry in generated(n, compact=_provider is MakaProvider):
        entry.relations = []  # a relation to an entry a run has not written ends the run: none here
        if not with_ids:
            entry.id = None
        out.append(entry)
    return out


def _fitting(root: Path, entries: list[MemoryEntry]) -> list[MemoryEntry]:
    """The first of ``entries`` that one store holds (all but for Maka's 128 KiB file)."""
    _provider.init_store(_location(root))
    with _provider(_location(root)) as store, store.batch():
        for n, entry in enumerate(entries):
            try:
                store.add(entry)
            except StoreLimitError:
                return entries[:n]
    return entries


def _one_by_one(root: Path, entries: list[MemoryEntry]) -> float:
    _provider.init_store(_location(root))
    with _provider(_location(root)) as store:
        c0 = time.process_time()
        with store.batch():
            for entry in entries:
                store.add(entry)
        return time.process_time() - c0


def _bulk(root: Path, entries: list[MemoryEntry], run: int) -> float:
    _provider.init_store(_location(root))
    size = run or len(entries)
    with _provider(_location(root)) as store:
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
    parser.add_argument("--no-ids", action="store_true", help="send entries without ids (the target derives them)")
    parser.add_argument("--format", choices=sorted(PROVIDERS), default="rightmemory", help="the target")
    args = parser.parse_args(argv)
    global _provider, _file
    _provider, _file = PROVIDERS[args.format]
    entries = _entries(args.entries, with_ids=not args.no_ids)
    work = Path(tempfile.mkdtemp(prefix="memcore-bulk-add-"))
    try:
        with scratch_writes():
            (work / "fit").mkdir()
            entries = _fitting(work / "fit", entries)
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
                    f"{args.format} n={len(entries)} ids={'given' if not args.no_ids else 'derived'} "
                    f"run={run or len(entries)}: one add each {m1:.3f} s CPU, add_many {m2:.3f} s CPU "
                    f"({m2 / m1:.2f}x; rounds one {[round(x, 3) for x in one]}, many {[round(x, 3) for x in many]}); "
                    "same bytes",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
