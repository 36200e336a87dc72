"""The provider tutorial cannot drift from the plugin it builds (examples/plugins/memcore-jsonl).

Every ``python`` / ``toml`` block of docs/tutorial-provider.md is preceded by
``<!-- file: <path> -->`` and must appear verbatim in that file, or by ``<!-- illustration -->``
(a usage sketch, not code of the plugin). Every function, method and class of the plugin's
modules must be shown by some block, so a new method cannot be added without the tutorial.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

import pytest
from tests.conftest import REPO

from memcore.models import MemoryEntry

PAGE = REPO / "docs" / "tutorial-provider.md"
PLUGIN = REPO / "examples" / "plugins" / "memcore-jsonl"
#: Modules whose every definition the tutorial must show.
COVERED = ["src/memcore_jsonl/provider.py", "src/memcore_jsonl/plugin.py", "src/memcore_jsonl/conformance.py"]

_FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.M | re.S)
_MARK = re.compile(r"<!-- (?:file: (?P<path>\S+)|(?P<illustration>illustration)) -->")


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int
    mark: str | None  # the line just before the fence


def _blocks(text: str) -> list[Block]:
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append(Block(m["lang"], m["code"], text.count("\n", 0, m.start()) + 1, before))
    return out


def _file_blocks() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for block in _blocks(PAGE.read_text(encoding="utf-8")):
        mark = _MARK.fullmatch(block.mark or "")
        if mark and mark["path"]:
            found.setdefault(mark["path"], []).append(block.code)
    return found


def _definitions(source: str) -> list[tuple[str, str]]:
    """``(qualified name, source text)`` of every class (header only) and function, not nested in a function."""
    tree = ast.parse(source)
    lines = source.split("\n")
    out: list[tuple[str, str]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + node.name, "\n".join(lines[node.lineno - 1 : node.end_lineno])))
            elif isinstance(node, ast.ClassDef):
                methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                starts = [m.decorator_list[0].lineno if m.decorator_list else m.lineno for m in methods]
                end = min(starts) - 1 if starts else node.end_lineno
                out.append((prefix + node.name, "\n".join(lines[node.lineno - 1 : end]).rstrip()))
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return out


def test_every_code_block_is_marked() -> None:
    unmarked = [
        f"docs/tutorial-provider.md:{b.line}: ```{b.lang} block without <!-- file: … --> or <!-- illustration -->"
        for b in _blocks(PAGE.read_text(encoding="utf-8"))
        if b.lang in {"python", "toml"} and not _MARK.fullmatch(b.mark or "")
    ]
    assert not unmarked, "\n".join(unmarked)


def test_every_file_block_is_verbatim_in_its_file() -> None:
    blocks = _file_blocks()
    assert len(blocks) >= 5 and sum(map(len, blocks.values())) >= 12, blocks.keys()
    for path, codes in blocks.items():
        target = REPO / path
        assert target.is_file(), f"the tutorial names {path}, which does not exist"
        text = target.read_text(encoding="utf-8")
        for code in codes:
            first = code.split("\n", 1)[0]
            assert code.rstrip("\n") in text, f"a block of the tutorial is not in {path} (it starts {first!r})"


@pytest.mark.parametrize("module", COVERED)
def test_the_tutorial_shows_every_definition(module: str) -> None:
    shown = "\n".join(_file_blocks().get(f"examples/plugins/memcore-jsonl/{module}", []))
    source = (PLUGIN / module).read_text(encoding="utf-8")
    missing = [name for name, text in _definitions(source) if text not in shown]
    assert not missing, f"docs/tutorial-provider.md does not show {missing} of {module}"


def test_the_format_example_is_a_valid_entry_line() -> None:
    examples = [b for b in _blocks(PAGE.read_text(encoding="utf-8")) if b.lang == "json"]
    assert examples
    for block in examples:
        for line in block.code.splitlines():
            entry = MemoryEntry.model_validate(json.loads(line))
            assert entry.id and entry.created_at is not None
