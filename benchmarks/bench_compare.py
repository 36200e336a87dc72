"""Run a benchmark in two checkouts side by side, alternating, and print the ratio table.

    python benchmarks/bench_compare.py --old ../memcore-before --new . --rounds 2 \\
        --json out.json -- bench_index.py --sizes 1000,10000

Each round runs the benchmark once in the old checkout, then once in the new one (each with its
own interpreter: ``<checkout>/.venv/bin/python`` unless ``--old-python``/``--new-python`` say
otherwise), so that both see the same machine state; the best (lowest) figure of the rounds is
kept for each measure. Works with the benchmarks that write ``--json`` rows: ``bench_index.py``
(rows keyed by format and size) and ``bench_migrate.py`` (rows keyed by pair). The table gives,
per row and time measure, old, new and new/old; a ratio above ``1.10`` is flagged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: The measures compared, per benchmark (seconds or milliseconds; lower is better).
MEASURES = {
    "bench_index.py": [
        "open_iterate_s",
        "index_build_s",
        "search_index_p50_ms",
        "api_search_p50_ms",
        "api_search_p95_ms",
        "refresh_one_s",
        "bulk_add_s",
    ],
    "bench_migrate.py": ["migrate_s"],
}


def _key(row: dict[str, Any]) -> str:
    if "pair" in row:
        return str(row["pair"])
    return f"{row['format']} {row['requested']:,}"


def _run(checkout: Path, python: str, script: str, args: list[str], out: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [python, str(checkout / "benchmarks" / script), *args, "--json", str(out)]
    print(f"$ (cd {checkout}) {' '.join(cmd)}", file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=checkout, env=env, check=True, stdout=subprocess.DEVNULL)
    rows: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
    return rows


def _best(runs: list[list[dict[str, Any]]], measures: list[str]) -> dict[str, dict[str, float]]:
    best: dict[str, dict[str, float]] = {}
    for rows in runs:
        for row in rows:
            slot = best.setdefault(_key(row), {})
            for name in measures:
                value = row.get(name)
                if isinstance(value, (int, float)):
                    slot[name] = min(slot.get(name, float("inf")), float(value))
    return best


def render(old: dict[str, dict[str, float]], new: dict[str, dict[str, float]], measures: list[str]) -> str:
    """Return the markdown table: one line per row and measure, old, new, new/old."""
    lines = ["| row | measure | old | new | new / old |", "|---|---|---:|---:|---:|"]
    for key in old:
        for name in measures:
            a, b = old[key].get(name), new.get(key, {}).get(name)
            if a is None or b is None:
                continue
            ratio = b / a if a else float("nan")
            flag = " ⚠" if ratio > 1.10 else ""
            lines.append(f"| {key} | {name} | {a:.4g} | {b:.4g} | {ratio:.2f}{flag} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the checkout measured first in each round")
    parser.add_argument("--new", type=Path, required=True, help="the checkout measured second in each round")
    parser.add_argument("--old-python", default=None, help="interpreter for --old (default <old>/.venv/bin/python)")
    parser.add_argument("--new-python", default=None, help="interpreter for --new (default <new>/.venv/bin/python)")
    parser.add_argument("--rounds", type=int, default=2, help="old/new rounds; the best of them is kept (default 2)")
    parser.add_argument("--json", type=Path, default=None, help="also write {old: [...runs], new: [...runs]} here")
    parser.add_argument("bench", nargs=argparse.REMAINDER, help="-- SCRIPT ARGS…, e.g. -- bench_index.py --sizes 1000")
    args = parser.parse_args(argv)
    bench = [a for a in args.bench if a != "--"]
    if not bench or bench[0] not in MEASURES:
        parser.error(f"name the benchmark after --: one of {', '.join(MEASURES)}")
    script, bench_args = bench[0], bench[1:]
    pythons = {
        "old": args.old_python or str(args.old / ".venv" / "bin" / "python"),
        "new": args.new_python or str(args.new / ".venv" / "bin" / "python"),
    }
    runs: dict[str, list[list[dict[str, Any]]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="memcore-compare-") as tmp:
        for round_ in range(args.rounds):
            for side, checkout in (("old", args.old), ("new", args.new)):
                out = Path(tmp) / f"{side}-{round_}.json"
                runs[side].append(_run(checkout.resolve(), pythons[side], script, bench_args, out))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    measures = MEASURES[script]
    print(render(_best(runs["old"], measures), _best(runs["new"], measures), measures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
