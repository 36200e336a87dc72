"""``reference_reads_differently`` over every entry of a store: the per-file memo against none.

A migration asks the target's :class:`memcore.provider.ReferenceReading` about every entry it
wrote. Without a memo each question parses the whole file (WhiteBox: the month file, twice;
RightMemory: the whole graph), so the questions cost grows with the square of the store. The
memo (``memcore_whitebox.reference._file_reading`` / ``_decoded``, the RightMemory provider's
``_reference_graph``) keeps one parse while the file is unchanged; ``MEMCORE_REFERENCE_MEMO=0``
turns it off. Reports CPU seconds (``time.process_time``), best of ``--rounds``, the two
variants alternating. Run: ``python benchmarks/bench_reference_reading.py [--entries 2000]``.

``--many``: one call each (memo on) against one ``reference_reads_differently_many`` call for
every entry, as a migration's verification asks, for WhiteBox, RightMemory and Maka (a Maka file
holds about 500 of these entries); both must give the same notes.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from memcore.models import Kind, MemoryEntry
from memcore.registry import get_registry


def _store(fmt: str, where: Path, entries: int) -> str:
    provider = get_registry().get(fmt)
    location = str(where / fmt)
    if fmt == "maka":
        location = str(where / fmt / "MEMORY.md")
        entries = min(entries, 500)  # what fits in its 128 KiB file
    provider.init_store(location)
    kind = Kind.OBSERVATION if fmt == "whitebox" else Kind.DECISION
    with provider(location) as store, store.batch():
        for i in range(entries):
            store.add(MemoryEntry(kind=kind, title=f"T {i}", body=f"Body {i}.\n", tags=["a"], source="chat"))
    return location


def _ask_many(fmt: str, location: str, many: bool) -> tuple[float, list[object]]:
    os.environ.pop("MEMCORE_REFERENCE_MEMO", None)
    with get_registry().get(fmt)(location, read_only=True) as store:
        entries = list(store.iter_entries())
        start = time.process_time()
        if many:
            notes = list(store.reference_reads_differently_many(entries))  # type: ignore[attr-defined]
        else:
            notes = [store.reference_reads_differently(entry) for entry in entries]  # type: ignore[attr-defined]
        return time.process_time() - start, notes


def _ask_all(fmt: str, location: str, memo: bool) -> float:
    os.environ["MEMCORE_REFERENCE_MEMO"] = "1" if memo else "0"
    with get_registry().get(fmt)(location, read_only=True) as store:
        entries = list(store.iter_entries())
        start = time.process_time()
        for entry in entries:
            store.reference_reads_differently(entry)  # type: ignore[attr-defined]
        return time.process_time() - start


def main() -> None:
    """Print CPU seconds per format, memo on and off."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--many", action="store_true", help="one call each against one call for all")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("MEMCORE_STATE_DIR", str(Path(tmp) / "state"))
        if args.many:
            print("| format | entries | one call each (CPU s) | one call for all (CPU s) | ratio |")
            print("|---|---|---|---|---|")
            for fmt in ("whitebox", "rightmemory", "maka"):
                location = _store(fmt, Path(tmp), args.entries)
                each: list[float] = []
                once: list[float] = []
                seen: dict[bool, list[object]] = {}
                for r in range(args.rounds):
                    for many in (False, True) if r % 2 == 0 else (True, False):
                        seconds, seen[many] = _ask_many(fmt, location, many)
                        (once if many else each).append(seconds)
                assert seen[True] == seen[False], f"{fmt}: one call and one call per entry gave other notes"
                count = len(seen[True])
                print(f"| {fmt} | {count} | {min(each):.4f} | {min(once):.4f} | {min(once) / min(each):.2f}x |")
            return
        print("| format | entries | memo on (CPU s) | memo off (CPU s) | ratio |\n|---|---|---|---|---|")
        for fmt in ("whitebox", "rightmemory"):
            location = _store(fmt, Path(tmp), args.entries)
            on: list[float] = []
            off: list[float] = []
            for _ in range(args.rounds):
                on.append(_ask_all(fmt, location, True))
                off.append(_ask_all(fmt, location, False))
            print(f"| {fmt} | {args.entries} | {min(on):.3f} | {min(off):.3f} | {min(off) / min(on):.0f}x |")
        os.environ.pop("MEMCORE_REFERENCE_MEMO", None)


if __name__ == "__main__":
    main()
