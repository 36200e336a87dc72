"""Benchmark: ``memcore migrate`` for every ordered pair of formats, as a ratio to raw I/O.

For each pair (A, B) it builds a store of A with N entries (through A's provider), then times,
in the same run:

- **migrate**: ``memcore.convert.migrate(A, fresh B)``, everything included (read, trial run for
  forward relations, writes, read-back verification, B's ``validate()``);
- **baseline**: reading A with its provider (``iter_entries``) plus writing the bytes of the
  finished B store to a fresh folder with :func:`memcore.storage.atomic_write`, one write per
  file, no conversion logic;
- **providers**: the time spent inside A's and B's provider methods during the migration, so
  ``migrate - providers`` is memcore's own conversion logic;
- **phases**: wall (``phases_s``) and CPU (``phases_cpu_s``, each phase's least over the
  repetitions) seconds from one progress mark to the next (read, plan, write, link, verify).

The ratio ``migrate / baseline`` is the figure the issue asks for (target <= 2x). Maka's
format caps a file at 128 KiB, so pairs with Maka use the largest N that fits (reported): for a
Maka target, 95 % of what a trial migration into Maka could hold.

Run::

    python benchmarks/bench_migrate.py                    # N = 10000, every ordered pair
    python benchmarks/bench_migrate.py --entries 1000 --pairs whitebox:box maka:rightmemory
    python benchmarks/bench_migrate.py --json out.json --repeat 3     # best of 3 runs per measure
    python benchmarks/bench_migrate.py --render out.json   # the docs/migration-performance.md table
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.collector import paused_gc
from memcore.errors import StoreLimitError
from memcore.frontmatter import set_fast_paths
from memcore.migrate import migrate
from memcore.migrate.bulk import set_bulk_add
from memcore.migrate.fidelity import set_fast_copy
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import read_all
from memcore.registry import get_registry
from memcore.storage import atomic_write, scratch_writes

FORMATS = ("whitebox", "box", "rightmemory", "maka", "mcpmemory", "claudecode", "basicmemory")
MAKA_LIMIT = 131072
#: ``--floor-gc-paused``: the floor measured with the cyclic garbage collector paused, as a migration runs.
FLOOR_GC_PAUSED = False
_KINDS = (Kind.FACT, Kind.OBSERVATION, Kind.DECISION, Kind.NOTE, Kind.TASK, Kind.PREFERENCE)
_PROVIDER_METHODS = ("iter_entries", "read_all", "get", "add", "add_many", "update", "validate", "open", "close")


#: The targets' own switches of their many-entry paths, set to 0 with ``--bulk-add off``.
_PROVIDER_BULK_SWITCHES = ("MEMCORE_BOX_BULK", "MEMCORE_MAKA_BULK", "MEMCORE_RIGHTMEMORY_BULK", "MEMCORE_WHITEBOX_BULK")

#: format -> the file name of a store that is one file
SINGLE_FILE = {"maka": "MEMORY.md", "mcpmemory": "memory.jsonl"}


def location(fmt: str, root: Path) -> str:
    return str(root / SINGLE_FILE[fmt]) if fmt in SINGLE_FILE else str(root / "store")


def entries(n: int, *, compact: bool = False) -> Iterator[MemoryEntry]:
    """N entries: mixed kinds, tags, confidences, dates; a relation to an earlier entry every
    7th entry and a supersede pair every 50th (so some relations point forward)."""
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    for i in range(n):
        kind = _KINDS[i % len(_KINDS)]
        body = f"Note {i}." if compact else f"Entry {i}: what was learnt on day {i // 40}, and why it matters.\n"
        relations = []
        if i % 7 == 3 and i > 10:
            relations.append(Relation(type="related", target=f"b{i - 9}"))
        if i % 50 == 1 and i > 1:
            relations.append(Relation(type="supersedes", target=f"b{i - 1}"))
        if i % 50 == 0 and i + 1 < n and i > 0:
            relations.append(Relation(type="superseded_by", target=f"b{i + 1}"))
        yield MemoryEntry(
            id=f"b{i}",
            kind=kind,
            title="" if kind is Kind.OBSERVATION else f"Item {i}",
            body=body,
            status=Status.SUPERSEDED if i % 50 == 0 and i > 0 else Status.ACTIVE,
            tags=[f"t{i % 5}"] if compact else [f"topic-{i % 13}", "bench"],
            confidence=(0.3, 0.5, 0.7, 0.9)[i % 4],
            source="bench",
            created_at=start + timedelta(hours=i),
            updated_at=start + timedelta(hours=i),
            date_only=kind is Kind.OBSERVATION,
            relations=relations,
        )


def build_source(fmt: str, n: int, root: Path) -> tuple[str, int]:
    """Create a store of ``fmt`` with ``n`` entries (fewer for Maka: what fits in 128 KiB)."""
    cls = get_registry().get(fmt)
    loc = location(fmt, root)
    cls.init_store(loc)
    written = 0
    with cls(loc) as store, store.batch():
        ids: dict[str, str] = {}
        for entry in entries(n, compact=fmt == "maka"):
            key = entry.id or ""
            entry.id = key if fmt == "rightmemory" else None
            entry.relations = [Relation(type=r.type, target=ids[r.target]) for r in entry.relations if r.target in ids]
            try:
                stored = store.add(entry)
            except StoreLimitError:
                break
            ids[key] = stored.id or ""
            written += 1
    return loc, written


def maka_sized(fmt: str, n: int, root: Path) -> tuple[str, int]:
    """A source of ``fmt`` whose migration into Maka fits in its 128 KiB file.

    Migrated entries carry their provenance (``migrated_from``) as comment keys, so the target
    holds fewer of them than a Maka file written directly: a trial migration of ``n`` entries
    tells how many fit, and the source is rebuilt with 95 % of that.
    """
    loc, _count = build_source(fmt, n, root / "trial-src")
    trial = root / "trial-dst"
    trial.mkdir(parents=True)
    fits = migrate(f"{fmt}:{loc}", f"maka:{location('maka', trial)}").counts["written"]
    shutil.rmtree(root)
    return build_source(fmt, max(1, fits * 95 // 100), root)


@contextmanager
def provider_timer(classes: list[type[Any]]) -> Iterator[dict[str, float]]:
    """Accumulate the wall time spent inside the providers' public methods (outermost calls)."""
    spent = {"seconds": 0.0}
    depth = {"n": 0}
    saved: list[tuple[type[Any], str, Any]] = []

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if depth["n"]:
                return func(*args, **kwargs)
            depth["n"] += 1
            t0 = time.perf_counter()
            try:
                result = func(*args, **kwargs)
                if hasattr(result, "__next__"):  # a generator: time its consumption
                    result = list(result)
                return result
            finally:
                spent["seconds"] += time.perf_counter() - t0
                depth["n"] -= 1

        return timed

    for cls in classes:
        for name in _PROVIDER_METHODS:
            if name in cls.__dict__ or any(name in base.__dict__ for base in cls.__mro__[1:-1]):
                original = getattr(cls, name)
                saved.append((cls, name, cls.__dict__.get(name)))
                setattr(cls, name, wrap(original))
    try:
        yield spent
    finally:
        for cls, name, original in saved:
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)


def raw_copy(src: str, dest_root: Path) -> str:
    """Write every file of store ``src`` into ``dest_root`` with atomic_write; return the copy's location."""
    root = Path(src)
    files = [root] if root.is_file() else [p for p in sorted(root.rglob("*")) if p.is_file()]
    blobs = [(p.relative_to(root.parent if root.is_file() else root), p.read_bytes()) for p in files]
    for rel, data in blobs:
        target = dest_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)
    return str(dest_root / root.name) if root.is_file() else str(dest_root)


def bench_pair(
    a: str,
    b: str,
    n: int,
    work: Path,
    sources: dict[str, tuple[str, int]],
    repeat: int = 1,
    bulk_modes: tuple[bool, ...] = (True,),
    switches: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """Measure pair (a, b) ``repeat`` times side by side; keep the best of each measure.

    Repetitions alternate the order (migration then floor, then floor then migration, ...),
    each migration into a fresh target; the row reports the fastest migration (with its
    phases), the fastest floor, and their ratios in wall and CPU seconds, as ``timeit``
    reports the best of its runs: on a shared machine the slower runs measure the neighbours,
    not the code. ``bulk_modes``: one row per setting of the migration's bulk first pass
    (``set_bulk_add``), measured alternately within each repetition (off, on; then on, off);
    off also turns the targets' many-entry paths off (:data:`_PROVIDER_BULK_SWITCHES`: their
    reference notes one call per entry). ``switches``: environment switches (``MEMCORE_*``) measured
    on (as set) and off (``0``) alternately in the same way, one row each, for each bulk mode.
    """
    modes = [(bulk, on) for bulk in bulk_modes for on in ((True, False) if switches else (True,))]
    runs: dict[tuple[bool, bool], list[dict[str, Any]]] = {mode: [] for mode in modes}
    for i in range(repeat):
        for mode in modes if i % 2 == 0 else reversed(modes):
            bulk, on = mode
            rows = runs[mode]
            previous = rows[0]["target"] if i % 2 and rows else None
            set_bulk_add(bulk)
            saved = {name: os.environ.get(name) for name in (*_PROVIDER_BULK_SWITCHES, *switches)}
            if not bulk:  # the targets' own many-entry paths go with it (their notes one call each)
                os.environ.update(dict.fromkeys(_PROVIDER_BULK_SWITCHES, "0"))
            if not on:
                os.environ.update(dict.fromkeys(switches, "0"))
            try:
                tag = ("bulk" if bulk else "one-by-one") + ("" if on else "-off")
                rows.append(_bench_once(a, b, work / f"rep{i}-{tag}", sources, bytes_from=previous))
            finally:
                set_bulk_add(None)
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
    out = []
    for mode in modes:
        bulk, on = mode
        best = _best(runs[mode], repeat)
        best["bulk_add"] = bulk
        if len(bulk_modes) > 1:
            best["pair"] += " (bulk add)" if bulk else " (one add each)"
        if switches:
            best["switches"] = "on" if on else "off"
            best["pair"] += f" ({'+'.join(switches)} {'on' if on else 'off'})"
        out.append(best)
    return out


def _best(rows: list[dict[str, Any]], repeat: int) -> dict[str, Any]:
    """The fastest migration of ``rows`` with the fastest floor (see :func:`bench_pair`)."""
    best = min(rows, key=lambda r: r["migrate_s"])
    floor = min(rows, key=lambda r: r["floor_s"])
    migrate_cpu = min(r["migrate_cpu_s"] for r in rows)
    floor_cpu = min(r["floor_cpu_s"] for r in rows)
    best.update(
        {key: floor[key] for key in ("baseline_read_s", "baseline_write_s", "baseline_readback_s", "floor_s")},
        migrate_cpu_s=migrate_cpu,
        floor_cpu_s=floor_cpu,
        ratio=round(best["migrate_s"] / floor["floor_s"], 2) if floor["floor_s"] else None,
        cpu_ratio=round(migrate_cpu / floor_cpu, 2) if floor_cpu else None,
        memcore_logic_ratio=round(best["memcore_logic_s"] / floor["floor_s"], 2) if floor["floor_s"] else None,
        runs=repeat,
    )
    best["phases_cpu_s"] = {  # each phase's least CPU over the runs
        name: min(r["phases_cpu_s"][name] for r in rows if name in r["phases_cpu_s"]) for name in best["phases_cpu_s"]
    }
    best.pop("target", None)
    return best


def _bench_once(
    a: str, b: str, work: Path, sources: dict[str, tuple[str, int]], *, bytes_from: str | None = None
) -> dict[str, Any]:
    """One measure of pair (a, b): the migration and its floor, side by side.

    With ``bytes_from`` (a finished target of the same pair from an earlier repetition) the
    floor runs first, else the migration does: repetitions alternate the order.
    """
    work.mkdir(parents=True, exist_ok=True)
    src_loc, count = sources[a]
    reg = get_registry()
    a_cls, b_cls = reg.get(a), reg.get(b)
    if b == "maka":
        # the target must fit in 128 KiB too: use a source whose migration fits
        src_loc, count = sources["maka-sized:" + a]
    dst_root = work / f"{a}-to-{b}"
    dst_root.mkdir()
    dst = location(b, dst_root)
    phases: dict[str, float] = {}
    phases_cpu: dict[str, float] = {}

    def progress(phase: str, done: int, total: int) -> None:
        phases.setdefault(phase, time.perf_counter())
        phases_cpu.setdefault(phase, time.process_time())

    def run_migration() -> tuple[Any, float, float, float]:
        with provider_timer([a_cls, b_cls]) as spent:
            t0, c0 = time.perf_counter(), time.process_time()
            report = migrate(f"{a}:{src_loc}", f"{b}:{dst}", progress=progress)
            return report, time.perf_counter() - t0, time.process_time() - c0, spent["seconds"]

    floor_first = bytes_from is not None
    if not floor_first:
        report, migrate_s, migrate_cpu, providers_s = run_migration()
    # the floor: read the source, write the finished target's bytes, read that copy back
    raw_root = work / f"{a}-to-{b}-raw"
    raw_root.mkdir()
    with paused_gc() if FLOOR_GC_PAUSED else contextlib.nullcontext():
        floor = _floor(a_cls, b_cls, src_loc, bytes_from or dst, raw_root)
    if floor_first:
        report, migrate_s, migrate_cpu, providers_s = run_migration()
    marks = [*sorted(phases.items(), key=lambda kv: kv[1]), ("end", min(phases.values(), default=0) + migrate_s)]
    phase_s = {name: round(marks[i + 1][1] - at, 3) for i, (name, at) in enumerate(marks[:-1])}
    marks = [
        *sorted(phases_cpu.items(), key=lambda kv: kv[1]),
        ("end", min(phases_cpu.values(), default=0) + migrate_cpu),
    ]
    phase_cpu_s = {name: round(marks[i + 1][1] - at, 3) for i, (name, at) in enumerate(marks[:-1])}
    floor_s = floor["read_s"] + floor["write_s"] + floor["readback_s"]
    floor_cpu = floor["read_cpu"] + floor["write_cpu"] + floor["readback_cpu"]
    return {
        "pair": f"{a} -> {b}",
        "entries": floor["entries"],
        "written": report.counts["written"],
        "failed": report.counts["failed"],
        "lossy": report.counts["lossy"],
        "migrate_s": round(migrate_s, 3),
        "migrate_cpu_s": round(migrate_cpu, 3),
        "baseline_read_s": round(floor["read_s"], 3),
        "baseline_write_s": round(floor["write_s"], 3),
        "baseline_readback_s": round(floor["readback_s"], 3),
        "floor_s": round(floor_s, 3),
        "floor_cpu_s": round(floor_cpu, 3),
        "ratio": round(migrate_s / floor_s, 2) if floor_s else None,
        "cpu_ratio": round(migrate_cpu / floor_cpu, 2) if floor_cpu else None,
        "providers_s": round(providers_s, 3),
        "memcore_logic_s": round(migrate_s - providers_s, 3),
        "memcore_logic_ratio": round((migrate_s - providers_s) / floor_s, 2) if floor_s else None,
        "source_entries": count,
        "kept": report.counts["kept"],
        "phases_s": phase_s,
        "phases_cpu_s": phase_cpu_s,
        "target": dst,
    }


def _floor(a_cls: type[Any], b_cls: type[Any], src_loc: str, dst: str, raw_root: Path) -> dict[str, Any]:
    """Time the floor of a migration: read the source, write the target's bytes, read them back.

    The source is read with its provider's ``iter_entries``; the finished target's files are
    written to ``raw_root`` with :func:`atomic_write` (one write per file, no conversion logic);
    the copy is read back with the target's ``read_all`` (entries and diagnostics from one
    parse, as a migration's verification reads it). Wall and CPU seconds for each part.
    """
    out: dict[str, Any] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    with a_cls(src_loc) as source:
        out["entries"] = sum(1 for _ in source.iter_entries())
    out["read_s"], out["read_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    copy = raw_copy(dst, raw_root)
    out["write_s"], out["write_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    with b_cls(copy) as target:
        read_all(target)
    out["readback_s"], out["readback_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    return out


def render(rows: list[dict[str, Any]]) -> str:
    """The docs/migration-performance.md table of benchmark rows (one per pair)."""
    lines = [
        "| pair | entries | migrate (s) | floor: read + write + read back (s) | ratio | CPU migrate / floor (s) "
        "| CPU ratio | read / plan / write / link / verify (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        phases = row.get("phases_s", {})
        split = " / ".join(f"{phases.get(name, 0):.2f}" for name in ("read", "plan", "write", "link", "verify"))
        readback = row.get("baseline_readback_s", 0.0)  # rows of earlier runs: no read-back in the floor
        floor_s = row.get("floor_s", row["baseline_read_s"] + row["baseline_write_s"] + readback)
        floor = f"{floor_s:.2f} ({row['baseline_read_s']:.2f} + {row['baseline_write_s']:.2f} + {readback:.2f})"
        cpu = f"{row['migrate_cpu_s']:.2f} / {row['floor_cpu_s']:.2f}" if "floor_cpu_s" in row else "-"
        lines.append(
            f"| {row['pair']} | {row['entries']:,} | {row['migrate_s']:.2f} | {floor} | **{row['ratio']}x** | "
            f"{cpu} | {row.get('cpu_ratio', '-')}x | {split} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="entries per source store (default 10000)")
    parser.add_argument("--pairs", nargs="*", default=None, help="pairs as A:B (default: all 25)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    parser.add_argument(
        "--repeat", type=int, default=1, help="measure each pair N times side by side, report the best (default 1)"
    )
    parser.add_argument(
        "--render", type=Path, nargs="+", default=None, help="print the markdown table of earlier --json files and exit"
    )
    parser.add_argument(
        "--formats", nargs="+", default=None, help="every ordered pair of these formats (default: all seven)"
    )
    parser.add_argument(
        "--scratch",
        action="store_true",
        help="fsync off (scratch_writes) for migrations and floors alike: measures the code, not the disk",
    )
    parser.add_argument(
        "--no-fast",
        action="store_true",
        help="YAML fast paths off (MEMCORE_YAML_FAST=0): the general path, as before them",
    )
    parser.add_argument(
        "--no-fast-copy",
        action="store_true",
        help="the migration's entry-copy fast path off (MEMCORE_MIGRATE_FAST=0): model_construct copies, "
        "validated assignments",
    )
    parser.add_argument(
        "--no-fast-redact",
        action="store_true",
        help="Maka's one secret check per entry off (MEMCORE_MAKA_FAST_REDACT=0): each string redacted",
    )
    parser.add_argument(
        "--bulk-add",
        choices=("on", "off", "both"),
        default="on",
        help="the migration's first pass through the target's add_many (MEMCORE_BULK_ADD): on (default), "
        "off (one add each; the MEMCORE_*_BULK provider switches 0 too), or both, measured alternately "
        "in each repetition (one row each)",
    )
    parser.add_argument(
        "--switch",
        nargs="+",
        default=[],
        metavar="VAR",
        help="environment switches (e.g. MEMCORE_RIGHTMEMORY_READ_MEMO) measured on and off (=0) alternately "
        "in each repetition (one row each)",
    )
    parser.add_argument(
        "--floor-gc-paused",
        action="store_true",
        help="measure the floor with the cyclic garbage collector paused too, as a migration runs "
        "(MEMCORE_MIGRATE_GC_PAUSE): the floor's own collections left out of the ratio",
    )
    args = parser.parse_args(argv)
    global FLOOR_GC_PAUSED
    FLOOR_GC_PAUSED = args.floor_gc_paused
    if args.no_fast:
        set_fast_paths(False)
    if args.no_fast_copy:
        set_fast_copy(False)
    if args.no_fast_redact:
        os.environ["MEMCORE_MAKA_FAST_REDACT"] = "0"
    if args.render:
        print(render([row for path in args.render for row in json.loads(path.read_text(encoding="utf-8"))]))
        return 0
    formats = args.formats or FORMATS
    pairs = [tuple(p.split(":", 1)) for p in args.pairs] if args.pairs else [(a, b) for a in formats for b in formats]
    with scratch_writes() if args.scratch else contextlib.nullcontext():
        return _run(pairs, args)


def _run(pairs: list[tuple[str, ...]], args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="memcore-bench-"))
    # migration journals and Box's layout records go with the work folder, not the user's own
    os.environ.setdefault("MEMCORE_STATE_DIR", str(work / "state"))
    os.environ.setdefault("MEMCORE_CACHE_DIR", str(work / "cache"))
    results = []
    try:
        sources: dict[str, tuple[str, int]] = {}
        for fmt in sorted({p[0] for p in pairs}):
            sources[fmt] = build_source(fmt, args.entries, work / f"src-{fmt}")
            print(f"built {fmt} source: {sources[fmt][1]} entries", file=sys.stderr)
        if any(b == "maka" for _, b in pairs):
            maka_n = sources["maka"][1] if "maka" in sources else build_source("maka", args.entries, work / "m")[1]
            for fmt in sorted({a for a, b in pairs if b == "maka"}):
                sources["maka-sized:" + fmt] = maka_sized(fmt, maka_n, work / f"src-{fmt}-small")
                print(
                    f"built {fmt} source for a Maka target: {sources['maka-sized:' + fmt][1]} entries", file=sys.stderr
                )
        modes = {"on": (True,), "off": (False,), "both": (False, True)}[args.bulk_add]
        for row in (
            row
            for a, b in pairs
            for row in bench_pair(
                a,
                b,
                args.entries,
                work,
                sources,
                repeat=max(1, args.repeat),
                bulk_modes=modes,
                switches=tuple(args.switch),
            )
        ):
            results.append(row)
            print(
                f"{row['pair']:<42} n={row['entries']:>6}  migrate {row['migrate_s']:>8.2f}s  "
                f"floor {row['floor_s']:>7.2f}s  ratio {row['ratio']:>6}x  "
                f"CPU {row['migrate_cpu_s']:.2f}/{row['floor_cpu_s']:.2f}s = {row['cpu_ratio']}x  "
                f"phases {row['phases_s']}  CPU phases {row['phases_cpu_s']}  kept {row['kept']}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
