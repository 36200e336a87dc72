"""`memcore serve` on each of the four formats, driven by the MCP SDK's real stdio client.

For each format: list tools, add an entry, recall it, and check the store's files changed as the
format requires; then the format's gates through the server (WhiteBox scopes and sensitive/,
stable facts proposed not overwritten; Box-memory held memories; Maka agent read and incognito).
A format whose plugin is not installed is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from memcore.errors import MemcoreError
from memcore.mcp_server import CONTEXT_URI, entry_uri
from memcore.registry import get_registry

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples"
READ_TOOLS = ["recall", "get", "list", "graph", "recent", "validate"]
#: Tools that change one entry in place, offered wherever the format has update.
UPDATE_TOOLS = ["update", "edit", "insert", "rename", "move", "relate", "unrelate"]
ALL_TOOLS = ["remember", *READ_TOOLS[:3], *UPDATE_TOOLS, "supersede", "archive", "delete", *READ_TOOLS[3:]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def provider_class(fmt: str) -> Any:
    try:
        return get_registry().get(fmt)
    except MemcoreError as exc:
        pytest.skip(f"format {fmt!r} not available: {exc}")


@asynccontextmanager
async def serve(fmt: str, *args: str) -> AsyncIterator[ClientSession]:
    """Start `python -m memcore serve <args>` with only ``fmt``'s plugin loaded; yield a session."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcore", "serve", *args],
        cwd=str(REPO),
        env={"MEMCORE_LOAD_PLUGINS": fmt, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await session.call_tool(name, args)
    text = result.content[0].text  # type: ignore[union-attr]
    return (True, text) if result.is_error else (False, json.loads(text))


async def tool_names(session: ClientSession) -> list[str]:
    return [t.name for t in (await session.list_tools()).tools]


async def everything_served(session: ClientSession, queries: list[str]) -> str:
    """Return all text the server hands out through every read tool and every resource."""
    out = []
    for q in queries:
        for match in ("any", "all"):
            out.append(json.dumps(await call(session, "recall", {"text": q, "match": match, "limit": 500})))
    listed = await call(session, "list", {"limit": 1000})
    out.append(json.dumps(listed))
    for item in listed[1]["entries"]:
        out.append(json.dumps(await call(session, "get", {"id": item["id"]})))
    out.append(json.dumps(await call(session, "validate", {})))
    for res in (await session.list_resources()).resources:
        out.append((await session.read_resource(res.uri)).contents[0].text)  # type: ignore[union-attr]
    return "\n".join(out)


# -- WhiteBox -----------------------------------------------------------------------------------

SCOPES_MD = (
    "# Scopes\n\n- `work` — root, observations, projects, proposed\n- `private` — root, observations, sensitive\n"
)
SENSITIVE_MD = "---\ntags: [health]\n---\n\n# Health\n\nBlood type is AB-negative; see Dr. Okafor.\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    provider_class("whitebox")
    root = tmp_path / "vault"
    shutil.copytree(SAMPLES / "whitebox" / "vault-example", root)
    (root / "sensitive").mkdir()
    (root / "sensitive" / "health.md").write_text(SENSITIVE_MD, encoding="utf-8")
    (root / "scopes.md").write_text(SCOPES_MD, encoding="utf-8")
    return root


async def test_whitebox_remember_appends_a_fenced_observation(vault: Path) -> None:
    month = datetime.now(UTC).strftime("%Y-%m")
    log = vault / "observations" / f"{month}.md"
    before = log.read_text(encoding="utf-8") if log.exists() else ""
    identity = (vault / "identity.md").read_bytes()
    async with serve("whitebox", "--store", f"whitebox:{vault}", "--scope", "work") as session:
        # WhiteBox has no supersede/archive: not even listed
        assert await tool_names(session) == ["remember", *READ_TOOLS[:3], *UPDATE_TOOLS, *READ_TOOLS[3:]]
        err, data = await call(
            session,
            "remember",
            {"body": "Prefers short status updates on Fridays.", "tags": ["working-style"], "confidence": 0.7},
        )
        assert not err, data
        new_id = data["entry"]["id"]
        assert re.fullmatch(rf"observations/{month}\.md#\d+", new_id)
        err, found = await call(session, "recall", {"text": "status updates friday"})
        assert [e["id"] for e in found["entries"]][:1] == [new_id]

        # observations are append-only
        err, text = await call(session, "update", {"id": new_id, "body": "rewritten"})
        assert err and text.startswith("memcore: error: ")
        # a stable fact is proposed, not overwritten
        err, data = await call(session, "update", {"id": "identity.md", "body": "# Identity\n\n- Name: Alex\n"})
        assert not err, data
        assert (data["entry"]["kind"], data["entry"]["status"]) == ("proposal", "proposed")
        assert data["entry"]["id"].startswith("proposed/")
        assert {"type": "proposes", "target": "identity.md", "resolved": True} in data["entry"]["relations"]
    after = log.read_text(encoding="utf-8")
    assert after.startswith(before.rstrip())
    added = after[len(before.rstrip()) :]
    assert re.fullmatch(
        r"\n*(---\n\n)?(# Observations.*\n\n.*\n\n---\n\n)?```\n---\ndate: \d{4}-\d{2}-\d{2}\nsource: memcore-mcp\n"
        r"tags: \[\"working-style\"\]\nconfidence: high\n(.*\n)*---\n\nPrefers short status updates on Fridays\.\n```\n",
        added,
    ), added
    assert (vault / "identity.md").read_bytes() == identity
    proposals = list((vault / "proposed").glob("*.md"))
    assert len(proposals) == 1 and "- Name: Alex" in proposals[0].read_text(encoding="utf-8")


@pytest.mark.slow  # two servers and every read tool over every entry
@pytest.mark.parametrize("scope_args", [[], ["--scope", "work"]], ids=["no-scope", "scope-work"])
async def test_whitebox_sensitive_never_served_outside_its_scope(vault: Path, scope_args: list[str]) -> None:
    async with serve("whitebox", "--store", f"whitebox:{vault}", *scope_args) as session:
        served = await everything_served(session, ["blood type", "health okafor", "AB-negative"])
        err, text = await call(session, "get", {"id": "sensitive/health.md"})
        assert err and "sensitive/health.md" in text and "Blood" not in text
        with pytest.raises(MCPError):
            await session.read_resource(entry_uri("sensitive/health.md"))
        err, text = await call(session, "remember", {"kind": "fact", "title": "x", "body": "y", "parent": None})
        assert not err  # a fact lands in the scope, never in sensitive/
    assert "Blood" not in served and "Okafor" not in served and "sensitive/" not in served
    assert "Example observation" in served  # the rest of the vault is served
    assert sorted(p.name for p in (vault / "sensitive").iterdir()) == ["health.md"]

    async with serve("whitebox", "--store", f"whitebox:{vault}", "--scope", "private") as session:
        err, data = await call(session, "get", {"id": "sensitive/health.md"})
        assert not err and "AB-negative" in data["entry"]["body"]


# -- Box-memory ---------------------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    provider_class("box").init_store(str(tmp_path / "ws"))
    return tmp_path / "ws"


async def test_box_remember_writes_a_kind_slug_file_and_the_index(workspace: Path) -> None:
    index = workspace / "memories" / "_index.json"
    before = json.loads(index.read_text(encoding="utf-8"))
    async with serve("box", "--store", f"box:{workspace}") as session:
        assert await tool_names(session) == ALL_TOOLS
        err, data = await call(
            session,
            "remember",
            {"kind": "decision", "title": "Use Postgres 16", "body": "We standardise on Postgres 16.", "tags": ["db"]},
        )
        assert not err, data
        new_id = data["entry"]["id"]
        assert re.fullmatch(r"mem_[0-9A-HJKMNP-TV-Z]{26}", new_id)
        err, found = await call(session, "recall", {"text": "postgres"})
        assert [e["id"] for e in found["entries"]] == [new_id]

        err, held = await call(session, "remember", {"title": "Litigation note", "body": "On hold.", "status": "held"})
        assert not err, held
        held_id = held["entry"]["id"]
        held_file = workspace / "memories" / "note__litigation-note.md"
        held_bytes = held_file.read_bytes()
        for name, args in [
            ("update", {"id": held_id, "body": "changed"}),
            ("archive", {"id": held_id}),
            ("supersede", {"old_id": held_id, "title": "x", "body": "y"}),
        ]:
            err, text = await call(session, name, args)
            assert err and "legal hold" in text, (name, text)
        assert held_file.read_bytes() == held_bytes
    path = workspace / "memories" / "decision__use-postgres-16.md"
    assert path.is_file() and "We standardise on Postgres 16." in path.read_text(encoding="utf-8")
    after = json.loads(index.read_text(encoding="utf-8"))
    rows = {row["id"]: row for row in after["entries"]}
    assert len(after["entries"]) == len(before["entries"]) + 2
    assert rows[new_id]["filename"] == "decision__use-postgres-16.md" and rows[new_id]["kind"] == "decision"


# -- RightMemory --------------------------------------------------------------------------------


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    provider_class("rightmemory")
    root = tmp_path / "rm"
    shutil.copytree(SAMPLES / "rightmemory" / "test-fixture-extracted-test_graph", root)
    return root


async def test_rightmemory_remember_adds_one_node_line(graph: Path) -> None:
    before = (graph / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    others = {p.name: p.read_bytes() for p in graph.iterdir() if p.name != "MEMORY.md"}
    async with serve("rightmemory", "--store", f"rightmemory:{graph}") as session:
        assert await tool_names(session) == ALL_TOOLS
        err, data = await call(session, "remember", {"title": "Release train is weekly", "parent": "project"})
        assert not err, data
        new_id = data["entry"]["id"]
        err, found = await call(session, "recall", {"text": "release train"})
        assert [e["id"] for e in found["entries"]] == [new_id]
        assert found["entries"][0]["parent"] == "project"
        err, data = await call(session, "validate", {})
        assert not err and data["errors"] == 0
    text = (graph / "MEMORY.md").read_text(encoding="utf-8")
    after = text.splitlines()
    added = [line for line in after if line not in before]
    # one node line; memcore's fields RightMemory has no place for ride along in the file's header
    # (one line naming the node), before the first heading, where graph.py reads nothing
    node = f"- `{new_id}` Release train is weekly → []"
    assert node in added
    assert [line for line in added if line != node and line] in (
        [],
        ["<!-- memcore: items", *[line for line in added if line.startswith(f"{new_id} {{")], "-->"],
    )
    assert after[after.index(node) - 1] == "- `project-fact` Fact. → []"  # under its parent heading
    assert not re.search(r"^\s*<!-- memcore: \{", text, re.MULTILINE)
    assert {p.name: p.read_bytes() for p in graph.iterdir() if p.name != "MEMORY.md"} == others


# -- Maka ---------------------------------------------------------------------------------------


@pytest.fixture
def maka_file(tmp_path: Path) -> Path:
    provider_class("maka").init_store(str(tmp_path / "maka" / "MEMORY.md"))
    return tmp_path / "maka" / "MEMORY.md"


async def test_maka_remember_appends_a_section_when_agent_read_is_on(maka_file: Path) -> None:
    url = f"maka:{maka_file}"
    async with serve("maka", "--store", url, "-o", "agent_read_enabled=true") as session:
        assert await tool_names(session) == ALL_TOOLS
        err, data = await call(session, "remember", {"title": "Dark mode", "body": "Alex wants dark mode everywhere."})
        assert not err, data
        new_id = data["entry"]["id"]
        assert re.fullmatch(r"mem-[0-9a-f]{16}", new_id)
        err, found = await call(session, "recall", {"text": "dark mode"})
        assert [e["id"] for e in found["entries"]] == [new_id]
        context = (await session.read_resource(CONTEXT_URI)).contents[0].text  # type: ignore[union-attr]
        assert "Alex wants dark mode everywhere." in context
    text = maka_file.read_text(encoding="utf-8")
    assert re.fullmatch(
        rf"# Maka Memory\n\n## Dark mode\n<!-- maka-memory: id={new_id} origin=\w+ createdAt=\d{{13}} [^\n]*-->\n"
        r"Alex wants dark mode everywhere\.\n",
        text,
    ), text


@pytest.mark.parametrize(
    "options",
    [[], ["-o", "agent_read_enabled=false"], ["-o", "agent_read_enabled=true", "-o", "incognito=true"]],
    ids=["default", "agent-read-off", "incognito"],
)
async def test_maka_serves_nothing_unless_agent_read_is_on(maka_file: Path, options: list[str]) -> None:
    maka_file.write_text(
        "# Maka Memory\n\n## Secret plan\n<!-- maka-memory: id=mem-0123456789abcdef origin=manual "
        "createdAt=1700000000000 status=active -->\nThe surprise party is on June 3.\n",
        encoding="utf-8",
    )
    before = maka_file.read_bytes()
    async with serve("maka", "--store", f"maka:{maka_file}", *options) as session:
        assert await tool_names(session) == []  # every call would be refused: none is offered
        assert (await session.list_prompts()).prompts == []
        for name in ALL_TOOLS:
            args: dict[str, Any] = {"id": "mem-0123456789abcdef"} if name in ("get", "update", "archive") else {}
            if name == "supersede":
                args = {"old_id": "mem-0123456789abcdef", "title": "x", "body": "y"}
            if name == "remember":
                args = {"title": "x", "body": "y"}
            err, text = await call(session, name, args)
            assert err, name
            assert text.startswith(f"memcore: error: `{name}`: not available: maka: "), text
            assert "-o agent_read_enabled=true" in text or "-o incognito=true" in text
            assert "surprise" not in text
        assert (await session.list_resources()).resources == []
        with pytest.raises(MCPError):
            await session.read_resource(CONTEXT_URI)
    assert maka_file.read_bytes() == before


# -- memcore context on the real formats ---------------------------------------------------------


def context_cli(fmt: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcore", "context", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=str(REPO),
        env={**os.environ, "MEMCORE_LOAD_PLUGINS": fmt},
    )


def test_context_on_whitebox_never_shows_sensitive(vault: Path) -> None:
    for scope in ([], ["--scope", "work"]):
        proc = context_cli("whitebox", "--store", f"whitebox:{vault}", *scope, "--query", "blood type health")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("# Memory\n\n## ") and "Blood" not in proc.stdout
    proc = context_cli("whitebox", "--store", f"whitebox:{vault}", "--scope", "private", "-q", "blood type")
    assert proc.stdout.startswith("# Memory\n\n## Health\n") and "AB-negative" in proc.stdout


def test_context_on_maka_follows_agent_read(maka_file: Path) -> None:
    maka_file.write_text(
        "# Maka Memory\n\n## Dark mode\n<!-- maka-memory: id=mem-0123456789abcdef origin=manual "
        "createdAt=1700000000000 status=active -->\nAlex wants dark mode.\n",
        encoding="utf-8",
    )
    proc = context_cli("maka", "--store", f"maka:{maka_file}")
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.startswith("memcore: note: maka: agent read is off for ")
    proc = context_cli("maka", "--store", f"maka:{maka_file}", "-o", "agent_read_enabled=true", "--json")
    data = json.loads(proc.stdout)
    assert data["denied"] is None and data["context"] == (
        "# Memory\n\n## Dark mode\nid: mem-0123456789abcdef · kind: note · updated: 2023-11-14\n\n"
        "Alex wants dark mode.\n"
    )


async def test_maka_read_only_server_does_not_even_archive_expired_entries(maka_file: Path) -> None:
    text = (
        "# Maka Memory\n\n## Old promo\n<!-- maka-memory: id=mem-00000000000000aa origin=manual "
        "createdAt=1700000000000 status=active decayTtlMs=1000 -->\nPromo code expires soon.\n"
    )
    maka_file.write_text(text, encoding="utf-8")
    url = f"maka:{maka_file}"
    async with serve("maka", "--store", url, "-o", "agent_read_enabled=true", "--read-only") as session:
        assert await tool_names(session) == READ_TOOLS
        err, data = await call(session, "get", {"id": "mem-00000000000000aa"})
        assert not err and data["entry"]["expires_at"] == "2023-11-14T22:13:21Z"
        context = (await session.read_resource(CONTEXT_URI)).contents[0].text  # type: ignore[union-attr]
        assert context == ""  # expired: not in the prompt block
    assert maka_file.read_text(encoding="utf-8") == text  # and the file is untouched
    async with serve("maka", "--store", url, "-o", "agent_read_enabled=true") as session:
        err, data = await call(session, "get", {"id": "mem-00000000000000aa"})
        assert not err and data["entry"]["status"] == "archived"
    assert "status=archived" in maka_file.read_text(encoding="utf-8")  # Maka's visible decay rewrite


async def test_maka_propose_files_agent_writes_for_review(maka_file: Path) -> None:
    before = maka_file.read_bytes()
    url = f"maka:{maka_file}"
    async with serve("maka", "--store", url, "-o", "agent_read_enabled=true", "--propose") as session:
        err, data = await call(session, "remember", {"title": "Standup", "body": "Standup moved to 10:00."})
        assert not err and data["proposed"] is True, data
        proposal_id = data["entry"]["id"]
        assert re.fullmatch(r"proposal-[0-9a-f]{16}", proposal_id)
        assert data["entry"]["status"] == "review_required"
        err, found = await call(session, "recall", {"text": "standup"})
        assert found["entries"] == []  # not memory until the user approves it
    assert maka_file.read_bytes() == before
    pending = (maka_file.parent / "PENDING.md").read_text(encoding="utf-8")
    assert re.search(
        rf"## Standup\n<!-- maka-memory: id={proposal_id} proposalId={proposal_id} origin=extracted "
        r"source=chat_extracted [^\n]*status=review_required[^\n]*-->\nStandup moved to 10:00\.\n",
        pending,
    ), pending


def test_propose_is_refused_where_there_is_no_review_queue(vault: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "serve", "--store", f"whitebox:{vault}", "--propose"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "MEMCORE_LOAD_PLUGINS": "whitebox"},
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "memcore: error: whitebox: this format has no review queue for proposals; drop --propose "
        "(agent writes then follow the format's own rules)\n"
    )
