"""Benchmark: a migration into Box with its ``plan_ids`` and without, side by side in one process.

Builds the bench_migrate source (``--source`` format, N entries, a supersede pair every 50),
then alternates migrations into fresh Box workspaces: the Box provider as it is (forward
relations planned, written by ``add``) and the same provider with ``plan_ids`` off (those
entries updated in a second pass, and their ``updated_at`` kept by one update more). Reports
per round the CPU seconds (``time.process_time``) of each migration and the ``update`` calls
it made, then the median of each. fsync off (scratch_writes) for both.

Run::

    python benchmarks/bench_box_plan.py                      # whitebox, N = 10000, 3 rounds
    python benchmarks/bench_box_plan.py --entries 2000 --rounds 5 --source rightmemory
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_migrate import build_source

from memcore.migrate import migrate
from memcore.models import MemoryEntry
from memcore.provider import BaseProvider
from memcore.storage import scratch_writes
from memcore_box.provider import BoxMemoryProvider


class _Counted(BoxMemoryProvider):
    """The Box provider, counting its ``update`` calls."""

    updates: ClassVar[int] = 0

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        _Counted.updates += 1
        return super().update(entry, expected_version=expected_version)


class _Unplanned(_Counted):
    """The Box provider without ``plan_ids`` (BaseProvider's: plans nothing)."""

    plan_ids = BaseProvider.plan_ids  # type: ignore[assignment]


def _once(cls: type[_Counted], src: str, dest: Path) -> tuple[float, int, Any]:
    _Counted.updates = 0
    c0 = time.process_time()
    report = migrate(src, cls(str(dest)))
    return time.process_time() - c0, _Counted.updates, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="entries in the source (default 10000)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--source", default="whitebox", help="source format (default whitebox)")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-box-plan-"))
    try:
        with scratch_writes():
            loc, n = build_source(args.source, args.entries, root / "src")
            src = f"{args.source}:{loc}"
            cpu: dict[str, list[float]] = {"planned": [], "unplanned": []}
            updates: dict[str, int] = {}
            for r in range(args.rounds):
                order = [("planned", _Counted), ("unplanned", _Unplanned)]
                for name, cls in order if r % 2 == 0 else order[::-1]:
                    dest = root / f"{name}-{r}"
                    seconds, count, report = _once(cls, src, dest)
                    assert report.ok, report.counts
                    cpu[name].append(seconds)
                    updates[name] = count
                    kept = report.counts["kept"]
                    print(f"round {r + 1} {name:9} CPU {seconds:6.2f}s  updates {count:5}  kept {kept}")
                    shutil.rmtree(dest)
        p, u = statistics.median(cpu["planned"]), statistics.median(cpu["unplanned"])
        print(
            f"{args.source} -> box, {n} entries, median of {args.rounds}: planned {p:.2f}s CPU "
            f"({updates['planned']} updates), plan_ids off {u:.2f}s CPU ({updates['unplanned']} updates): "
            f"{u / p:.2f}x"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
