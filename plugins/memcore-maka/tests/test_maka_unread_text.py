"""maka.unread-text: prose before the first ``##`` section is in no entry, and is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.migrate import migrate
from memcore.models import Severity
from memcore_maka import MakaProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "maka" / "MEMORY.md"

SECTION = (
    "## A\n<!-- maka-memory: id=x1 origin=manual createdAt=1770000000000 updatedAt=1770000000000 "
    "status=active -->\nbody\n"
)


#: The one sample holding text in no entry: its section's second metadata comment (line 6).
SHADOWED = "fixture-first-metadata-comment-authoritative.md"


@pytest.mark.parametrize("path", [*sorted(SAMPLES.glob("*.md")), EXAMPLE], ids=lambda p: p.name)
def test_samples_have_no_unread_text_but_a_shadowed_comment(path: Path) -> None:
    snap = MakaProvider(path, read_only=True).open().read_all()
    lines = [d.line for d in snap.diagnostics if d.code == "maka.unread-text"]
    assert lines == ([6] if path.name == SHADOWED else [])


def test_a_later_metadata_comment_is_unread_text_a_migration_reports(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(SECTION + "<!-- maka-memory: id=x2 status=archived -->\nmore body\n", encoding="utf-8")
    [entry] = MakaProvider(path, read_only=True).open().iter_entries()
    assert entry.body == "body\nmore body"
    report = migrate(f"maka:{path}", f"maka:{tmp_path / 'new' / 'MEMORY.md'}", validate=False)
    assert [(d.line, d.severity) for d in report.unread_text] == [(4, Severity.WARNING)]
    assert not report.lossless


def test_prose_before_the_first_section_is_reported_once_per_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("\ufeff# Maka Memory\n\nSome intro prose.\nmore of it\n\nSecond para\n" + SECTION, encoding="utf-8")
    provider = MakaProvider(path, read_only=True).open()
    unread = [d for d in provider.validate() if d.code == "maka.unread-text"]
    assert [(d.line, d.severity, d.path) for d in unread] == [
        (3, Severity.WARNING, str(path)),
        (6, Severity.WARNING, str(path)),
    ]
    assert "not part of any entry" in unread[0].message and "conversions do not carry it" in unread[0].message
    assert [d.code for d in provider.read_all().diagnostics].count("maka.unread-text") == 2


def test_title_and_blank_lines_alone_are_not_reported(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("# Maka Memory\n\n   \n" + SECTION + "\ntrailing text is the section's body\n", encoding="utf-8")
    assert [d for d in MakaProvider(path).open().validate() if d.code == "maka.unread-text"] == []
