"""The store's place on this machine, as the adapters scrub it from what an agent is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.adapters._paths import location_spellings, scrub_location


def test_a_path_reached_through_a_link_is_replaced_whole_not_left_with_its_prefix(tmp_path: Path) -> None:
    real = tmp_path / "private" / "data" / "vault"
    real.mkdir(parents=True)
    link = tmp_path / "vault-link"
    link.symlink_to(real)
    text = f"cannot write {real}/facts/a.md; see {link}/facts/a.md"
    assert scrub_location(text, str(link), "/memories") == (
        "cannot write /memories/facts/a.md; see /memories/facts/a.md"
    )


def test_a_relative_location_with_a_folder_is_replaced_and_a_bare_name_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "alice" / "memory").mkdir(parents=True)
    absolute = str(tmp_path / "alice" / "memory")
    assert scrub_location("alice/memory/x.md is locked", "alice/memory", "memory") == "memory/x.md is locked"
    assert absolute in location_spellings("alice/memory")
    (tmp_path / "m").mkdir()
    assert "m" not in location_spellings("m")
    assert scrub_location("m is not a memory file", "m", "store") == "m is not a memory file"


def test_a_location_that_is_not_a_string_leaves_the_text_as_it_is() -> None:
    assert location_spellings(None) == []
    assert location_spellings("") == []
    assert scrub_location("/etc/passwd", None, "store") == "/etc/passwd"
