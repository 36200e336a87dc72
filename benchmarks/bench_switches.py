"""Benchmark: reading a fast path's switch (``memcore.switches.switch_on``), both ways.

Fast paths read their switch per entry or per file, so a 10,000-entry migration reads switches
30,000-40,000 times. This measures one ``switch_on`` call for a variable that is not set (the
usual case) and for one that is, reading the mapping behind ``os.environ`` (the default) and
through ``os.environ.get`` (``MEMCORE_SWITCH_READ_FAST=0``), alternately in one process, and
the same 40,000 reads as a migration would make them.

Run::

    python benchmarks/bench_switches.py            # best of 7 rounds of 200,000 calls each
    python benchmarks/bench_switches.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import timeit
from pathlib import Path
from typing import Any

from memcore import switches
from memcore.switches import switch_on

UNSET = "MEMCORE_BENCH_UNSET_SWITCH"
SET = "MEMCORE_BENCH_SET_SWITCH"


def measure(calls: int, rounds: int) -> list[dict[str, Any]]:
    """Best time per call (us) for each (variable, way of reading), rounds alternating the ways."""
    os.environ.pop(UNSET, None)
    os.environ[SET] = "1"
    best: dict[tuple[str, bool], float] = {}
    for i in range(rounds):
        for fast in (True, False) if i % 2 == 0 else (False, True):
            switches.FAST_READ = fast
            for name in (UNSET, SET):
                seconds = timeit.timeit(lambda name=name: switch_on(name), number=calls)
                key = (name, fast)
                best[key] = min(best.get(key, seconds), seconds)
    switches.FAST_READ = True
    rows = []
    for name, label in ((UNSET, "not set"), (SET, "set")):
        fast_us, env_us = best[(name, True)] / calls * 1e6, best[(name, False)] / calls * 1e6
        rows.append(
            {
                "variable": label,
                "fast_us": round(fast_us, 3),
                "os_environ_get_us": round(env_us, 3),
                "ratio": round(env_us / fast_us, 1),
                "per_40000_reads_ms": {"fast": round(fast_us * 40, 1), "os_environ_get": round(env_us * 40, 1)},
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000, help="calls per round (default 200000)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, the best kept (default 7)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    rows = measure(args.calls, args.rounds)
    for row in rows:
        print(
            f"switch {row['variable']:8s} fast {row['fast_us']:.3f} us  "
            f"os.environ.get {row['os_environ_get_us']:.3f} us"
            f"  ({row['ratio']}x; 40,000 reads: {row['per_40000_reads_ms']['fast']} vs "
            f"{row['per_40000_reads_ms']['os_environ_get']} ms)"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
