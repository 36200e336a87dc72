"""memcore beside basic-memory (the closest peer: markdown files + a SQLite index), one corpus.

    python benchmarks/bench_peer.py [--notes 1000] [--rounds 3] [--queries 150] \\
        [--peer-python /tmp/bm/bin/python] [--json out.json]

Generates the shared corpus: ``--notes`` notes (default 1,000; ~1.4 KB each) in basic-memory's
note format (frontmatter ``title``/``type``/``permalink``/``tags``, a heading, prose, four
``- [category] text #tag`` observations and 2-3 ``- relation [[Other note]]`` links), seeded so
every run writes the same bytes. Then, in one run, measures memcore's rows of issue 24's table,
reading the corpus as a WhiteBox vault (``whitebox:DIR``):

* cold index (``memcore index build``, no index yet), no-change refresh (the same again),
  refresh after one edited note, CLI search (``memcore search WORD``), ``memcore --version``:
  whole commands, wall clock, the median of ``--rounds`` runs alternating with the peer's;
* in-process ``store.search()`` p50 / p95 over ``--queries`` queries on one open store, and the
  index query alone (:meth:`memcore.index.SearchIndex.search`) for the same queries;
* the floors: ``python -c pass``, reading every note's bytes, reading and parsing every note's
  frontmatter with python-frontmatter.

With ``--peer-python PATH`` (an interpreter that has basic-memory installed; never the
project's venv), the same rows for basic-memory's ``bm`` command beside it, on a copy of the
corpus registered as a project in a private ``HOME`` (so the user's own basic-memory
configuration is never read or written): cold index = ``bm project add`` on a fresh database,
refresh = ``bm project index``, search = ``bm tool search-notes``; and the p50 / p95 of its
``search_notes`` tool called in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Words of the generated prose, titles, tags and queries.
WORDS = (
    "index search memory agent note graph link sqlite markdown query cache token vector budget "
    "prompt context session store format parser writer schema field entry relation observation "
    "decision review archive status scope tag title body source confidence journal migrate "
    "convert report folder vault workspace project pursuit skill lesson correction preference "
    "proposal approve reject render state watch refresh rebuild stale fresh latency throughput "
    "python rust shell editor terminal network server client request response stream window "
    "coffee tea garden river mountain ocean forest desert city village bridge tower harbour"
).split()
CATEGORIES = ("fact", "idea", "decision", "question", "technique", "requirement")
RELATIONS = ("relates_to", "depends_on", "part_of", "extends", "see_also")
FOLDERS = tuple(f"area-{i:02d}" for i in range(10))
TARGET_BYTES = 1400


def _sentence(rng: random.Random, lo: int = 8, hi: int = 16) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def generate(root: Path, notes: int, seed: int = 24) -> list[Path]:
    """Write the corpus of ``notes`` notes under ``root`` and return their paths.

    Each note is ~1.4 KB of UTF-8: frontmatter, ``# Title``, prose, ``## Observations`` (four
    categorised observations with a tag each) and ``## Relations`` (2-3 links to other notes by
    title). The same ``seed`` gives the same bytes.
    """
    rng = random.Random(seed)
    titles = [f"Note {i:04d} {rng.choice(WORDS)} {rng.choice(WORDS)}" for i in range(notes)]
    paths = []
    for i, title in enumerate(titles):
        folder = FOLDERS[i % len(FOLDERS)]
        slug = title.lower().replace(" ", "-")
        tags = sorted({rng.choice(WORDS) for _ in range(3)})
        head = (
            f"---\ntitle: {title}\ntype: note\npermalink: {folder}/{slug}\ntags:\n"
            + "".join(f"- {t}\n" for t in tags)
            + f"---\n\n# {title}\n\n"
        )
        observations = "## Observations\n\n" + "".join(
            f"- [{rng.choice(CATEGORIES)}] {_sentence(rng, 6, 10)} #{rng.choice(WORDS)}\n" for _ in range(4)
        )
        others = rng.sample([t for t in titles if t != title], rng.randint(2, 3))
        relations = "\n## Relations\n\n" + "".join(f"- {rng.choice(RELATIONS)} [[{t}]]\n" for t in others)
        prose: list[str] = []
        size = len((head + observations + relations).encode())
        while size + sum(len(s) + 1 for s in prose) < TARGET_BYTES - 40:
            prose.append(_sentence(rng))
        text = head + " ".join(prose) + "\n\n" + observations + relations
        path = root / folder / f"{title}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def queries(count: int, seed: int = 150) -> list[str]:
    """Return ``count`` search queries: one or two corpus words each, seeded."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.choice((1, 1, 2)))) for _ in range(count)]


def _wall(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv)} exited {proc.returncode} after {elapsed:.0f} s: "
            f"stdout: {proc.stdout[-800:]!r} stderr: {proc.stderr[-800:]!r}"
        )
    return elapsed


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _edit(path: Path, round_no: int) -> None:
    """Change one note the way a user would: one more observation line."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"- [fact] edited in round {round_no} #edited\n")


class Subject:
    """One system's whole-command measures on its own copy of the corpus."""

    name = ""

    def cold_index(self) -> float:
        raise NotImplementedError

    def refresh(self) -> float:
        raise NotImplementedError

    def search(self, word: str) -> float:
        raise NotImplementedError

    def version(self) -> float:
        raise NotImplementedError

    @property
    def corpus(self) -> Path:
        raise NotImplementedError


class Memcore(Subject):
    """``memcore`` reading ``DIR`` as a WhiteBox vault, its index in a private cache folder."""

    name = "memcore"

    def __init__(self, root: Path, work: Path) -> None:
        self.root = root
        self.cache = work / "memcore-cache"
        self.exe = str(Path(sys.executable).with_name("memcore"))
        self.env = {**os.environ, "MEMCORE_CACHE_DIR": str(self.cache)}
        self.env.pop("MEMCORE_STORE", None)
        # measured as installed: an installed package has its bytecode cached (pip compiles it);
        # with PYTHONDONTWRITEBYTECODE set, an editable checkout recompiles every module of
        # every command (~0.1 s of memcore's start-up)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.url = f"whitebox:{root}"

    @property
    def corpus(self) -> Path:
        return self.root

    def cold_index(self) -> float:
        shutil.rmtree(self.cache, ignore_errors=True)
        return _wall([self.exe, "index", "build", "--store", self.url], self.env)

    def refresh(self) -> float:
        return _wall([self.exe, "index", "build", "--store", self.url], self.env)

    def search(self, word: str) -> float:
        return _wall([self.exe, "search", "--store", self.url, word], self.env)

    def version(self) -> float:
        return _wall([self.exe, "--version"], self.env)


class BasicMemory(Subject):
    """basic-memory's ``bm`` (from ``--peer-python``) on its own copy, in a private ``HOME``."""

    name = "basic-memory"

    def __init__(self, python: str, root: Path, work: Path) -> None:
        self.python = python
        self.root = root
        self.home = work / "bm-home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, "HOME": str(self.home), "BASIC_MEMORY_HOME": str(self.home / "basic-memory")}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.indexed = False
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "BASIC_MEMORY_CONFIG_DIR"):
            self.env.pop(var, None)
        self.bm = str(Path(python).with_name("bm"))

    @property
    def corpus(self) -> Path:
        return self.root

    def cold_index(self) -> float:
        """``bm project add`` (which indexes every file) on a fresh database.

        Run once (basic-memory's full index of 1,000 notes takes minutes): later rounds answer
        NaN and the median is over the runs made.
        """
        if self.indexed:
            return float("nan")
        shutil.rmtree(self.home / ".basic-memory", ignore_errors=True)
        self.indexed = True
        return _wall([self.bm, "project", "add", "bench", str(self.root)], self.env)

    def refresh(self) -> float:
        return _wall([self.bm, "project", "index", "bench"], self.env)

    def search(self, word: str) -> float:
        return _wall([self.bm, "tool", "search-notes", word, "--project", "bench"], self.env)

    def version(self) -> float:
        return _wall([self.bm, "--version"], self.env)


def whole_commands(
    subjects: list[Subject], rounds: int, notes: list[list[Path]], word: str
) -> dict[str, dict[str, Any]]:
    """Run every whole-command measure ``rounds`` times, the subjects alternating in each round."""
    rows: dict[str, dict[str, list[float]]] = {s.name: {} for s in subjects}

    def add(subject: Subject, measure: str, fn: Callable[[], float]) -> None:
        rows[subject.name].setdefault(measure, []).append(fn())

    for s in subjects:  # warm-up, not measured: bytecode caches written, files in the page cache
        s.version()
    for r in range(rounds):
        for i, s in enumerate(subjects):
            add(s, "cold_index_s", s.cold_index)
            add(s, "no_change_refresh_s", s.refresh)
            _edit(notes[i][(r * 37) % len(notes[i])], r)
            add(s, "refresh_one_edit_s", s.refresh)
            add(s, "cli_search_s", lambda s=s: s.search(word))
            add(s, "version_s", s.version)
        print(f"round {r + 1}/{rounds}", file=sys.stderr, flush=True)
    return {
        name: {m: statistics.median([x for x in v if x == x]) for m, v in measures.items()}
        for name, measures in rows.items()
    }


def memcore_in_process(root: Path, cache: Path, qs: list[str]) -> dict[str, float]:
    """``store.search()`` and the index query alone, p50 / p95 in ms over ``qs``, on one open store."""
    os.environ["MEMCORE_CACHE_DIR"] = str(cache)
    import memcore
    from memcore.index import SearchIndex

    out: dict[str, float] = {}
    with memcore.open(f"whitebox:{root}") as store:
        store.search(memcore.Query(text=qs[0], limit=10))  # warm: the index is built and open
        api: list[float] = []
        cpu: list[float] = []
        for q in qs:
            c0, t0 = time.process_time(), time.perf_counter()
            store.search(memcore.Query(text=q, limit=10))
            api.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        with SearchIndex(store) as index:
            raw: list[float] = []
            for q in qs:
                t0 = time.perf_counter()
                index.search(memcore.Query(text=q, limit=10))
                raw.append(time.perf_counter() - t0)
    out["api_search_p50_ms"] = _pct(api, 0.5) * 1000
    out["api_search_p95_ms"] = _pct(api, 0.95) * 1000
    out["api_search_p99_ms"] = _pct(api, 0.99) * 1000
    out["api_search_cpu_p95_ms"] = _pct(cpu, 0.95) * 1000
    out["index_query_p50_ms"] = _pct(raw, 0.5) * 1000
    out["index_query_p95_ms"] = _pct(raw, 0.95) * 1000
    return out


_BM_IN_PROCESS = r"""
import asyncio, json, sys, time
from basic_memory.mcp.tools import search_notes

qs = json.loads(sys.argv[1])


async def main():
    fn = getattr(search_notes, "fn", search_notes)
    await fn(query=qs[0], project="bench")
    times = []
    for q in qs:
        t0 = time.perf_counter()
        await fn(query=q, project="bench")
        times.append(time.perf_counter() - t0)
    print(json.dumps(times))


asyncio.run(main())
"""


def bm_in_process(bm: BasicMemory, qs: list[str]) -> dict[str, float]:
    """basic-memory's own search tool, in one process, p50 / p95 in ms over ``qs``."""
    proc = subprocess.run(
        [bm.python, "-c", _BM_IN_PROCESS, json.dumps(qs)], env=bm.env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        print(f"basic-memory in-process search failed: {proc.stderr[-800:]}", file=sys.stderr)
        return {}
    times: list[float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"api_search_p50_ms": _pct(times, 0.5) * 1000, "api_search_p95_ms": _pct(times, 0.95) * 1000}


def floors(root: Path, rounds: int) -> dict[str, float]:
    """``python -c pass``, reading every note's bytes, parsing their frontmatter (median of rounds, s)."""
    files = sorted(root.rglob("*.md"))
    parse = (
        "import frontmatter, pathlib, sys\n"
        "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.md')): frontmatter.loads(p.read_text('utf-8'))\n"
    )
    out: dict[str, list[float]] = {"python_pass_s": [], "read_bytes_s": [], "parse_frontmatter_s": []}
    for _ in range(rounds):
        out["python_pass_s"].append(_wall([sys.executable, "-c", "pass"], dict(os.environ)))
        t0 = time.perf_counter()
        for f in files:
            f.read_bytes()
        out["read_bytes_s"].append(time.perf_counter() - t0)
        out["parse_frontmatter_s"].append(_wall([sys.executable, "-c", parse, str(root)], dict(os.environ)))
    return {k: statistics.median(v) for k, v in out.items()}


def render(result: dict[str, Any]) -> str:
    """Return the markdown table of one run (issue 24's rows), peer columns when measured."""
    mem, peer = result["memcore"], result.get("basic-memory")
    labels = [
        ("cold_index_s", f"cold index of the {result['notes']:,} notes"),
        ("no_change_refresh_s", "no-change refresh"),
        ("refresh_one_edit_s", "refresh after one edited note"),
        ("cli_search_s", "CLI search"),
        ("version_s", "`--version` (start-up)"),
    ]
    head = "| measure (whole command unless said) | memcore |"
    rule = "|---|---:|"
    if peer:
        head += " basic-memory | basic-memory / memcore |"
        rule += "---:|---:|"
    lines = [head, rule]
    for key, label in labels:
        line = f"| {label} | {mem[key]:.2f} s |"
        if peer:
            line += f" {peer[key]:.2f} s | {peer[key] / mem[key]:.1f}x |"
        lines.append(line)
    line = (
        f"| in-process search p50 / p95, {result['queries']} queries | `store.search()` "
        f"{mem['api_search_p50_ms']:.2f} / {mem['api_search_p95_ms']:.2f} ms (p99 "
        f"{mem['api_search_p99_ms']:.2f} ms, CPU time p95 {mem['api_search_cpu_p95_ms']:.2f} ms); index query alone "
        f"{mem['index_query_p50_ms']:.2f} / {mem['index_query_p95_ms']:.2f} ms |"
    )
    if peer:
        if "api_search_p50_ms" in peer:
            ratio = peer["api_search_p50_ms"] / mem["api_search_p50_ms"]
            line += f" {peer['api_search_p50_ms']:.2f} / {peer['api_search_p95_ms']:.2f} ms | {ratio:.1f}x (p50) |"
        else:
            line += " not measured | |"
    lines.append(line)
    f = result["floors"]
    lines.append("")
    lines.append(
        f"Floors in the same run: `python -c pass` {f['python_pass_s']:.3f} s; reading the notes' bytes "
        f"{f['read_bytes_s']:.3f} s; reading and parsing their frontmatter with python-frontmatter "
        f"{f['parse_frontmatter_s']:.3f} s."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000, help="Notes in the corpus.")
    parser.add_argument("--rounds", type=int, default=3, help="Runs of each whole command (median).")
    parser.add_argument("--queries", type=int, default=150, help="Queries of the in-process search.")
    parser.add_argument("--peer-python", default=None, help="An interpreter with basic-memory installed.")
    parser.add_argument("--keep", type=Path, default=None, help="Write the corpus and caches here and keep them.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures as JSON here.")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="memcore-bench-peer-"))
    try:
        corpus = work / "corpus"
        shutil.rmtree(corpus, ignore_errors=True)
        generate(corpus, args.notes)
        sizes = [p.stat().st_size for p in corpus.rglob("*.md")]
        print(f"corpus: {len(sizes)} notes, median {statistics.median(sizes):.0f} bytes", file=sys.stderr)
        mem_root = work / "memcore-corpus"
        shutil.rmtree(mem_root, ignore_errors=True)
        shutil.copytree(corpus, mem_root)
        subjects: list[Subject] = [Memcore(mem_root, work)]
        peer: BasicMemory | None = None
        if args.peer_python:
            bm_root = work / "bm-corpus"
            shutil.rmtree(bm_root, ignore_errors=True)
            shutil.copytree(corpus, bm_root)
            peer = BasicMemory(args.peer_python, bm_root, work)
            subjects.append(peer)
        notes = [sorted(s.corpus.rglob("*.md")) for s in subjects]
        word = queries(1, seed=1)[0]
        result: dict[str, Any] = {"notes": args.notes, "rounds": args.rounds, "queries": args.queries}
        result.update(whole_commands(subjects, args.rounds, notes, word))
        qs = queries(args.queries)
        result["memcore"].update(memcore_in_process(mem_root, work / "memcore-cache", qs))
        if peer is not None:
            result["basic-memory"].update(bm_in_process(peer, qs))
        result["floors"] = floors(corpus, args.rounds)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(render(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
