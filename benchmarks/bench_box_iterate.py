"""Box open + iterate, side by side: code under test, its fast paths off, an older tree, and the floor.

Run: ``python benchmarks/bench_box_iterate.py WORKSPACE [--before DIR] [--rounds 2] [--read-all]``

``WORKSPACE`` is a workspace ``bench_box.py --sizes`` generated (``--workspaces DIR`` holds
``ws-1000``, ``ws-10000``, ``ws-100000``). Each round runs, in alternation and each in a fresh
interpreter (imports excluded from the clock): open + iterate every memory with this tree
(``after``), the same with ``MEMCORE_BOX_STREAM_FAST=0`` (``stream-off``: the full parse of
every file in both passes), with ``MEMCORE_YAML_FAST=0`` (``yaml-off``, only with
``--yaml-off``), with an older tree first on ``PYTHONPATH`` (``before``, when ``--before`` names
a ``git archive`` export of it), and the floor: every file of the workspace read with
``open().read()`` (the indexes included, as ``bench_box.py`` reads it). With ``--read-all``
also open + ``read_all()`` (entries and validate's diagnostics, core's checks included; what a
migration's read phase calls), with its fast paths on (``read-all``) and off
(``read-all-off``: ``MEMCORE_BOX_READ_ALL_FAST=0``), and with ``--before`` the older tree's
``read_all()`` too (``read-all-before``). CPU is user + system
time of the child (``time.process_time``), peak RSS its ``ru_maxrss``. Prints one line per run,
then the best CPU of each side and its ratio to the best floor.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, os, resource, sys, time
root, what = sys.argv[1], sys.argv[2]
if what == "floor":
    start, wall = time.process_time(), time.perf_counter()
    n = 0
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                fh.read()
            n += 1
else:
    import memcore_box
    from memcore_box.provider import BoxMemoryProvider
    start, wall = time.process_time(), time.perf_counter()
    with BoxMemoryProvider(root) as store:
        if what.startswith("read-all"):
            n = len(store.read_all().entries)
        else:
            n = sum(1 for _ in store.iter_entries())
cpu, wall = time.process_time() - start, time.perf_counter() - wall
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"what": what, "n": n, "cpu": cpu, "wall": wall, "rss_mb": rss}))
"""


def run_one(root: str, what: str, before: str | None) -> dict[str, object]:
    """Run one side in a fresh interpreter; return its figures."""
    env = dict(os.environ)
    if what in ("before", "read-all-before") and before:
        parts = [f"{before}/src", f"{before}/plugins/memcore-box/src"]
        env["PYTHONPATH"] = os.pathsep.join([*parts, env.get("PYTHONPATH", "")])
    if what == "stream-off":
        env["MEMCORE_BOX_STREAM_FAST"] = "0"
    if what == "yaml-off":
        env["MEMCORE_YAML_FAST"] = "0"
    if what == "read-all-off":
        env["MEMCORE_BOX_READ_ALL_FAST"] = "0"
    out = subprocess.run([sys.executable, "-c", CHILD, root, what], env=env, check=True, capture_output=True, text=True)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("--before", help="an older tree (git archive export) to run first on PYTHONPATH")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--yaml-off", action="store_true", help="also run with MEMCORE_YAML_FAST=0")
    parser.add_argument("--read-all", action="store_true", help="also read_all(), its fast paths on and off")
    parser.add_argument("--no-stream-off", action="store_true", help="leave out the stream-off side")
    args = parser.parse_args(argv)
    sides = ["floor", "after"] + ([] if args.no_stream_off else ["stream-off"]) + (["before"] if args.before else [])
    sides += ["yaml-off"] if args.yaml_off else []
    sides += ["read-all", "read-all-off"] if args.read_all else []
    sides += ["read-all-before"] if args.read_all and args.before else []
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} workspace {args.workspace}", flush=True)
    best: dict[str, dict[str, object]] = {}
    for number in range(args.rounds):
        order = sides if number % 2 == 0 else list(reversed(sides))
        for what in order:
            result = run_one(args.workspace, what, args.before)
            print(json.dumps(result), flush=True)
            if what not in best or float(result["cpu"]) < float(best[what]["cpu"]):  # type: ignore[arg-type]
                best[what] = result
    floor = float(best["floor"]["cpu"])  # type: ignore[arg-type]
    for what in sides:
        cpu = float(best[what]["cpu"])  # type: ignore[arg-type]
        rss = best[what]["rss_mb"]
        print(f"{what:>12}: best CPU {cpu:.3f} s, x{cpu / floor:.1f} of the floor, peak RSS {rss:.0f} MB")
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
