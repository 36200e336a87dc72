"""RightMemory parse + validate time as a ratio to markdown-it-py tokenising the same files.

Generates a graph of 50,000 nodes in 200 files (MEMORY.md + 199 F# detail files, 1,200
headings, every node with one or two edges into other files), then measures in one run,
interleaved, best of ``--repeat``:

* baseline: read each file, decode it, ``MarkdownIt("commonmark").parse(text)`` (the same
  parser configuration the provider uses), nothing else;
* provider: a fresh ``RightMemoryProvider`` (empty parse cache) ``.validate()``: read,
  tokenise, extract headings/nodes/edges, follow F# references, every validator rule.

Also reported (not part of the ratio): building all 51,200 ``MemoryEntry`` objects, one
``add`` into the big store, and ``--adds`` adds (500) into a fresh graph in one session with
the one-range fast commit on and off (``MEMCORE_RIGHTMEMORY_FAST_COMMIT=0``), CPU seconds, best
of ``--repeat``, alternating. Target: parse + validate <= 3x the baseline.

Run: ``/work/venv/bin/python benchmarks/bench_rightmemory.py [--repeat 3] [--files 200] [--nodes 50000]``
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from memcore.models import Kind, MemoryEntry, Relation
from memcore_rightmemory import RightMemoryProvider
from memcore_rightmemory._parse import make_markdown

TYPES = ("dep", "in", "out", "doc", "ver", "ext", "up", "loc", "run", "cfg")


def generate(root: Path, files: int, nodes: int, seed: int = 7) -> tuple[int, int]:
    """Write the store; return (node count, heading count)."""
    rng = random.Random(seed)
    per_file = nodes // files
    per_heading = 50
    node_ids = [f"n{i}" for i in range(nodes)]
    heading_count = 0

    def node_lines(start: int, count: int) -> list[str]:
        out = []
        for i in range(start, start + count):
            targets = rng.sample(range(nodes), 2)
            edges = [f"{rng.choice(TYPES)}:{node_ids[t]}" for t in targets[: 1 + (i % 2)] if t != i]
            text = f"Fact number {i} about component `c{i % 97}`, with *some* emphasis and a [link](https://example.com/{i})."
            if i % 23 == 0:
                text = "Uncertain: " + text
            out.append(f"- `{node_ids[i]}` {text} \u2192 [{', '.join(edges)}]")
        return out

    memory = ["# Bench Memory {#bench}", "", "Generated graph for the benchmark.", ""]
    heading_count += 1
    cursor = 0
    memory += ["## Root Facts {#root-facts}", "", *node_lines(cursor, per_file), ""]
    heading_count += 1
    cursor += per_file
    for f in range(1, files):
        memory += [f"## Topic {f} {{F#topic-{f}}} \u2192 [rel:root-facts]", "", f"Summary of topic {f}.", ""]
        heading_count += 1
        count = per_file if f < files - 1 else nodes - cursor
        detail: list[str] = []
        h = 0
        while count > 0:
            take = min(per_heading, count)
            detail += [f"### Section {f}.{h} {{#s{f}-{h}}}", "", f"Body of section {f}.{h}.", ""]
            detail += ["```text", "- `not-a-node` inside a fence \u2192 [dep:ghost]", "```", ""] if h == 0 else []
            detail += [*node_lines(cursor, take), ""]
            heading_count += 1
            cursor += take
            count -= take
            h += 1
        (root / f"MEMORY_topic-{f}.md").write_text("\n".join(detail), encoding="utf-8")
    (root / "MEMORY.md").write_text("\n".join(memory), encoding="utf-8")
    (root / "PURSUITS.md").write_text("# Pursuits\n\n## Focus\n\n- `p1` first\n\n## Ship {#p1}\n\nGo.\n")
    return cursor, heading_count + 1


def tokenise_only(root: Path) -> float:
    md = make_markdown()
    start = time.perf_counter()
    for path in sorted(root.glob("*.md")):
        md.parse(path.read_bytes().decode("utf-8"))
    return time.perf_counter() - start


def parse_validate(root: Path) -> tuple[float, int]:
    start = time.perf_counter()
    with RightMemoryProvider(root) as provider:
        diagnostics = provider.validate()
    return time.perf_counter() - start, len(diagnostics)


def adds(count: int, fast: bool) -> float:
    """CPU seconds of ``count`` adds into a new graph in one session, fast commit on or off."""
    os.environ["MEMCORE_RIGHTMEMORY_FAST_COMMIT"] = "1" if fast else "0"
    root = Path(tempfile.mkdtemp(prefix="bench-rightmemory-adds-"))
    try:
        RightMemoryProvider.init_store(str(root))
        with RightMemoryProvider(root) as provider, provider.batch():
            start = time.process_time()
            for i in range(count):
                provider.add(MemoryEntry(kind=Kind.FACT, title=f"Fact {i}", body=f"Body {i}.\n"))
            return time.process_time() - start
    finally:
        os.environ.pop("MEMCORE_RIGHTMEMORY_FAST_COMMIT", None)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--adds", type=int, default=500)
    args = parser.parse_args()
    on, off = [], []
    for _ in range(args.repeat):
        on.append(adds(args.adds, True))
        off.append(adds(args.adds, False))
    print(f"{args.adds} adds in one session, CPU s (best of {args.repeat}): fast commit {min(on):.2f}, "
          f"off {min(off):.2f} ({min(off) / min(on):.1f}x)")  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="bench-rightmemory-"))
    try:
        nodes, headings = generate(root, args.files, args.nodes)
        size = sum(p.stat().st_size for p in root.glob("*.md"))
        files = len(list(root.glob("*.md")))
        print(f"store: {files} files ({files - 1} graph files + PURSUITS.md), {nodes} nodes, {headings} headings, "
              f"{size / 1e6:.1f} MB")  # fmt: skip
        tok, ours, diag_count = [], [], 0
        for _ in range(args.repeat):
            tok.append(tokenise_only(root))
            elapsed, diag_count = parse_validate(root)
            ours.append(elapsed)
        base, mine = min(tok), min(ours)
        print(f"markdown-it tokenise only : {base * 1000:8.0f} ms (best of {args.repeat})")
        print(f"parse + validate          : {mine * 1000:8.0f} ms (best of {args.repeat}), {diag_count} diagnostics")
        print(f"ratio                     : {mine / base:8.2f}x  (target <= 3x)")
        with RightMemoryProvider(root) as provider:
            provider.validate()
            start = time.perf_counter()
            count = sum(1 for _ in provider.iter_entries())
            build = time.perf_counter() - start
            start = time.perf_counter()
            provider.add(
                MemoryEntry(
                    kind=Kind.FACT, title="One more fact", parent="s5-1", relations=[Relation(type="dep", target="n3")]
                )
            )
            add = time.perf_counter() - start
        print(f"iter_entries ({count} entries, cached parse): {build * 1000:.0f} ms")
        print(f"one add into the big store (re-parse 1 file, validate twice): {add * 1000:.0f} ms")
        assert diag_count == 0, "the generated store should validate clean"
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
