"""The references cannot drift: every hook and every CLI command is documented."""

from __future__ import annotations

import inspect
import re

from tests.conftest import REPO

from memcore import hookspecs
from memcore.cli._docgen import render_cli_reference


def test_every_hookspec_is_in_the_hooks_reference() -> None:
    documented = set(re.findall(r"^## `(memcore_\w+)`", (REPO / "docs" / "hooks.md").read_text(), re.M))
    specs = {name for name, obj in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("memcore_")}
    assert specs == documented


def test_cli_reference_is_generated_from_the_cli_and_current() -> None:
    page = (REPO / "docs" / "cli.md").read_text()
    assert page == render_cli_reference(), "docs/cli.md is stale: run `python -m memcore.cli._docgen > docs/cli.md`"
    for command in ("formats", "plugins", "init", "add", "ls", "show", "search", "validate", "schema", "index"):
        assert f"## `memcore {command}`" in page


def test_security_page_names_only_tests_that_exist() -> None:
    page = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+)`", page))
    defined: set[str] = set()
    for folder in ("tests", "plugins", "conformance"):
        for path in (REPO / folder).rglob("*.py"):
            defined.update(re.findall(r"^\s*(?:async )?def (test_\w+)\(", path.read_text(encoding="utf-8"), re.M))
    assert len(named) >= 40
    assert sorted(named - defined) == []
