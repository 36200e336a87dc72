"""Running a migration again never replaces an edit made in the target since the last run.

The migration journal (memcore.migrate.journal) records the version of every target entry a real run
left; an entry changed in the source *and* edited in the target since is a ``conflict``: left
alone, reported, exit code 1, until ``--overwrite``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memcore.cli.migrate import register
from memcore.migrate import migrate
from memcore.migrate.journal import journal_path
from memcore.models import Kind, MemoryEntry
from memcore.registry import get_registry

pytestmark = pytest.mark.skipif(
    not {"box", "maka"} <= set(get_registry().names()), reason="the box and maka plugins are not installed"
)


def _stores(tmp_path: Path) -> tuple[str, str, dict[str, str]]:
    """A Maka source with three entries migrated into a new Box workspace; their source ids by title."""
    reg = get_registry()
    maka = reg.get("maka")
    src_loc = str(tmp_path / "src" / "MEMORY.md")
    maka.init_store(src_loc)
    with maka(src_loc) as src:
        ids = {
            title: src.add(MemoryEntry(kind=Kind.FACT, title=title, body=f"{title} as first written.")).id or ""
            for title in ("Editor", "Shell", "Font")
        }
    src_url, dst_url = f"maka:{src_loc}", f"box:{tmp_path / 'dst'}"
    first = migrate(src_url, dst_url)
    assert first.ok and first.counts["written"] == 3
    return src_url, dst_url, ids


def _edit(url: str, entry_id: str, body: str) -> None:
    fmt, location = url.split(":", 1)
    with get_registry().get(fmt)(location) as store:
        entry = store.get(entry_id)
        entry.body = body
        store.update(entry, expected_version=entry.version)


def _body(url: str, entry_id: str) -> str:
    fmt, location = url.split(":", 1)
    with get_registry().get(fmt)(location) as store:
        return store.get(entry_id).body


def test_an_entry_edited_on_both_sides_is_left_alone_until_overwrite(tmp_path: Path) -> None:
    src_url, dst_url, ids = _stores(tmp_path)
    first = migrate(src_url, dst_url)  # nothing changed: nothing written
    assert first.counts["unchanged"] == 3
    editor_tid = first.entry(ids["Editor"]).target_id
    assert editor_tid is not None
    _edit(dst_url, editor_tid, "Edited in the target by hand.")
    _edit(src_url, ids["Editor"], "Editor changed in the source.")
    _edit(src_url, ids["Shell"], "Shell changed in the source.")

    again = migrate(src_url, dst_url)
    editor, shell, font = (again.entry(ids[t]) for t in ("Editor", "Shell", "Font"))
    assert (editor.action, shell.action, font.action) == ("conflict", "updated", "unchanged")
    assert editor.target_id == editor_tid and "--overwrite" in (editor.error or "")
    assert not again.ok and again.counts["conflict"] == 1
    assert _body(dst_url, editor_tid) == "Edited in the target by hand."  # the edit survives
    assert _body(dst_url, shell.target_id or "") == "Shell changed in the source."

    # still a conflict on the next run (the journal keeps the version it last wrote)
    assert migrate(src_url, dst_url).entry(ids["Editor"]).action == "conflict"
    # a dry run reports it too, and writes nothing
    assert migrate(src_url, dst_url, dry_run=True).entry(ids["Editor"]).action == "conflict"

    forced = migrate(src_url, dst_url, overwrite=True)
    assert forced.entry(ids["Editor"]).action == "updated" and forced.ok
    assert _body(dst_url, editor_tid) == "Editor changed in the source."
    assert migrate(src_url, dst_url).counts["unchanged"] == 3


def test_an_entry_edited_only_in_the_target_stays_and_is_unchanged(tmp_path: Path) -> None:
    src_url, dst_url, ids = _stores(tmp_path)
    tid = migrate(src_url, dst_url).entry(ids["Font"]).target_id or ""
    _edit(dst_url, tid, "Only the target changed.")
    for _ in range(2):  # runs in between do not make the edit the new baseline
        report = migrate(src_url, dst_url)
        assert report.entry(ids["Font"]).action == "unchanged" and report.ok
    assert _body(dst_url, tid) == "Only the target changed."
    _edit(src_url, ids["Font"], "Then the source changed.")
    assert migrate(src_url, dst_url).entry(ids["Font"]).action == "conflict"
    assert _body(dst_url, tid) == "Only the target changed."


def test_without_a_journal_the_source_wins_as_before(tmp_path: Path) -> None:
    """No journal (another machine, a deleted state folder): nothing to compare against."""
    src_url, dst_url, ids = _stores(tmp_path)
    tid = migrate(src_url, dst_url).entry(ids["Editor"]).target_id or ""
    src_loc, dst_loc = src_url.split(":", 1)[1], dst_url.split(":", 1)[1]
    journal_path(f"maka:{src_loc}", f"box:{dst_loc}").unlink()
    _edit(dst_url, tid, "Edited in the target.")
    _edit(src_url, ids["Editor"], "Changed in the source.")
    assert migrate(src_url, dst_url).entry(ids["Editor"]).action == "updated"
    assert _body(dst_url, tid) == "Changed in the source."


def test_a_damaged_journal_is_named_and_ignored(tmp_path: Path) -> None:
    src_url, dst_url, _ids = _stores(tmp_path)
    path = journal_path(f"maka:{src_url.split(':', 1)[1]}", f"box:{dst_url.split(':', 1)[1]}")
    path.write_text("{not json", encoding="utf-8")
    report = migrate(src_url, dst_url)
    assert report.ok and report.counts["unchanged"] == 3
    assert any(str(path) in note and "not checked" in note for note in report.notes)
    assert json.loads(path.read_text(encoding="utf-8"))["journal"] == 1  # written afresh by the run


def test_the_cli_exits_1_and_lists_the_conflict(tmp_path: Path) -> None:
    src_url, dst_url, ids = _stores(tmp_path)
    tid = migrate(src_url, dst_url).entry(ids["Shell"]).target_id or ""
    _edit(dst_url, tid, "Target edit.")
    _edit(src_url, ids["Shell"], "Source edit.")

    @click.group()
    def app() -> None:
        pass

    register(app)
    result = CliRunner().invoke(app, ["migrate", src_url, dst_url])
    assert result.exit_code == 1, result.output
    assert "edited in the target since the last run" in result.output and tid in result.output
    assert "conflict" in result.output  # the column of the entries table
    forced = CliRunner().invoke(app, ["migrate", src_url, dst_url, "--overwrite", "--json"])
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.output)["counts"]["updated"] == 1


def test_the_same_edit_on_both_sides_is_no_conflict(tmp_path: Path) -> None:
    src_url, dst_url, ids = _stores(tmp_path)
    tid = migrate(src_url, dst_url).entry(ids["Shell"]).target_id or ""
    _edit(dst_url, tid, "Shell: fish.")
    _edit(src_url, ids["Shell"], "Shell: fish.")
    report = migrate(src_url, dst_url)
    assert report.entry(ids["Shell"]).action == "updated" and report.ok


def test_the_target_reached_through_a_symlink_is_the_same_target(tmp_path: Path) -> None:
    src_url, dst_url, ids = _stores(tmp_path)
    tid = migrate(src_url, dst_url).entry(ids["Editor"]).target_id or ""
    _edit(dst_url, tid, "Target edit.")
    _edit(src_url, ids["Editor"], "Source edit.")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "dst")
    assert migrate(src_url, f"box:{link}").entry(ids["Editor"]).action == "conflict"
    assert _body(dst_url, tid) == "Target edit."


def test_an_interrupted_run_records_what_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C after the writes: the journal holds their versions, so the next change is no false conflict."""
    from memcore.migrate.run import _Run

    src_url, dst_url, ids = _stores(tmp_path)
    _edit(src_url, ids["Font"], "Font changed once.")

    def interrupted(self: _Run, *_args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(_Run, "verify", interrupted)
        with pytest.raises(KeyboardInterrupt):
            migrate(src_url, dst_url)  # the update is written, the run stops before the read-back
    _edit(src_url, ids["Font"], "Font changed twice.")
    report = migrate(src_url, dst_url)
    assert report.entry(ids["Font"]).action == "updated" and report.ok


def test_entries_the_journal_does_not_know_are_named_in_the_notes(tmp_path: Path) -> None:
    src_url, dst_url, _ids = _stores(tmp_path)
    src_loc, dst_loc = src_url.split(":", 1)[1], dst_url.split(":", 1)[1]
    journal_path(f"maka:{src_loc}", f"box:{dst_loc}").unlink()
    report = migrate(src_url, dst_url)
    assert any(n.startswith("3 entries migrated by an earlier run had no version") for n in report.notes)
    assert not any("no version" in n for n in migrate(src_url, dst_url).notes)


def test_a_whitebox_target_changes_its_stable_facts_in_place_on_a_rerun(tmp_path: Path) -> None:
    """Migrations open WhiteBox with as_user=True (migration_target_options): one update, no proposal per run."""
    reg = get_registry()
    maka = reg.get("maka")
    src_loc = str(tmp_path / "src" / "MEMORY.md")
    maka.init_store(src_loc)
    with maka(src_loc) as src:
        fid = src.add(MemoryEntry(kind=Kind.FACT, title="Editor", body="Uses vim.")).id or ""
    src_url, dst_url = f"maka:{src_loc}", f"whitebox:{tmp_path / 'vault'}"
    migrate(src_url, dst_url)
    _edit(src_url, fid, "Uses helix.")
    runs = [migrate(src_url, dst_url).entry(fid).action for _ in range(3)]
    assert runs == ["updated", "unchanged", "unchanged"]
    assert not (tmp_path / "vault" / "proposed").exists() or not any((tmp_path / "vault" / "proposed").iterdir())
    assert "Uses helix." in (tmp_path / "vault" / "editor.md").read_text(encoding="utf-8")
