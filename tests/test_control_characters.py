"""NUL, C0 controls and DEL: refused on every write naming field and U+XXXX, reported at file:line on read."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError, MemcoreError
from memcore.models import MemoryEntry, Relation, Severity
from memcore.registry import get_registry
from memcore.storage import check_entry_text, control_char_diagnostics


@pytest.mark.parametrize(
    ("overrides", "field", "char"),
    [
        ({"title": "a\x00b"}, "title", "U+0000"),
        ({"body": "ok\nbad \x1b[31m\n"}, "body", "U+001B"),
        ({"tags": ["fine", "t\x7f"]}, "tags[1]", "U+007F"),
        ({"source": "agent\x00"}, "source", "U+0000"),
        ({"scope": "wo\x08rk"}, "scope", "U+0008"),
        ({"parent": "p\x0c"}, "parent", "U+000C"),
        ({"relations": [Relation(type="related", target="x\x00")]}, "relations[0].target", "U+0000"),
        ({"extra": {"box": {"team": ["a", "b\x01"]}}}, "extra.box.team[1]", "U+0001"),
    ],
)
def test_check_entry_text_names_the_field_and_the_character(overrides: dict, field: str, char: str) -> None:
    entry = MemoryEntry(kind="fact", title="T", body="b\n").model_copy(update=overrides)
    with pytest.raises(InvalidEntryError) as info:
        check_entry_text(entry)
    message = str(info.value)
    assert message.startswith(f"{field} holds the control character {char}")
    assert "remove it" in message and "nothing was written" in message
    assert isinstance(info.value, MemcoreError) and isinstance(info.value, ValueError)


def test_tab_lf_cr_are_not_control_characters_here() -> None:
    check_entry_text(MemoryEntry(kind="fact", title="a\tb", body="x\r\ny\n\tz\n", tags=["t\tu"]))


def test_control_char_diagnostics_give_line_and_column() -> None:
    data = b"first\nsecond \x00 here\nthird\r\nfour\x7f\n"
    found = control_char_diagnostics(data, "notes/a.md", code="x.control-char")
    assert [(d.path, d.line, d.column, d.code, d.severity) for d in found] == [
        ("notes/a.md", 2, 8, "x.control-char", Severity.WARNING),
        ("notes/a.md", 4, 5, "x.control-char", Severity.WARNING),
    ]
    assert "U+0000" in found[0].message and "U+007F" in found[1].message
    assert control_char_diagnostics(b"tab\there\r\n", "b.md") == []


@pytest.mark.parametrize("fmt", ["whitebox", "box", "rightmemory", "maka", "mcpmemory"])
def test_update_refuses_a_nul_in_any_format_and_leaves_the_file(tmp_path: Path, fmt: str) -> None:
    if fmt not in get_registry().names():
        pytest.skip(f"{fmt} is not installed")
    location = {"maka": tmp_path / "MEMORY.md", "mcpmemory": tmp_path / "memory.jsonl"}.get(fmt, tmp_path)
    get_registry().get(fmt).init_store(str(location))
    options = {"as_user": True} if fmt == "whitebox" else {}
    with get_registry().get(fmt)(str(location), **options) as store:
        stored = store.add(MemoryEntry(kind="fact", title="Good", body="fine\n"))
        before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
        current = store.get(stored.id)
        current.body = "fi\x00ne\n"
        with pytest.raises(InvalidEntryError, match=r"^body holds the control character U\+0000"):
            store.update(current, expected_version=current.version)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("fmt", ["whitebox", "box", "rightmemory", "maka", "mcpmemory"])
def test_an_unvalidated_model_copy_is_refused_in_any_format_and_leaves_the_file(tmp_path: Path, fmt: str) -> None:
    """``model_copy(update=...)`` skips validation; every provider's write validates it first."""
    if fmt not in get_registry().names():
        pytest.skip(f"{fmt} is not installed")
    location = {"maka": tmp_path / "MEMORY.md", "mcpmemory": tmp_path / "memory.jsonl"}.get(fmt, tmp_path)
    get_registry().get(fmt).init_store(str(location))
    options = {"as_user": True} if fmt == "whitebox" else {}
    with get_registry().get(fmt)(str(location), **options) as store:
        stored = store.add(MemoryEntry(kind="fact", title="Good", body="fine\n"))
        before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
        current = store.get(stored.id)
        with pytest.raises(InvalidEntryError, match=rf"^{fmt}: the entry does not hold valid field values \(kind"):
            store.update(current.model_copy(update={"kind": "no-such-kind"}), expected_version=current.version)
        with pytest.raises(InvalidEntryError, match="model_copy"):
            store.add(MemoryEntry(title="New", body="y\n").model_copy(update={"status": 7}))
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
