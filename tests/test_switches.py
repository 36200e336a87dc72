"""The fast paths' environment switches: read one way, and every one of them in the docs' table."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcore import switches
from memcore.switches import OFF, environment_value, switch_on

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


_NAMES = st.text(alphabet=st.characters(min_codepoint=0x41, max_codepoint=0x5A) | st.sampled_from("_é"), min_size=1)
_VALUES = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)


@settings(max_examples=200, deadline=None)
@given(name=_NAMES, value=st.none() | _VALUES)
def test_environment_value_is_what_os_environ_holds_set_or_unset(name: str, value: str | None) -> None:
    variable = f"MEMCORE_TEST_SWITCH_{name}"
    with pytest.MonkeyPatch.context() as mp:
        if value is None:
            mp.delenv(variable, raising=False)
        else:
            mp.setenv(variable, value)
        assert environment_value(variable) == os.environ.get(variable)
        assert switch_on(variable) is (value is None or value.strip().lower() not in OFF)


def test_a_switch_set_or_removed_at_run_time_takes_effect_at_the_next_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_SOME_PATH", raising=False)
    assert switch_on("MEMCORE_SOME_PATH") is True
    monkeypatch.setenv("MEMCORE_SOME_PATH", "off")
    assert switch_on("MEMCORE_SOME_PATH") is False
    monkeypatch.delenv("MEMCORE_SOME_PATH")
    assert switch_on("MEMCORE_SOME_PATH") is True


def test_a_value_that_is_not_utf8_reads_as_os_environ_decodes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environb, b"MEMCORE_SOME_PATH", b"of\xff")  # type: ignore[attr-defined]
    assert environment_value("MEMCORE_SOME_PATH") == os.environ["MEMCORE_SOME_PATH"] == "of\udcff"


def test_an_os_environ_replaced_by_a_plain_dict_is_read_as_that_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "environ", {"MEMCORE_SOME_PATH": "0"})
    assert environment_value("MEMCORE_SOME_PATH") == "0"
    assert switch_on("MEMCORE_SOME_PATH") is False
    assert environment_value("MEMCORE_OTHER_PATH") is None


@pytest.mark.parametrize("fast", [True, False])
def test_both_ways_of_reading_give_the_same_switch(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    monkeypatch.setattr(switches, "FAST_READ", fast)
    monkeypatch.setenv("MEMCORE_SOME_PATH", " No ")
    monkeypatch.delenv("MEMCORE_OTHER_PATH", raising=False)
    assert (switch_on("MEMCORE_SOME_PATH"), switch_on("MEMCORE_OTHER_PATH")) == (False, True)
    assert environment_value("MEMCORE_SOME_PATH") == " No "
