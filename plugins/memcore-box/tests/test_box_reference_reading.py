"""What a reader following the Box-memory schema shows differently is listed per memory (memcore_box.reference)."""

from __future__ import annotations

from pathlib import Path

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore.provider import ReferenceReading
from memcore_box.provider import BoxMemoryProvider

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    return root


def test_the_provider_is_a_reference_reading() -> None:
    assert issubclass(BoxMemoryProvider, ReferenceReading)


def test_a_plain_memory_and_a_related_link_read_the_same_by_the_schema(tmp_path: Path) -> None:
    with BoxMemoryProvider(str(_workspace(tmp_path))) as store:
        login = store.add(MemoryEntry(kind=Kind.DECISION, title="Login Flow", body="Use OAuth.\n", tags=["auth"]))
        jwt = store.add(
            MemoryEntry(
                kind=Kind.DECISION,
                title="JWT",
                body="Use JWT.\n",
                relations=[Relation(type="related", target=login.id or "")],
            )
        )
        assert store.reference_reads_differently(login) == []
        assert store.reference_reads_differently(jwt) == []


def test_a_kind_outside_the_schema_and_a_foreign_relation_type_are_listed(tmp_path: Path) -> None:
    with BoxMemoryProvider(str(_workspace(tmp_path))) as store:
        base = store.add(MemoryEntry(kind=Kind.FACT, title="Base", body="Base.\n"))
        got = store.add(
            MemoryEntry(
                kind=Kind.PURSUIT,
                title="Ship it",
                body="Ship.\n",
                relations=[Relation(type="depends_on", target=base.id or "")],
            )
        )
        notes = {n.field: n for n in store.reference_reads_differently(got)}
    assert sorted(notes) == ["kind", "relations"]
    assert (notes["kind"].kept, notes["kind"].shown) == ("pursuit", "task")
    assert (notes["relations"].kept, notes["relations"].shown) == ([["depends_on", base.id]], [])
    assert notes["kind"].reader == "box-memory schema (box-recall)"


def test_a_migration_into_box_reports_what_the_schema_reader_shows_differently(tmp_path: Path) -> None:
    report = migrate(f"maka:{EXAMPLES / 'maka' / 'MEMORY.md'}", f"box:{tmp_path / 'ws'}", validate=False)
    assert report.fidelity_fields == {"kind": 8, "relations": 5, "title": 26}
    assert report.counts["reads_differently"] == 39
