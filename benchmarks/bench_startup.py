"""Start-up of every ``memcore`` command, beside the interpreter's own (``python -c pass``).

    python benchmarks/bench_startup.py --rounds 11 [--memcore PATH] [--before PATH] [--json out.json]

Each round runs, once each and in the same order, ``python -c pass``, ``memcore --version``,
``memcore <command> --help`` for every command the CLI lists (plugin commands included, one
level of subcommands too), ``memcore search`` on an empty WhiteBox vault (no index: the whole
command with nothing to find) and ``memcore search`` of one word (``--limit 5``, table and
``--json``) on a 1,000-note WhiteBox vault (benchmarks/bench_peer.py's corpus) with a built,
fresh index, as it runs and with the fast path off (``MEMCORE_FAST_SEARCH=0``: provider,
refresh and models). Alternating the
commands round by round means each sees the same machine state; the table gives the median and
the fastest of the rounds, in seconds of wall clock, and the median over ``python -c pass``.
With ``--before PATH`` (another ``memcore`` script, e.g. an older checkout's), each command is
also run through it right after, and the table gains its median and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click


def _commands() -> list[list[str]]:
    """Every command path the CLI offers: ``["search"]``, ``["index", "build"]``, …"""
    from memcore.cli import _load_plugin_commands, cli

    _load_plugin_commands()
    paths: list[list[str]] = []
    for name in sorted(cli.commands):
        command = cli.commands[name]
        paths.append([name])
        if isinstance(command, click.Group):
            paths.extend([name, sub] for sub in sorted(command.commands))
    return paths


#: The commands run as an installed memcore does: with its bytecode cached (pip compiles it when
#: it installs; an editable checkout under PYTHONDONTWRITEBYTECODE would recompile every module
#: of every run, about 0.1 s of start-up that no user pays). A warm-up round writes the caches.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**_ENV, **(env or {})}
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return elapsed


def measure(
    memcore: str, python: str, rounds: int, vault: Path, before: str | None = None, indexed: Path | None = None
) -> list[dict[str, object]]:
    """Return one row per command: ``{"command", "median_s", "min_s", "runs"[, "before_median_s"]}``."""
    cases: list[tuple[str, list[str], dict[str, str]]] = [("memcore --version", ["--version"], {})]
    cases += [(f"memcore {' '.join(path)} --help", [*path, "--help"], {}) for path in _commands()]
    cases.append(("memcore search (empty vault)", ["search", "--store", f"whitebox:{vault}", "anything"], {}))
    if indexed is not None:
        query = ["search", "--store", f"whitebox:{indexed}", "river", "--limit", "5"]
        off = {"MEMCORE_FAST_SEARCH": "0"}
        cases += [
            ("memcore search --json (1,000 notes, indexed)", [*query, "--json"], {}),
            ("memcore search --json (1,000 notes, indexed, fast path off)", [*query, "--json"], off),
            ("memcore search, table (1,000 notes, indexed)", query, {}),
            ("memcore search, table (1,000 notes, indexed, fast path off)", query, off),
        ]
    times: dict[str, list[float]] = {"python -c pass": []}
    old: dict[str, list[float]] = {}
    for label, _, _ in cases:
        times[label] = []
        old[label] = []
    for _, args, env in cases:  # warm-up, not measured: bytecode caches written, files cached
        _time([memcore, *args], env)
    for i in range(rounds):
        times["python -c pass"].append(_time([python, "-c", "pass"]))
        for label, args, env in cases:
            times[label].append(_time([memcore, *args], env))
            if before is not None:
                old[label].append(_time([before, *args], env))
        print(f"round {i + 1}/{rounds}", file=sys.stderr, flush=True)
    rows: list[dict[str, object]] = []
    for label, t in times.items():
        row: dict[str, object] = {"command": label, "median_s": statistics.median(t), "min_s": min(t), "runs": len(t)}
        if old.get(label):
            row["before_median_s"] = statistics.median(old[label])
        rows.append(row)
    return rows


def render(rows: list[dict[str, object]]) -> str:
    """Return the markdown table of ``rows`` (``python -c pass`` first, as the floor)."""
    floor = float(rows[0]["median_s"])  # type: ignore[arg-type]
    before = any("before_median_s" in row for row in rows)
    head = "| command | median (s) | fastest (s) | over `python -c pass` |"
    rule = "|---|---:|---:|---:|"
    if before:
        head += " before: median (s) | before / now |"
        rule += "---:|---:|"
    lines = [head, rule]
    for row in rows:
        median = float(row["median_s"])  # type: ignore[arg-type]
        line = f"| `{row['command']}` | {median:.3f} | {float(row['min_s']):.3f} | {median / floor:.1f} |"  # type: ignore[arg-type]
        if "before_median_s" in row:
            old = float(row["before_median_s"])  # type: ignore[arg-type]
            line += f" {old:.3f} | {old / median:.1f} |"
        elif before:
            line += " | |"
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=11, help="Runs of each command (alternating).")
    parser.add_argument(
        "--memcore",
        default=str(Path(sys.executable).with_name("memcore")),
        help="The memcore console script (default: the one beside this interpreter).",
    )
    parser.add_argument("--before", default=None, help="Another memcore script to run beside it (e.g. main's).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the rows as JSON here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memcore-bench-startup-") as tmp:
        vault = Path(tmp) / "vault"
        subprocess.run([args.memcore, "init", "--store", f"whitebox:{vault}"], check=True, stdout=subprocess.DEVNULL)
        indexed = Path(tmp) / "notes"
        _ENV["MEMCORE_CACHE_DIR"] = str(Path(tmp) / "cache")
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_peer import generate

        generate(indexed, 1000)
        time.sleep(2.5)  # older than memcore._fresh.SETTLE_NS: the build writes the freshness stamp
        build = [args.memcore, "index", "build", "--store", f"whitebox:{indexed}"]
        subprocess.run(build, check=True, stdout=subprocess.DEVNULL, env=_ENV)
        rows = measure(args.memcore, sys.executable, args.rounds, vault, args.before, indexed)
    print(render(rows))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
