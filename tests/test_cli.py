from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import DictPlugin, DictProvider

import memcore.registry
from memcore.cli import cli
from memcore.models import Diagnostic, Severity
from memcore.plugins import get_plugin_manager


@pytest.fixture
def runner(dict_plugin: DictPlugin, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(dict_plugin, name="dictplugin")
    reg = memcore.registry.ProviderRegistry(pm)
    monkeypatch.setattr(memcore.registry, "_default_registry", lambda: reg)
    monkeypatch.delenv("MEMCORE_STORE", raising=False)
    return CliRunner()


def test_add_ls_show_search_json(runner: CliRunner) -> None:
    out = runner.invoke(
        cli,
        [
            "add",
            "--store",
            "dictfmt:s",
            "--title",
            "Tea",
            "--body",
            "green tea",
            "--tag",
            "food",
            "--relation",
            "related:e9",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    created = json.loads(out.output)
    assert created["id"] == "e1" and created["tags"] == ["food"]
    assert created["relations"] == [{"type": "related", "target": "e9", "resolved": True}]
    listed = json.loads(runner.invoke(cli, ["ls", "--store", "dictfmt:s", "--json"]).output)
    assert [e["title"] for e in listed] == ["Tea"]
    shown = json.loads(runner.invoke(cli, ["show", "e1", "--store", "dictfmt:s", "--json"]).output)
    assert shown["body"] == "green tea"
    found = json.loads(runner.invoke(cli, ["search", "GREEN", "--store", "dictfmt:s", "--json"]).output)
    assert [e["id"] for e in found] == ["e1"]
    none = json.loads(runner.invoke(cli, ["search", "coffee", "--store", "dictfmt:s", "--json"]).output)
    assert none == []


def test_add_takes_the_body_as_its_argument_and_refuses_it_twice(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["add", "Prefers green tea.", "--store", "dictfmt:s", "--tag", "food", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["body"] == "Prefers green tea."
    twice = runner.invoke(cli, ["add", "one", "--body", "two", "--store", "dictfmt:s"])
    assert twice.exit_code == 2 and "as TEXT or as --body, not both" in twice.output
    listed = json.loads(runner.invoke(cli, ["ls", "--store", "dictfmt:s", "--json"]).output)
    assert [e["body"] for e in listed] == ["Prefers green tea."]


def test_store_from_environment(runner: CliRunner) -> None:
    runner.invoke(cli, ["add", "--title", "x"], env={"MEMCORE_STORE": "dictfmt:env"})
    assert [e.title for e in DictProvider.stores["env"].values()] == ["x"]


def test_unknown_format_is_one_line_and_exit_2(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["ls", "--store", "nosuch:x"])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == ["memcore: error: unknown format 'nosuch' (installed formats: dictfmt)"]


def test_missing_entry_exit_1(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["show", "nope", "--store", "dictfmt:s"])
    assert out.exit_code == 1
    assert "no entry 'nope'" in out.output and "Traceback" not in out.output


def test_usage_errors_exit_2(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["ls", "--store", "dictfmt:s", "--kind", "nonsense"]).exit_code == 2
    bad = runner.invoke(cli, ["add", "--store", "dictfmt:s", "--relation", "nocolon"])
    assert bad.exit_code == 2 and "TYPE:TARGET" in bad.output
    assert runner.invoke(cli, ["ls", "-o", "novalue", "--store", "dictfmt:s"]).exit_code == 2


def test_validate_exit_codes(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(cli, ["validate", "--store", "dictfmt:s", "--json"]).output.strip() == "[]"
    diags = [Diagnostic(path="a.md", line=3, code="x.bad", message="broken", severity=Severity.ERROR)]
    monkeypatch.setattr(DictProvider, "validate", lambda self: diags)
    out = runner.invoke(cli, ["validate", "--store", "dictfmt:s", "--json"])
    assert out.exit_code == 1
    assert json.loads(out.output)[0]["code"] == "x.bad"
    human = runner.invoke(cli, ["validate", "--store", "dictfmt:s"])
    assert "a.md:3: error x.bad: broken" in human.output and "1 error(s)" in human.output


def test_formats_and_plugins_json(runner: CliRunner) -> None:
    rows = json.loads(runner.invoke(cli, ["formats", "--json"]).output)
    assert rows == [
        {
            "format": "dictfmt",
            "provider": f"{DictProvider.__module__}.DictProvider",
            "distribution": None,
            "version": None,
            "capabilities": ["add", "delete", "update"],
        }
    ]
    plugins = json.loads(runner.invoke(cli, ["plugins", "--json"]).output)
    assert [(p["name"], p["hooks"]) for p in plugins] == [("dictplugin", ["memcore_register_providers"])]


def test_schema_prints_json_schema(runner: CliRunner) -> None:
    schema = json.loads(runner.invoke(cli, ["schema"]).output)
    assert schema["title"] == "MemoryEntry"
    assert json.loads(runner.invoke(cli, ["schema", "--model", "diagnostic"]).output)["title"] == "Diagnostic"


def test_init_creates_store(runner: CliRunner, tmp_path: Path) -> None:
    out = runner.invoke(cli, ["init", "--store", "dictfmt:new", "--json"])
    assert out.exit_code == 0 and json.loads(out.output) == {"created": "dictfmt:new"}
    assert DictProvider.stores["new"] == {}


def test_invalid_values_are_one_line_exit_2(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["add", "--store", "dictfmt:s", "--extra", '{"box": 5}'])
    assert out.exit_code == 2
    assert out.output.startswith("memcore: error: invalid MemoryEntry: extra.box:")
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1


def test_store_url_must_be_a_clean_string(runner: CliRunner) -> None:
    import memcore
    from memcore.errors import ConfigError

    with pytest.raises(ConfigError, match="must be a string"):
        memcore.open(5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="NUL"):
        memcore.open("dictfmt:x\x00y")


def test_a_mistyped_provider_option_is_refused_with_the_closest_name(tmp_path: Path) -> None:
    """``-o scoep=work`` must not silently open an unscoped store."""
    if "whitebox" not in memcore.registry.get_registry().names():
        pytest.skip("whitebox is not installed")
    memcore.registry.get_registry().get("whitebox").init_store(str(tmp_path))
    result = CliRunner().invoke(cli, ["ls", "--store", f"whitebox:{tmp_path}", "-o", "scoep=work"])
    assert result.exit_code == 2
    assert "unknown option 'scoep'; did you mean 'scope'?" in result.output
    assert "known options: as_user, index, read_only, scope, source, stable_files" in result.output
    ok = CliRunner().invoke(cli, ["ls", "--store", f"whitebox:{tmp_path}", "-o", "index=false", "--json"])
    assert ok.exit_code == 0, ok.output


def test_show_prints_a_title_with_brackets_as_written_not_as_rich_markup(runner: CliRunner) -> None:
    title = "Use [red]x[/red] and [link]"
    added = runner.invoke(cli, ["add", "--store", "dictfmt:s", "--title", title, "--body", "b", "--json"])
    assert added.exit_code == 0, added.output
    shown = runner.invoke(cli, ["show", json.loads(added.output)["id"], "--store", "dictfmt:s"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[0] == f"{title}  (note, active)"


MARKUP = "[bold]x[/bold] [link=https://example.org]y[/link] [red]"


@pytest.mark.parametrize("command", [["ls"], ["search", "bold"]])
def test_listings_print_titles_and_tags_with_rich_markup_literally(runner: CliRunner, command: list[str]) -> None:
    added = runner.invoke(
        cli,
        ["add", "--store", "dictfmt:s", "--title", MARKUP, "--body", "bold [i]b[/i]", "--tag", "[u]t[/u]", "--json"],
    )
    assert added.exit_code == 0, added.output
    shown = runner.invoke(cli, [*command, "--store", "dictfmt:s"], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    assert MARKUP in shown.output and "[u]t[/u]" in shown.output


def test_show_prints_markup_in_every_field_and_the_body_literally(runner: CliRunner) -> None:
    body = "Line [bold]one[/bold]\n[link=x]two[/link] \\[red]"
    added = runner.invoke(
        cli,
        ["add", "--store", "dictfmt:s", "--title", MARKUP, "--body", body, "--tag", "[u]t[/u]", "--json"],
    )
    assert added.exit_code == 0, added.output
    shown = runner.invoke(cli, ["show", json.loads(added.output)["id"], "--store", "dictfmt:s"], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == f"{MARKUP}  (note, active)"
    assert "tags: [u]t[/u]" in lines
    assert shown.output.rstrip("\n").endswith(body)


def test_ls_prints_a_table_when_it_fits_and_one_block_per_entry_when_whole_ids_would_squeeze_it(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = "A title long enough to wrap"
    runner.invoke(cli, ["add", "--store", "dictfmt:s", "--title", title, "--body", "b", "--tag", "food"])
    monkeypatch.setenv("COLUMNS", "200")
    wide = runner.invoke(cli, ["ls", "--store", "dictfmt:s"]).output
    assert wide.splitlines()[1].split() == ["┃", "id", "┃", "kind", "┃", "status", "┃", "title", "┃", "tags", "┃"]
    assert "│ e1 │ note │ active │ A title long enough to wrap │ food │" in wide
    monkeypatch.setenv("COLUMNS", "40")
    narrow = runner.invoke(cli, ["ls", "--store", "dictfmt:s"]).output
    assert narrow == f"e1\n  note · active · {title} · tags: food\n"
