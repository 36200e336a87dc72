"""File names in either Unicode normal form: found as spelled on disk, compared NFC, twins reported."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memcore.models import Severity
from memcore.storage import list_names, name_twin_diagnostics, name_twins, on_disk_name, on_disk_path, safe_join

NFC = unicodedata.normalize("NFC", "café.md")
NFD = unicodedata.normalize("NFD", "café.md")


def test_safe_join_uses_the_nfd_spelling_a_file_has_on_disk(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / NFD).write_text("x", encoding="utf-8")
    joined = safe_join(tmp_path, f"notes/{NFC}")
    assert joined.name == NFD and joined.read_text(encoding="utf-8") == "x"
    assert on_disk_path(tmp_path, f"notes/{NFC}") == joined


def test_safe_join_of_a_new_name_is_nfc(tmp_path: Path) -> None:
    assert safe_join(tmp_path, NFD).name == NFC


def test_exact_spelling_wins_over_a_twin(tmp_path: Path) -> None:
    (tmp_path / NFD).write_text("d", encoding="utf-8")
    (tmp_path / NFC).write_text("c", encoding="utf-8")
    assert on_disk_name(tmp_path, NFC) == NFC
    assert on_disk_name(tmp_path, NFD) == NFD
    assert list_names(tmp_path) == {NFC: sorted([NFC, NFD])}


def test_twins_are_found_in_subfolders_and_reported_once_per_group(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / NFD).write_text("d", encoding="utf-8")
    (tmp_path / "a" / NFC).write_text("c", encoding="utf-8")
    (tmp_path / "plain.md").write_text("p", encoding="utf-8")
    assert name_twins(tmp_path) == [sorted([f"a/{NFC}", f"a/{NFD}"])]
    diags = name_twin_diagnostics(tmp_path, code="box.name-twins")
    assert [(d.path, d.code, d.severity) for d in diags] == [(f"a/{NFC}", "box.name-twins", Severity.ERROR)]
    assert ascii(f"a/{NFD}") in diags[0].message and "delete the other spelling" in diags[0].message


def test_a_store_without_twins_reports_nothing(tmp_path: Path) -> None:
    (tmp_path / NFD).write_text("d", encoding="utf-8")
    assert name_twins(tmp_path) == [] and name_twin_diagnostics(tmp_path) == []


def _groups_by_definition(names: list[str]) -> list[list[str]]:
    """Every group of names with one NFC form, each sorted, in order (the definition, name by name)."""
    by_nfc: dict[str, list[str]] = {}
    for name in names:
        by_nfc.setdefault(unicodedata.normalize("NFC", name), []).append(name)
    return sorted(sorted(group) for group in by_nfc.values() if len(group) > 1)


def test_a_non_ascii_name_twins_the_ascii_name_it_normalises_to(tmp_path: Path) -> None:
    kelvin = "\u212a.md"  # KELVIN SIGN: its NFC form is the letter K
    hangul_nfd = unicodedata.normalize("NFD", "\uac00.md")
    for name in ("K.md", kelvin, "\uac00.md", hangul_nfd, "plain.md", NFC):
        (tmp_path / name).write_text(name, encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / NFD).write_text("d", encoding="utf-8")
    (tmp_path / ".hidden" / NFC).write_text("c", encoding="utf-8")
    assert name_twins(tmp_path) == [sorted(["K.md", kelvin]), sorted(["\uac00.md", hangul_nfd])]


@given(st.lists(st.sampled_from(["K", "\u212a", "e\u0301", "\u00e9", "a", "\u00c5", "\u212b", "A\u030a"]), unique=True))
def test_twin_groups_of_any_names_are_the_definitions(names: list[str]) -> None:
    from memcore.storage._paths import _twin_groups

    assert _twin_groups(names) == _groups_by_definition(names)
