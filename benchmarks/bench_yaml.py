"""YAML layer benchmark: each fast path beside the general path it optimises, switch on and off.

Run: ``python benchmarks/bench_yaml.py [--n 2000] [--repeat 3] [--json]``

Every operation runs over ``--n`` distinct memory-shaped documents (so the fast paths' memo
tables see realistic repetition, not one document over and over), once with the fast paths on
and once with them off (:func:`memcore.frontmatter.set_fast_paths`, what ``MEMCORE_YAML_FAST=0``
does at import); the figure is the best of ``--repeat`` runs, in microseconds per document.

- **emit (flush)**: ``FrontmatterDocument.new(meta, body).dumps()`` (memcore's layout: WhiteBox
  stable files, a new document anywhere);
- **emit (indented)**: ``INDENTED.dump_mapping(meta)`` (the Box-memory authors' layout);
- **load**: ``load_fast`` then, when it declines, ``to_plain(load_yaml(...))`` (Box's read path);
- **read_frontmatter**: a whole document read for reading (WhiteBox stable files);
- **whitebox observation**: ``parse_fields`` of an observation's frontmatter as the reference
  writer lays it out.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import memcore.frontmatter as fm
from memcore.frontmatter import INDENTED, FrontmatterDocument, flow_list, load_fast, load_yaml, plain_text

WORDS = "we decided to keep stateless tokens because mobile clients cannot hold cookies".split()
TAGS = ("auth", "mobile", "security", "ops", "recurring", "finance", "infra", "design")


def _meta(rnd: random.Random, i: int) -> dict[str, Any]:
    return {
        "id": f"mem_01HXYZA1B2C3D4E5F6G7H{i:05d}",
        "slug": f"memo-{i}",
        "title": f"memo {i} {' '.join(rnd.sample(WORDS, 3))}",
        "kind": rnd.choice(["decision", "fact", "task"]),
        "status": "active",
        "team": "default",
        "agent": "bench-agent",
        "created_at": plain_text(f"2026-11-{rnd.randrange(1, 29):02d}T21:00:00.123456Z"),
        "confidence": rnd.choice([0.5, 0.7, 0.9]),
        "tags": flow_list(rnd.sample(TAGS, rnd.randrange(1, 4))),
        "memcore": {"relations": [{"type": "related", "target": f"memo-{i - 1}.md"}], "n": i},
    }


def _observation(rnd: random.Random, i: int) -> str:
    tags = ", ".join(f'"{t}"' for t in rnd.sample(TAGS, 2))
    return (
        f"date: 2026-04-{rnd.randrange(1, 29):02d}\nsource: agent-{i % 50}\ntags: [{tags}]\n"
        f"confidence: {rnd.choice(['high', 'medium', 'low'])}\nkind: {rnd.choice(['fact', 'decision'])}"
    )


def _best(fn: Callable[[Any], Any], items: list[Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def run(n: int, repeat: int) -> list[dict[str, Any]]:
    """Time each operation with the fast paths on and off; return one row per operation."""
    from memcore_whitebox._blocks import parse_fields

    rnd = random.Random(7)
    metas = [_meta(rnd, i) for i in range(n)]
    yaml_texts = [INDENTED.dump_mapping(m) for m in metas]
    documents = [FrontmatterDocument.new(m, f"\nbody {i}\n").dumps() for i, m in enumerate(metas)]
    observations = [_observation(rnd, i) for i in range(n)]

    def load(text: str) -> Any:
        found = load_fast(text)
        return found if found is not None else fm.to_plain(load_yaml(text))

    cases: list[tuple[str, Callable[[Any], Any], list[Any]]] = [
        ("emit (flush)", lambda m: FrontmatterDocument.new(m, "body\n").dumps(), metas),
        ("emit (indented)", INDENTED.dump_mapping, metas),
        ("load", load, yaml_texts),
        ("read_frontmatter", fm.read_frontmatter, documents),
        ("whitebox observation", parse_fields, observations),
    ]
    rows = []
    for name, fn, items in cases:
        times = {}
        for enabled in (True, False):
            fm.set_fast_paths(enabled)
            times[enabled] = _best(fn, items, repeat)
        fm.set_fast_paths(True)
        rows.append(
            {
                "operation": name,
                "fast_us": round(times[True], 1),
                "general_us": round(times[False], 1),
                "speedup": round(times[False] / times[True], 1),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="distinct documents per operation (default 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept (default 3)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = run(args.n, args.repeat)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| operation | fast paths on (µs/doc) | off: general path (µs/doc) | speed-up |\n|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['operation']} | {row['fast_us']} | {row['general_us']} | x{row['speedup']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
