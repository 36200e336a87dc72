"""What Maka's own reader shows differently is listed per entry and field in the migration report."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memcore.cli import cli
from memcore.migrate import migrate
from memcore.models import MemoryEntry, Status
from memcore.provider import ReferenceReading
from memcore_maka._parse import parse_document, parse_tags
from memcore_maka.provider import MakaProvider
from memcore_mcpmemory.provider import McpMemoryProvider


def _source(tmp_path: Path, *entries: MemoryEntry) -> str:
    path = tmp_path / "src" / "memory.jsonl"
    McpMemoryProvider.init_store(str(path))
    with McpMemoryProvider(str(path)) as store:
        for entry in entries:
            store.add(entry)
    return f"mcpmemory:{path}"


def test_maka_provider_tells_what_its_reader_shows() -> None:
    assert issubclass(MakaProvider, ReferenceReading)


def test_migration_report_lists_tags_title_and_escapes_maka_shows_differently(tmp_path: Path) -> None:
    src = _source(
        tmp_path,
        MemoryEntry(title="Editor", body="Uses helix.", tags=["Tools:Editor"]),
        MemoryEntry(title="", body="No title here."),
        MemoryEntry(title="Heading inside", body="first\n## not a heading\nlast"),
        MemoryEntry(title="Plain", body="Nothing odd.", tags=["plain"], status=Status.SUPERSEDED),
    )
    target = tmp_path / "maka" / "MEMORY.md"
    report = migrate(src, f"maka:{target}", validate=False)
    by_title = {e.title: e for e in report.entries}
    tags = by_title["Editor"].fidelity
    assert [(n.field, n.kept, n.shown) for n in tags if n.field == "tags"] == [
        ("tags", ["Tools:Editor"], ["tools-editor"])
    ]
    untitled = next(e for e in report.entries if e.title.startswith("No title"))
    assert [(n.field, n.kept, n.shown) for n in untitled.fidelity if n.field == "title"] == [
        ("title", "", "Untitled memory")
    ]
    body = [n for n in by_title["Heading inside"].fidelity if n.field == "body"]
    assert [(n.kept, n.shown) for n in body] == [("first\n## not a heading\nlast", "first\n ## not a heading\nlast")]
    assert "heading" in body[0].why
    plain = {n.field: n for n in by_title["Plain"].fidelity}
    assert set(plain) == {"source", "status"}
    assert (plain["status"].kept, plain["status"].shown) == ("superseded", "unknown")
    assert all(n.reader == "local-memory.ts" for e in report.entries for n in e.fidelity)
    assert report.fidelity_fields == {"body": 1, "source": 4, "status": 1, "tags": 1, "title": 1}
    assert report.counts["reads_differently"] == 4


def test_notes_match_a_reading_by_makas_own_rules(tmp_path: Path) -> None:
    src = _source(tmp_path, MemoryEntry(title="T", body="b", tags=["A b", "c"], source="manual"))
    target = tmp_path / "maka" / "MEMORY.md"
    report = migrate(src, f"maka:{target}", validate=False)
    (section,) = parse_document(target.read_text(encoding="utf-8")).entries
    assert section.meta is not None
    note = next(n for n in report.entries[0].fidelity if n.field == "tags")
    assert note.shown == parse_tags(section.meta["tags"]) == ["a-b", "c"]
    assert [n.field for n in report.entries[0].fidelity] == ["tags"]


def test_human_summary_lists_what_maka_shows_differently(tmp_path: Path) -> None:
    src = _source(tmp_path, MemoryEntry(title="", body="No title here.", source="manual"))
    result = CliRunner().invoke(cli, ["migrate", src, f"maka:{tmp_path / 'maka' / 'MEMORY.md'}"])
    assert result.exit_code == 0, result.output
    assert "(local-memory.ts) shows differently" in " ".join(result.output.split())
    assert "title: '' shown as 'Untitled memory'" in result.output
