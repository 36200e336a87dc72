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

``--read-back``: a migration's read-back of a RightMemory target, a fresh provider's
``read_all()`` (with core's checks, which list the store's files) then the notes for every
entry, with ``MEMCORE_RIGHTMEMORY_READ_MEMO`` on and off alternating (bodies of ~300 bytes, so
that MEMORY.md outgrows the 2 MiB read cache as a migrated store does); both must give the
same entries, diagnostics and notes.

``--whitebox-read-back``: the same read-back of a WhiteBox vault a box -> whitebox migration
wrote (``bench_migrate``'s source migrated into a fresh vault, fsync off): a fresh provider's
``read_all()`` (core's control-character check included) then the notes for every entry, with
``MEMCORE_WHITEBOX_SOURCE_BYTES`` and ``MEMCORE_WHITEBOX_REFERENCE_SCAN`` on and off
alternating; both must give the same entries, diagnostics and notes.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from memcore.models import Kind, MemoryEntry
from memcore.provider import read_all
from memcore.registry import get_registry


def _store(fmt: str, where: Path, entries: int, pad: int = 0) -> str:
    provider = get_registry().get(fmt)
    location = str(where / fmt)
    if fmt == "maka":
        location = str(where / fmt / "MEMORY.md")
        entries = min(entries, 500)  # what fits in its 128 KiB file
    provider.init_store(location)
    kind = Kind.OBSERVATION if fmt == "whitebox" else Kind.DECISION
    with provider(location) as store, store.batch():
        for i in range(entries):
            body = f"Body {i}." + " words" * (pad // 6)
            store.add(MemoryEntry(kind=kind, title=f"T {i}", body=body + "\n", tags=["a"], source="chat"))
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


def _read_back(fmt: str, location: str, switches: tuple[str, ...], on: bool) -> tuple[float, float, object]:
    """A fresh provider's ``read_all()`` then the notes for every entry, ``switches`` all on or all off.

    Returns CPU seconds of the read, of the notes, and what they gave (to compare both ways).
    """
    os.environ.update(dict.fromkeys(switches, "1" if on else "0"))
    try:
        start = time.process_time()
        with get_registry().get(fmt)(location, read_only=True) as store:
            snapshot = read_all(store)
            read = time.process_time() - start
            notes = store.reference_reads_differently_many(snapshot.entries)  # type: ignore[attr-defined]
        return read, time.process_time() - start - read, (snapshot, notes)
    finally:
        for name in switches:
            os.environ.pop(name, None)


def _compare_read_back(fmt: str, location: str, switches: tuple[str, ...], rounds: int, entries: int) -> None:
    """Print :func:`_read_back`'s best CPU seconds with ``switches`` off and on, alternating; both must agree."""
    timed: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    found: dict[bool, object] = {}
    for r in range(rounds):
        for on in (False, True) if r % 2 == 0 else (True, False):
            read, notes, found[on] = _read_back(fmt, location, switches, on)
            timed[on].append((read, notes))
    assert found[True] == found[False], f"{'+'.join(switches)} changed what the read-back gives"
    print(f"| {'+'.join(switches)} | entries | read_all (CPU s) | notes after it (CPU s) |\n|---|---|---|---|")
    for on in (False, True):
        best_read = min(read for read, _ in timed[on])
        best_notes = min(notes for _, notes in timed[on])
        print(f"| {'on' if on else 'off'} | {entries} | {best_read:.3f} | {best_notes:.3f} |")


WHITEBOX_SWITCHES = ("MEMCORE_WHITEBOX_SOURCE_BYTES", "MEMCORE_WHITEBOX_REFERENCE_SCAN")


def _migrated_vault(where: Path, entries: int) -> str:
    """A WhiteBox vault as a box -> whitebox migration of ``entries`` entries leaves it."""
    import bench_migrate  # beside this script

    from memcore.migrate import migrate
    from memcore.storage import scratch_writes

    with scratch_writes():
        source, _count = bench_migrate.build_source("box", entries, where / "src")
        (where / "dst").mkdir()
        target = bench_migrate.location("whitebox", where / "dst")
        migrate(f"box:{source}", f"whitebox:{target}")
    return target


def main() -> None:
    """Print CPU seconds per format, memo on and off."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--many", action="store_true", help="one call each against one call for all")
    parser.add_argument("--read-back", action="store_true", help="RightMemory read_all + notes, read memo off/on")
    parser.add_argument(
        "--whitebox-read-back", action="store_true", help="WhiteBox read_all + notes, its two switches off/on"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("MEMCORE_STATE_DIR", str(Path(tmp) / "state"))
        if args.whitebox_read_back:
            location = _migrated_vault(Path(tmp), args.entries)
            _compare_read_back("whitebox", location, WHITEBOX_SWITCHES, args.rounds, args.entries)
            return
        if args.read_back:
            # bodies of ~300 bytes: 10,000 entries make a MEMORY.md of about 3.6 MB, as a migrated
            # store's (beyond the provider's 2 MiB read cache, which keeps a smaller file parsed)
            location = _store("rightmemory", Path(tmp), args.entries, pad=300)
            _compare_read_back("rightmemory", location, ("MEMCORE_RIGHTMEMORY_READ_MEMO",), args.rounds, args.entries)
            return
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
