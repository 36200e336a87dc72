"""Sections read under one id (Maka derives an id from the title): never confused, never merged.

Issue 17, item 1: the same title twice, titles that slug to nothing (emoji, punctuation) and a
repeated non-Latin title all read under one id; a migration wrote one body twice and dropped the
other with exit 0, and ``get`` returned the first section silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import _load_plugin_commands, cli
from memcore.errors import AmbiguousIdError, ConflictError
from memcore.models import MemoryEntry
from memcore_maka import MakaProvider

COLLIDING = (
    "# Maka Memory\n\n"
    "## Same\nfirst same\n\n"
    "## Same\nsecond same\n\n"
    "## \U0001f389\nparty emoji\n\n"
    "## !!!\nbangs only\n\n"
    "## \u65e5\u672c\u8a9e\nfirst cjk\n\n"
    "## \u65e5\u672c\u8a9e\nsecond cjk\n\n"
    "## Unique\nthe only one\n"
)


@pytest.fixture(autouse=True)
def _commands() -> None:
    _load_plugin_commands()  # migrate is a built-in command registered through the plugin hook


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text(COLLIDING, encoding="utf-8")
    return path


def test_get_of_a_title_used_twice_names_both_lines(tmp_path: Path) -> None:
    path = _store(tmp_path)
    provider = MakaProvider(path)
    with pytest.raises(AmbiguousIdError) as caught:
        provider.get("same")
    assert caught.value.places == (f"{path}:3", f"{path}:6")
    assert f"{path}:3" in str(caught.value) and f"{path}:6" in str(caught.value)
    with pytest.raises(AmbiguousIdError) as emoji:
        provider.get("memory-entry")
    assert emoji.value.places == (f"{path}:9", f"{path}:12")
    assert provider.get("unique").body.strip() == "the only one"


def test_update_and_delete_of_an_ambiguous_id_change_no_byte(tmp_path: Path) -> None:
    path = _store(tmp_path)
    provider = MakaProvider(path)
    with pytest.raises(AmbiguousIdError, match=r"MEMORY\.md:15.*MEMORY\.md:18"):
        provider.update(MemoryEntry(id="\u65e5\u672c\u8a9e", title="x", body="new"))
    with pytest.raises(ConflictError):  # an AmbiguousIdError is a ConflictError, as before
        provider.delete("same")
    assert path.read_text(encoding="utf-8") == COLLIDING


def test_migrate_of_colliding_titles_fails_them_and_exits_1(tmp_path: Path) -> None:
    src = _store(tmp_path)
    dst = tmp_path / "dst" / "MEMORY.md"
    report_file = tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["migrate", f"maka:{src}", f"maka:{dst}", "--report", str(report_file)])
    assert result.exit_code == 1, result.output
    report = json.loads(report_file.read_text(encoding="utf-8"))
    actions = [(e["source_id"], e["action"]) for e in report["entries"]]
    assert actions == [
        ("same", "failed"),
        ("same", "failed"),
        ("memory-entry", "failed"),
        ("memory-entry", "failed"),
        ("\u65e5\u672c\u8a9e", "failed"),
        ("\u65e5\u672c\u8a9e", "failed"),
        ("unique", "written"),
    ]
    assert f"{src}:3, {src}:6" in report["entries"][0]["error"]
    written = [e.body.strip() for e in MakaProvider(dst).iter_entries()]
    assert written == ["the only one"]


def test_migrate_after_giving_distinct_ids_writes_every_body_once(tmp_path: Path) -> None:
    src = _store(tmp_path)
    text = COLLIDING.replace("## Same\nsecond same", "## Same\n<!-- maka-memory: id=same-2 -->\nsecond same")
    text = text.replace("## !!!\n", "## !!!\n<!-- maka-memory: id=bangs -->\n")
    text = text.replace(
        "## \u65e5\u672c\u8a9e\nsecond", "## \u65e5\u672c\u8a9e\n<!-- maka-memory: id=cjk-2 -->\nsecond"
    )
    src.write_text(text, encoding="utf-8")
    dst = tmp_path / "dst" / "MEMORY.md"
    result = CliRunner().invoke(cli, ["migrate", f"maka:{src}", f"maka:{dst}"])
    assert result.exit_code == 0, result.output
    bodies = sorted(e.body.strip() for e in MakaProvider(dst).iter_entries())
    assert bodies == sorted(
        ["first same", "second same", "party emoji", "bangs only", "first cjk", "second cjk", "the only one"]
    )
