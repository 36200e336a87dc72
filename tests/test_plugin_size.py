"""Each provider is its format and nothing else: the core carries the shared mechanics.

Issue 22's bound for the hub providers (and issue 18's for every provider.py): a provider.py of
at most 700 lines, and a hub plugin's whole package at most 1,500.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
HUB = ("basicmemory", "mcpmemory", "claudecode")


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("plugin", sorted(p.name for p in PLUGINS.iterdir() if (p / "pyproject.toml").exists()))
def test_every_plugins_provider_module_is_at_most_700_lines(plugin: str) -> None:
    fmt = plugin.removeprefix("memcore-")
    assert _lines(PLUGINS / plugin / "src" / f"memcore_{fmt}" / "provider.py") <= 700


@pytest.mark.parametrize("fmt", HUB)
def test_a_hub_plugin_is_at_most_1500_lines_of_source(fmt: str) -> None:
    package = PLUGINS / f"memcore-{fmt}" / "src" / f"memcore_{fmt}"
    assert sum(_lines(p) for p in package.glob("*.py")) <= 1500
