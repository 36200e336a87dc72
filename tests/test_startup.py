"""The lazy start-up structure: what each command imports, and the registry's lazy plugins.

No timing here (benchmarks/bench_startup.py measures it): these tests prove the structure that
keeps start-up short, by the modules a real ``memcore`` process has imported (``-X importtime``)
and by fake distributions installed as real ``.dist-info`` folders on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

import memcore
from memcore.cli import _builtin_commands, cli

#: Modules no start-up may import unless the command needs them.
HEAVY = (
    "pydantic",
    "rich",
    "mcp",
    "box_sdk_gen",
    "markdown_it",
    "ruamel",
    "frontmatter",
    "yaml",
    "sqlite3",
    "memcore.models",
    "memcore.provider",
    "memcore.registry",
    "memcore.migrate",
    "memcore.mcp_server",
    "memcore_whitebox.provider",
    "memcore_box.provider",
    "memcore_maka.provider",
    "memcore_rightmemory.provider",
)
PROVIDERS = ("memcore_box.provider", "memcore_maka.provider", "memcore_rightmemory.provider")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"MEMCORE_DISABLE_PLUGINS", "MEMCORE_LOAD_PLUGINS"}}
    env.pop("MEMCORE_STORE", None)
    return {**env, **extra}


def _imported(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> set[str]:
    """Run ``python -X importtime -m memcore ARGS`` and return every module it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memcore", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env or _env(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert "memcore.cli" in modules  # the hook saw the run
    return modules


def _heavy(modules: set[str], names: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in names))


def test_version_imports_no_model_rich_sdk_or_plugin() -> None:
    assert _heavy(_imported("--version")) == []


@pytest.mark.parametrize("command", ["search", "ls", "add", "show", "validate", "formats", "schema"])
def test_core_command_help_imports_no_model_rich_sdk_or_plugin(command: str) -> None:
    assert _heavy(_imported(command, "--help")) == []


@pytest.mark.parametrize("command", ["migrate", "serve", "context", "index"])
def test_module_command_help_imports_no_sdk_and_no_provider(command: str) -> None:
    # These import their own module (and what it needs) for their help, never the MCP SDK, the
    # Box SDK or a format's provider.
    assert _heavy(_imported(command, "--help"), (*PROVIDERS, "memcore_whitebox.provider", "mcp", "box_sdk_gen")) == []


def test_search_of_a_whitebox_vault_imports_no_other_format_and_no_sdk(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    subprocess.run([sys.executable, "-m", "memcore", "init", "--store", f"whitebox:{vault}"], check=True, env=_env())
    modules = _imported("search", "--store", f"whitebox:{vault}", "anything", "--json")
    assert "memcore_whitebox.provider" in modules
    assert _heavy(modules, (*PROVIDERS, "mcp", "box_sdk_gen", "markdown_it", "memcore.migrate", "rich")) == []


def test_plugin_commands_are_found_when_asked_for_by_name() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "whitebox", "--help"], capture_output=True, text=True, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert "promote" in proc.stdout
    unknown = subprocess.run([sys.executable, "-m", "memcore", "nosuch"], capture_output=True, text=True, env=_env())
    assert unknown.returncode == 2
    assert "No such command 'nosuch'" in unknown.stderr


def test_core_command_table_names_exactly_what_each_module_registers() -> None:
    for module_name in set(_builtin_commands.COMMANDS.values()):
        group = click.Group()
        __import__(module_name, fromlist=["register"]).register(group)
        listed = {name for name, module in _builtin_commands.COMMANDS.items() if module == module_name}
        assert set(group.commands) == listed, module_name


def test_root_group_lists_core_and_plugin_commands() -> None:
    names = set(cli.list_commands(click.Context(cli)))
    assert {"search", "ls", "migrate", "serve", "context", "index", "whitebox", "maka"} <= names


def test_lazy_public_names_are_the_objects_of_their_modules() -> None:
    from memcore import errors, hookspecs, models, provider
    from memcore.config import open_store

    assert memcore.open is open_store
    assert memcore.MemoryEntry is models.MemoryEntry
    assert memcore.Kind is models.Kind
    assert memcore.hookimpl is hookspecs.hookimpl
    assert memcore.BaseProvider is provider.BaseProvider
    assert memcore.ParseError is errors.ParseError
    assert set(memcore.__all__) <= set(dir(memcore))
    for name in memcore.__all__:
        assert getattr(memcore, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'nosuch'"):
        memcore.nosuch  # noqa: B018


@pytest.mark.parametrize("package", ["memcore_whitebox", "memcore_box", "memcore_maka", "memcore_rightmemory"])
def test_plugin_package_exports_every_name_it_lists(package: str) -> None:
    module = __import__(package)
    for name in module.__all__:
        value = getattr(module, name)  # imports it on first use
        assert vars(module)[name] is value, name
    assert set(module.__all__) <= set(dir(module))


# --- the registry asks a plugin that declares its formats only when one of them is used -------

_PROVIDER = """
from memcore import BaseProvider


class {cls}(BaseProvider):
    format_name = {fmt!r}

    def iter_entries(self, query=None):
        return iter(())
"""

_PLUGIN = """
from memcore import hookimpl


@hookimpl
def memcore_register_providers():
    from {pkg}.provider import {classes}

    return [{classes}]
"""


def _distribution(site: Path, dist: str, formats: list[str], declared: list[str]) -> None:
    """Write distribution ``dist`` (package ``dist``) serving ``formats``, declaring ``declared``."""
    pkg = site / dist
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    classes = [f"P{i}" for i in range(len(formats))]
    (pkg / "provider.py").write_text(
        "".join(_PROVIDER.format(cls=c, fmt=f) for c, f in zip(classes, formats, strict=True))
    )
    (pkg / "plugin.py").write_text(_PLUGIN.format(pkg=dist, classes=", ".join(classes)))
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = ["[memcore]", f"{dist} = {dist}.plugin", ""]
    if declared:
        lines += ["[memcore.formats]", *(f"{f} = {dist}.plugin" for f in declared), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))


_PROBE = """
import json, sys
from memcore.errors import DuplicateFormatError
from memcore.registry import get_registry

out = {}
try:
    reg = get_registry()
    for name in sys.argv[1:]:
        out[name] = reg.get(name).__module__
        out[name + " imported"] = sorted(m for m in sys.modules if m.endswith(".provider") and m.split(".")[0] in {"alpha", "beta", "gamma"})
except DuplicateFormatError as exc:
    out["error"] = str(exc)
print(json.dumps(out))
"""


def _probe(site: Path, *formats: str) -> dict[str, object]:
    env = _env(PYTHONPATH=str(site), MEMCORE_LOAD_PLUGINS="alpha,beta,gamma,delta")
    proc = subprocess.run([sys.executable, "-c", _PROBE, *formats], capture_output=True, text=True, env=env, check=True)
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_declared_plugin_is_imported_only_when_its_format_is_used(tmp_path: Path) -> None:
    _distribution(tmp_path, "alpha", ["afmt"], ["afmt"])
    _distribution(tmp_path, "beta", ["bfmt"], ["bfmt"])
    _distribution(tmp_path, "gamma", ["gfmt"], [])  # declares nothing: asked at once, as before
    assert _probe(tmp_path, "afmt", "bfmt") == {
        "afmt": "alpha.provider",
        "afmt imported": ["alpha.provider", "gamma.provider"],
        "bfmt": "beta.provider",
        "bfmt imported": ["alpha.provider", "beta.provider", "gamma.provider"],
    }


def test_format_declared_by_two_plugins_fails_as_when_every_plugin_is_asked(tmp_path: Path) -> None:
    _distribution(tmp_path, "alpha", ["same"], ["same"])
    _distribution(tmp_path, "beta", ["same"], ["same"])
    _distribution(tmp_path, "gamma", ["gfmt"], ["gfmt"])
    assert _probe(tmp_path, "gfmt") == {
        "error": "format 'same' is registered twice: by plugin 'alpha' (alpha.provider.P0) and by plugin "
        "'beta' (beta.provider.P0); uninstall one, or block it with MEMCORE_DISABLE_PLUGINS"
    }


def test_undeclared_plugin_claiming_a_declared_format_fails_at_once(tmp_path: Path) -> None:
    _distribution(tmp_path, "alpha", ["same"], ["same"])
    _distribution(tmp_path, "beta", ["same"], [])
    _distribution(tmp_path, "gamma", ["gfmt"], ["gfmt"])
    result = _probe(tmp_path, "gfmt")
    assert result == {
        "error": "format 'same' is registered twice: by plugin 'alpha' (alpha.provider.P0) and by plugin "
        "'beta' (beta.provider.P0); uninstall one, or block it with MEMCORE_DISABLE_PLUGINS"
    }


def test_plugin_registering_an_undeclared_format_makes_the_registry_ask_every_plugin(tmp_path: Path) -> None:
    _distribution(tmp_path, "alpha", ["afmt", "extra"], ["afmt"])
    _distribution(tmp_path, "beta", ["extra"], ["bfmt"])
    _distribution(tmp_path, "gamma", ["gfmt"], ["gfmt"])
    assert _probe(tmp_path, "afmt") == {
        "error": "format 'extra' is registered twice: by plugin 'alpha' (alpha.provider.P1) and by plugin "
        "'beta' (beta.provider.P0); uninstall one, or block it with MEMCORE_DISABLE_PLUGINS"
    }


def test_unknown_format_error_lists_every_installed_format(tmp_path: Path) -> None:
    _distribution(tmp_path, "alpha", ["afmt"], ["afmt"])
    _distribution(tmp_path, "beta", ["bfmt"], ["bfmt"])
    env = _env(PYTHONPATH=str(tmp_path), MEMCORE_LOAD_PLUGINS="alpha,beta")
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "ls", "--store", "afmx:somewhere"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "memcore: error: unknown format 'afmx' (installed formats: afmt, bfmt); did you mean 'afmt'?\n"
    )


_PLUGIN_SCAN = """
import atexit, sys
import pydantic.plugin._loader as loader
atexit.register(lambda: print("scanned" if loader._plugins is not None else "not scanned"))
from memcore.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize(("setting", "expected"), [(None, "not scanned"), ("", "scanned")])
def test_cli_skips_pydantic_plugin_scan_unless_the_user_sets_the_variable(
    tmp_path: Path, setting: str | None, expected: str
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["MEMCORE_CACHE_DIR"] = str(tmp_path / "cache")
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    proc = subprocess.run(
        [sys.executable, "-c", _PLUGIN_SCAN, "search", "--store", f"whitebox:{vault}", "anything"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == expected
