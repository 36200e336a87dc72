"""memcore serve, format-independent: in-process MCP client against the test-only provider,
plus the real CLI over stdio and streamable HTTP in subprocesses."""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from memcore import Capability, Kind, MemoryEntry, Status
from memcore.mcp_server import CONTEXT_URI, MemoryToolbox, create_server, entry_uri

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parent / "mcp_fixtures"
LAUNCH = FIXTURES / "launch.py"
REPO = Path(__file__).resolve().parents[1]

_spec = importlib.util.spec_from_file_location("memcore_mcp_test_jsonl", FIXTURES / "jsonl_provider.py")
assert _spec is not None and _spec.loader is not None
jsonl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jsonl)
JsonlProvider = jsonl.JsonlProvider


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_store(path: Path, entries: list[MemoryEntry]) -> Path:
    path.write_text("".join(json.dumps(e.content_dict()) + "\n" for e in entries), encoding="utf-8")
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


SECRET = MemoryEntry(
    id="s-1",
    kind=Kind.FACT,
    title="Bank PIN",
    body="the PIN is 4711",
    scope="sensitive",
    tags=["pin"],
    created_at="2026-01-02T00:00:00Z",
)
PUBLIC = [
    MemoryEntry(
        id="p-1",
        kind=Kind.PREFERENCE,
        title="Editor",
        body="Alex prefers vim keybindings in every editor.",
        tags=["editor"],
        created_at="2026-01-01T00:00:00Z",
    ),
    MemoryEntry(
        id="p-2",
        kind=Kind.DECISION,
        title="Deploys",
        body="No deploys on Friday afternoon; deploy Monday to Thursday.",
        tags=["ops"],
        created_at="2026-01-03T00:00:00Z",
    ),
    MemoryEntry(
        id="p-3",
        kind=Kind.FACT,
        title="Frozen",
        body="A held memory about the PIN policy.",
        status=Status.HELD,
        created_at="2026-01-04T00:00:00Z",
    ),
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return write_store(tmp_path / "mem.jsonl", [*PUBLIC, SECRET])


def toolbox(path: Path, *, read_only: bool = False, **options: Any) -> MemoryToolbox:
    return MemoryToolbox(
        lambda: JsonlProvider(str(path), **options).open(), read_only=read_only, scope=options.get("scope")
    )


@asynccontextmanager
async def inproc(path: Path, *, read_only: bool = False, **options: Any) -> AsyncIterator[Client]:
    async with Client(create_server(toolbox(path, read_only=read_only, **options))) as client:
        yield client


async def call(client: Client | ClientSession, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return True, text
    assert result.structured_content == json.loads(text)
    return False, json.loads(text)


# -- tools follow the store's capabilities and --read-only -----------------------------------

ALL_TOOLS = [
    "remember",
    "recall",
    "get",
    "list",
    "update",
    "edit",
    "insert",
    "rename",
    "move",
    "relate",
    "unrelate",
    "supersede",
    "archive",
    "delete",
    "graph",
    "recent",
    "validate",
]
READ_TOOLS = ["recall", "get", "list", "graph", "recent", "validate"]


async def test_tools_listed_follow_capabilities_and_read_only(store: Path) -> None:
    async with inproc(store) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == ALL_TOOLS

    async with inproc(store, read_only=True) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == READ_TOOLS
        err, text = await call(client, "remember", {"title": "x", "body": "y"})
    assert err and text == "memcore: error: `remember`: not available: the server runs with --read-only"
    assert len(lines(store)) == 4

    class AddOnly(JsonlProvider):  # type: ignore[misc, valid-type]
        capabilities = frozenset({Capability.ADD})

    server = create_server(MemoryToolbox(lambda: AddOnly(str(store)).open()))
    async with Client(server) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["remember", "recall", "get", "list", "graph", "recent", "validate"]
        err, text = await call(client, "archive", {"id": "p-1"})
    assert err and "lacks the archive capability" in text


async def test_input_schemas_come_from_the_models(store: Path) -> None:
    async with inproc(store) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    remember = tools["remember"].input_schema
    assert "$ref" not in json.dumps(remember) and "$defs" not in remember
    assert remember["additionalProperties"] is False
    assert remember["properties"]["kind"]["enum"] == [k.value for k in Kind]
    assert remember["properties"]["status"]["enum"] == [s.value for s in Status]
    assert remember["properties"]["confidence"]["anyOf"][0]["maximum"] == 1.0
    assert set(remember["properties"]) == {
        "kind",
        "title",
        "body",
        "status",
        "tags",
        "confidence",
        "source",
        "relations",
        "parent",
        "expires_at",
    }
    relation_item = remember["properties"]["relations"]["items"]
    assert set(relation_item["required"]) == {"type", "target"}
    assert tools["update"].input_schema["required"] == ["id"]
    assert tools["supersede"].input_schema["required"] == ["old_id"]
    recall = tools["recall"].input_schema["properties"]
    assert recall["kinds"]["anyOf"][0]["items"]["enum"] == [k.value for k in Kind]
    assert recall["limit"]["default"] == 20
    assert tools["recall"].annotations is not None and tools["recall"].annotations.read_only_hint is True
    assert tools["remember"].annotations is not None and tools["remember"].annotations.read_only_hint is False


# -- reads and writes go through the provider --------------------------------------------------


async def test_write_tools_change_the_store_through_the_provider(store: Path) -> None:
    async with inproc(store) as client:
        err, data = await call(
            client,
            "remember",
            {"kind": "fact", "title": "Coffee", "body": "Alex drinks oat-milk flat whites.", "tags": ["food"]},
        )
        assert not err
        new_id = data["entry"]["id"]
        assert data["entry"]["source"] == "memcore-mcp"
        on_disk = lines(store)
        assert len(on_disk) == 5 and on_disk[-1]["id"] == new_id and on_disk[-1]["body"].startswith("Alex drinks")

        err, got = await call(client, "get", {"id": new_id})
        assert not err and got["entry"]["title"] == "Coffee"
        version = got["entry"]["version"]

        err, data = await call(client, "update", {"id": new_id, "tags": ["food", "drink"], "expected_version": version})
        assert not err and data["entry"]["tags"] == ["food", "drink"] and data["entry"]["body"].startswith("Alex")
        assert lines(store)[-1]["tags"] == ["food", "drink"]

        err, text = await call(client, "update", {"id": new_id, "title": "Tea", "expected_version": version})
        assert err and text == f"memcore: error: jsonl-test: entry {new_id!r} changed since it was read"
        assert lines(store)[-1]["title"] == "Coffee"

        err, data = await call(
            client, "supersede", {"old_id": "p-1", "title": "Editor", "body": "Alex moved to emacs."}
        )
        assert not err
        by_id = {e["id"]: e for e in lines(store)}
        assert by_id["p-1"]["status"] == "superseded"
        assert {"type": "supersedes", "target": "p-1", "resolved": True} in by_id[data["entry"]["id"]]["relations"]

        err, data = await call(client, "archive", {"id": "p-2"})
        assert not err and data["entry"]["status"] == "archived"
        assert {e["id"]: e for e in lines(store)}["p-2"]["status"] == "archived"


async def test_provider_refusals_come_back_as_tool_errors(store: Path) -> None:
    before = store.read_bytes()
    async with inproc(store) as client:
        err, text = await call(client, "update", {"id": "p-3", "body": "changed"})
        assert err and text == "memcore: error: jsonl-test: entry 'p-3' is held and cannot change"
        err, text = await call(client, "get", {"id": "nope"})
        assert err and text == f"memcore: error: jsonl-test: no entry 'nope' in {store}"
        err, text = await call(client, "remember", {"title": "x", "confidence": 3})
        assert err and text == (
            "memcore: error: invalid arguments for `remember`: confidence: Input should be less than or equal to 1"
        )
        err, text = await call(client, "remember", {"title": "x", "colour": "red"})
        assert err and "colour: Extra inputs are not permitted" in text
        err, text = await call(client, "frobnicate", {})
        assert err and text == "memcore: error: `frobnicate`: unknown tool"
    assert store.read_bytes() == before


async def test_recall_ranks_any_word_and_all_words(store: Path) -> None:
    async with inproc(store) as client:
        err, data = await call(client, "recall", {"text": "which days can we deploy?"})
        assert not err and [e["id"] for e in data["entries"]] == ["p-2"]
        err, data = await call(client, "recall", {"text": "Alex editor deploy", "match": "all"})
        assert not err and data["entries"] == []
        err, data = await call(client, "recall", {"text": "editor vim", "kinds": ["preference"]})
        assert [e["id"] for e in data["entries"]] == ["p-1"]
        assert data["entries"][0]["body"] == PUBLIC[0].body
        err, data = await call(client, "recall", {"text": "editor", "kinds": ["decision"]})
        assert data["entries"] == []
        err, data = await call(client, "list", {"limit": 2})
        assert [e["id"] for e in data["entries"]] == ["p-1", "p-2"] and data["next_offset"] == 2
        assert data["entries"][0] == {
            "id": "p-1",
            "kind": "preference",
            "status": "active",
            "title": "Editor",
            "tags": ["editor"],
            "updated_at": "2026-01-01T00:00:00Z",
        }
        err, data = await call(client, "list", {"offset": 2})
        assert [e["id"] for e in data["entries"]] == ["p-3"] and "next_offset" not in data
        err, data = await call(client, "validate", {})
        assert not err and data == {"diagnostics": [], "errors": 0}


# -- gates -----------------------------------------------------------------------------------------


async def test_scope_gate_nothing_from_sensitive_through_any_tool_or_resource(store: Path) -> None:
    async with inproc(store) as client:
        seen: list[str] = []
        for name, args in [
            ("recall", {"text": "pin"}),
            ("recall", {"text": "bank pin", "match": "all"}),
            ("list", {}),
            ("list", {"tags_any": ["pin"]}),
            ("get", {"id": "s-1"}),
            ("validate", {}),
        ]:
            err, data = await call(client, name, args)
            seen.append(json.dumps(data) if not err else data)
        resources = (await client.list_resources()).resources
        for res in resources:
            seen.append((await client.read_resource(res.uri)).contents[0].text)  # type: ignore[union-attr]
        with pytest.raises(MCPError, match="no entry 's-1'"):
            await client.read_resource(entry_uri("s-1"))
        err, text = await call(client, "update", {"id": "s-1", "body": "leak?"})
        assert err and "no entry 's-1'" in text
        err, text = await call(client, "remember", {"title": "x"})
        assert not err
    blob = "\n".join(seen)
    assert "4711" not in blob and "Bank PIN" not in blob and "s-1" not in blob.replace("'s-1'", "")
    assert {r.uri for r in resources} == {CONTEXT_URI, *(entry_uri(e.id or "") for e in PUBLIC)}
    assert "Alex prefers vim" in blob  # the gate hides the sensitive entry only

    async with inproc(store, scope="sensitive") as client:
        err, data = await call(client, "get", {"id": "s-1"})
        assert not err and data["entry"]["body"] == "the PIN is 4711"


async def test_agent_read_off_offers_nothing_and_names_the_option(store: Path) -> None:
    before = store.read_bytes()
    denied = (
        f"jsonl-test: agent read is off for {store}; nothing is served to agents "
        "until the store's agent-read switch is turned on (-o agent_read_enabled=true)"
    )
    async with Client(create_server(toolbox(store, agent_read_enabled=False))) as client:
        assert client.instructions is not None
        assert client.instructions.endswith(f"\nGate: no tool, prompt or resource is offered: {denied}")
        assert (await client.list_tools()).tools == []
        assert (await client.list_prompts()).prompts == []
        for name, args in [("recall", {"text": "vim"}), ("get", {"id": "p-1"}), ("delete", {"id": "p-1"})]:
            err, text = await call(client, name, args)
            assert err and text == f"memcore: error: `{name}`: not available: {denied}", name
        assert (await client.list_resources()).resources == []
        for uri in (CONTEXT_URI, entry_uri("p-1")):
            with pytest.raises(MCPError, match="agent read is off"):
                await client.read_resource(uri)
    assert store.read_bytes() == before


async def test_resources_render_entries(store: Path) -> None:
    async with inproc(store) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memcore://entries/{id}"]
        text = (await client.read_resource(entry_uri("p-2"))).contents[0].text  # type: ignore[union-attr]
        assert text == (
            "## Deploys\nid: p-2 · kind: decision · tags: ops · updated: 2026-01-03\n\n"
            "No deploys on Friday afternoon; deploy Monday to Thursday.\n"
        )
        context = (await client.read_resource(CONTEXT_URI)).contents[0].text  # type: ignore[union-attr]
        assert context.startswith("# Memory\n\n## Deploys\n")  # most recent active first
        assert "Frozen" not in context  # held is not active
        with pytest.raises(MCPError, match="unknown resource"):
            await client.read_resource("file:///etc/passwd")


# -- the real CLI in a subprocess ---------------------------------------------------------------


#: Only the test provider in the subprocess: entry-point plugins (the formats) are not what these
#: tests are about (tests/test_mcp_formats.py drives those).
ONLY_FIXTURE = {"MEMCORE_LOAD_PLUGINS": "jsonl-test"}


def launch_params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(LAUNCH), *args], cwd=str(REPO), env=ONLY_FIXTURE)


async def test_stdio_subprocess_with_the_real_sdk_client(store: Path) -> None:
    async with stdio_client(launch_params("serve", "--store", f"jsonl-test:{store}")) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "memcore"
            tools = [t.name for t in (await session.list_tools()).tools]
            assert tools == ALL_TOOLS
            err, data = await call(session, "remember", {"title": "Standup", "body": "Standup is at 9:30 CET."})
            assert not err
            err, found = await call(session, "recall", {"text": "when is standup"})
            assert [e["id"] for e in found["entries"]] == [data["entry"]["id"]]
            err, text = await call(session, "get", {"id": "s-1"})
            assert err and "no entry 's-1'" in text
    assert lines(store)[-1]["body"] == "Standup is at 9:30 CET."


@pytest.mark.slow  # two servers
async def test_stdio_subprocess_read_only_and_options(store: Path) -> None:
    args = ("serve", "--store", f"jsonl-test:{store}", "--read-only", "--scope", "sensitive")
    async with stdio_client(launch_params(*args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            assert [t.name for t in (await session.list_tools()).tools] == READ_TOOLS
            err, data = await call(session, "recall", {"text": "pin"})
            assert [e["id"] for e in data["entries"]] == ["s-1", "p-3"]
    args = ("serve", "--store", f"jsonl-test:{store}", "-o", "agent_read_enabled=false")
    async with stdio_client(launch_params(*args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            err, text = await call(session, "recall", {"text": "vim"})
            assert err and "agent read is off" in text


def test_serve_refuses_a_missing_store(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(LAUNCH), "serve", "--store", f"jsonl-test:{tmp_path / 'none.jsonl'}"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **ONLY_FIXTURE},
    )
    assert proc.returncode == 1
    assert proc.stderr == f"memcore: error: jsonl-test: no store file at {tmp_path / 'none.jsonl'}\n"
    assert proc.stdout == ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_streamable_http_subprocess_bound_to_loopback(store: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCH), "serve", "--store", f"jsonl-test:{store}", "--http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **ONLY_FIXTURE},
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline().decode()  # printed before the server starts listening
        assert first == f"memcore: serving jsonl-test:{store} at http://127.0.0.1:{port}/mcp\n"
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await anyio.sleep(0.1)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "remember" in names
            err, _data = await call(client, "remember", {"title": "Via HTTP", "body": "over streamable HTTP"})
            assert not err
        assert lines(store)[-1]["title"] == "Via HTTP"
        # DNS-rebinding protection: a page on another origin / host name cannot reach the store
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

        def post(**extra: str) -> int:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request("POST", "/mcp", body=json.dumps(hello), headers={**headers, **extra})
                return conn.getresponse().status
            finally:
                conn.close()

        evil_host = await anyio.to_thread.run_sync(lambda: post(Host="evil.example"))
        evil_origin = await anyio.to_thread.run_sync(lambda: post(Origin="http://evil.example"))
        good = await anyio.to_thread.run_sync(lambda: post())
        assert (evil_host, evil_origin, good) == (421, 403, 200)
        listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
        if listening:  # ss is available: the socket is bound to loopback only
            assert listening.split()[3] == f"127.0.0.1:{port}"  # local address column
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


class PerEntryRules(JsonlProvider):  # type: ignore[misc, valid-type]
    """Hides entries private to a session and redacts a secret, as a provider's agent_view may."""

    def agent_view(self, entry: MemoryEntry) -> MemoryEntry | None:
        if entry.scope == "session":
            return None
        return entry.model_copy(update={"body": entry.body.replace("hunter2", "[redacted]")})


async def test_agent_view_hides_and_redacts_single_entries(tmp_path: Path) -> None:
    path = write_store(
        tmp_path / "m.jsonl",
        [
            MemoryEntry(id="w-1", title="Deploy key", body="The deploy key is hunter2."),
            MemoryEntry(
                id="x-1", title="Session note", body="Only for session 42: the launch slipped.", scope="session"
            ),
        ],
    )
    before = path.read_bytes()
    server = create_server(MemoryToolbox(lambda: PerEntryRules(str(path)).open()))
    async with Client(server) as client:
        served = []
        for name, args in [
            ("recall", {"text": "deploy key launch session"}),
            ("recall", {"text": "launch", "match": "all"}),
            ("list", {}),
            ("get", {"id": "w-1"}),
        ]:
            err, data = await call(client, name, args)
            assert not err
            served.append(json.dumps(data))
        for res in (await client.list_resources()).resources:
            served.append((await client.read_resource(res.uri)).contents[0].text)  # type: ignore[union-attr]
        for name, args in [
            ("get", {"id": "x-1"}),
            ("update", {"id": "x-1", "body": "changed"}),
            ("archive", {"id": "x-1"}),
            ("supersede", {"old_id": "x-1", "title": "t", "body": "b"}),
        ]:
            err, text = await call(client, name, args)
            assert err and text == f"memcore: error: jsonl-test: no entry 'x-1' in {path}", name
        with pytest.raises(MCPError, match="no entry 'x-1'"):
            await client.read_resource(entry_uri("x-1"))
    blob = "\n".join(served)
    assert "The deploy key is [redacted]." in blob
    assert "hunter2" not in blob and "launch slipped" not in blob and "x-1" not in blob
    assert path.read_bytes() == before


def test_serve_without_the_sdk_says_what_to_install(store: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
        "from memcore.cli import main\n"
        f"main(['serve', '--store', 'jsonl-test:{store}'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("memcore: error: `memcore serve` needs the MCP SDK (")
    assert proc.stderr.endswith(
        "is missing): from a memcore checkout `pip install -e '.[mcp]'`; once published on PyPI `pip install 'memcore-unified[mcp]'`\n"
    )


async def test_a_provider_bug_is_a_tool_error_and_the_server_keeps_serving(store: Path) -> None:
    class Buggy(JsonlProvider):  # type: ignore[misc, valid-type]
        def search(self, query: Any) -> list[MemoryEntry]:
            raise RuntimeError("index exploded")

    async with Client(create_server(MemoryToolbox(lambda: Buggy(str(store)).open()))) as client:
        err, text = await call(client, "recall", {"text": "vim", "match": "all"})
        assert err and text == "memcore: internal error in `recall`: RuntimeError: index exploded"
        err, data = await call(client, "recall", {"text": "vim"})  # match=any reads, does not search
        assert not err and [e["id"] for e in data["entries"]] == ["p-1"]
