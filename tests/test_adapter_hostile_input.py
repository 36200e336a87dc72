"""Hostile input to the memory tool: every refusal is a ``ToolError`` naming the rule, nothing is written.

The memory tool (:class:`MemcoreMemoryTool`) is called the way the SDK's tool runner calls it,
``tool.call(input)`` with the model's raw JSON, so wrong-typed and missing arguments arrive
unvalidated; every refusal must be a ``ToolError`` (the runner's ``is_error`` result) whose text
names the rule and holds neither the store's machine path nor a traceback's text, and nothing is
written. tests/test_langgraph_hostile_input.py does the same for the LangGraph store.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")

from anthropic.lib.tools import ToolError
from tests.conftest import BUILTIN_FORMATS, new_store

import memcore
from memcore.adapters.anthropic import MemcoreMemoryTool
from memcore.models import MemoryEntry

OPTIONS: dict[str, dict[str, Any]] = {"maka": {"agent_read_enabled": True}, "whitebox": {"as_user": True}}
TITLE_FORMATS = ("rightmemory", "maka", "mcpmemory", "claudecode", "basicmemory")


def _name(fmt: str, stem: str) -> str:
    """A path the format accepts for a new file called ``stem``."""
    return f"/memories/memories/note__{stem}.md" if fmt == "box" else f"/memories/{stem}.md"


@pytest.fixture(params=BUILTIN_FORMATS)
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    fmt: str = request.param
    with memcore.open(new_store(fmt, tmp_path), **OPTIONS.get(fmt, {})) as store:
        yield fmt, store


def _refusal(tool: MemcoreMemoryTool, command: object) -> str:
    with pytest.raises(ToolError) as caught:
        tool.call(command)
    return str(caught.value)


def _bodies(store: Any) -> list[str]:
    return sorted(e.body for e in store.iter_entries())


# -- the memory tool -------------------------------------------------------------------------


def test_wrong_typed_or_missing_arguments_are_tool_errors_naming_the_argument(opened: tuple[str, Any]) -> None:
    fmt, store = opened
    tool = MemcoreMemoryTool(store)
    path = _name(fmt, "base")
    tool.call({"command": "create", "path": path, "file_text": "one\ntwo\n"})
    cases: dict[str, object] = {
        "file_text": {"command": "create", "path": _name(fmt, "other"), "file_text": 5},
        "new_str": {"command": "str_replace", "path": path, "old_str": "one"},
        "old_str": {"command": "str_replace", "path": path, "old_str": 1, "new_str": "x"},
        "insert_text": {"command": "insert", "path": path, "insert_line": 0},
        "insert_line": {"command": "insert", "path": path, "insert_line": 1.5, "insert_text": "x"},
        "view_range": {"command": "view", "path": path, "view_range": ["a", "b"]},
        "new_path": {"command": "rename", "old_path": path},
    }
    for argument, command in cases.items():
        assert f"`{argument}`" in _refusal(tool, command), argument
    assert "view, create, str_replace, insert, delete, rename" in _refusal(tool, {"command": "format_disk"})
    assert "view, create, str_replace, insert, delete, rename" in _refusal(tool, "not an object")
    assert _bodies(store) == ["one\ntwo\n"]


def test_lone_surrogate_in_file_text_is_a_tool_error_and_writes_nothing(opened: tuple[str, Any]) -> None:
    fmt, store = opened
    tool = MemcoreMemoryTool(store)
    text = _refusal(tool, {"command": "create", "path": _name(fmt, "bad"), "file_text": "a\ud800b"})
    assert "lone surrogate U+D800" in text
    assert "input_value" not in text and "pydantic" not in text
    assert list(store.iter_entries()) == []


@pytest.mark.parametrize("fmt", BUILTIN_FORMATS)
def test_a_store_refusal_names_no_machine_path(fmt: str, tmp_path: Path) -> None:
    with memcore.open(new_store(fmt, tmp_path), **OPTIONS.get(fmt, {})) as store:
        tool = MemcoreMemoryTool(store)
        tool.call({"command": "create", "path": _name(fmt, "base"), "file_text": "kept\n"})
        try:  # Maka refuses a file over 128 KiB naming the file; others take it
            tool.call({"command": "create", "path": _name(fmt, "huge"), "file_text": "y" * 200_000})
        except ToolError as exc:
            assert str(tmp_path) not in str(exc)
            assert "MEMORY.md" in str(exc)
        assert "kept\n" in _bodies(store)


@pytest.mark.parametrize("fmt", BUILTIN_FORMATS)
@pytest.mark.parametrize(
    "name",
    [
        "x\n## Injected\n- fake: 1\n.md",
        "t\rq.md",
        "tab\tx.md",
        "a\u2028b.md",
        "note__base.md ",
        " note__base.md",
        "\u00a0.md",
        "dir /note__x.md",
        " /note__x.md",
    ],
)
def test_a_name_with_a_control_character_or_edge_space_is_refused_writing_nothing(
    fmt: str, name: str, tmp_path: Path
) -> None:
    with memcore.open(new_store(fmt, tmp_path), **OPTIONS.get(fmt, {})) as store:
        tool = MemcoreMemoryTool(store)
        path = f"/memories/memories/{name}" if fmt == "box" else f"/memories/{name}"
        text = _refusal(tool, {"command": "create", "path": path, "file_text": "x\n"})
        assert "one line of printable text" in text or "begins or ends with a space" in text
        assert list(store.iter_entries()) == []


@pytest.mark.parametrize("fmt", TITLE_FORMATS)
def test_create_never_reports_the_path_of_another_file(fmt: str, tmp_path: Path) -> None:
    """``/memories/notes`` lands at ``notes.md`` (a title gets ``.md``): refused when that exists."""
    with memcore.open(new_store(fmt, tmp_path), **OPTIONS.get(fmt, {})) as store:
        tool = MemcoreMemoryTool(store)
        tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "first\n"})
        assert _refusal(tool, {"command": "create", "path": "/memories/notes", "file_text": "second\n"}) == (
            "File /memories/notes.md already exists"
        )
        assert _bodies(store) == ["first\n"]
        shown = tool.call({"command": "view", "path": "/memories/notes.md"})
        assert "first" in str(shown)


@pytest.mark.parametrize("fmt", TITLE_FORMATS)
def test_a_decomposed_title_written_elsewhere_is_reachable_by_its_composed_path(fmt: str, tmp_path: Path) -> None:
    with memcore.open(new_store(fmt, tmp_path), **OPTIONS.get(fmt, {})) as store:
        store.add(MemoryEntry(title=unicodedata.normalize("NFD", "café"), body="crème\n"))
        tool = MemcoreMemoryTool(store)
        for path in ("/memories/café.md", unicodedata.normalize("NFD", "/memories/café.md")):
            assert "crème" in str(tool.call({"command": "view", "path": path}))


def test_str_replace_with_an_empty_old_str_is_refused_in_one_line(opened: tuple[str, Any]) -> None:
    fmt, store = opened
    tool = MemcoreMemoryTool(store)
    path = _name(fmt, "big")
    tool.call({"command": "create", "path": path, "file_text": "y\n" * 50_000})
    text = _refusal(tool, {"command": "str_replace", "path": path, "old_str": "", "new_str": "x"})
    assert text == f"No replacement was performed, old_str is empty: give the text to replace in {path}."
    assert _bodies(store) == ["y\n" * 50_000]


def test_str_replace_with_many_matches_lists_each_line_once(opened: tuple[str, Any]) -> None:
    fmt, store = opened
    tool = MemcoreMemoryTool(store)
    path = _name(fmt, "rep")
    tool.call({"command": "create", "path": path, "file_text": "aa\nb\naa\n"})
    text = _refusal(tool, {"command": "str_replace", "path": path, "old_str": "a", "new_str": "x"})
    assert text == (
        "No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 1, 3, 3. Please ensure it is unique"
    )


def _box_with_a_held_memory(tmp_path: Path) -> str:
    """A Box workspace with ``note__a.md`` (active) and ``note__b.md`` on legal hold."""
    url = new_store("box", tmp_path)
    with memcore.open(url) as store:
        tool = MemcoreMemoryTool(store)
        for stem in ("a", "b"):
            tool.call({"command": "create", "path": f"/memories/memories/note__{stem}.md", "file_text": f"{stem}\n"})
    held = tmp_path / "store" / "memories" / "note__b.md"
    held.write_text(held.read_text(encoding="utf-8").replace("status: active", "status: held"), encoding="utf-8")
    return url


def _box_files(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path / "store")) for p in (tmp_path / "store").rglob("*.md"))


def test_a_refused_rename_of_a_held_box_memory_leaves_no_copy(tmp_path: Path) -> None:
    with memcore.open(_box_with_a_held_memory(tmp_path)) as store:
        tool = MemcoreMemoryTool(store)
        text = _refusal(
            tool,
            {
                "command": "rename",
                "old_path": "/memories/memories/note__b.md",
                "new_path": "/memories/memories/note__c.md",
            },
        )
        assert text == (
            "box: /memories/memories/note__b.md is on hold (status: held) and cannot be moved or deleted; "
            "rename refused, nothing moved (release the hold first)"
        )
        assert _box_files(tmp_path) == ["memories/note__a.md", "memories/note__b.md"]
        assert _bodies(store) == ["a\n", "b\n"]


def test_a_folder_rename_holding_a_held_memory_moves_nothing(tmp_path: Path) -> None:
    with memcore.open(_box_with_a_held_memory(tmp_path)) as store:
        tool = MemcoreMemoryTool(store)
        text = _refusal(
            tool, {"command": "rename", "old_path": "/memories/memories", "new_path": "/memories/teams/x/memories"}
        )
        assert "/memories/memories/note__b.md is on hold" in text and "nothing moved" in text
        assert _box_files(tmp_path) == ["memories/note__a.md", "memories/note__b.md"]
        assert _bodies(store) == ["a\n", "b\n"]


def test_a_folder_delete_holding_a_held_memory_deletes_nothing(tmp_path: Path) -> None:
    with memcore.open(_box_with_a_held_memory(tmp_path)) as store:
        tool = MemcoreMemoryTool(store)
        text = _refusal(tool, {"command": "delete", "path": "/memories/memories"})
        assert "/memories/memories/note__b.md is on hold" in text and "nothing deleted" in text
        assert _box_files(tmp_path) == ["memories/note__a.md", "memories/note__b.md"]


def test_a_name_the_file_system_refuses_is_a_tool_error_without_the_machine_path(tmp_path: Path) -> None:
    with memcore.open(new_store("box", tmp_path)) as store:
        tool = MemcoreMemoryTool(store)
        path = "/memories/teams/" + "a" * 300 + "/memories/note__x.md"
        text = _refusal(tool, {"command": "create", "path": path, "file_text": "x\n"})
        assert text.startswith("box: unsafe path component 'aaaaaaaa")
        assert text.endswith("300 bytes in UTF-8, over the 255 a file name can hold")
        assert str(tmp_path) not in text
        assert list(store.iter_entries()) == []


@pytest.mark.parametrize("fmt", TITLE_FORMATS)
def test_rename_never_lands_on_another_file(fmt: str, tmp_path: Path) -> None:
    """``/memories/notes`` is shown as ``notes.md``: a rename there is refused when that exists."""
    with memcore.open(new_store(fmt, tmp_path), **OPTIONS.get(fmt, {})) as store:
        tool = MemcoreMemoryTool(store)
        tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "first\n"})
        tool.call({"command": "create", "path": "/memories/draft.md", "file_text": "second\n"})
        text = _refusal(tool, {"command": "rename", "old_path": "/memories/draft.md", "new_path": "/memories/notes"})
        assert text == "The destination /memories/notes.md already exists"
        assert sorted((e.title, e.body) for e in store.iter_entries()) == [("draft", "second\n"), ("notes", "first\n")]
        tool.call({"command": "rename", "old_path": "/memories/draft.md", "new_path": "/memories/draft"})
        assert sorted(e.title for e in store.iter_entries()) == ["draft", "notes"]
