"""Box-memory provider benchmark: batched and one-by-one adds, gets by id, each beside a floor.

Run: ``python benchmarks/bench_box.py [--n 10000] [--singles 1000] [--gets 1000] [--json]``

Everything is measured in one run, in temp folders on the same disk:

1. **batch add**: ``with store.batch():`` add N memories (default 10,000) to a new workspace.
   Floors: the same bytes (every memory file as written, plus the final ``memories/_index.json``
   and rollup once) written with plain ``open().write()`` (``plain``), and with
   ``memcore.storage.atomic_write`` (``durable``: temp file + fsync + rename, what every memcore
   write costs at least).
2. **one-by-one add**: add ``--singles`` memories (default 1,000) without a batch, to a new
   workspace. Each add rewrites the folder index and the rollup (the schema's "update the
   folder's _index.json on every write"). Floors: the memory files' bytes, plain and durable.
3. **get by id**: reopen the N-memory workspace and ``get`` ``--gets`` random ids (default
   1,000). Floor: plain reads of the same files (paths known in advance).
4. **scaling**: per-write cost of a 200-add batch and of 20 unbatched adds into a workspace of
   0 and of N memories. Batched, the per-write cost must stay flat (the index is written once
   per batch); unbatched it grows with the index size.

5. **scale** (``--sizes 1000,10000,100000``): for each size, a workspace kept in
   ``--workspaces DIR`` (generated once, with fsync off, and reused by later runs): open +
   iterate every memory beside reading every file's bytes (the floor, as ``bench_index.py``
   reads it: the indexes too) and the memory files' bytes alone, ``get`` of ``--gets``
   random ids, and a batch of 1,000 adds (the workspace is put back afterwards: the new files
   removed, the indexes, config and the folder index's saved layout (``memcore_box._patch``, in
   the cache folder) rewritten from the bytes saved before), with every fast path on, with the
   kept layout and map patch off (``MEMCORE_BOX_PATCH=0``: the splice as before it) and with
   the index splice fast paths (``memcore_box._splice``, ``_maps``, ``_drift``) off too
   (``MEMCORE_BOX_SPLICE=0``), alternated, each after waiting ``_drift.SETTLED_NS`` for the
   folder put back to settle (outside the clock); beside the floor of the index files' I/O (read
   both, hash, write them durably, hash again). Wall and CPU time, best of ``--repeat``;
   per-operation costs are compared across sizes (flat = within ~1.5x), the batch also less
   that floor.

Ratios are ``memcore / floor`` from the same run; absolute times depend on the disk's fsync.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memcore.frontmatter import set_fast_paths
from memcore.models import Kind, MemoryEntry
from memcore.storage import LocalStorage, atomic_write, scratch_writes, version_token
from memcore_box import _drift, _patch, _splice
from memcore_box.provider import BoxMemoryProvider

KINDS = (Kind.DECISION, Kind.FACT, Kind.TASK, Kind.OBSERVATION, Kind.REFERENCE, Kind.NOTE)
TAGS = ("auth", "mobile", "security", "ops", "recurring", "finance", "infra", "design", "api", "perf")
WORDS = (
    "we decided to keep stateless tokens because mobile clients cannot hold cookies and the gateway "
    "should stay horizontal so every service verifies signatures locally without a session store"
).split()


def make_entries(n: int, seed: int, prefix: str) -> Iterator[MemoryEntry]:
    """Yield ``n`` generated memories, one at a time (a 100,000-entry run never holds them all)."""
    rnd = random.Random(seed)
    for i in range(n):
        title = f"{prefix} {i} {' '.join(rnd.sample(WORDS, 3))}"
        body = (
            f"\n# {title}\n\n> {' '.join(rnd.choices(WORDS, k=20))}\n\n## Context\n\n"
            + " ".join(rnd.choices(WORDS, k=rnd.randrange(40, 160)))
            + "\n"
        )
        yield MemoryEntry(
            kind=rnd.choice(KINDS),
            title=title,
            body=body,
            tags=rnd.sample(TAGS, rnd.randrange(1, 4)),
            confidence=rnd.choice((0.5, 0.7, 0.9)),
            source="bench-agent",
            scope="default",
        )


def new_workspace(base: Path, name: str) -> BoxMemoryProvider:
    location = base / name
    BoxMemoryProvider.init_store(str(location))
    return BoxMemoryProvider(str(location)).open()


def written_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.md")}


def write_floor(base: Path, name: str, files: dict[str, bytes], *, durable: bool) -> float:
    target = base / name
    for rel in {str(Path(r).parent) for r in files}:
        (target / rel).mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for rel, data in files.items():
        if durable:
            atomic_write(target / rel, data)
        else:
            with open(target / rel, "wb") as fh:
                fh.write(data)
    elapsed = time.perf_counter() - start
    shutil.rmtree(target)
    return elapsed


def add_all(store: BoxMemoryProvider, entries: list[MemoryEntry], *, batch: bool) -> tuple[float, list[str]]:
    ids: list[str] = []
    start = time.perf_counter()
    if batch:
        with store.batch():
            ids = [store.add(e).id or "" for e in entries]
    else:
        ids = [store.add(e).id or "" for e in entries]
    return time.perf_counter() - start, ids


def run(n: int, singles: int, gets: int, seed: int) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="bench-box-"))
    results: dict[str, Any] = {"n": n, "singles": singles, "gets": gets}
    try:
        # 1. batch add of n memories
        big = new_workspace(base, "big")
        root = Path(big.location)
        elapsed, ids = add_all(big, list(make_entries(n, seed, "Batch")), batch=True)
        files = written_files(root)
        index_files = {
            "memories/_index.json": (root / "memories" / "_index.json").read_bytes(),
            "_index.json": (root / "_index.json").read_bytes(),
        }
        plain = write_floor(base, "floor-batch", {**files, **index_files}, durable=False)
        durable = write_floor(base, "floor-batch-durable", {**files, **index_files}, durable=True)
        results["batch_add"] = {
            "seconds": elapsed,
            "per_write_ms": 1000 * elapsed / n,
            "floor_plain_s": plain,
            "floor_durable_s": durable,
            "ratio_plain": elapsed / plain,
            "ratio_durable": elapsed / durable,
            "bytes": sum(map(len, files.values())) + sum(map(len, index_files.values())),
        }
        print(
            f"batch add {n}: {elapsed:.2f} s ({1000 * elapsed / n:.2f} ms/write); floor plain {plain:.2f} s "
            f"(x{elapsed / plain:.1f}), durable {durable:.2f} s (x{elapsed / durable:.2f})",
            flush=True,
        )

        # 2. one-by-one adds
        small = new_workspace(base, "singles")
        elapsed, _ = add_all(small, list(make_entries(singles, seed + 1, "Single")), batch=False)
        files = written_files(Path(small.location))
        plain = write_floor(base, "floor-singles", files, durable=False)
        durable = write_floor(base, "floor-singles-durable", files, durable=True)
        results["single_adds"] = {
            "seconds": elapsed,
            "per_write_ms": 1000 * elapsed / singles,
            "floor_plain_s": plain,
            "floor_durable_s": durable,
            "ratio_plain": elapsed / plain,
            "ratio_durable": elapsed / durable,
        }
        print(
            f"one-by-one add {singles}: {elapsed:.2f} s ({1000 * elapsed / singles:.2f} ms/write); floor plain "
            f"{plain:.3f} s (x{elapsed / plain:.1f}), durable {durable:.2f} s (x{elapsed / durable:.2f})",
            flush=True,
        )
        small.close()

        # 3. gets by id from the n-memory workspace (fresh instance: indexes read from disk)
        big.close()
        rnd = random.Random(seed + 2)
        picked = rnd.sample(ids, min(gets, len(ids)))
        index = json.loads((root / "memories" / "_index.json").read_text(encoding="utf-8"))
        paths = [root / "memories" / index["entries"][index["by_id"][i]]["filename"] for i in picked]
        start = time.perf_counter()
        for path in paths:
            with open(path, "rb") as fh:
                fh.read()
        floor = time.perf_counter() - start
        start = time.perf_counter()
        reader = BoxMemoryProvider(str(root)).open()
        opened = time.perf_counter() - start
        start = time.perf_counter()
        for entry_id in picked:
            assert reader.get(entry_id).id == entry_id
        elapsed = time.perf_counter() - start
        results["get_by_id"] = {
            "open_s": opened,
            "seconds": elapsed,
            "per_get_ms": 1000 * elapsed / len(picked),
            "floor_plain_s": floor,
            "ratio_plain": elapsed / floor,
        }
        print(
            f"get {len(picked)} by id from {n}: {elapsed:.2f} s ({1000 * elapsed / len(picked):.3f} ms/get, open "
            f"{opened:.2f} s); floor plain reads {floor:.3f} s (x{elapsed / floor:.1f})",
            flush=True,
        )

        # 4. scaling: per-write cost into an empty and an n-memory workspace
        scaling: dict[str, dict[str, float]] = {}
        empty = new_workspace(base, "scaling-empty")
        for label, store in (("0", empty), (str(n), reader)):
            t_batch, _ = add_all(store, list(make_entries(200, seed + 3, f"Scale{label}b")), batch=True)
            t_single, _ = add_all(store, list(make_entries(20, seed + 4, f"Scale{label}s")), batch=False)
            scaling[label] = {
                "batched_ms_per_write": 1000 * t_batch / 200,
                "unbatched_ms_per_write": 1000 * t_single / 20,
            }
            print(
                f"workspace of {label}: batched {1000 * t_batch / 200:.2f} ms/write, unbatched "
                f"{1000 * t_single / 20:.2f} ms/write",
                flush=True,
            )
        empty.close()
        reader.close()
        growth_batched = scaling[str(n)]["batched_ms_per_write"] / scaling["0"]["batched_ms_per_write"]
        growth_unbatched = scaling[str(n)]["unbatched_ms_per_write"] / scaling["0"]["unbatched_ms_per_write"]
        results["scaling"] = {**scaling, "batched_growth": growth_batched, "unbatched_growth": growth_unbatched}
        print(
            f"per-write growth from 0 to {n} memories: batched x{growth_batched:.2f}, unbatched "
            f"x{growth_unbatched:.1f}",
            flush=True,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return results


def scale_workspace(base: Path, n: int, seed: int) -> Path:
    """Return the ``n``-memory workspace under ``base``, generating it (fsync off) when absent."""
    root = base / f"ws-{n}"
    if not (root / "memories" / "_index.json").is_file():
        shutil.rmtree(root, ignore_errors=True)
        start = time.perf_counter()
        BoxMemoryProvider.init_store(str(root))
        with scratch_writes(), BoxMemoryProvider(str(root)) as store, store.batch():
            for entry in make_entries(n, 7, "memo"):  # bench_index.py's corpus
                store.add(entry)
        print(f"generated {n} memories in {time.perf_counter() - start:.1f} s: {root}", flush=True)
    return root


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Return the best (wall, CPU) seconds of ``repeat`` calls of ``fn`` and its last result."""
    best_wall = best_cpu = float("inf")
    result: Any = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, result


def _read_bytes(root: Path, suffix: str = "") -> int:
    """Read every file under ``root`` (ending in ``suffix``); return the bytes read."""
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(suffix):
                continue
            with open(os.path.join(folder, name), "rb") as fh:
                total += len(fh.read())
    return total


def scale_row(root: Path, n: int, gets: int, repeat: int, seed: int) -> dict[str, Any]:
    """Measure open + iterate (beside its floor), ``get`` and a batch of 1,000 adds at one size."""
    row: dict[str, Any] = {"n": n}
    floor_wall, floor_cpu, _ = _timed(lambda: _read_bytes(root), repeat)  # bench_index.py's floor: every file
    md_wall, md_cpu, _ = _timed(lambda: _read_bytes(root, ".md"), repeat)  # the memory files alone

    def iterate() -> int:
        with BoxMemoryProvider(str(root)) as store:
            return sum(1 for _ in store.iter_entries())

    wall, cpu, count = _timed(iterate, repeat)
    row.update(
        iterated=count,
        floor_read_s=floor_wall,
        floor_read_cpu_s=floor_cpu,
        floor_md_s=md_wall,
        floor_md_cpu_s=md_cpu,
        open_iterate_s=wall,
        open_iterate_cpu_s=cpu,
        ratio_wall=wall / floor_wall,
        ratio_cpu=cpu / floor_cpu,
        ratio_md_cpu=cpu / md_cpu,
    )
    index = json.loads((root / "memories" / "_index.json").read_text(encoding="utf-8"))
    picked = random.Random(seed).sample([e["id"] for e in index["entries"]], min(gets, len(index["entries"])))
    del index
    store = BoxMemoryProvider(str(root)).open()
    store.get(picked[0])  # the folder index is read at the first lookup: not a get's cost

    def get_all() -> None:
        for entry_id in picked:
            store.get(entry_id)

    wall, cpu, _ = _timed(get_all, repeat)
    row.update(get_ms=1000 * wall / len(picked), get_cpu_ms=1000 * cpu / len(picked))
    store.close()
    saved = {name: (root / name).read_bytes() for name in ("_index.json", "memories/_index.json", "_box-memory.json")}
    record = Path(_patch._record(str(root / "memories" / "_index.json")))  # the layout the last write saved
    saved_record = record.read_bytes() if record.is_file() else None
    if saved_record is None:
        print(f"  (no saved layout for {root}/memories/_index.json: generated before memcore_box._patch?)", flush=True)
    before = set(os.listdir(root / "memories"))
    entries = list(make_entries(1000, seed + 9, f"Scale{n}"))

    def batch(variant: str) -> tuple[float, float]:
        """One batch of 1,000 adds into a freshly opened store (index read first); the workspace put back."""
        os.environ[_splice.ENV] = "0" if variant == "splice off" else "1"
        os.environ[_patch.ENV] = "0" if variant != "on" else "1"
        # The drift check answers from the listing opening made only for a folder whose last
        # change is older than _drift.SETTLED_NS (the workspace was put back a moment ago).
        time.sleep(_drift.SETTLED_NS / 1e9 + 0.1)
        try:
            store = BoxMemoryProvider(str(root)).open()
            store.get(picked[0])
            wall, cpu = time.perf_counter(), time.process_time()
            add_all(store, entries, batch=True)
            took = time.perf_counter() - wall, time.process_time() - cpu
            store.close()
        finally:
            os.environ.pop(_splice.ENV, None)
            os.environ.pop(_patch.ENV, None)
            for name in set(os.listdir(root / "memories")) - before:
                (root / "memories" / name).unlink()
            for name, data in saved.items():
                atomic_write(root / name, data)
            if saved_record is not None:
                atomic_write(record, saved_record)
        return took

    def index_io() -> None:
        """The floor of a batch's index writes: read both index files, hash them, write them durably, hash again."""
        for name in ("memories/_index.json", "_index.json"):
            data, _ = LocalStorage(str(root)).read(name)
            atomic_write(root / f".{name.replace('/', '-')}.floor", data)
            version_token(data)
            (root / f".{name.replace('/', '-')}.floor").unlink()

    _, io_cpu, _ = _timed(index_io, repeat)
    row.update(batch_index_io_floor_cpu_s=io_cpu)
    runs: dict[str, list[tuple[float, float]]] = {"on": [], "patch off": [], "splice off": []}
    for _ in range(repeat):  # alternated: every fast path, the splice without the patch, the full encoding
        for variant in runs:
            runs[variant].append(batch(variant))
    row.update(
        batch_1000_s=min(w for w, _ in runs["on"]),
        batch_1000_cpu_s=min(c for _, c in runs["on"]),
        batch_1000_nopatch_s=min(w for w, _ in runs["patch off"]),
        batch_1000_nopatch_cpu_s=min(c for _, c in runs["patch off"]),
        batch_1000_full_s=min(w for w, _ in runs["splice off"]),
        batch_1000_full_cpu_s=min(c for _, c in runs["splice off"]),
    )
    for key in ("batch_1000_cpu_s", "batch_1000_nopatch_cpu_s"):
        row[key.replace("_cpu_s", "_less_floor_cpu_s")] = row[key] - io_cpu
    print(
        f"{n:>7} memories: open+iterate {row['open_iterate_s']:.2f} s wall / {row['open_iterate_cpu_s']:.2f} s CPU, "
        f"floor (read bytes) {floor_wall:.2f} / {floor_cpu:.2f} s: x{row['ratio_wall']:.1f} wall, "
        f"x{row['ratio_cpu']:.1f} CPU (memory files alone {md_wall:.2f} / {md_cpu:.2f} s: "
        f"x{row['ratio_md_cpu']:.1f} CPU); get {row['get_ms']:.3f} ms ({row['get_cpu_ms']:.3f} CPU); "
        f"batch of 1,000 adds {row['batch_1000_s']:.2f} s ({row['batch_1000_cpu_s']:.2f} CPU), patch off "
        f"{row['batch_1000_nopatch_s']:.2f} s ({row['batch_1000_nopatch_cpu_s']:.2f} CPU), splice off "
        f"{row['batch_1000_full_s']:.2f} s ({row['batch_1000_full_cpu_s']:.2f} CPU); index files' I/O floor "
        f"{row['batch_index_io_floor_cpu_s']:.2f} CPU",
        flush=True,
    )
    return row


def rss_child(root: Path, n: int, variant: str, seed: int) -> None:
    """In a fresh interpreter: read the folder index, run one batch of 1,000 adds, print the peak RSS before and after.

    The files put back afterwards are kept on disk meanwhile (not in this process's memory).
    """
    import resource

    os.environ[_splice.ENV] = "0" if variant == "splice off" else "1"
    os.environ[_patch.ENV] = "0" if variant != "on" else "1"
    record = Path(_patch._record(str(root / "memories" / "_index.json")))
    names = ["_index.json", "memories/_index.json", "_box-memory.json"]
    keep = Path(tempfile.mkdtemp(prefix="bench-box-rss-"))
    for name in names:
        shutil.copyfile(root / name, keep / name.replace("/", "-"))
    had_record = record.is_file()
    if had_record:
        shutil.copyfile(record, keep / "record")
    before = set(os.listdir(root / "memories"))
    entries = list(make_entries(1000, seed + 9, f"Scale{n}"))
    time.sleep(_drift.SETTLED_NS / 1e9 + 0.1)
    try:
        store = BoxMemoryProvider(str(root)).open()
        store.get(_first_id(root))  # the folder index read before the batch
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        cpu = time.process_time()
        add_all(store, entries, batch=True)
        cpu = time.process_time() - cpu
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        store.close()
    finally:
        for name in set(os.listdir(root / "memories")) - before:
            (root / "memories" / name).unlink()
        for name in names:
            atomic_write(root / name, (keep / name.replace("/", "-")).read_bytes())
        if had_record:
            atomic_write(record, (keep / "record").read_bytes())
        shutil.rmtree(keep, ignore_errors=True)
    print(
        f"n={n} {variant}: batch CPU {cpu:.2f} s, peak RSS before batch {rss_before:.0f} MB, after {rss_after:.0f} MB",
        flush=True,
    )


def _first_id(root: Path) -> str:
    """The first id of the folder index, read from its first bytes (not parsed whole)."""
    with open(root / "memories" / "_index.json", "rb") as fh:
        head = fh.read(4096).decode("utf-8", "replace")
    return head.split('"id": "', 1)[1].split('"', 1)[0]


def run_rss(sizes: list[int], base: Path, seed: int) -> None:
    """Peak RSS of one batch of 1,000 adds per size and variant, each in a fresh interpreter (:func:`rss_child`)."""
    import subprocess

    for n in sizes:
        root = scale_workspace(base, n, seed)
        for variant in ("on", "patch off", "splice off"):
            subprocess.run(
                [sys.executable, __file__, "--rss-child", str(n), "--variant", variant, "--workspaces", str(base)],
                check=True,
            )
        del root


def run_scale(sizes: list[int], base: Path, gets: int, repeat: int, seed: int) -> dict[str, Any]:
    """Run :func:`scale_row` for each size; add the per-operation growth from the smallest size."""
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}", flush=True)
    rows = [scale_row(scale_workspace(base, n, seed), n, gets, repeat, seed) for n in sizes]
    first, last = rows[0], rows[-1]
    keys = (
        "get_ms",
        "get_cpu_ms",
        "batch_1000_s",
        "batch_1000_cpu_s",
        "batch_1000_nopatch_cpu_s",
        "batch_1000_full_cpu_s",
        "batch_1000_less_floor_cpu_s",
        "batch_1000_nopatch_less_floor_cpu_s",
    )
    growth = {key: last[key] / first[key] for key in keys}
    print(
        f"growth {first['n']} -> {last['n']}: get x{growth['get_ms']:.2f} wall / x{growth['get_cpu_ms']:.2f} CPU; "
        f"batch x{growth['batch_1000_s']:.2f} wall / x{growth['batch_1000_cpu_s']:.2f} CPU (patch off: "
        f"x{growth['batch_1000_nopatch_cpu_s']:.2f} CPU, splice off: x{growth['batch_1000_full_cpu_s']:.2f} CPU); "
        f"batch less the index files' I/O floor x{growth['batch_1000_less_floor_cpu_s']:.2f} CPU (patch off: "
        f"x{growth['batch_1000_nopatch_less_floor_cpu_s']:.2f})",
        flush=True,
    )
    return {"scale": rows, "growth": growth, "load": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="memories in the batch (default 10,000)")
    parser.add_argument("--singles", type=int, default=1_000, help="one-by-one adds (default 1,000)")
    parser.add_argument("--gets", type=int, default=1_000, help="gets by id (default 1,000)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the results as JSON at the end")
    parser.add_argument(
        "--no-fast",
        action="store_true",
        help="YAML fast paths off (MEMCORE_YAML_FAST=0): the general path, as before them",
    )
    parser.add_argument("--sizes", help="scale rows instead: workspace sizes, e.g. 1000,10000,100000")
    parser.add_argument("--workspaces", default=str(Path(tempfile.gettempdir()) / "bench-box-scale"))
    parser.add_argument("--repeat", type=int, default=2, help="scale rows: best of this many runs")
    parser.add_argument("--rss", help="peak RSS of one batch per size instead, e.g. 50000,100000 (fresh interpreters)")
    parser.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--variant", default="on", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rss_child:
        rss_child(Path(args.workspaces) / f"ws-{args.rss_child}", args.rss_child, args.variant, args.seed)
        return 0
    if args.rss:
        run_rss([int(s) for s in args.rss.split(",")], Path(args.workspaces), args.seed)
        return 0
    if args.no_fast:
        set_fast_paths(False)
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
        results = run_scale(sizes, Path(args.workspaces), args.gets, args.repeat, args.seed)
    else:
        results = run(args.n, args.singles, args.gets, args.seed)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
