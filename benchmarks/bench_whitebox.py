"""WhiteBox provider benchmark: full iteration vs a bare regex loop, and peak RSS at two sizes.

Run: ``python benchmarks/bench_whitebox.py [--observations N] [--months M] [--repeat R]``

1. Generates a vault of N observations (default 100,000) spread over M monthly files (default
   24), laid out exactly as the WhiteBox reference writer lays them out (header, ``---``
   separators, fenced blocks; some blocks carry v1.1 ``context``/``source_ref``/``kind``).
2. Times, in the same run and alternating R times (best of R kept):
   - the **bare loop**: read each monthly file, decode UTF-8, split the blocks with one regex
     (the reference parser's own fence regex) and touch each block;
   - **memcore**: ``sum(1 for _ in WhiteBoxProvider(vault).iter_entries())``, i.e. every
     observation parsed and built into a validated-shape ``MemoryEntry``.
   and prints the ratio (target <= 3x).
3. Peak RSS: a fresh interpreter per size iterates the whole vault and reports
   ``ru_maxrss`` minus its RSS after imports, for N/4 and N observations (same number of
   files), to show memory does not grow with the vault (files are read one at a time).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK_RE = re.compile(r"```\s*\n([\s\S]*?)\n```")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
SOURCES = ("claude-opus-4-7", "gpt-5", "gemini-2.5-pro", "mcp:claude", "cursor")
TAGS = (
    "working-style",
    "preference",
    "correction",
    "health",
    "interest",
    "emotional-state",
    "project:memcore",
    "relationship:alex",
    "conflict",
    "tooling",
)
CONFIDENCE = ("very-low", "low", "medium", "high", "very-high")
WORDS = (
    "the user prefers short direct answers and asked to skip the summary at the end of replies "
    "when working on the parser they said fenced blocks are easier to read in an editor and that "
    "observations should quote them verbatim rather than paraphrase what was said"
).split()


def generate(root: Path, observations: int, months: int, seed: int = 7) -> None:
    """Write a vault of ``observations`` observations in ``months`` monthly files."""
    rnd = random.Random(seed)
    (root / "observations").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Vault\n", encoding="utf-8")
    (root / "identity.md").write_text("---\nschema: whitebox/1.0\n---\n\n# Identity\n", encoding="utf-8")
    (root / "tags.md").write_text(
        "# Tags\n\n## Active\n\n" + "".join(f"- `{t}` \u2014 tag\n" for t in TAGS) + "\n## Proposed\n", encoding="utf-8"
    )
    per = [observations // months + (1 if i < observations % months else 0) for i in range(months)]
    for i, count in enumerate(per):
        year, mon = 2024 + i // 12, i % 12 + 1
        parts = [
            f"# Observations \u2014 {MONTHS[mon - 1]} {year}\n\n"
            "Append-only. Each entry is one observation. Never edit another agent's entries.\n\n---\n\n"
        ]
        blocks = []
        for _ in range(count):
            tags = ", ".join(f'"{t}"' for t in rnd.sample(TAGS, rnd.randint(1, 3)))
            lines = [
                "---",
                f"date: {year}-{mon:02d}-{rnd.randint(1, 28):02d}",
                f"source: {rnd.choice(SOURCES)}",
                f"tags: [{tags}]",
                f"confidence: {rnd.choice(CONFIDENCE)}",
            ]
            roll = rnd.random()
            if roll < 0.1:
                lines.append("context: coding-conversations")
            elif roll < 0.15:
                lines.append(f"source_ref: sources/capture-{rnd.randint(1, 999)}.md")
                lines.append("kind: quote")
            lines.append("---")
            body = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(25, 70))).capitalize() + "."
            blocks.append("```\n" + "\n".join(lines) + "\n\n" + body + "\n```")
        parts.append("\n\n---\n\n".join(blocks) + "\n")
        (root / "observations" / f"{year}-{mon:02d}.md").write_text("".join(parts), encoding="utf-8")


def bare_loop(root: Path) -> int:
    """Read every monthly file and split its blocks with one regex; return the block count."""
    count = 0
    for path in sorted((root / "observations").glob("*.md")):
        text = path.read_bytes().decode("utf-8")
        for m in BLOCK_RE.finditer(text):
            if m.group(1):
                count += 1
    return count


def memcore_loop(root: Path) -> int:
    """Iterate every entry through the provider; return the observation count."""
    from memcore.models import Kind
    from memcore_whitebox.provider import WhiteBoxProvider

    with WhiteBoxProvider(str(root)) as store:
        return sum(1 for e in store.iter_entries() if e.kind is Kind.OBSERVATION)


RSS_CHILD = """
import json, resource, sys
from memcore.models import Kind
from memcore_whitebox.provider import WhiteBoxProvider
def rss_kb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
base = rss_kb()
with WhiteBoxProvider(sys.argv[1]) as store:
    n = sum(1 for e in store.iter_entries() if e.kind is Kind.OBSERVATION)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"observations": n, "base_kb": base, "peak_kb": peak}))
"""


def peak_rss(root: Path) -> dict[str, int]:
    """Iterate ``root`` in a fresh interpreter; return its observation count and RSS figures (KiB)."""
    out = subprocess.run([sys.executable, "-c", RSS_CHILD, str(root)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=100_000)
    parser.add_argument("--months", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="Generate into this folder and keep it.")
    parser.add_argument(
        "--no-fast",
        action="store_true",
        help="YAML fast paths off (MEMCORE_YAML_FAST=0): the general path, as before them",
    )
    args = parser.parse_args()
    if args.no_fast:
        from memcore.frontmatter import set_fast_paths

        set_fast_paths(False)

    tmp = Path(tempfile.mkdtemp(prefix="bench-whitebox-"))
    try:
        big = args.keep or tmp / "big"
        small = tmp / "small"
        t0 = time.perf_counter()
        generate(big, args.observations, args.months)
        generate(small, max(args.months, args.observations // 4), args.months)
        size = sum(p.stat().st_size for p in (big / "observations").glob("*.md"))
        print(
            f"vault: {args.observations:,} observations in {args.months} monthly files, "
            f"{size / 1e6:.1f} MB (generated in {time.perf_counter() - t0:.1f} s)"
        )

        bare_times, full_times = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            n_bare = bare_loop(big)
            bare_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            n_full = memcore_loop(big)
            full_times.append(time.perf_counter() - t)
        assert n_bare == n_full == args.observations, (n_bare, n_full)
        bare, full = min(bare_times), min(full_times)
        print(f"bare regex loop : {bare * 1000:8.0f} ms  ({bare / n_bare * 1e6:.2f} us/observation)")
        print(f"memcore iterate : {full * 1000:8.0f} ms  ({full / n_full * 1e6:.2f} us/observation)")
        print(f"ratio           : {full / bare:8.2f}x  (target <= 3x; best of {args.repeat})")

        for label, root in (("N/4", small), ("N", big)):
            r = peak_rss(root)
            print(
                f"peak RSS {label:>3} ({r['observations']:>7,} obs): {r['peak_kb'] / 1024:6.1f} MiB "
                f"(+{(r['peak_kb'] - r['base_kb']) / 1024:.1f} MiB over the {r['base_kb'] / 1024:.1f} MiB "
                f"after imports)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
