"""Maka parse time as a ratio to a plain regex split of the same file, measured in one run.

Generates a MEMORY.md just under Maka's 128 KiB limit (entries with metadata comments, some
without, tags, a few shadowed comments), then measures, interleaved, best of ``--repeat``:

* baseline: ``re.split(r"^## ", text, flags=re.M)`` plus a ``re.findall`` of the comments: the
  least a reader of this format must do;
* parse: :func:`memcore_maka.parse_document` (Maka's exact line rules, JavaScript whitespace,
  key/value validation);
* entries: a fresh ``MakaProvider.iter_entries()`` (read the file, parse, build every
  ``MemoryEntry``, versions and decay check).

Also reported: one ``add`` into the near-full file (lock, parse, backup, two atomic writes),
which is dominated by fsync; ``read_all()`` (entries + diagnostics from one parse) next to
``iter_entries()`` + ``validate()``; and ``add`` inside one ``batch()`` filling an empty file
to the limit: the median time of the first and of the last 100 adds (their ratio is ~1 when an
add in a batch does not cost the file size). Ratios are memcore / baseline from the same run.

Run: ``/work/venv/bin/python benchmarks/bench_maka.py [--repeat 5] [--json]``
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memcore.errors import StoreLimitError
from memcore.models import MemoryEntry
from memcore_maka import MAX_BYTES, MakaProvider, parse_document

WORDS = (
    "prefer concise answers keep the tone direct use metric units review pull requests before merging "
    "write tests first ask before deleting files summarise long threads reply in the user's language"
).split()


def make_file(path: Path, seed: int) -> int:
    """Write a Maka file just under 128 KiB; return its entry count."""
    rnd = random.Random(seed)
    parts = ["# Maka Memory", ""]
    count = 0
    while True:
        title = " ".join(rnd.sample(WORDS, 4)).capitalize()
        body = "\n".join(" ".join(rnd.sample(WORDS, 8)) + "." for _ in range(rnd.randint(1, 3)))
        block = [f"## {title}"]
        if count % 7 != 3:  # some hand-written sections have no comment
            tags = ",".join(rnd.sample(["style", "tone", "work", "code", "review"], 2))
            block.append(
                f"<!-- maka-memory: id=mem-{rnd.getrandbits(64):016x} origin=manual "
                f"createdAt={1700000000000 + count} status=active tags={tags} -->"
            )
        block.append(body)
        if count % 11 == 5:
            block.append("<!-- maka-memory: id=shadow status=archived -->")
        block.append("")
        candidate = "\n".join([*parts, *block])
        if len(candidate.encode("utf-8")) > MAX_BYTES - 2_000:
            break
        parts.extend(block)
        count += 1
    path.write_text("\n".join(parts), encoding="utf-8")
    return count


def baseline(text: str) -> int:
    sections = re.split(r"^## ", text, flags=re.M)
    comments = re.findall(r"<!--\s*maka-memory:(.*?)-->", text)
    return len(sections) + len(comments)


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def batch_adds(path: Path) -> tuple[int, float, float, float]:
    """Fill an empty store inside one batch(); return (adds, total s, first-100 and last-100 medians s)."""
    MakaProvider.init_store(str(path))
    provider = MakaProvider(path).open()
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    times: list[float] = []
    begin = time.perf_counter()
    with provider.batch():
        for i in range(5_000):
            entry = MemoryEntry(
                title=f"Item {i}", body=f"Note {i}.", tags=[f"t{i % 5}"], created_at=start + timedelta(hours=i)
            )
            t0 = time.perf_counter()
            try:
                provider.add(entry)
            except StoreLimitError:
                break
            times.append(time.perf_counter() - t0)
    total = time.perf_counter() - begin
    return len(times), total, statistics.median(times[:100]), statistics.median(times[-100:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory" / "MEMORY.md"
        path.parent.mkdir()
        entries = make_file(path, seed=7)
        text = path.read_text(encoding="utf-8")
        size = len(text.encode("utf-8"))
        doc = parse_document(text)
        assert len(doc.entries) == entries, (len(doc.entries), entries)
        rows: dict[str, float] = {"baseline": 0.0, "parse": 0.0, "entries": 0.0}
        for _ in range(args.repeat):  # interleaved, so that disk and CPU noise hit all three alike
            rows["baseline"] = min(rows["baseline"] or 1e9, best(lambda: baseline(text), 3))
            rows["parse"] = min(rows["parse"] or 1e9, best(lambda: parse_document(text), 3))
            rows["entries"] = min(
                rows["entries"] or 1e9, best(lambda: list(MakaProvider(path, apply_decay=False).iter_entries()), 1)
            )
        reads: dict[str, float] = {"read_all": 1e9, "iter_validate": 1e9}
        for _ in range(args.repeat):
            reader = MakaProvider(path, apply_decay=False)
            read_all = getattr(reader, "read_all", None)
            if read_all is not None:
                reads["read_all"] = min(reads["read_all"], best(read_all, 1))
            reads["iter_validate"] = min(
                reads["iter_validate"], best(lambda r=reader: (list(r.iter_entries()), r.validate()), 1)
            )
        provider = MakaProvider(path)
        start = time.perf_counter()
        provider.add(MemoryEntry(title="One more", body="Benchmark add into a near-full file."))
        add_s = time.perf_counter() - start
        batch_path = Path(tmp) / "batch" / "MEMORY.md"
        batch_path.parent.mkdir()
        batch_n, batch_s, first_med, last_med = batch_adds(batch_path)
    result = {
        "file_bytes": size,
        "entries": entries,
        "baseline_ms": rows["baseline"] * 1e3,
        "parse_ms": rows["parse"] * 1e3,
        "entries_ms": rows["entries"] * 1e3,
        "parse_ratio": rows["parse"] / rows["baseline"],
        "entries_ratio": rows["entries"] / rows["baseline"],
        "add_ms": add_s * 1e3,
        "read_all_ms": reads["read_all"] * 1e3,
        "iter_entries_plus_validate_ms": reads["iter_validate"] * 1e3,
        "batch_adds": batch_n,
        "batch_total_ms": batch_s * 1e3,
        "batch_add_first100_median_us": first_med * 1e6,
        "batch_add_last100_median_us": last_med * 1e6,
        "batch_add_last_to_first_ratio": last_med / first_med,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"file: {size:,} bytes, {entries} entries")
    print(f"baseline (regex split)  {result['baseline_ms']:8.2f} ms")
    print(f"parse_document          {result['parse_ms']:8.2f} ms   x{result['parse_ratio']:.1f}")
    print(f"iter_entries (full)     {result['entries_ms']:8.2f} ms   x{result['entries_ratio']:.1f}")
    print(f"one add (near-full)     {result['add_ms']:8.2f} ms   (lock, parse, backup, 2 atomic writes)")
    print(
        f"read_all                {result['read_all_ms']:8.2f} ms   "
        f"(iter_entries + validate {result['iter_entries_plus_validate_ms']:.2f} ms)"
    )
    print(
        f"batch: {batch_n} adds to the limit in {result['batch_total_ms']:.0f} ms; median add "
        f"first 100 {result['batch_add_first100_median_us']:.0f} us, last 100 "
        f"{result['batch_add_last100_median_us']:.0f} us (x{result['batch_add_last_to_first_ratio']:.1f})"
    )


if __name__ == "__main__":
    main()
