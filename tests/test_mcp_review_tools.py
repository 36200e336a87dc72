"""Format operations as MCP tools (``memcore serve --review-tools``), driven by the official stdio client.

Without the option they are not offered, and the start-up instructions name it; with it each
format's operations are tools ``<format>_<operation>`` with input and output schemas (the client
checks every structured result against its schema); ``--read-only`` refuses them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from tests.test_mcp_formats import SAMPLES, call, provider_class, tool_names

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[1]
WHITEBOX_TOOLS = ["whitebox_promote", "whitebox_dispute", "whitebox_propose_stable_edit"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def serve(fmt: str, *args: str) -> AsyncIterator[tuple[ClientSession, str]]:
    """Start ``memcore serve <args>`` with only ``fmt``'s plugin; yield the session and its instructions."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcore", "serve", *args],
        cwd=str(REPO),
        env={"MEMCORE_LOAD_PLUGINS": fmt, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        yield session, init.instructions or ""


async def schemas(session: ClientSession) -> dict[str, dict[str, Any]]:
    return {t.name: t.output_schema or {} for t in (await session.list_tools()).tools}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    provider_class("whitebox")
    root = tmp_path / "vault"
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", root)
    return root


async def test_review_tools_are_offered_only_with_the_option_that_the_instructions_name(vault: Path) -> None:
    async with serve("whitebox", "--store", f"whitebox:{vault}") as (session, instructions):
        assert not any(name.startswith("whitebox_") for name in await tool_names(session))
        assert "--review-tools" in instructions and "whitebox_dispute" in instructions
        err, text = await call(session, "whitebox_dispute", {"fact_id": "identity.md", "body": "x"})
        assert err and "start the server with --review-tools" in text
    async with serve("whitebox", "--store", f"whitebox:{vault}", "--review-tools", "--read-only") as (session, _):
        assert not any(name.startswith("whitebox_") for name in await tool_names(session))  # they all write
        err, text = await call(session, "whitebox_dispute", {"fact_id": "identity.md", "body": "x"})
        assert err and "--read-only" in text


async def test_whitebox_dispute_propose_and_promote_through_the_client(vault: Path) -> None:
    facts_before = (vault / "identity.md").read_bytes()
    async with serve("whitebox", "--store", f"whitebox:{vault}", "--review-tools") as (session, instructions):
        names = await tool_names(session)
        assert names[-3:] == WHITEBOX_TOOLS and "--review-tools" not in instructions
        found = await schemas(session)
        assert all(found[name]["type"] == "object" and found[name]["properties"] for name in WHITEBOX_TOOLS)
        err, data = await call(
            session, "whitebox_dispute", {"fact_id": "identity.md", "body": "Moved to Lyon.", "confidence": 0.8}
        )
        assert not err, data
        assert data["entry"]["kind"] == "observation" and "conflict" in data["entry"]["tags"]
        assert {"type": "disputes", "target": "identity.md"}.items() <= data["entry"]["relations"][0].items()
        err, data = await call(
            session,
            "whitebox_propose_stable_edit",
            {"target": "identity.md", "content": "# Identity\n\nLyon.\n", "rationale": "moved"},
        )
        assert not err, data
        assert data["entry"]["id"].startswith("proposed/") and (vault / data["entry"]["id"]).is_file()
        proposals = sorted(p.name for p in (vault / "proposed").iterdir())
        err, data = await call(session, "whitebox_promote", {"dry_run": True, "threshold": 1})
        assert not err, data
        assert data["failed"] == 0 and data["rows"], data
        assert {"tags", "eligible", "action", "path"} <= set(data["rows"][0])
        assert sorted(p.name for p in (vault / "proposed").iterdir()) == proposals  # a dry run writes nothing
        err, text = await call(session, "whitebox_dispute", {"fact_id": "identity.md"})
        assert err and "body" in text  # the input schema's required field, named
    assert (vault / "identity.md").read_bytes() == facts_before  # disputes and proposals never edit facts


@pytest.fixture
def maka_file(tmp_path: Path) -> Path:
    provider_class("maka").init_store(str(tmp_path / "maka" / "MEMORY.md"))
    return tmp_path / "maka" / "MEMORY.md"


async def test_maka_propose_approve_and_reject_through_the_client(maka_file: Path) -> None:
    args = ("--store", f"maka:{maka_file}", "-o", "agent_read_enabled=true", "--review-tools")
    async with serve("maka", *args) as (session, _):
        assert {"maka_pending", "maka_propose", "maka_approve", "maka_reject"} <= set(await tool_names(session))
        err, first = await call(session, "maka_propose", {"title": "Standup", "body": "Standup at 10:00."})
        assert not err and first["entry"]["status"] == "review_required", first
        err, second = await call(session, "maka_propose", {"title": "Tabs", "body": "Use tabs."})
        assert not err, second
        err, pending = await call(session, "maka_pending", {})
        assert not err and [e["id"] for e in pending["entries"]] == [first["entry"]["id"], second["entry"]["id"]]
        err, approved = await call(session, "maka_approve", {"proposal_id": first["entry"]["id"]})
        assert not err and approved["entry"]["status"] == "active", approved
        err, rejected = await call(session, "maka_reject", {"proposal_id": second["entry"]["id"]})
        assert not err and rejected["entry"]["status"] == "rejected", rejected
        err, found = await call(session, "recall", {"text": "standup"})
        assert [e["id"] for e in found["entries"]] == [approved["entry"]["id"]]
    assert "Standup at 10:00." in maka_file.read_text(encoding="utf-8")
    assert "Use tabs." not in maka_file.read_text(encoding="utf-8")


async def test_rightmemory_move_to_detail_and_back_through_the_client(tmp_path: Path) -> None:
    provider_class("rightmemory")
    root = tmp_path / "rm"
    shutil.copytree(SAMPLES / "rightmemory" / "test-fixture-extracted-test_graph", root)
    async with serve("rightmemory", "--store", f"rightmemory:{root}", "--review-tools") as (session, _):
        assert (await tool_names(session))[-2:] == ["rightmemory_move_to_detail", "rightmemory_inline_detail"]
        err, data = await call(session, "rightmemory_move_to_detail", {"heading_id": "project"})
        assert not err and data == {"path": "MEMORY_project.md"}, data
        assert "`project-fact`" in (root / "MEMORY_project.md").read_text(encoding="utf-8")
        err, data = await call(session, "get", {"id": "project-fact"})
        assert not err and data["entry"]["parent"] == "project"
        err, data = await call(session, "rightmemory_inline_detail", {"heading_id": "project"})
        assert not err and data["entry"]["id"] == "project", data
        err, data = await call(session, "move", {"id": "child", "parent": "details"})  # RightMemory's own move
        assert not err and data["entry"]["parent"] == "details", data
        err, data = await call(session, "validate", {})
        assert not err and data["errors"] == 0
    assert not (root / "MEMORY_project.md").exists()
    assert "{#child}" in (root / "MEMORY_details.md").read_text(encoding="utf-8")
    assert "## Project {#project}" in (root / "MEMORY.md").read_text(encoding="utf-8")


async def test_box_add_companion_and_reindex_through_the_client(tmp_path: Path) -> None:
    provider_class("box").init_store(str(tmp_path / "ws"))
    workspace = tmp_path / "ws"
    (workspace / "files").mkdir(exist_ok=True)
    (workspace / "files" / "report.pdf").write_bytes(b"%PDF-1.7 fake\n")
    async with serve("box", "--store", f"box:{workspace}", "--review-tools") as (session, _):
        assert (await tool_names(session))[-2:] == ["box_add_companion", "box_reindex"]
        err, data = await call(session, "box_add_companion", {"binary": "files/report.pdf", "body": "A report."})
        assert not err, data
        assert data["entry"]["kind"] == "companion"
        assert data["entry"]["extra"]["box"]["companion_for"]["file_id"] == "files/report.pdf"
        (workspace / "files" / "_index.json").unlink()  # the companion sits beside its binary
        err, data = await call(session, "box_reindex", {})
        assert not err and data["errors"] == 0, data
    rows = json.loads((workspace / "files" / "_index.json").read_text(encoding="utf-8"))["entries"]
    assert [row["filename"] for row in rows] == ["companion__report-pdf-companion.md"]


def test_serve_names_the_review_tools_option_at_start_up(vault: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "serve", "--store", f"whitebox:{vault}"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,  # the client goes away at once: the server exits
        cwd=str(REPO),
        env={**os.environ, "MEMCORE_LOAD_PLUGINS": "whitebox"},
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "memcore: note: the whitebox review tools are not offered: whitebox_promote, whitebox_dispute, "
        "whitebox_propose_stable_edit (the user's review decisions; start the server with --review-tools "
        "to offer them)\n"
    ) in proc.stderr
