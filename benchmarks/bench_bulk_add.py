"""A target's ``add_many`` beside one ``add`` each: CPU seconds, alternating, one process.

``python benchmarks/bench_bulk_add.py --entries 10000 --rounds 3 [--run 0 16] [--format whitebox [--plan]]``
``python benchmarks/bench_bulk_add.py --format maka --entries 600 --rounds 9 --no-ids [--run 0 8]``
(Maka: the compact entries ``bench_migrate.py`` writes to Maka, as many as fit in its 128 KiB file)

Each round adds the same entries (what a migration sends: the generated entries of
``bench_migrate.py``, ids kept or left to the target) to new stores of ``--format``
(RightMemory by default; WhiteBox opened as a migration opens it, ``as_user``; Maka's one
file), in one
``batch()``: one ``add`` per entry, and ``add_many`` in calls of ``--run`` entries (0: all in
one call), alternating which goes first. It prints the median CPU seconds of each and checks
that both stores hold the same bytes. fsync is off (``scratch_writes``) on both sides.

WhiteBox gives its own ids (an observation's is its place), so its entries are sent without
ids; ``--plan`` asks ``plan_ids`` first, on both sides, and sends each entry with its planned
id, as a migration whose relations point forward does (``add_many`` then reuses the blocks
``plan_ids`` rendered; the time of ``plan_ids`` is counted on both sides).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_migrate import entries as generated

from memcore.errors import StoreLimitError
from memcore.models import MemoryEntry
from memcore.registry import get_registry
from memcore.storage import scratch_writes

#: Options each format's store is opened with (a migration's target options).
_OPTIONS = {"whitebox": {"as_user": True}}
#: The store's file in its folder, for a one-file format.
_FILES = {"maka": "MEMORY.md"}


def _entries(n: int, *, with_ids: bool) -> list[MemoryEntry]:
    out = []
    for entry in generated(n):
        entry.relations = []  # a relation to an entry a run has not written ends the run: none here
        if not with_ids:
            entry.id = None
        out.append(entry)
    return out


def _open(fmt: str, root: Path) -> Any:
    cls = get_registry().get(fmt)
    location = str(root / _FILES[fmt]) if fmt in _FILES else str(root)
    cls.init_store(location)
    return cls(location, **_OPTIONS.get(fmt, {}))


def _fitting(fmt: str, root: Path, entries: list[MemoryEntry]) -> list[MemoryEntry]:
    """The first of ``entries`` that one store holds (all but for Maka's 128 KiB file)."""
    with _open(fmt, root) as store, store.batch():
        for n, entry in enumerate(entries):
            try:
                store.add(entry)
            except StoreLimitError:
                return entries[:n]
    return entries


def _planned(store: Any, entries: list[MemoryEntry], plan: bool) -> list[MemoryEntry]:
    """``entries`` with the ids ``plan_ids`` gives them (``plan``), else as they are."""
    if not plan:
        return entries
    ids = store.plan_ids(entries)
    return [e.model_copy(update={"id": i}) for e, i in zip(entries, ids, strict=True)]


def _one_by_one(fmt: str, root: Path, entries: list[MemoryEntry], plan: bool) -> float:
    with _open(fmt, root) as store:
        c0 = time.process_time()
        sent = _planned(store, entries, plan)
        with store.batch():
            for entry in sent:
                store.add(entry)
        return time.process_time() - c0


def _bulk(fmt: str, root: Path, entries: list[MemoryEntry], run: int, plan: bool) -> float:
    size = run or len(entries)
    with _open(fmt, root) as store:
        c0 = time.process_time()
        sent = _planned(store, entries, plan)
        with store.batch():
            for start in range(0, len(sent), size):
                chunk = sent[start : start + size]
                done = store.add_many(chunk)
                assert len(done) == len(chunk) and all(isinstance(r, MemoryEntry) for r in done), done[-1]
        return time.process_time() - c0


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run", type=int, nargs="+", default=[0], help="entries per add_many call (0: all)")
    parser.add_argument("--no-ids", action="store_true", help="send entries without ids (the target derives them)")
    parser.add_argument("--format", default="rightmemory", choices=["box", "maka", "rightmemory", "whitebox"])
    parser.add_argument("--plan", action="store_true", help="WhiteBox: send the ids plan_ids gives (both sides)")
    args = parser.parse_args(argv)
    fmt = args.format
    with_ids = not args.no_ids and fmt != "whitebox"
    entries = _entries(args.entries, with_ids=with_ids)
    work = Path(tempfile.mkdtemp(prefix="memcore-bulk-add-"))
    try:
        with scratch_writes():
            (work / "fit").mkdir()
            entries = _fitting(fmt, work / "fit", entries)
            for run in args.run:
                one: list[float] = []
                many: list[float] = []
                for r in range(args.rounds):
                    a, b = work / f"one-{run}-{r}", work / f"many-{run}-{r}"
                    a.mkdir()
                    b.mkdir()
                    if r % 2:
                        many.append(_bulk(fmt, b, entries, run, args.plan))
                        one.append(_one_by_one(fmt, a, entries, args.plan))
                    else:
                        one.append(_one_by_one(fmt, a, entries, args.plan))
                        many.append(_bulk(fmt, b, entries, run, args.plan))
                    same = _files(a) == _files(b)
                    assert same, "add_many wrote other bytes than one add each"
                    shutil.rmtree(a)
                    shutil.rmtree(b)
                m1, m2 = statistics.median(one), statistics.median(many)
                print(
                    f"{fmt} n={len(entries)} ids={'planned' if args.plan else 'given' if with_ids else 'derived'} "
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
