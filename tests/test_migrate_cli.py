"""``memcore migrate`` through click, against the file-backed providers of test_convert."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from tests.test_convert import _entries, _hash_tree, _make_store, _Plugin

import memcore.registry
from memcore.cli.migrate import register
from memcore.plugins import get_plugin_manager


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> click.Group:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(_Plugin(), name="fakes")
    reg = memcore.registry.ProviderRegistry(pm)
    monkeypatch.setattr(memcore.registry, "_default_registry", lambda: reg)

    @click.group()
    def group() -> None:
        pass

    register(group)
    return group


def test_migrate_prints_summary_and_writes_report(app: click.Group, tmp_path: Path) -> None:
    reg = memcore.registry.get_registry()
    src = _make_store(reg, "full", tmp_path / "a", _entries())
    before = _hash_tree(tmp_path / "a")
    report_file = tmp_path / "out" / "report.json"
    result = CliRunner().invoke(app, ["migrate", src, f"bare:{tmp_path / 'b'}", "--report", str(report_file)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"{src} → bare:{tmp_path / 'b'}" in out
    assert "preference" in out and "total" in out
    assert "losses" in out and "confidence" in out and "extra.full.pinned" in out
    assert "unresolved links: 2" in out
    assert "ghost-id (not in source)" in out
    data = json.loads(report_file.read_text(encoding="utf-8"))
    assert data["counts"]["read"] == 4 and data["counts"]["written"] == 4 and data["counts"]["lossy"] == 4
    assert data["by_kind"]["preference"]["read"] == 2
    assert data["lost_fields"]["confidence"] == 2
    assert _hash_tree(tmp_path / "a") == before
    again = CliRunner().invoke(app, ["migrate", src, f"bare:{tmp_path / 'b'}", "--json"])
    assert again.exit_code == 0
    assert json.loads(again.output)["counts"]["unchanged"] == 4


def test_strict_refusal_exits_1_and_dry_run_writes_nothing(app: click.Group, tmp_path: Path) -> None:
    reg = memcore.registry.get_registry()
    src = _make_store(reg, "full", tmp_path / "a", _entries())
    refused = CliRunner().invoke(app, ["migrate", src, f"bare:{tmp_path / 'b'}", "--strict", "--json"])
    assert refused.exit_code == 1
    assert json.loads(refused.output)["refused"] is True
    assert not (tmp_path / "b").exists()
    dry = CliRunner().invoke(app, ["migrate", src, f"full:{tmp_path / 'c'}", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "dry run" in dry.output and "nothing lost" in dry.output
    assert not (tmp_path / "c").exists()


def test_usage_errors_exit_2(app: click.Group, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["migrate", "nosuch:x", f"full:{tmp_path / 'b'}"]).exit_code == 2
    assert runner.invoke(app, ["migrate", f"full:{tmp_path / 'none'}", f"full:{tmp_path / 'b'}"]).exit_code == 2
    assert runner.invoke(app, ["migrate", "only-one-arg"]).exit_code == 2
    assert runner.invoke(app, ["migrate", "full:a", "full:b", "--src-option", "novalue"]).exit_code == 2


def test_failed_entries_exit_1(app: click.Group, tmp_path: Path) -> None:
    from memcore.models import Kind, MemoryEntry

    reg = memcore.registry.get_registry()
    src = _make_store(reg, "full", tmp_path / "a", [MemoryEntry(id="c", kind=Kind.COMPANION, title="scan.pdf")])
    result = CliRunner().invoke(app, ["migrate", src, f"tiny:{tmp_path / 'b'}"])
    assert result.exit_code == 1
    assert "failed c: InvalidEntryError: tiny: companions cannot be stored" in result.output


def test_progress_bar_draws_on_stderr_for_long_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from memcore.cli.migrate import _progress

    with _progress(True) as update:
        assert update is not None
        update("write", 10, 50)  # a short run: no bar
    assert capsys.readouterr().err == ""
    with _progress(True) as update:
        assert update is not None
        for done in range(0, 401, 100):
            update("write", done, 400)
        update("verify", 400, 400)
    with _progress(False) as update:
        assert update is None


def test_migrate_summary_prints_store_paths_with_rich_markup_literally(app: click.Group, tmp_path: Path) -> None:
    reg = memcore.registry.get_registry()
    src = _make_store(reg, "full", tmp_path / "[bold]a[/bold]", _entries())
    target = f"bare:{tmp_path / '[red]b'}"
    result = CliRunner().invoke(app, ["migrate", src, target], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert f"{src} → {target}" in result.output
