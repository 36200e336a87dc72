"""``memcore <format> <operation>``: CLI commands built from the plugins' format operations, on real stores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from memcore.cli import _load_plugin_commands, cli
from memcore.format_ops import operations

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"


@pytest.fixture(autouse=True)
def _commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_STORE", raising=False)
    _load_plugin_commands()


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_every_format_operation_is_a_command_in_its_format_group() -> None:
    for op in operations():
        group = cli.commands[op.formats[0]]
        assert isinstance(group, click.Group) and op.command_name in group.commands, op.tool_name
    names = {op.tool_name for op in operations()}
    assert {"whitebox_dispute", "maka_approve", "rightmemory_move_to_detail", "box_add_companion"} <= names


def test_rightmemory_move_to_detail_then_inline_detail(tmp_path: Path) -> None:
    root = tmp_path / "rm"
    shutil.copytree(SAMPLES / "rightmemory" / "test-fixture-extracted-test_graph", root)
    store = f"rightmemory:{root}"
    moved = run("rightmemory", "move-to-detail", "project", "--store", store)
    assert moved.exit_code == 0, moved.output
    assert moved.output == "move_to_detail: MEMORY_project.md\n"
    back = run("rightmemory", "inline-detail", "project", "--store", store, "--json")
    assert back.exit_code == 0, back.output
    assert json.loads(back.stdout)["entry"]["id"] == "project" and not (root / "MEMORY_project.md").exists()


def test_whitebox_dispute_with_options_and_a_tag_repeated_in_either_spelling(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", vault)
    result = run(
        "whitebox", "dispute", "identity.md", "Moved to Lyon.", "--store", f"whitebox:{vault}",
        "--confidence", "0.8", "--tags", "move", "--tag", "city", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)["entry"]
    assert entry["kind"] == "observation" and {"conflict", "move", "city"} <= set(entry["tags"])
    assert entry["relations"][0]["type"] == "disputes" and entry["relations"][0]["target"] == "identity.md"


def test_an_operation_on_another_format_s_store_is_a_usage_error(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", vault)
    result = run("box", "reindex", "--store", f"whitebox:{vault}", "--json")
    assert result.exit_code == 2
    assert "needs a box or box+cloud store, got whitebox" in json.loads(result.stderr)["error"]["message"]


def test_box_reindex_reports_diagnostics_and_read_only_refuses_it(tmp_path: Path) -> None:
    from memcore.registry import get_registry

    get_registry().get("box").init_store(str(tmp_path / "ws"))
    store = f"box:{tmp_path / 'ws'}"
    result = run("box", "reindex", "--store", store)
    assert result.exit_code == 0, result.output
    assert result.output == "reindex: 0 diagnostic(s), 0 error(s)\n"
    refused = run("box", "reindex", "--store", store, "-o", "read_only=true", "--json")
    assert refused.exit_code == 1 and "read-only" in json.loads(refused.stderr)["error"]["message"]


def test_a_plugin_s_own_command_of_the_same_name_is_kept() -> None:
    group = cli.commands["whitebox"]
    assert isinstance(group, click.Group)
    assert group.commands["promote"].callback.__module__ == "memcore_whitebox.cli"  # type: ignore[union-attr]
