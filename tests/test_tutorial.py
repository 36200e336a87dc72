"""The provider tutorial can be followed verbatim: the page alone builds a plugin that passes the suite.

Every ``python`` / ``toml`` block of docs/tutorial-provider.md is preceded by
``<!-- file: <path> (<place>) -->`` or by ``<!-- illustration -->`` (a usage sketch, not code of
the plugin). The file blocks, in page order, are the whole of each file of the plugin: put
together they equal examples/plugins/memcore-jsonl byte for byte, and, installed into a scratch
install folder, pass the conformance suite with the counts the page states.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import REPO

from memcore.models import MemoryEntry

PAGE = REPO / "docs" / "tutorial-provider.md"
PLUGIN = REPO / "examples" / "plugins" / "memcore-jsonl"
PREFIX = "examples/plugins/memcore-jsonl/"
#: Files of the plugin the page does not show: an empty marker, and the plugin's own tests and data.
NOT_SHOWN = {"src/memcore_jsonl/py.typed", "tests/test_jsonl_files.py", "tests/data/memory.jsonl"}

_FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.M | re.S)
_MARK = re.compile(r"<!-- (?:file: (?P<path>\S+) \((?P<place>[^)]+)\)|(?P<illustration>illustration)) -->")
_PART = re.compile(r"the whole file|part (?P<k>\d+) of (?P<n>\d+): .+")


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int
    mark: str | None  # the line just before the fence


def _blocks() -> list[Block]:
    text = PAGE.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append(Block(m["lang"], m["code"], text.count("\n", 0, m.start()) + 1, before))
    return out


def assemble() -> dict[str, str]:
    """Return ``{path in the plugin: text}`` put together from the page's file blocks, in page order.

    Raises:
        AssertionError: A block's place does not fit (part 2 before part 1, a missing part…).
    """
    parts: dict[str, list[tuple[str, str]]] = {}
    for block in _blocks():
        mark = _MARK.fullmatch(block.mark or "")
        if not (mark and mark["path"]):
            continue
        assert mark["path"].startswith(PREFIX), f"tutorial line {block.line}: {mark['path']} is not in the plugin"
        parts.setdefault(mark["path"].removeprefix(PREFIX), []).append((mark["place"], block.code))
    files = {}
    for path, found in parts.items():
        places = [_PART.fullmatch(place) for place in (p for p, _ in found)]
        assert all(places), f"{path}: a place the tutorial names is not 'the whole file' or 'part K of N: …'"
        if len(found) > 1 or (places[0] and places[0]["k"]):
            numbers = [(int(m["k"]), int(m["n"])) for m in places if m]
            assert numbers == [(k, len(found)) for k in range(1, len(found) + 1)], f"{path}: parts {numbers}"
        files[path] = "".join(code for _, code in found)
    return files


def test_every_code_block_names_its_file_and_place() -> None:
    unmarked = [
        f"docs/tutorial-provider.md:{b.line}: ```{b.lang} block without <!-- file: PATH (PLACE) --> "
        "or <!-- illustration -->"
        for b in _blocks()
        if b.lang in {"python", "toml"} and not _MARK.fullmatch(b.mark or "")
    ]
    assert not unmarked, "\n".join(unmarked)


def test_the_page_puts_together_the_example_plugin_byte_for_byte() -> None:
    files = assemble()
    paths = [p.relative_to(PLUGIN).as_posix() for p in PLUGIN.rglob("*") if p.is_file()]
    on_disk = {
        rel
        for rel in paths
        if not any(part.startswith((".", "__pycache__")) or part.endswith(".egg-info") for part in rel.split("/"))
    }
    assert set(files) == on_disk - NOT_SHOWN
    for path, text in files.items():
        assert text == (PLUGIN / path).read_text(encoding="utf-8"), f"the tutorial's {path} differs from the plugin's"


def test_the_code_of_the_plugin_the_page_builds_is_at_most_400_lines() -> None:
    assert sum(text.count("\n") for path, text in assemble().items() if path.startswith("src/")) <= 400


def test_the_format_example_is_a_valid_entry_line() -> None:
    examples = [b for b in _blocks() if b.lang == "json"]
    assert examples
    for block in examples:
        for line in block.code.splitlines():
            entry = MemoryEntry.model_validate(json.loads(line))
            assert entry.id and entry.created_at is not None


@pytest.mark.slow
def test_the_plugin_built_from_the_page_alone_installs_and_passes_the_suite(tmp_path: Path) -> None:
    """Write the page's files to a folder, pip-install it into a scratch folder, run its tests from there."""
    plugin = tmp_path / "memcore-jsonl"
    for path, text in assemble().items():
        (plugin / path).parent.mkdir(parents=True, exist_ok=True)
        (plugin / path).write_text(text, encoding="utf-8")
    (plugin / "src/memcore_jsonl/py.typed").touch()
    site = tmp_path / "site-packages"  # a scratch install folder, first on the path of the run below
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_ADDOPTS"}}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(plugin),
        ],
        check=True,
        env=env,
    )
    found = subprocess.run(
        [sys.executable, "-c", "import memcore_jsonl; print(memcore_jsonl.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=tmp_path,
    ).stdout
    assert found.startswith(str(site)), found  # the copy built from the page, not the repository's
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "tests"],
        capture_output=True,
        text=True,
        env=env,
        cwd=plugin,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    counts = re.search(r"\d+ passed(?:, \d+ skipped)?", summary)
    assert counts, summary
    assert f"\n{counts[0]}\n" in PAGE.read_text(encoding="utf-8"), (
        f"the page states other counts than the suite gives the plugin built from it: {counts[0]}"
    )
