"""The graph a ``read_all`` keeps (MEMCORE_RIGHTMEMORY_READ_MEMO) gives the answers of a fresh parse.

``read_all`` keeps its graph while the files it rests on are unchanged; ``source_files`` (core's
checks of every ``read_all``) and the reference reading use it. Each case compares the answers
with the memo on and off, and after a file changed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import read_all
from memcore_rightmemory.provider import RightMemoryProvider
from memcore_rightmemory.reference import graph_stamp

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rightmemory"
WHITEBOX = Path(__file__).resolve().parents[3] / "examples" / "whitebox-vault"


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test


def _example(tmp_path: Path) -> Path:
    root = tmp_path / "rm"
    shutil.copytree(EXAMPLE, root)
    return root


def _answers(root: Path) -> Any:
    """read_all, source_files and the reference reading of one provider, in a migration's order."""
    with RightMemoryProvider(str(root)) as store:
        snapshot = read_all(store)
        files = store.source_files()
        notes = store.reference_reads_differently_many(snapshot.entries)
        again = store.source_files()
    return (
        [e.model_dump() for e in snapshot.entries],
        [d.model_dump() for d in snapshot.diagnostics],
        files,
        [[n.model_dump() for n in each] for each in notes],
        again,
    )


def test_read_all_source_files_and_reference_notes_are_the_same_with_the_read_memo_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _example(tmp_path)
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    on = _answers(root)
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "0")
    off = _answers(root)
    assert on == off
    entries, _diagnostics, files, notes, again = on
    assert len(entries) > 3 and files == again == sorted(files)
    assert "MEMORY.md" in files and "PURSUITS.md" in files
    assert len(notes) == len(entries)


def test_source_files_and_the_reference_reading_after_read_all_parse_nothing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _example(tmp_path)
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    with RightMemoryProvider(str(root)) as store:
        entries = read_all(store).entries
        kept = store._reference_memo
        assert kept is not None
        loads: list[int] = []
        real = store.graph
        monkeypatch.setattr(store, "graph", lambda: loads.append(1) or real())
        files = store.source_files()
        notes = store.reference_reads_differently_many(entries)
    assert loads == []
    assert files == sorted(kept[1].docs)
    assert any(notes)


def test_a_file_added_behind_an_f_heading_after_read_all_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    root = _example(tmp_path)
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n### Later detail {F#later-detail}\n", encoding="utf-8")
    with RightMemoryProvider(str(root)) as store:
        before = read_all(store)
        assert "MEMORY_later-detail.md" not in store.source_files()
        assert any(d.code == "rm.missing-backing" for d in before.diagnostics)
        # the detail file appears; MEMORY.md (the file naming it) is unchanged
        (root / "MEMORY_later-detail.md").write_text("- `later-node` A node behind it → []\n", encoding="utf-8")
        files = store.source_files()
        ids = [e.id for e in read_all(store).entries]
    assert "MEMORY_later-detail.md" in files
    assert "later-node" in ids


def test_a_write_after_read_all_is_seen_by_source_files_and_the_reference_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store:
        read_all(store)
        first = store.add(MemoryEntry(kind=Kind.FACT, title="Tabs", body="Width 4.\n"))
        added = store.add(
            MemoryEntry(
                kind=Kind.FACT,
                title="Editor",
                body="Vim.\n",
                tags=["tools"],
                relations=[Relation(type="related", target=first.id or "")],
            )
        )
        files = store.source_files()
        notes = store.reference_reads_differently_many([added])
    with RightMemoryProvider(str(root)) as fresh:
        assert files == fresh.source_files()
        assert notes == fresh.reference_reads_differently_many([fresh.get(added.id or "")])
    assert [n.field for n in notes[0]] == ["relations"]


def test_an_edit_in_place_after_read_all_is_seen_by_the_reference_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store:
        entries = read_all(store).entries
        item = next(e for e in entries if e.extra["rightmemory"]["item"] == "heading" and e.body)
        memory = root / store.file_of(item)
        text = memory.read_text(encoding="utf-8")
        assert item.body.splitlines()[0] in text
        memory.write_text(text.replace(item.body.splitlines()[0], "Changed by hand.", 1), encoding="utf-8")
        notes = store.reference_reads_differently_many([item])
    assert [n.field for n in notes[0]] == ["body"]
    assert notes[0][0].shown.startswith("Changed by hand.")


def test_the_stamp_is_refused_for_a_graph_whose_file_changed_since_it_was_read(tmp_path: Path) -> None:
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store:
        graph = store.graph()
        assert graph_stamp(graph, store._read) is not None
        (root / "MEMORY.md").write_bytes((root / "MEMORY.md").read_bytes() + b"\n")
        assert graph_stamp(graph, store._read) is None


@pytest.mark.parametrize("pair", ["whitebox:rightmemory", "rightmemory:whitebox", "rightmemory:rightmemory"])
def test_a_migration_reports_and_writes_the_same_with_the_read_memo_on_and_off(
    pair: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source_fmt, target_fmt = pair.split(":")
    runs = []
    where = tmp_path / "run"  # the same paths each time: the origin stamps name the source
    for switch in ("1", "0"):
        monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", switch)
        monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / f"state-{switch}"))
        shutil.rmtree(where, ignore_errors=True)
        source = where / "source"
        shutil.copytree(EXAMPLE if source_fmt == "rightmemory" else WHITEBOX, source)
        target = where / "target"
        target.mkdir()
        if target_fmt == "rightmemory":
            RightMemoryProvider.init_store(str(target))
        report = migrate(f"{source_fmt}:{source}", f"{target_fmt}:{target}")
        dump = report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target", "source"})
        runs.append((json.loads(json.dumps(dump).replace(str(where), "<run>")), _files(target)))
    assert runs[0] == runs[1]
    report, files = runs[0]
    assert report["counts"]["written"] > 3 and files
    if target_fmt == "rightmemory":
        assert report["counts"]["reads_differently"] > 0


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_same_size_rewrite_in_the_same_clock_tick_is_seen_after_read_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcore_rightmemory import reference

    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    real_lstat = reference._lstat

    def coarse(path: Path) -> tuple[int, int, int, int, int] | None:
        found = real_lstat(path)  # a coarse clock: every write of the test falls in one tick
        return None if found is None else (1_000, 1_000, found[2], found[3], found[4])

    monkeypatch.setattr(reference, "_lstat", coarse)
    monkeypatch.setattr(reference.time, "time_ns", lambda: 1_500)  # the tick is now: not settled
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store:
        entries = read_all(store).entries
        item = next(e for e in entries if e.extra["rightmemory"]["item"] == "heading" and e.body)
        memory = root / store.file_of(item)
        text = memory.read_text(encoding="utf-8")
        first = item.body.splitlines()[0]
        edited = "X" * len(first.encode("utf-8"))
        with memory.open("r+b") as fh:  # in place: same inode, same size
            fh.write(text.replace(first, edited, 1).encode("utf-8"))
        assert store._reference_memo is not None
        again = {e.id: e for e in read_all(store).entries}
    assert again[item.id].body.splitlines()[0] == edited


def test_a_settled_stamp_is_trusted_without_reading_the_files_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcore_rightmemory import reference

    monkeypatch.setenv("MEMCORE_RIGHTMEMORY_READ_MEMO", "1")
    monkeypatch.setattr(reference.time, "time_ns", lambda: 2**62)  # every file is long settled
    root = _example(tmp_path)
    with RightMemoryProvider(str(root)) as store:
        read_all(store)
        assert store._memo_settled
        reads: list[str] = []
        real = store._read
        monkeypatch.setattr(store, "_read", lambda rel: reads.append(rel) or real(rel))
        assert store._remembered() is not None
    assert reads == []
