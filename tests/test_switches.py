"""The fast paths' environment switches: read one way, and every one of them in the docs' table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memcore.switches import switch_on

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("value", "on"), [("0", False), ("false", False), (" OFF ", False), ("No", False),
                                           ("1", True), ("yes", True), ("", True)])  # fmt: skip
def test_a_switch_is_off_only_for_0_false_no_or_off(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    monkeypatch.setenv("MEMCORE_SOME_PATH", value)
    assert switch_on("MEMCORE_SOME_PATH") is on


def test_an_unset_switch_is_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_SOME_PATH", raising=False)
    assert switch_on("MEMCORE_SOME_PATH") is True


def _switches_in_the_code() -> set[str]:
    names: set[str] = set()
    for path in [*ROOT.glob("src/memcore/**/*.py"), *ROOT.glob("plugins/*/src/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        constants = dict(re.findall(r'^(\w*ENV) = "(MEMCORE_\w+)"', text, flags=re.M))
        for arg in re.findall(r"switch_on\(([^)]+)\)", text):
            name = arg.strip('"') if arg.startswith('"') else constants.get(arg)
            if name is not None:
                names.add(name)
    return names


def test_every_switch_the_code_reads_is_in_the_performance_docs_table() -> None:
    found = _switches_in_the_code()
    table = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8").split("## Every fast path's switch")[1]
    listed = set(re.findall(r"^\| `(MEMCORE_\w+)` \|", table.split("\n## ")[0], flags=re.M))
    assert len(found) >= 20
    assert found == listed
