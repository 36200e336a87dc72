"""memcore serve's entry operations, graph reads, prompts and output schemas, driven by the MCP
SDK's own client: over stdio against the real CLI, and in process for the details.

The store is tests/mcp_fixtures/jsonl_provider.py (one JSON object per line), so each test can
read what a tool wrote straight from the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from tests.test_mcp_server import JsonlProvider  # the test-only provider, loaded once there

from memcore import Capability, MemoryEntry, Relation
from memcore.mcp_server import TOOLS, MemoryToolbox, create_server

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parent / "mcp_fixtures"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ENTRIES = [
    MemoryEntry(id="a", title="Alpha", body="Deploy on Monday.\nNever on Friday.\n", created_at="2026-01-01T00:00:00Z"),
    MemoryEntry(
        id="b",
        title="Beta",
        body="Beta depends on alpha.",
        relations=[Relation(type="depends_on", target="a")],
        created_at="2026-01-02T00:00:00Z",
    ),
    MemoryEntry(
        id="c",
        title="Gamma",
        body="Gamma sits under beta. Friday, Friday.",
        parent="b",
        created_at="2026-01-03T00:00:00Z",
        updated_at="2026-02-01T00:00:00Z",
    ),
    MemoryEntry(
        id="s", title="Secret", body="hidden", scope="sensitive", relations=[Relation(type="related", target="a")]
    ),
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "mem.jsonl"
    path.write_text("".join(json.dumps(e.content_dict()) + "\n" for e in ENTRIES), encoding="utf-8")
    return path


def on_disk(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


async def call(client: Client | ClientSession, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)  # the SDK checks structured content against the output schema
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return True, text
    assert result.structured_content == json.loads(text)
    return False, json.loads(text)


def inproc(path: Path, **options: Any) -> Client:
    return Client(create_server(MemoryToolbox(lambda: JsonlProvider(str(path), **options).open())))


async def test_every_tool_over_stdio_with_the_sdk_client(store: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(FIXTURES / "launch.py"), "serve", "--store", f"jsonl-test:{store}"],
        cwd=str(REPO),
        env={"MEMCORE_LOAD_PLUGINS": "jsonl-test"},
    )
    called: set[str] = set()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {spec.name for spec in TOOLS}

        async def ok(name: str, args: dict[str, Any]) -> Any:
            err, data = await call(session, name, args)
            assert not err, (name, data)
            called.add(name)
            return data

        new = (await ok("remember", {"title": "Standup", "body": "Standup is at 9:30.\nIn room 4.\n"}))["entry"]["id"]
        assert [e["id"] for e in (await ok("recall", {"text": "standup"}))["entries"]] == [new]
        assert (await ok("get", {"id": new}))["entry"]["title"] == "Standup"
        assert (await ok("list", {}))["total"] == 4
        assert (await ok("update", {"id": new, "tags": ["team"]}))["entry"]["tags"] == ["team"]
        assert (await ok("edit", {"id": new, "old": "9:30", "new": "10:00"}))["entry"]["body"] == (
            "Standup is at 10:00.\nIn room 4.\n"
        )
        assert (await ok("insert", {"id": new, "text": "Bring notes.", "line": 1}))["entry"]["body"] == (
            "Standup is at 10:00.\nBring notes.\nIn room 4.\n"
        )
        assert (await ok("rename", {"id": new, "title": "Daily standup"}))["entry"]["title"] == "Daily standup"
        assert (await ok("move", {"id": new, "parent": "a"}))["entry"]["parent"] == "a"
        related = await ok("relate", {"relations": [{"source": new, "type": "related", "target": "b"}]})
        assert related["entries"][0]["relations"] == [{"type": "related", "target": "b", "resolved": True}]
        around = await ok("graph", {"id": new, "depth": 1})
        assert {(n["id"], n["depth"]) for n in around["entries"]} == {(new, 0), ("a", 1), ("b", 1)}
        assert {(e["source"], e["type"], e["target"]) for e in around["edges"]} == {
            (new, "related", "b"),
            (new, "parent", "a"),
            ("b", "depends_on", "a"),
        }
        await ok("unrelate", {"relations": [{"source": new, "type": "related", "target": "b"}]})
        assert on_disk(store)[new]["relations"] == []
        latest = await ok("recent", {"since": "2026-01-15T00:00:00Z"})
        assert [e["id"] for e in latest["entries"]] == [new, "c"]
        replaced = (await ok("supersede", {"old_id": "b", "title": "Beta 2", "body": "Beta, second take."}))["entry"]
        assert (await ok("archive", {"id": "a"}))["entry"]["status"] == "archived"
        assert await ok("delete", {"id": new}) == {"deleted": new}
        assert await ok("validate", {}) == {"diagnostics": [], "errors": 0}

        prompts = {p.name for p in (await session.list_prompts()).prompts}
        assert prompts == {"recall", "remember", "continue", "review"}
        got = await session.get_prompt("recall", {"question": "when is standup?"})
        assert got.messages[0].content.text.endswith("Question: when is standup?")  # type: ignore[union-attr]
    assert called == set(tools)
    rows = on_disk(store)
    assert new not in rows and rows["a"]["status"] == "archived" and rows["b"]["status"] == "superseded"
    assert rows[replaced["id"]]["body"] == "Beta, second take."


async def test_every_tool_has_an_output_schema_its_results_match(store: Path) -> None:
    async with inproc(store) as client:
        tools = (await client.list_tools()).tools
        assert all(t.output_schema is not None and t.output_schema["type"] == "object" for t in tools)
        schemas = {t.name: t.output_schema for t in tools}
        assert schemas["delete"] == {
            "additionalProperties": False,
            "properties": {
                "deleted": {"description": "Id of the entry removed.", "title": "Deleted", "type": "string"}
            },
            "required": ["deleted"],
            "title": "DeleteResult",
            "type": "object",
        }
        assert set(schemas["graph"]["properties"]) == {"entries", "edges"}
        assert "$ref" not in json.dumps(schemas)
        assert {t.name for t in tools if t.annotations and t.annotations.destructive_hint} == {"delete"}


async def test_edit_refuses_a_string_found_zero_or_several_times_and_writes_nothing(store: Path) -> None:
    before = store.read_bytes()
    async with inproc(store) as client:
        err, text = await call(client, "edit", {"id": "a", "old": "Tuesday", "new": "x"})
        assert err and text == (
            "memcore: error: jsonl-test: edit of 'a': the text to replace does not occur in the body; "
            "copy it exactly from the entry's body (whitespace and case count)"
        )
        err, text = await call(client, "edit", {"id": "c", "old": "Friday", "new": "x"})
        assert err and text == (
            "memcore: error: jsonl-test: edit of 'c': the text to replace occurs 2 times in the body; "
            "include more of the surrounding text so that it occurs once"
        )
        err, text = await call(client, "edit", {"id": "a", "old": "", "new": "x"})
        assert err and "old: String should have at least 1 character" in text
        err, text = await call(client, "insert", {"id": "a", "text": "x", "line": 9})
        assert (
            err
            and text
            == "memcore: error: jsonl-test: insert into 'a': line 9 is outside the body (it has 2 lines; use 0 to 2)"
        )
    assert store.read_bytes() == before


async def test_relate_checks_every_end_before_writing_any(store: Path) -> None:
    before = store.read_bytes()
    async with inproc(store) as client:
        err, text = await call(
            client,
            "relate",
            {
                "relations": [
                    {"source": "a", "type": "related", "target": "c"},
                    {"source": "a", "type": "related", "target": "s"},
                ]
            },
        )
        assert err and text == f"memcore: error: jsonl-test: no entry 's' in {store}"
        assert store.read_bytes() == before
        err, text = await call(client, "unrelate", {"relations": [{"source": "b", "type": "related", "target": "a"}]})
        assert err and text == "memcore: error: jsonl-test: 'b' has no relation related:a"
        err, text = await call(client, "move", {"id": "b", "parent": "c"})
        assert err and text == (
            "memcore: error: jsonl-test: cannot move 'b' under 'c': that is the entry itself or one of its descendants"
        )
        err, data = await call(client, "move", {"id": "c", "parent": None})
        assert not err and "parent" not in data["entry"]
    assert on_disk(store)["c"].get("parent") is None


async def test_graph_walks_to_the_given_depth_both_ways_and_hides_what_agents_may_not_see(store: Path) -> None:
    async with inproc(store) as client:
        _, zero = await call(client, "graph", {"id": "a", "depth": 0})
        assert [n["id"] for n in zero["entries"]] == ["a"] and zero["edges"] == []
        _, one = await call(client, "graph", {"id": "a"})
        assert [(n["id"], n["depth"]) for n in one["entries"]] == [("a", 0), ("b", 1)]
        _, two = await call(client, "graph", {"id": "a", "depth": 2})
        assert [(n["id"], n["depth"]) for n in two["entries"]] == [("a", 0), ("b", 1), ("c", 2)]
        assert two["edges"] == [
            {"source": "b", "type": "depends_on", "target": "a"},
            {"source": "c", "type": "parent", "target": "b"},
        ]
        _, whole = await call(client, "graph", {})
        assert [n["id"] for n in whole["entries"]] == ["a", "b", "c"]
        assert all("s" not in (e["source"], e["target"]) for e in whole["edges"])  # out of scope: not even its edges
        err, text = await call(client, "graph", {"id": "s"})
        assert err and text == f"memcore: error: jsonl-test: no entry 's' in {store}"
        err, text = await call(client, "graph", {"id": "a", "depth": 11})
        assert err and "depth: Input should be less than or equal to 10" in text
        _, latest = await call(client, "recent", {"limit": 2})
        assert [e["id"] for e in latest["entries"]] == ["c", "b"] and latest["total"] == 3


class ProposingStore(JsonlProvider):  # type: ignore[misc, valid-type]
    """A store whose agent edits of stable entries become proposals, as WhiteBox's without as_user."""

    as_user = False
    capabilities = JsonlProvider.capabilities - {Capability.DELETE} | {Capability.APPEND_ONLY}


async def test_gates_are_told_at_start_and_in_write_descriptions_naming_the_option(store: Path) -> None:
    toolbox = MemoryToolbox(lambda: ProposingStore(str(store)).open())
    assert toolbox.gate_notes() == [
        "not offered, the jsonl-test format cannot do them: delete (it lacks the 'delete' capability)",
        "jsonl-test: changes to a stable file are filed as a proposal for the user to review, not applied "
        "(start the server with -o as_user=true to change files in place).",
        "jsonl-test: some entries are append-only (e.g. observations) and refuse every change; add a new entry instead.",
    ]
    async with Client(create_server(toolbox)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert client.instructions is not None and "\nGate: not offered, the jsonl-test format" in client.instructions
    assert "-o as_user=true" in (tools["edit"].description or "")
    assert "-o as_user=true" not in (tools["recall"].description or "")
    read_only = MemoryToolbox(lambda: JsonlProvider(str(store)).open(), read_only=True)
    assert read_only.gate_notes() == [
        "write tools are not offered: the server runs with --read-only (start it without to write)"
    ]


async def test_prompts_fill_their_arguments_and_continue_embeds_the_memory_block(store: Path) -> None:
    async with inproc(store) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert [(a.name, a.required) for a in prompts["remember"].arguments or []] == [("content", True)]
        got = await client.get_prompt("continue", {"topic": "deploy"})
        text = got.messages[0].content.text  # type: ignore[union-attr]
        assert text.startswith("We are continuing earlier work on deploy.")
        assert "\n\n# Memory\n\n## Alpha\n" in text and "hidden" not in text
        review = (await client.get_prompt("review", {})).messages[0].content.text  # type: ignore[union-attr]
        assert "(since the start)" in review
        with pytest.raises(MCPError, match="prompt 'recall' needs the argument 'question'"):
            await client.get_prompt("recall", {})
        with pytest.raises(MCPError, match="unknown prompt 'nope'"):
            await client.get_prompt("nope", {})
    async with Client(create_server(MemoryToolbox(lambda: JsonlProvider(str(store)).open(), read_only=True))) as client:
        assert {p.name for p in (await client.list_prompts()).prompts} == {"recall", "continue", "review"}


def test_serve_prints_the_gates_at_start_up(store: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(FIXTURES / "launch.py"), "serve", "--store", f"jsonl-test:{store}", "--read-only"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,  # the client goes away at once: the server exits
        env={**os.environ, "MEMCORE_LOAD_PLUGINS": "jsonl-test"},
    )
    assert proc.returncode == 0
    assert proc.stderr == (
        "memcore: note: write tools are not offered: the server runs with --read-only (start it without to write)\n"
    )
