"""Search that scales: every format at 1,000 / 10,000 / 100,000 entries, each figure beside its floor.

Run: ``python benchmarks/bench_index.py [--sizes 1000,10000,100000] [--formats whitebox,box,rightmemory,maka]
[--json out.json]``

For each format and size, in one run, a fresh interpreter (so that peak RSS is its own) generates
a realistic store with that format's generator (the same ones the format benchmarks use), then
measures:

* **open + iterate**: cold open and full iteration, beside the floor of reading the same files'
  bytes with no parsing;
* **search**: p50 / p95 over 20 queries through the warm SQLite FTS5 index, beside the full-scan
  search (``index=False``) for the same queries (p50 of 5), and the ratio (target <= 1%);
* **store.search() through the API**: p50 / p95 over 10 rounds of the 20 queries on one open
  store whose index was built (``memcore index build``), as a host application calls it (the
  issue's target: p95 <= 1 ms at 1,000 entries, <= 3 ms at 100,000);
* **refresh**: the incremental index refresh after one edited file, beside a full rebuild
  (target <= 5% on a store of 10,000 files);
* **bulk add**: 1,000 adds (in a batch where the format has one), beside writing the bytes they
  produced with plain file writes;
* **peak RSS while iterating** (target < 250 MB at 100,000 entries): open + full iteration in a
  fresh interpreter of its own, so that generating the store does not count; and the peak of the
  whole measurement process beside it.

Maka keeps one file of at most 128 KiB, so its "size" is capped at what fits (about 600 entries);
the table says so rather than pretending.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: Rounds of QUERIES for the store.search() figures (p50 / p95 over rounds x 20 calls).
API_ROUNDS = 10
QUERIES = [
    "prefers",
    "tests first",
    "deploy",
    "parser fenced",
    "mobile tokens",
    "concise",
    "review",
    "metric",
    "gateway",
    "observations verbatim",
    "stateless",
    "signatures",
    "language",
    "tone",
    "component",
    "emphasis",
    "link",
    "summary",
    "editor",
    "short answers",
]


def _words_file(path: Path, rnd: random.Random) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("the ", "the edited ", 1) + "\n", encoding="utf-8")


def generate(fmt: str, root: Path, n: int) -> tuple[str, int]:
    """Generate a store of about ``n`` entries; return (store URL, entries actually generated)."""
    sys.path.insert(0, str(HERE))
    if fmt == "whitebox":
        from bench_whitebox import generate as gen_wb

        gen_wb(root, n, 24)
        return f"whitebox:{root}", n
    if fmt == "rightmemory":
        from bench_rightmemory import generate as gen_rm

        root.mkdir(parents=True, exist_ok=True)
        files = max(2, min(200, n // 250))
        nodes, headings = gen_rm(root, files, n)
        return f"rightmemory:{root}", nodes + headings
    if fmt == "box":
        from bench_box import make_entries

        from memcore_box import BoxMemoryProvider

        BoxMemoryProvider.init_store(str(root))
        with BoxMemoryProvider(str(root)) as store, store.batch():
            for entry in make_entries(n, 7, "memo"):
                store.add(entry)
        return f"box:{root}", n
    if fmt == "maka":
        from bench_maka import make_file

        root.mkdir(parents=True, exist_ok=True)
        count = make_file(root / "MEMORY.md", 7)
        return f"maka:{root / 'MEMORY.md'}", count
    raise SystemExit(f"unknown format {fmt!r}")


def _files(location: Path) -> list[str]:
    """Every file of the store (as strings: 100,000 Path objects alone hold ~80 MB)."""
    root = location if location.is_dir() else location.parent
    return [
        str(p)
        for p in root.rglob("*")
        if p.is_file() and not any(s.startswith(".") for s in p.parts[len(root.parts) :])
    ]


_ITERATE = """
import resource, sys
import memcore
with memcore.open(sys.argv[1]) as store:
    n = sum(1 for _ in store.iter_entries())
print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def iterate_peak_rss(url: str) -> tuple[int, float]:
    """Open and iterate the store in a fresh interpreter; return (entries, its peak RSS in MB).

    The issue's figure: memory while iterating, without what generating the store in this
    process took.
    """
    done = subprocess.run([sys.executable, "-c", _ITERATE, url], check=True, capture_output=True, text=True)
    count, rss_kb = done.stdout.split()
    return int(count), int(rss_kb) / 1024


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(fmt: str, n: int) -> dict[str, Any]:
    """Run every measurement for one format and size in this process."""
    import memcore
    from memcore.index import SearchIndex

    with tempfile.TemporaryDirectory(prefix=f"bench-{fmt}-") as tmp:
        base = Path(tmp)
        os.environ["MEMCORE_CACHE_DIR"] = str(base / "cache")
        t0 = time.perf_counter()
        url, count = generate(fmt, base / "store", n)
        gen_s = time.perf_counter() - t0
        location = Path(url.split(":", 1)[1])
        files = _files(location)
        out: dict[str, Any] = {
            "format": fmt,
            "requested": n,
            "entries": count,
            "files": len(files),
            "generate_s": round(gen_s, 2),
        }

        t0 = time.perf_counter()
        total = sum(len(Path(p).read_bytes()) for p in files)
        out["floor_read_s"] = time.perf_counter() - t0
        out["bytes"] = total
        t0 = time.perf_counter()
        with memcore.open(url) as store:
            seen = sum(1 for _ in store.iter_entries())
        out["open_iterate_s"] = time.perf_counter() - t0
        out["iterated"] = seen
        out["iterate_rss_mb"] = iterate_peak_rss(url)[1]

        with memcore.open(url) as store:
            t0 = time.perf_counter()
            with SearchIndex(store) as index:
                out["index_build_s"] = time.perf_counter() - t0
                indexed: list[float] = []
                for q in QUERIES:
                    t0 = time.perf_counter()
                    index.search(q, limit=20)
                    indexed.append(time.perf_counter() - t0)
            scan: list[float] = []
            scan_store = memcore.open(url, index=False)
            for q in QUERIES[:5]:
                t0 = time.perf_counter()
                scan_store.search(memcore.Query(text=q, limit=20))
                scan.append(time.perf_counter() - t0)
            # A limit stops a scan early; the full-scan figure that matters scans everything:
            t0 = time.perf_counter()
            scan_store.search(memcore.Query(text="zzzz-no-such-word"))
            out["scan_full_s"] = time.perf_counter() - t0
            scan_store.close()
            out["search_index_p50_ms"] = _pct(indexed, 0.5) * 1000
            out["search_index_p95_ms"] = _pct(indexed, 0.95) * 1000
            out["search_scan_p50_ms"] = _pct(scan, 0.5) * 1000
            out["search_ratio_pct"] = 100 * _pct(indexed, 0.5) / max(out["scan_full_s"], 1e-9)

            # store.search() through the API, as a host calls it: the store opened once, the
            # index kept open on it, each call checking for changes before it answers.
            api_store = memcore.open(url)
            for q in QUERIES:  # warm-up: first connection, first refresh, page cache
                api_store.search(memcore.Query(text=q, limit=20))
            api: list[float] = []
            for _round in range(API_ROUNDS):
                for q in QUERIES:
                    t0 = time.perf_counter()
                    api_store.search(memcore.Query(text=q, limit=20))
                    api.append(time.perf_counter() - t0)
            api_store.close()
            out["api_search_p50_ms"] = _pct(api, 0.5) * 1000
            out["api_search_p95_ms"] = _pct(api, 0.95) * 1000
            out["api_search_max_ms"] = max(api) * 1000

            edited = Path(
                sorted(p for p in files if p.endswith(".md") and os.path.basename(p) not in {"AGENTS.md", "tags.md"})[
                    -1
                ]
            )
            _words_file(edited, random.Random(1))
            index = SearchIndex(store)
            t0 = time.perf_counter()
            status = index.refresh()
            out["refresh_one_s"] = time.perf_counter() - t0
            out["refresh_reread"] = status.reread
            t0 = time.perf_counter()
            index.rebuild()
            out["rebuild_s"] = time.perf_counter() - t0
            index.close()
            out["refresh_ratio_pct"] = 100 * out["refresh_one_s"] / max(out["rebuild_s"], 1e-9)

        out.update(_bulk_add(fmt, base))
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return out


def _bulk_add(fmt: str, base: Path) -> dict[str, Any]:
    import contextlib

    import memcore
    from memcore import Capability, MemoryEntry
    from memcore.registry import get_registry

    cls = get_registry().get(fmt)
    location = base / "bulk" / ("MEMORY.md" if fmt == "maka" else "store")
    location.parent.mkdir(parents=True, exist_ok=True)
    cls.init_store(str(location))
    count = 1000 if fmt != "maka" else 200
    rnd = random.Random(3)
    words = "keep answers short prefer tests first review before merge metric units direct tone".split()
    entries = [
        MemoryEntry(
            title=f"Bulk {i} {rnd.choice(words)}",
            body=" ".join(rnd.choices(words, k=30)),
            tags=[rnd.choice(["work", "style"])],
            source="bench",
        )
        for i in range(count)
    ]
    with memcore.open(f"{fmt}:{location}") as store:
        batch = store.batch() if Capability.BATCH in store.capabilities else contextlib.nullcontext()
        t0 = time.perf_counter()
        with batch:
            for e in entries:
                store.add(e)
        add_s = time.perf_counter() - t0
    written = {p: Path(p).read_bytes() for p in _files(location)}
    t0 = time.perf_counter()
    for path, data in written.items():
        with open(str(path) + ".floor", "wb") as fh:
            fh.write(data)
    floor = time.perf_counter() - t0
    return {"bulk_adds": count, "bulk_add_s": add_s, "bulk_floor_s": floor}


def render_markdown(rows: list[dict[str, Any]]) -> str:
    """Return the rows as the markdown table docs/performance.md holds (one line per format and size)."""
    head = (
        "| format | entries | files | open + iterate | floor (read bytes) | search p50 / p95 (index) | "
        "full scan | search / scan | refresh one file / rebuild | bulk adds | floor (plain writes) | "
        "peak RSS iterating (whole run) |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in sorted(rows, key=lambda r: (r["format"], r["entries"])):
        lines.append(
            f"| {r['format']} | {r['entries']:,} | {r['files']:,} | {r['open_iterate_s']:.2f} s | "
            f"{r['floor_read_s'] * 1000:.0f} ms | {r['search_index_p50_ms']:.2f} / {r['search_index_p95_ms']:.0f} ms | "
            f"{r['scan_full_s'] * 1000:,.0f} ms | {r['search_ratio_pct']:.3f} % | "
            f"{r['refresh_one_s'] * 1000:,.0f} / {r['rebuild_s'] * 1000:,.0f} ms = {r['refresh_ratio_pct']:.1f} % | "
            f"{r['bulk_adds']:,} in {r['bulk_add_s']:.2f} s | {r['bulk_floor_s'] * 1000:.0f} ms | "
            f"{r.get('iterate_rss_mb', float('nan')):.0f} MB ({r['peak_rss_mb']:.0f} MB) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--formats", default="whitebox,box,rightmemory,maka")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    parser.add_argument("--one", nargs=2, metavar=("FORMAT", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--render",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="print the markdown table of docs/performance.md from earlier --json files",
    )
    parser.add_argument(
        "--no-fast",
        action="store_true",
        help="YAML fast paths off (MEMCORE_YAML_FAST=0): the general path, as before them",
    )
    args = parser.parse_args()
    if args.no_fast:
        from memcore.frontmatter import set_fast_paths

        set_fast_paths(False)
    if args.render:
        rows = [row for path in args.render for row in json.loads(path.read_text())]
        print(render_markdown(rows))
        return
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]))))
        return
    rows = []
    for fmt in args.formats.split(","):
        sizes = [int(s) for s in args.sizes.split(",")]
        if fmt == "maka":
            sizes = sizes[:1]  # one file of at most 128 KiB: one size only
        for n in sizes:
            proc = subprocess.run([sys.executable, __file__, "--one", fmt, str(n)], capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{fmt} {n}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(
                f"{fmt:12} {row['entries']:>7} entries {row['files']:>6} files | "
                f"open+iterate {row['open_iterate_s']:7.2f}s (floor read {row['floor_read_s']:.2f}s) | "
                f"search idx p50 {row['search_index_p50_ms']:6.2f}ms p95 {row['search_index_p95_ms']:6.2f}ms "
                f"vs scan {row['scan_full_s'] * 1000:8.1f}ms = {row['search_ratio_pct']:.3f}% | "
                f"refresh {row['refresh_one_s'] * 1000:7.1f}ms vs rebuild {row['rebuild_s'] * 1000:8.1f}ms "
                f"= {row['refresh_ratio_pct']:.1f}% | store.search p50 {row['api_search_p50_ms']:.2f}ms "
                f"p95 {row['api_search_p95_ms']:.2f}ms max {row['api_search_max_ms']:.1f}ms | "
                f"bulk add {row['bulk_adds']} {row['bulk_add_s']:.2f}s "
                f"(floor {row['bulk_floor_s']:.3f}s) | peak RSS iterating {row['iterate_rss_mb']:.0f} MB "
                f"(whole run {row['peak_rss_mb']:.0f} MB)",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if rows:
        print("\nmedian search ratio:", statistics.median(r["search_ratio_pct"] for r in rows), "%")


if __name__ == "__main__":
    main()
