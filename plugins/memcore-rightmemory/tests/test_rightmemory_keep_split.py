"""A read after a write keeps the lines and line map the write left (MEMCORE_RIGHTMEMORY_KEEP_SPLIT).

A write session's changed files end it with their lines split and, in the header layout, the
line map ``to_file``'s own check made; ``read_all`` leaves lines it did not split itself, so the
reference reading that follows in a migration neither splits the file nor rebuilds its map.
Every case compares the answers with the switch on and off.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import read_all
from memcore_rightmemory._header import to_file, to_file_mapped
from memcore_rightmemory._incremental import live
from memcore_rightmemory._parse import Source
from memcore_rightmemory.provider import RightMemoryProvider

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rightmemory"
WHITEBOX = Path(__file__).resolve().parents[3] / "examples" / "whitebox-vault"
SWITCH = "MEMCORE_RIGHTMEMORY_KEEP_SPLIT"


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test


def _example(tmp_path: Path) -> Path:
    """The authors' example with a header line naming no item and a line no item reads."""
    root = tmp_path / "rm"
    shutil.copytree(EXAMPLE, root)
    memory = root / "MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    assert text.startswith("<!-- memcore: items\n")
    text = text.replace("<!-- memcore: items\n", '<!-- memcore: items\nghost-item {"tags":["kept"]}\n', 1)
    memory.write_text(text + "\n- `not-a-node` stray text under no item\n", encoding="utf-8")
    return root


def _new(i: int, *, related: str | None = None) -> MemoryEntry:
    return MemoryEntry(
        kind=(Kind.FACT, Kind.DECISION, Kind.PREFERENCE)[i % 3],
        title=f"Added {i}",
        body=f"What was added {i}.\n",
        tags=[f"t{i % 4}"],
        confidence=0.7,
        source="test",
        relations=[Relation(type="related", target=related)] if related else [],
    )


def _write_then_read(root: Path) -> Any:
    """Writes in one session, then (same provider) every answer a migration's read-back asks for."""
    with RightMemoryProvider(str(root)) as store:
        first = read_all(store).entries
        with store.batch():
            added = store.add_many([_new(i, related=first[0].id if i == 3 else None) for i in range(12)])
            changed = first[1].model_copy(update={"body": "Rewritten.\n"})
            store.update(changed, expected_version=changed.version)
        snapshot = read_all(store)
        notes = store.reference_reads_differently_many(snapshot.entries)
        places = [store.locate(e.id) for e in snapshot.entries if e.id and e.kind is not Kind.CORRECTION]
        diagnostics = store.validate()
    return (
        [e.model_dump() if isinstance(e, MemoryEntry) else repr(e) for e in added],
        [e.model_dump() for e in snapshot.entries],
        [d.model_dump() for d in snapshot.diagnostics],
        [[n.model_dump() for n in each] for each in notes],
        places,
        [d.model_dump() for d in diagnostics],
        {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()},
    )


def test_writes_then_read_all_reference_notes_locate_and_validate_are_the_same_with_the_switch_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SWITCH, "1")
    on = _write_then_read(_example(tmp_path / "on"))
    monkeypatch.setenv(SWITCH, "0")
    off = _write_then_read(_example(tmp_path / "off"))
    assert on == off
    added, entries, diagnostics, notes, places, validated, files = on
    assert len(added) == 12 and all(isinstance(e, dict) for e in added)
    assert len(notes) == len(entries) > 12
    assert any(d["code"] == "rm.unread-text" for d in diagnostics)  # placed by the map: the same line both ways
    assert [d for d in validated if d["line"] is not None]
    assert all(line >= 1 for _rel, line in places)
    assert b"ghost-item" in files["MEMORY.md"]


def test_the_line_map_a_write_hands_over_is_the_map_a_fresh_parse_of_the_bytes_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SWITCH, "1")
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store, store.batch():
        store.add_many([_new(i) for i in range(5)])
        doc = store._write_graph().docs["MEMORY.md"]
        settled = live(doc).settled()
    fresh = Source.from_bytes("MEMORY.md", settled.data)
    count = len(fresh.lines)
    assert settled._map is not None and settled._map.top  # the ghost header line stays on top
    assert [settled.file_line(n) for n in range(1, count + 1)] == [fresh.file_line(n) for n in range(1, count + 1)]
    assert settled.lines == fresh.lines


def test_bytes_set_on_a_live_source_settle_with_the_map_of_those_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SWITCH, "1")
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store, store.batch():
        store.add_many([_new(i) for i in range(2)])
        source = live(store._write_graph().docs["MEMORY.md"])
        _ = source.data  # the map of the written layout
        other = (EXAMPLE / "MEMORY.md").read_bytes()
        source.data = other
        settled = source.settled()
    fresh = Source.from_bytes("MEMORY.md", other)
    count = len(fresh.lines)
    assert settled.data == other and settled.lines == fresh.lines
    assert [settled.file_line(n) for n in range(1, count + 1)] == [fresh.file_line(n) for n in range(1, count + 1)]


def test_to_file_mapped_gives_to_files_lines_and_a_map_only_for_the_header_layout() -> None:
    inline = ["# Memory\n", "\n", "## Fact {#a}\n", '<!-- memcore: {"tags":["x"]} -->\n', "Body.\n"]
    lines, line_map, known = to_file_mapped(inline, "\n")
    assert lines == to_file(inline, "\n")
    assert lines[0] == "<!-- memcore: items\n" and known
    assert line_map is not None and line_map.file_line(4) == 2  # the comment line is the header's first item
    plain = ["# Memory\n", "\n", "## Fact {#a}\n", "Body.\n"]
    assert to_file_mapped(plain, "\n") == (plain, None, False)


def test_read_all_drops_the_lines_it_split_and_keeps_those_split_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _example(tmp_path)
    for switch, kept_after_write in (("1", True), ("0", False)):
        monkeypatch.setenv(SWITCH, switch)
        with RightMemoryProvider(str(root)) as store:
            graph = store.graph()
            read_all(store)
            assert graph.docs["MEMORY.md"].source._lines is None  # split by the read: dropped both ways
            with store.batch():
                store.add_many([_new(i) for i in range(3)])
            read_all(store)
            source = store.graph().docs["MEMORY.md"].source
            assert (source._lines is not None) is kept_after_write


def test_a_migration_into_rightmemory_reports_and_writes_the_same_with_the_switch_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = []
    for switch in ("1", "0"):
        monkeypatch.setenv(SWITCH, switch)
        monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / f"state-{switch}"))  # each run its own journal
        target = tmp_path / "rm"
        report = migrate(f"whitebox:{WHITEBOX}", f"rightmemory:{target}")
        data = report.model_dump(exclude={"duration_ms", "started_at"})
        results.append((data, {p.name: p.read_bytes() for p in sorted(target.iterdir()) if p.is_file()}))
        shutil.rmtree(target)  # the second run writes the same path anew
    assert results[0] == results[1]
    report, files = results[0]
    assert report["counts"]["written"] > 5 and report["counts"]["failed"] == 0
    assert any(e["fidelity"] for e in report["entries"])  # the reference reading answered
    assert "MEMORY.md" in files
