"""What graph.py reads differently from memcore is listed per item (memcore_rightmemory.reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import ReferenceReading
from memcore_rightmemory import RightMemoryProvider

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "rm"
    RightMemoryProvider.init_store(str(root))
    return root


def test_the_provider_is_a_reference_reading() -> None:
    assert issubclass(RightMemoryProvider, ReferenceReading)


def test_a_plain_heading_and_node_read_the_same_in_graph_py(tmp_path: Path) -> None:
    with RightMemoryProvider(_store(tmp_path)) as store:
        head = store.add(MemoryEntry(kind=Kind.FACT, id="editor", title="Editor", body="I use helix.\n"))
        node = store.add(MemoryEntry(kind=Kind.FACT, id="vim", title="Left vim.", parent="editor"))
        assert store.reference_reads_differently(head) == []
        assert store.reference_reads_differently(node) == []


def test_a_comment_under_a_heading_a_foreign_kind_and_a_non_edge_relation_are_listed(tmp_path: Path) -> None:
    with RightMemoryProvider(_store(tmp_path)) as store:
        store.add(MemoryEntry(kind=Kind.FACT, id="old", title="Old", body="Was so.\n"))
        got = store.add(
            MemoryEntry(
                kind=Kind.DECISION,
                id="new",
                title="New",
                body="Is so.\n",
                status=Status.ACTIVE,
                relations=[Relation(type="supersedes", target="old")],
            )
        )
        notes = {n.field: n for n in store.reference_reads_differently(got)}
    # the comment is in the file's header, so graph.py reads the body as memcore does
    assert sorted(notes) == ["kind", "relations"]
    assert (notes["kind"].kept, notes["kind"].shown) == ("decision", "fact")
    assert (notes["relations"].kept, notes["relations"].shown) == ([["supersedes", "old"]], [])
    assert {n.reader for n in notes.values()} == {"graph.py"}


def test_a_comment_left_under_a_heading_is_body_to_graph_py(tmp_path: Path) -> None:
    root = _store(tmp_path)
    (root / "MEMORY.md").write_text(
        '# Memory\n\n# New {#new}\n<!-- memcore: {"kind":"decision"} -->\n\nIs so.\n', encoding="utf-8"
    )
    with RightMemoryProvider(root) as store:
        got = store.get("new")
        assert (got.kind, got.body) == (Kind.DECISION, "Is so.\n")
        notes = {n.field: n for n in store.reference_reads_differently(got)}
    assert sorted(notes) == ["body", "kind"]
    assert notes["body"].kept == "Is so."
    shown = str(notes["body"].shown)
    assert shown.startswith("<!-- memcore: ") and shown.endswith("Is so.")


def test_a_migration_into_rightmemory_reports_what_graph_py_reads_differently(tmp_path: Path) -> None:
    report = migrate(f"maka:{EXAMPLES / 'maka' / 'MEMORY.md'}", f"rightmemory:{tmp_path / 'rm'}", validate=False)
    assert report.fidelity_fields == {"kind": 57, "relations": 6}
    assert report.counts["reads_differently"] == 57


def test_the_kept_graph_is_read_again_after_the_file_changes(tmp_path: Path) -> None:
    root = _store(tmp_path)
    with RightMemoryProvider(root) as store:
        got = store.add(MemoryEntry(kind=Kind.FACT, id="editor", title="Editor", body="I use helix.\n"))
        assert store.reference_reads_differently(got) == []
        memory = root / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8").replace("helix", "vim"), encoding="utf-8")
        (note,) = store.reference_reads_differently(got)  # the entry as it was: the file says otherwise now
    assert (note.field, note.kept, note.shown) == ("body", "I use helix.", "I use vim.")


def test_many_reference_readings_are_those_of_one_call_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "rm"
    migrate(f"maka:{EXAMPLES / 'maka' / 'MEMORY.md'}", f"rightmemory:{root}", validate=False)
    with RightMemoryProvider(root) as store:
        asked = [*store.read_all().entries, MemoryEntry(id="no-such-item", title="Missing", body="x\n")]
        asked.append(MemoryEntry(title="No id", body="y\n"))
        one_each = [store.reference_reads_differently(entry) for entry in asked]
        assert sum(1 for notes in one_each if notes) == 57  # as the migration's report counts them
        assert store.reference_reads_differently_many(asked) == one_each
        with store.batch():  # inside a write session: the graph as the session holds it
            assert store.reference_reads_differently_many(asked) == one_each
        monkeypatch.setenv("MEMCORE_RIGHTMEMORY_BULK", "0")
        assert store.reference_reads_differently_many(asked) == one_each
