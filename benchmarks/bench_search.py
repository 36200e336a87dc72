"""``store.search()`` as a host calls it: p50 / p95 / p99, wall clock and CPU time, one open store.

    python benchmarks/bench_search.py [--formats whitebox,box] [--sizes 1000,100000] \\
        [--rounds 8] [--keep DIR] [--before-src OLD/src] [--json out.json]

For each format and size, generates the store with ``bench_index.generate`` (kept in ``--keep``
and reused on the next run when given: 100,000 WhiteBox entries take about a minute to generate
and index), builds its index, opens it once and calls
``store.search(Query(text=q, limit=20))`` for ``bench_index.QUERIES`` (20 queries mixing rare
words and words in most of the generated entries) ``--rounds`` times after one warm-up round.
Each call is timed twice: wall clock (``perf_counter``) and this process's CPU time
(``process_time``). On a shared machine the wall clock's tail is mostly time spent waiting for
a core; the CPU time is the work the call did.

With ``--before-src DIR`` (the ``src`` folder of another checkout, e.g. ``git archive main src``
unpacked) every measurement also runs with that ``memcore`` first on ``PYTHONPATH``, right
after this one, on the same store and index: the ratio of the two is the change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prepare(fmt: str, size: int, base: Path) -> str:
    """Generate (unless kept from a previous run) and index the store; return its URL."""
    sys.path.insert(0, str(HERE))
    import bench_index

    import memcore
    from memcore.index import SearchIndex

    root = base / f"{fmt}-{size}"
    marker = root.with_suffix(".url")
    if marker.exists():
        url = marker.read_text(encoding="utf-8")
    else:
        url, _count = bench_index.generate(fmt, root, size)
        marker.write_text(url, encoding="utf-8")
    with memcore.open(url) as store, SearchIndex(store) as index:
        index.refresh()
    return url


def measure(url: str, rounds: int) -> dict[str, float]:
    """Time ``store.search()`` on one open store: ms percentiles of wall clock and CPU time."""
    sys.path.insert(0, str(HERE))
    import bench_index

    import memcore

    wall: list[float] = []
    cpu: list[float] = []
    with memcore.open(url) as store:
        for q in bench_index.QUERIES:  # warm-up: the index opened and refreshed once
            store.search(memcore.Query(text=q, limit=20))
        for _ in range(rounds):
            for q in bench_index.QUERIES:
                c0, t0 = time.process_time(), time.perf_counter()
                store.search(memcore.Query(text=q, limit=20))
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
    out = {"calls": float(len(wall))}
    for name, values in (("wall", wall), ("cpu", cpu)):
        for q in (0.5, 0.95, 0.99):
            out[f"{name}_p{round(q * 100)}_ms"] = _pct(values, q) * 1000
    return out


def _child(url: str, rounds: int, src: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    code = f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_search; "
    code += f"print(json.dumps(bench_search.measure({url!r}, {rounds})))"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _row(label: str, m: dict[str, float]) -> str:
    wall = " / ".join(f"{m[f'wall_p{p}_ms']:.2f}" for p in (50, 95, 99))
    cpu = " / ".join(f"{m[f'cpu_p{p}_ms']:.2f}" for p in (50, 95, 99))
    return f"| {label} | {wall} | {cpu} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--formats", default="whitebox,box")
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--rounds", type=int, default=8, help="Rounds of the 20 queries (8: 160 calls).")
    parser.add_argument("--keep", type=Path, default=None, help="Generate the stores here and reuse them.")
    parser.add_argument("--before-src", default=None, help="Another checkout's src folder, measured after each.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="memcore-bench-search-"))
    base.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MEMCORE_CACHE_DIR", str(base / "cache"))
    rows: list[dict[str, Any]] = []
    print("| store, entries | wall p50 / p95 / p99 (ms) | CPU p50 / p95 / p99 (ms) |")
    print("|---|---:|---:|")
    for fmt in args.formats.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            url = prepare(fmt, size, base)
            now = _child(url, args.rounds, None)
            rows.append({"format": fmt, "size": size, "now": now})
            print(_row(f"{fmt}, {size:,}", now), flush=True)
            if args.before_src:
                before = _child(url, args.rounds, args.before_src)
                rows[-1]["before"] = before
                print(_row(f"{fmt}, {size:,} (before)", before), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
