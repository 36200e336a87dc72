"""Typed-looking scalars: each reader of a WhiteBox file reads the exact string back.

Each value is written as a source, title and tag of an observation and of a stable fact.

- A stable fact's frontmatter is YAML: a YAML 1.2 reader (ruamel.yaml, safe: types numbers,
  bools, nulls and timestamps) and a YAML 1.1 reader (PyYAML, when installed) must read the
  exact string back, so the writer quotes what they would type (issue 17, item 13).
- An observation's fields are read by the reference parser line by line (``key: value``, the
  text as written, quotes kept): the writer writes them raw as the reference writer does
  (issue 19), so that parser reads the exact string, and so does memcore.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from memcore.models import Kind, MemoryEntry
from memcore_whitebox.provider import WhiteBoxProvider

TYPED = [
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Y",
    "N",
    "Yes",
    "NO",
    "On",
    "OFF",
    "true",
    "False",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "1e3",
    "1E3",
    "+1",
    "-2",
    "3.14",
    ".5",
    "1.",
    ".inf",
    "-.Inf",
    ".NaN",
    "~",
    "null",
    "Null",
    "NULL",
    "2024-01-01",
    "2024-1-1",
    "2024-01-01T10:00:00Z",
    "2024-01-01 10:00:00",
    "10:00",
    "1:30:00",
    "190:20:30",
    "0b101",
    "=",
    "<<",
    "12",
    "0",
]
TAB_TAG = "tab\there"


def _frontmatters(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^---\n(.*?)\n---$", text, re.S | re.M)]


def _readers() -> list[tuple[str, Any]]:
    yaml12 = YAML(typ="safe", pure=True)
    readers: list[tuple[str, Any]] = [("yaml 1.2 (ruamel)", yaml12.load)]
    try:
        import yaml as pyyaml
    except ImportError:  # pragma: no cover - PyYAML is optional
        return readers
    readers.append(("yaml 1.1 (PyYAML)", pyyaml.safe_load))
    return readers


@pytest.mark.parametrize("value", TYPED)
def test_a_typed_looking_scalar_is_written_so_yaml_11_and_12_read_the_same_string(vault: Path, value: str) -> None:
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        obs = store.add(
            MemoryEntry(
                kind=Kind.OBSERVATION,
                body="Typed.",
                source=value,
                title=value,
                tags=[value],
                confidence=0.7,
                created_at="2026-04-20",
                date_only=True,
            )
        )
        fact = store.add(MemoryEntry(kind=Kind.FACT, title=value, body="Typed fact.\n", source=value, tags=[value]))
    month = (vault / "observations" / "2026-04.md").read_text(encoding="utf-8")
    written = {
        "observation": _frontmatters(month)[-1],
        "fact": _frontmatters((vault / (fact.id or "")).read_text(encoding="utf-8"))[0],
    }
    for name, reader in _readers():
        data = reader(written["fact"])
        for key in ("source", "title"):
            if key in data:
                assert data[key] == value and type(data[key]) is str, (name, key, written["fact"])
        assert data["tags"] == [value], (name, written["fact"])
    lines = dict(line.split(": ", 1) for line in written["observation"].splitlines() if ": " in line)
    assert (lines["source"], lines["title"], lines["tags"]) == (value, value, f'["{value}"]')  # the reference's reading
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        again = store.get(obs.id or "")
        assert (again.source, again.tags) == (value, [value])
        again_fact = store.get(fact.id or "")
        assert (again_fact.title, again_fact.source, again_fact.tags) == (value, value, [value])


def test_a_tag_holding_a_tab_and_a_facts_tags_keep_their_exact_text(vault: Path) -> None:
    tags = [TAB_TAG, " padded ", "Mixed Case", "a, b", "#hash", "x: y"]
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        obs = store.add(
            MemoryEntry(
                kind=Kind.OBSERVATION,
                body="Tabs.",
                source="claude",
                tags=tags,
                confidence=0.7,
                created_at="2026-04-20",
                date_only=True,
            )
        )
        fact = store.add(MemoryEntry(kind=Kind.FACT, title="Tagged", body="Tagged fact.\n", tags=tags))
    with WhiteBoxProvider(str(vault), as_user=True) as store:
        assert store.get(obs.id or "").tags == tags
        assert store.get(fact.id or "").tags == tags
    for name, reader in _readers():
        data = reader(_frontmatters((vault / (fact.id or "")).read_text(encoding="utf-8"))[0])
        assert data["tags"] == tags, name
