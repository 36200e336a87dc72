from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.conftest import DictPlugin, DictProvider

from memcore import hookimpl
from memcore.config import find_config, open_store, parse_store_url, resolve_store
from memcore.errors import ConfigError, DuplicateFormatError, UnknownFormatError
from memcore.plugins import get_plugin_manager, plugin_infos
from memcore.registry import ProviderRegistry


def _registry(*plugins: object) -> ProviderRegistry:
    pm = get_plugin_manager(load_entrypoints=False)
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"plugin{i}")
    return ProviderRegistry(pm)


def test_fresh_manager_has_only_hookspecs() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    assert pm.project_name == "memcore"
    assert pm.list_name_plugin() == []
    assert {"memcore_register_providers", "memcore_register_converters", "memcore_register_commands"} <= {
        name for name in dir(pm.hook) if name.startswith("memcore_")
    }


def test_registry_finds_registered_provider(dict_plugin: DictPlugin) -> None:
    reg = _registry(dict_plugin)
    assert reg.names() == ["dictfmt"]
    assert reg.get("dictfmt") is DictProvider
    assert reg.owner("dictfmt") == "plugin0"
    infos = plugin_infos(reg.pm)
    assert [(i.name, i.hooks) for i in infos] == [("plugin0", ("memcore_register_providers",))]


def test_two_plugins_claiming_one_format_fail_naming_both(dict_plugin: DictPlugin) -> None:
    class Other:
        @hookimpl
        def memcore_register_providers(self) -> list[type]:
            return [type("Clash", (DictProvider,), {})]

    with pytest.raises(DuplicateFormatError) as info:
        _registry(dict_plugin, Other())
    message = str(info.value)
    assert "'dictfmt'" in message and "plugin0" in message and "plugin1" in message
    assert "DictProvider" in message and "Clash" in message


def test_unknown_format_names_distribution_or_suggests(dict_plugin: DictPlugin) -> None:
    reg = _registry(dict_plugin)
    with pytest.raises(
        UnknownFormatError,
        match=r"memcore-unified-whitebox.*pip install -e 'plugins/memcore-whitebox'.*pip install 'memcore-unified-whitebox'",
    ):
        reg.get("whitebox")
    with pytest.raises(UnknownFormatError, match="did you mean 'dictfmt'"):
        reg.get("dictfm")


def test_store_url_parsing_and_sniffing(dict_plugin: DictPlugin, tmp_path: Path) -> None:
    reg = _registry(dict_plugin)
    spec = parse_store_url("dictfmt:./x", registry=reg)
    assert (spec.format_name, spec.location) == ("dictfmt", "./x")
    assert parse_store_url("box+cloud:12345", registry=reg).format_name == "box+cloud"
    sniffed = parse_store_url(str(tmp_path / "mem.dict"), registry=reg)
    assert sniffed.format_name == "dictfmt" and "sniffed" in sniffed.origin
    with pytest.raises(ConfigError, match="no installed format recognises"):
        parse_store_url(str(tmp_path / "mem.txt"), registry=reg)
    with pytest.raises(ConfigError, match="no location"):
        parse_store_url("dictfmt:", registry=reg)


def test_several_sniffers_is_an_error_listing_them(dict_plugin: DictPlugin, tmp_path: Path) -> None:
    class Greedy(DictProvider):
        format_name = "greedy"

        @classmethod
        def sniff(cls, path: Path) -> bool:
            return True

    class GreedyPlugin:
        @hookimpl
        def memcore_register_providers(self) -> list[type]:
            return [Greedy]

    reg = _registry(dict_plugin, GreedyPlugin())
    with pytest.raises(ConfigError, match=r"several formats recognise this path \(dictfmt, greedy\)"):
        parse_store_url(str(tmp_path / "m.dict"), registry=reg)


def test_precedence_argument_env_memcore_toml_pyproject(dict_plugin: DictPlugin, tmp_path: Path) -> None:
    reg = _registry(dict_plugin)
    project = tmp_path / "project"
    nested = project / "a" / "b"
    nested.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.memcore]\nstore = "dictfmt:from-pyproject"\n')
    spec = resolve_store(None, cwd=nested, env={}, registry=reg)
    assert spec.location == str(project / "from-pyproject")
    (project / "memcore.toml").write_text('store = "dictfmt:from-toml"\n[options]\nscope = "work"\n')
    spec = resolve_store(None, cwd=nested, env={}, registry=reg)
    assert (spec.location, spec.options, spec.origin) == (
        str(project / "from-toml"),
        {"scope": "work"},
        str(project / "memcore.toml"),
    )
    spec = resolve_store(None, cwd=nested, env={"MEMCORE_STORE": "dictfmt:from-env"}, registry=reg)
    assert (spec.location, spec.origin) == ("from-env", "MEMCORE_STORE")
    spec = resolve_store("dictfmt:from-arg", cwd=nested, env={"MEMCORE_STORE": "dictfmt:x"}, registry=reg)
    assert (spec.location, spec.origin) == ("from-arg", "argument")


def test_no_configuration_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no store given"):
        resolve_store(None, cwd=tmp_path, env={})
    (tmp_path / "memcore.toml").write_text("store = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        find_config(tmp_path)


def test_open_store_passes_options_and_opens(dict_plugin: DictPlugin, tmp_path: Path) -> None:
    reg = _registry(dict_plugin)
    (tmp_path / "memcore.toml").write_text('store = "dictfmt:s"\n[options]\nscope = "work"\nflag = 1\n')
    with open_store(registry=reg, cwd=tmp_path, flag=2) as store:
        assert isinstance(store, DictProvider)
        assert store.options == {"scope": "work", "flag": 2}
        assert store._is_open


THIRD_PARTY = {
    "pyproject.toml": """
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "memcore-notes-demo"
        version = "1.2.3"

        [project.entry-points.memcore]
        notesdemo = "memcore_notes_demo"

        [tool.hatch.build.targets.wheel]
        packages = ["memcore_notes_demo"]
    """,
    "memcore_notes_demo/__init__.py": """
        from memcore import BaseProvider, Capability, hookimpl

        class NotesProvider(BaseProvider):
            format_name = "notesdemo"
            capabilities = frozenset({Capability.ADD})

            def iter_entries(self, query=None):
                return iter(())

        @hookimpl
        def memcore_register_providers():
            return [NotesProvider]
    """,
}


@pytest.mark.slow
def test_third_party_distribution_is_found_through_entry_points(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for rel, text in THIRD_PARTY.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(src),
        ],
        check=True,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("MEMCORE_DISABLE_PLUGINS", None)
    env.pop("MEMCORE_LOAD_PLUGINS", None)
    run = [sys.executable, "-c", "from memcore.cli import main; main()", "formats", "--json"]
    rows = json.loads(subprocess.run(run, env=env, check=True, capture_output=True, text=True).stdout)
    mine = [r for r in rows if r["format"] == "notesdemo"]
    assert mine == [
        {
            "format": "notesdemo",
            "provider": "memcore_notes_demo.NotesProvider",
            "distribution": "memcore-notes-demo",
            "version": "1.2.3",
            "capabilities": ["add"],
        }
    ]
    for var, value in (("MEMCORE_DISABLE_PLUGINS", "memcore-notes-demo"), ("MEMCORE_DISABLE_PLUGINS", "notesdemo")):
        out = subprocess.run(run, env={**env, var: value}, check=True, capture_output=True, text=True).stdout
        assert "notesdemo" not in {r["format"] for r in json.loads(out)}
    out = subprocess.run(
        run, env={**env, "MEMCORE_LOAD_PLUGINS": "notesdemo"}, check=True, capture_output=True, text=True
    ).stdout
    assert [r["format"] for r in json.loads(out)] == ["notesdemo"]


def test_format_names_in_urls_are_case_insensitive(dict_plugin: DictPlugin) -> None:
    reg = _registry(dict_plugin)
    assert parse_store_url("DictFmt:./x", registry=reg).format_name == "dictfmt"
