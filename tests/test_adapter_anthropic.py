"""memcore.adapters.anthropic: the memory tool over every built-in format, driven by the SDK's runner.

A scripted fake Messages API on 127.0.0.1 (:mod:`memcore.adapters._fake_messages`) sends the
commands of the Python SDK handler's own transcript (samples/anthropic-memory-tool); the SDK's
``tool_runner`` runs them through :class:`MemcoreMemoryTool` and posts the ``tool_result``s back,
which are compared with what ``BetaLocalFilesystemMemoryTool`` returned.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")

import memcore  # noqa: E402
from memcore.adapters._fake_messages import FakeMessagesAPI  # noqa: E402
from memcore.adapters._memory_tree import (  # noqa: E402
    TreeError,
    format_size,
    listing,
    relative_path,
)
from memcore.adapters.anthropic import MemcoreMemoryTool  # noqa: E402
from memcore.models import Kind, MemoryEntry  # noqa: E402
from memcore.registry import get_registry  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "samples" / "anthropic-memory-tool" / "rendered-python-sdk-2.15.0"
FORMATS = ("whitebox", "box", "rightmemory", "maka", "mcpmemory", "claudecode", "basicmemory")
TITLE_FORMATS = ("rightmemory", "maka", "mcpmemory", "claudecode", "basicmemory")
SINGLE_FILE = {"maka": "MEMORY.md", "mcpmemory": "memory.jsonl"}
OPTIONS: dict[str, dict[str, Any]] = {"maka": {"agent_read_enabled": True}}

pytestmark = pytest.mark.skipif(
    not set(FORMATS) <= set(get_registry().names()), reason="the format plugins are not all installed"
)


def _transcript() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SAMPLE / "transcript.jsonl").read_text(encoding="utf-8").splitlines()]


def _in_format(fmt: str, text: str) -> str:
    """Rename the sample's ``/memories/…/x.txt`` paths to names the file formats allow."""
    if fmt == "whitebox":  # facts are markdown files
        return re.sub(r"(/memories/[\w/.]*?)\.txt", r"\1.md", text)
    if fmt == "box":  # memories/<kind>__<slug>.md
        return re.sub(
            r"/memories/(?:\w+/)*(\w+)\.txt",
            lambda m: "/memories/memories/note__" + m.group(1).replace("_", "-") + ".md",
            text,
        )
    return text


def _location(fmt: str, tmp_path: Path) -> Path:
    return tmp_path / SINGLE_FILE.get(fmt, "store")


@pytest.fixture
def fresh_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    fmt: str = request.param
    location = _location(fmt, tmp_path)
    get_registry().get(fmt).init_store(str(location))
    with get_registry().get(fmt)(str(location), **OPTIONS.get(fmt, {})) as store:
        yield store


def _run(store: Any, turns: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Drive ``turns`` through the SDK's own tool runner; return the tool_results it sent back."""
    with FakeMessagesAPI(turns) as api:
        client = anthropic.Anthropic(api_key="test-key", base_url=api.base_url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-fake",
            max_tokens=64,
            tools=[MemcoreMemoryTool(store)],
            messages=[{"role": "user", "content": "Use your memory."}],
        )
        final = runner.until_done()
        assert final.content[0].text == "Done."
        assert api.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
        return api.results


#: what this handler answers differently from the SDK's filesystem handler, and why
_PREFIX_REFUSED = "Path must start with /memories, got: /memories_backup/prefix.txt"  # stricter (spec §5)


def _expected(fmt: str, row: dict[str, Any]) -> tuple[bool, str] | None:
    """Return (is_error, content) where the format answers otherwise than the SDK; else None."""
    command = row["input"]
    if command.get("path") == "/memories_backup/prefix.txt":
        return True, _PREFIX_REFUSED
    if fmt == "whitebox" and command["command"] == "delete" and command["path"] != "/memories":
        if "nonexistent" not in command["path"]:
            return True, "whitebox: `delete` is not supported by this format"
    if fmt == "whitebox" and command["command"] == "rename" and "nonexistent" not in command["old_path"]:
        if command["old_path"] == "/memories/old_name.md":
            return True, "whitebox: a file cannot be renamed"
        if command["old_path"] == "/memories/new_name.md":  # the first rename was refused
            return True, "The path /memories/new_name.md does not exist"
    if command.get("path", "").startswith("/memories/.hidden"):
        if fmt == "whitebox":
            return True, "whitebox: .hidden.md: the reader skips hidden files"
        if fmt == "box":
            return True, "Cannot create /memories/.hidden.txt: Box-memory files are memories/<kind>__<slug>.md"
    if fmt == "box" and command.get("new_path") == "/memories/memories/note__file.md":
        # the sample's nested paths all become memories/note__file.md, created earlier
        return True, "The destination /memories/memories/note__file.md already exists"
    return None


@pytest.mark.parametrize("fresh_store", FORMATS, indirect=True)
def test_sdk_transcript_replays_with_the_sdk_result_strings(fresh_store: Any) -> None:
    fmt = fresh_store.format_name
    rows = [json.loads(_in_format(fmt, json.dumps(row))) for row in _transcript()]
    results = _run(fresh_store, [[row["input"]] for row in rows[:-1]])  # the last view is checked below
    assert [r["input"] for r in results] == [row["input"] for row in rows[:-1]]
    for row, got in zip(rows, results, strict=False):
        special = _expected(fmt, row)
        if special is None:
            assert (got["is_error"], got["content"]) == (row["is_error"], row["content"]), row["input"]
        else:
            assert got["is_error"] is special[0], row["input"]
            assert got["content"].startswith(special[1]), (row["input"], got["content"])


@pytest.mark.parametrize("fresh_store", TITLE_FORMATS, indirect=True)
def test_final_listing_is_the_sdk_listing_but_the_refused_prefix_path_and_insert_newline(fresh_store: Any) -> None:
    rows = _transcript()
    results = _run(fresh_store, [[row["input"]] for row in rows])
    sdk = rows[-1]["content"]
    # /memories_backup/… is refused here; ops.insert keeps the body's missing final newline
    want = sdk.replace("4K\t/memories/_backup/\n19B\t/memories/_backup/prefix.txt\n", "").replace(
        "39B\t/memories/insert_test.txt", "38B\t/memories/insert_test.txt"
    )
    assert results[-1] == {"input": rows[-1]["input"], "content": want, "is_error": False}


def _reopen(store: Any) -> Any:
    return get_registry().get(store.format_name)(store.location, **OPTIONS.get(store.format_name, {}))


@pytest.mark.parametrize("fresh_store", FORMATS, indirect=True)
def test_every_command_lands_in_the_store(fresh_store: Any) -> None:
    fmt = fresh_store.format_name
    name = {"whitebox": "coffee.md", "box": "memories/fact__coffee.md"}.get(fmt, "coffee.txt")
    moved = {"whitebox": None, "box": "teams/home/memories/fact__tea.md"}.get(fmt, "drinks/tea.txt")
    turns: list[list[dict[str, Any]]] = [
        [{"command": "create", "path": f"/memories/{name}", "file_text": "Black coffee\nno sugar\n"}],
        [{"command": "str_replace", "path": f"/memories/{name}", "old_str": "no sugar", "new_str": "one sugar"}],
        [{"command": "insert", "path": f"/memories/{name}", "insert_line": 0, "insert_text": "Mornings:\n"}],
        [{"command": "view", "path": f"/memories/{name}", "view_range": [2, -1]}],
    ]
    if moved:
        turns.append([{"command": "rename", "old_path": f"/memories/{name}", "new_path": f"/memories/{moved}"}])
    results = _run(fresh_store, turns)
    assert [r["is_error"] for r in results] == [False] * len(turns), results
    assert results[1]["content"].endswith("     1\tBlack coffee\n     2\tone sugar\n     3\t")
    assert results[3]["content"] == (
        f"Here's the content of /memories/{name} with line numbers:\n     2\tBlack coffee\n     3\tone sugar\n     4\t"
    )
    body = "Mornings:\nBlack coffee\none sugar\n"
    with _reopen(fresh_store) as again:
        entries = list(again.iter_entries())
        assert [e.body for e in entries] == [body]
        tree = MemcoreMemoryTool(again).tree()
        assert list(tree.entries) == [moved or name]
    root = Path(fresh_store.location)
    if fmt in ("whitebox", "box"):  # one file per entry, at the path Claude used
        assert body in (root / (moved or name)).read_text(encoding="utf-8")
    elif fmt in ("claudecode", "basicmemory"):  # one file per entry, named by the store
        assert [p for p in root.rglob("*.md") if body in p.read_text(encoding="utf-8")]
    else:  # the entries of one or two files (MEMORY.md, memory.jsonl)
        files = [root] if root.is_file() else sorted(root.rglob("*.md"))
        assert any("one sugar" in p.read_text(encoding="utf-8") for p in files)
    _run(fresh_store, [[{"command": "delete", "path": f"/memories/{moved or name}"}]])


@pytest.mark.parametrize("fresh_store", FORMATS, indirect=True)
def test_paths_outside_memories_are_refused_and_write_nothing(fresh_store: Any) -> None:
    attempts = {
        "/etc/passwd": "Path must start with /memories, got: /etc/passwd",
        "/memories/../../../etc/passwd": "Path /memories/../../../etc/passwd would escape /memories directory",
        "/memories/a/../../x.md": "Path /memories/a/../../x.md would escape /memories directory",
        "/memories/%2e%2e/x.md": "Path /memories/%2e%2e/x.md would escape /memories directory",
        "/memories/..\\x.md": "Path /memories/..\\x.md would escape /memories directory",
        "/memories/x\x00.md": "Path '/memories/x\\x00.md' would escape /memories directory (it holds a NUL character)",
        "/memoriesx.md": "Path must start with /memories, got: /memoriesx.md",
    }
    turns = [[{"command": "create", "path": path, "file_text": "escape"}] for path in attempts]
    turns.append([{"command": "rename", "old_path": "/memories", "new_path": "/memories/x"}])
    results = _run(fresh_store, turns)
    assert [(r["is_error"], r["content"]) for r in results] == [(True, text) for text in attempts.values()] + [
        (True, "Cannot rename the /memories directory itself")
    ]
    assert list(fresh_store.iter_entries()) == []


def test_whitebox_observations_are_append_only_through_the_tool(tmp_path: Path) -> None:
    get_registry().get("whitebox").init_store(str(tmp_path / "vault"))
    with memcore.open(f"whitebox:{tmp_path / 'vault'}") as store:
        seen = store.add(MemoryEntry(kind=Kind.OBSERVATION, body="Prefers short answers."))
        path = f"/memories/{seen.id}"
        results = _run(
            store,
            [
                [{"command": "view", "path": "/memories"}],
                [{"command": "str_replace", "path": path, "old_str": "short", "new_str": "long"}],
                [{"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"}],
            ],
        )
        assert f"\t{path}" in results[0]["content"]
        for got in results[1:]:
            assert got["is_error"] is True
            assert "observations are append-only" in got["content"]
        assert store.get(seen.id or "").body == "Prefers short answers."


@pytest.mark.parametrize("as_user", [False, True])
def test_whitebox_stable_files_change_only_as_the_user_else_become_proposals(tmp_path: Path, as_user: bool) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "examples" / "whitebox-vault", vault)
    before = (vault / "languages.md").read_text(encoding="utf-8")
    edit = {
        "command": "str_replace",
        "path": "/memories/languages.md",
        "old_str": "reads Arabic",
        "new_str": "reads Greek",
    }
    with get_registry().get("whitebox")(str(vault), as_user=as_user) as store:
        (result,) = _run(store, [[edit]])
    after = (vault / "languages.md").read_text(encoding="utf-8")
    assert result["is_error"] is False
    if as_user:
        assert result["content"].startswith("The memory file has been edited.")
        assert "reads Greek" in after
        assert after.count("\n") == before.count("\n")  # only the body line and the update time changed
        assert not (vault / "proposed").exists()
    else:
        (proposal,) = (vault / "proposed").iterdir()
        assert result["content"] == (
            "/memories/languages.md is unchanged: whitebox keeps this file for the user to edit, so the change "
            f"was written as a proposal for review at /memories/proposed/{proposal.name}."
        )
        assert after == before
        assert "reads Greek" in proposal.read_text(encoding="utf-8")


def test_maka_with_agent_reads_off_shows_the_agent_nothing(tmp_path: Path) -> None:
    location = tmp_path / "MEMORY.md"
    get_registry().get("maka").init_store(str(location))
    with get_registry().get("maka")(str(location), agent_read_enabled=True) as store:
        store.add(MemoryEntry(title="Secret", body="The agent may not see this."))
    with get_registry().get("maka")(str(location)) as store:
        results = _run(
            store, [[{"command": "view", "path": "/memories"}], [{"command": "view", "path": "/memories/Secret.md"}]]
        )
    for got in results:
        assert got["is_error"] is True
        assert got["content"].startswith("maka: agentReadEnabled is off")
        assert "The agent may not see" not in got["content"]
    with get_registry().get("maka")(str(location), agent_read_enabled=True, incognito=True) as store:
        (got,) = _run(store, [[{"command": "view", "path": "/memories"}]])
    assert got["is_error"] is True
    assert got["content"].startswith("maka: incognito is on")


def test_a_symlink_leaving_the_vault_is_neither_shown_nor_written_through(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\ntitle: Secret\n---\nTOP SECRET\n", encoding="utf-8")
    get_registry().get("whitebox").init_store(str(tmp_path / "vault"))
    (tmp_path / "vault" / "leak.md").symlink_to(secret)
    with memcore.open(f"whitebox:{tmp_path / 'vault'}") as store:
        results = _run(
            store,
            [
                [{"command": "view", "path": "/memories"}],
                [{"command": "view", "path": "/memories/leak.md"}],
                [{"command": "create", "path": "/memories/leak.md", "file_text": "overwritten"}],
            ],
        )
    assert "leak.md" not in results[0]["content"]
    assert results[1] == {
        "input": results[1]["input"],
        "content": "The path /memories/leak.md does not exist. Please provide a valid path.",
        "is_error": True,
    }
    assert results[2]["is_error"] is True
    assert results[2]["content"].startswith("Path would escape /memories directory via symlink")
    assert secret.read_text(encoding="utf-8") == "---\ntitle: Secret\n---\nTOP SECRET\n"


def test_two_entries_with_one_title_are_told_apart_and_a_folder_deletes_whole(tmp_path: Path) -> None:
    location = tmp_path / "MEMORY.md"
    get_registry().get("maka").init_store(str(location))
    with get_registry().get("maka")(str(location), agent_read_enabled=True) as store:
        first = store.add(MemoryEntry(title="Coffee", body="black"))
        second = store.add(MemoryEntry(title="Coffee", body="with milk"))
        store.add(MemoryEntry(title="drinks/tea", body="green"))
        store.add(MemoryEntry(title="drinks/juice", body="orange"))
        assert list(MemcoreMemoryTool(store).tree().entries) == [
            "Coffee.md",
            f"Coffee~{second.id}.md",
            "drinks/tea.md",
            "drinks/juice.md",
        ]
        results = _run(
            store,
            [
                [{"command": "view", "path": f"/memories/Coffee~{second.id}.md"}],
                [{"command": "delete", "path": "/memories/drinks"}],
                [{"command": "view", "path": "/memories/drinks"}],
            ],
        )
        assert results[0]["content"].endswith("     1\twith milk")
        assert results[1]["content"] == "Successfully deleted /memories/drinks"
        assert results[2]["is_error"] is True
        assert [e.id for e in store.iter_entries()] == [first.id, second.id]


# -- the pure parts, against the sample --------------------------------------------------------------


def test_listing_of_the_sdk_sample_tree_is_the_sdk_listing() -> None:
    root = SAMPLE / "memories"
    files = {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}
    assert listing("/memories", "", files) == _transcript()[-1]["content"]


@pytest.mark.parametrize(("size", "shown"), [(0, "0B"), (19, "19B"), (4096, "4K"), (1536, "1.5K"), (3 << 20, "3M")])
def test_sizes_are_printed_as_the_sdk_prints_them(size: int, shown: str) -> None:
    assert format_size(size) == shown


@pytest.mark.parametrize(
    ("path", "rel"),
    [
        ("/memories", ""),
        ("/memories/", ""),
        ("/memories/a//b/./c.md", "a/b/c.md"),
        ("/memories/Cafe\u0301.md", "Café.md"),
    ],
)
def test_paths_map_below_memories(path: str, rel: str) -> None:
    assert relative_path(path) == rel


def test_a_path_sharing_the_prefix_is_refused_unlike_the_sdk() -> None:
    with pytest.raises(TreeError, match="Path must start with /memories, got: /memories_backup/x"):
        relative_path("/memories_backup/x")


def test_importing_without_the_sdk_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "try:\n import memcore.adapters.anthropic\n"
        "except ImportError as exc: print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert 'pip install "memcore-unified[anthropic]"' in out


def test_example_runs_offline(tmp_path: Path) -> None:
    example = REPO / "examples" / "adapters" / "anthropic_memory.py"
    out = subprocess.run(
        [sys.executable, str(example), "--offline", "--store", f"maka:{tmp_path / 'MEMORY.md'}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "File created successfully at: /memories/coffee.md" in out
    assert "Black, no sugar." in (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
