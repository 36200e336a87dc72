"""``reference_reads_differently`` over every entry of a store: the per-file memo against none.

A migration asks the target's :class:`memcore.provider.ReferenceReading` about every entry it
wrote. Without a memo each question parses the whole file (WhiteBox: the month file, twice;
RightMemory: the whole graph), so the questions cost grows with the square of the store. The
memo (``memcore_whitebox.reference._file_reading`` / ``_decoded``, the RightMemory provider's
``_reference_graph``) keeps one parse while the file is unchanged; ``MEMCORE_REFERENCE_MEMO=0``
turns it off. Reports CPU seconds (``time.process_time``), best of ``--rounds``, the two
variants alternating. Run: ``python benchmarks/bench_reference_reading.py [--entries 2000]``.

``--many`` (WhiteBox): one ``reference_reads_differently_many`` call for every entry, as a
migration's verification asks, against one call per entry (each reading its month file
again: what the one call did per entry before it read each file once).
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
    provider.init_store(location)
    kind = Kind.OBSERVATION if fmt == "whitebox" else Kind.DECISION
    with provider(location) as store, store.batch():
        for i in range(entries):
            store.add(MemoryEntry(kind=kind, title=f"T {i}", body=f"Body {i}.\n", tags=["a"], source="chat"))
    return location


def _ask_all(fmt: str, location: str, memo: bool) -> float:
    os.environ["MEMCORE_REFERENCE_MEMO"] = "1" if memo else "0"
    with get_registry().get(fmt)(location, read_only=True) as store:
        entries = list(store.iter_entries())
        start = time.process_time()
        for entry in entries:
            store.reference_reads_differently(entry)  # type: ignore[attr-defined]
        return time.process_time() - start


def _ask_many(location: str, together: bool) -> tuple[float, list[object]]:
    with get_registry().get("whitebox")(location, read_only=True) as store:
        entries = list(store.iter_entries())
        start = time.process_time()
        if together:
            notes = store.reference_reads_differently_many(entries)  # type: ignore[attr-defined]
        else:
            notes = [store.reference_reads_differently_many([e])[0] for e in entries]  # type: ignore[attr-defined]
        return time.process_time() - start, notes


def main() -> None:
    """Print CPU seconds per format, memo on and off (or, with ``--many``, one call against one per entry)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--many", action="store_true", help="WhiteBox: one call for all entries against one each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("MEMCORE_STATE_DIR", str(Path(tmp) / "state"))
        if args.many:
            location = _store("whitebox", Path(tmp), args.entries)
            one: list[float] = []
            each: list[float] = []
            for _ in range(args.rounds):
                seconds, together = _ask_many(location, True)
                one.append(seconds)
                seconds, apart = _ask_many(location, False)
                each.append(seconds)
                assert together == apart, "one call and one call per entry gave other notes"
            print(f"whitebox {args.entries} entries: one call {min(one):.3f} s CPU, one each {min(each):.3f} s CPU")
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
