"""``store.search()`` as a host calls it: p50 / p95 / p99, wall clock and CPU time, one open store.

    python benchmarks/bench_search.py [--formats whitebox,box] [--sizes 1000,100000] \\
        [--rounds 8] [--keep DIR] [--before-src OLD/src] [--off] [--cold-rounds N] [--json out.json]

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
after this one, on the same store (its index in a cache folder of its own, so neither schema
rebuilds the other's): the ratio of the two is the change. ``--off`` measures this checkout a
second time with ``MEMCORE_FAST_RANK=0`` (every text ranked by FTS5's ``bm25()``, no postings:
``memcore.ranking``'s off switch). ``--cold-rounds N`` (default 1; 0 skips it) also times the
cold index (``SearchIndex.rebuild()`` of the whole store into an empty cache folder) N times
for each checkout, alternating, and keeps the best wall and CPU time.
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

    url = bench_index.kept_store(fmt, base, size)
    with memcore.open(url) as store, SearchIndex(store) as index:
        index.refresh()
    return url


def measure(url: str, rounds: int) -> dict[str, float]:
    """Time ``store.search()`` on one open store: ms percentiles of wall clock and CPU time."""
    sys.path.insert(0, str(HERE))
    import bench_index

    import memcore
    from memcore.index import SearchIndex

    with memcore.open(url) as store, SearchIndex(store):
        pass  # built (or brought up to date) in this process's cache folder
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


def cold_index(url: str, cache: str) -> dict[str, float]:
    """Index the whole store into the empty folder ``cache``: seconds of wall clock and CPU time."""
    import shutil

    import memcore
    from memcore.index import SearchIndex

    shutil.rmtree(cache, ignore_errors=True)
    with memcore.open(url) as store:
        c0, t0 = time.process_time(), time.perf_counter()
        with SearchIndex(store, cache_dir=Path(cache)):
            pass
        out = {"cold_wall_s": time.perf_counter() - t0, "cold_cpu_s": time.process_time() - c0}
    shutil.rmtree(cache, ignore_errors=True)
    return out


def _child(url: str, rounds: int, src: str | None, *, off: bool = False, cold: str | None = None) -> dict[str, float]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        env["MEMCORE_CACHE_DIR"] = env["MEMCORE_CACHE_DIR"] + "-before"
    if off:
        env["MEMCORE_FAST_RANK"] = "0"
    code = f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_search; "
    if cold is not None:
        code += f"print(json.dumps(bench_search.cold_index({url!r}, {cold!r})))"
    else:
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
    parser.add_argument("--off", action="store_true", help="Also measure with MEMCORE_FAST_RANK=0.")
    parser.add_argument("--cold-rounds", type=int, default=1, help="Cold index timings per checkout (0: none).")
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
            if args.off:
                off = _child(url, args.rounds, None, off=True)
                rows[-1]["off"] = off
                print(_row(f"{fmt}, {size:,} (MEMCORE_FAST_RANK=0)", off), flush=True)
            if args.before_src:
                before = _child(url, args.rounds, args.before_src)
                rows[-1]["before"] = before
                print(_row(f"{fmt}, {size:,} (before)", before), flush=True)
            sides = [("now", None), ("before", args.before_src)] if args.before_src else [("now", None)]
            best: dict[str, dict[str, float]] = {}
            for _ in range(args.cold_rounds):
                for side, src in sides:
                    got = _child(url, 0, src, cold=str(base / f"cold-{side}"))
                    kept = best.setdefault(side, dict(got))
                    for key, value in got.items():
                        kept[key] = min(kept[key], value)
            for side, figures in best.items():
                rows[-1][f"cold_{side}"] = figures
                print(
                    f"cold index, {fmt}, {size:,} ({side}): {figures['cold_wall_s']:.2f} s wall,"
                    f" {figures['cold_cpu_s']:.2f} s CPU (best of {args.cold_rounds})",
                    flush=True,
                )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
