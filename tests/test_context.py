"""memcore.context.build_context and `memcore context`: ranking, budget, truncation, gates."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memcore import Kind, MemoryEntry, Status
from memcore.context import (
    MIN_BUDGET,
    TRUNCATION_MARKER,
    agent_read_denied,
    build_context,
    rank_entries,
    render_entry,
    score_entries,
    tokenize,
)

FIXTURES = Path(__file__).resolve().parent / "mcp_fixtures"
LAUNCH = FIXTURES / "launch.py"

_spec = importlib.util.spec_from_file_location("memcore_context_test_jsonl", FIXTURES / "jsonl_provider.py")
assert _spec is not None and _spec.loader is not None
jsonl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jsonl)
JsonlProvider = jsonl.JsonlProvider


def entry(i: int, title: str, body: str, **kw: Any) -> MemoryEntry:
    return MemoryEntry(id=f"e{i}", title=title, body=body, created_at=f"2026-01-{i:02d}T00:00:00Z", **kw)


ENTRIES = [
    entry(1, "Editor", "Alex prefers vim keybindings.", kind=Kind.PREFERENCE, tags=["editor"]),
    entry(2, "Deploys", "Never deploy on Friday. Deploy windows: Monday to Thursday.", tags=["ops", "deploy"]),
    entry(3, "Lunch", "Team lunch is on Friday.", tags=["team"]),
    entry(4, "Old deploy rule", "Deploy any day.", status=Status.SUPERSEDED),
    entry(5, "Expired", "Deploy freeze this week.", expires_at="2026-01-10T00:00:00Z"),
    entry(6, "Secret", "Deploy key is hunter2.", scope="sensitive"),
    entry(7, "Archived", "Deploy via FTP.", status=Status.ARCHIVED),
]


def make_store(path: Path, entries: list[MemoryEntry]) -> Path:
    path.write_text("".join(json.dumps(e.content_dict()) + "\n" for e in entries), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path / "m.jsonl", ENTRIES)


def test_tokenize_and_score_formula() -> None:
    assert tokenize("Deploy-Friday, x ÄRGER a1") == ["deploy", "friday", "ärger", "a1"]
    scored = score_entries(ENTRIES[:3], "deploy friday")
    # df(deploy)=1, df(friday)=2 over N=3; e2: title "Deploys" (no stemming: 0), tags 1x deploy,
    # body 2x deploy + 1x friday
    idf_deploy, idf_friday = math.log(1 + 3 / 1), math.log(1 + 3 / 2)
    assert [e.id for _, e in scored] == ["e2", "e3", "e1"]
    assert scored[0][0] == pytest.approx(idf_deploy * (0 + 2 * 1 + 2) + idf_friday * 1)
    assert scored[1][0] == pytest.approx(idf_friday * 1)
    assert scored[2][0] == 0.0
    # no query: most recent first
    assert [e.id for e in rank_entries(ENTRIES[:3])] == ["e3", "e2", "e1"]


def test_block_has_active_visible_entries_ranked(store: Path) -> None:
    with JsonlProvider(str(store)) as provider:
        block = build_context(provider, query="when can we deploy?")
    assert block == (
        "# Memory\n\n" + render_entry(ENTRIES[1]) + "\n" + render_entry(ENTRIES[2]) + "\n" + render_entry(ENTRIES[0])
    )
    assert "hunter2" not in block and "FTP" not in block and "any day" not in block and "freeze" not in block
    assert render_entry(ENTRIES[0]) == (
        "## Editor\nid: e1 · kind: preference · tags: editor · updated: 2026-01-01\n\nAlex prefers vim keybindings.\n"
    )
    with JsonlProvider(str(store), scope="sensitive") as provider:
        assert "hunter2" in build_context(provider, query="deploy")


def test_budget_truncates_with_a_visible_marker(store: Path) -> None:
    with JsonlProvider(str(store)) as provider:
        full = build_context(provider, query="deploy")
        assert TRUNCATION_MARKER.split("{")[0] not in full
        for budget in range(MIN_BUDGET, len(full) + 5):
            block = build_context(provider, query="deploy", budget=budget)
            assert len(block) <= budget
            if budget >= len(full):
                assert block == full
            else:
                assert block.startswith("# Memory\n\n## Deploys\n")
                shown = block.count("\n## ")
                assert block.endswith("\n\n" + TRUNCATION_MARKER.format(shown=shown, total=3))
        block = build_context(provider, query="deploy", budget=260)
    assert block == (
        "# Memory\n\n## Deploys\nid: e2 · kind: note · tags: ops, deploy · updated: 2026-01-02\n\n"
        "Never deploy on Friday. Deploy windows: Monday to Thursday.\n\n"
        "[memory truncated: 1 of 3 entries shown; raise the budget to see more]"
    )


def test_long_entry_is_cut_not_dropped(tmp_path: Path) -> None:
    body = "\n".join(f"line {i}: " + "word " * 10 for i in range(200))
    store = make_store(tmp_path / "m.jsonl", [entry(1, "Long", body)])
    with JsonlProvider(str(store)) as provider:
        block = build_context(provider, budget=1000)
    assert len(block) <= 1000
    assert block.startswith("# Memory\n\n## Long\n") and "line 0: word" in block
    assert block.endswith(" …\n\n[memory truncated: 1 of 1 entries shown; raise the budget to see more]")


def test_gates_and_limits(store: Path, tmp_path: Path) -> None:
    with JsonlProvider(str(store), agent_read_enabled=False) as provider:
        assert agent_read_denied(provider) == (
            f"jsonl-test: agent read is off for {store}; nothing is served to agents until the store's "
            "agent-read switch is turned on (-o agent_read_enabled=true)"
        )
        assert build_context(provider, query="deploy") == ""
    with JsonlProvider(str(store)) as provider:
        with pytest.raises(ValueError, match="budget must be at least 200 characters, got 199"):
            build_context(provider, budget=199)
    empty = make_store(tmp_path / "empty.jsonl", [])
    with JsonlProvider(str(empty)) as provider:
        assert build_context(provider) == ""

    class Incognito(JsonlProvider):  # type: ignore[misc, valid-type]
        incognito = True

    class Hooked(JsonlProvider):  # type: ignore[misc, valid-type]
        incognito = True  # the method wins over the attributes

        def agent_read_denied(self) -> str | None:
            return None

    with Incognito(str(store)) as provider:
        assert agent_read_denied(provider) == (
            f"jsonl-test: incognito is active for {store}; agents can neither read nor write it "
            "(open it without -o incognito=true)"
        )
        assert build_context(provider) == ""
    with Hooked(str(store)) as provider:
        assert agent_read_denied(provider) is None and build_context(provider).startswith("# Memory")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    # Only the test provider: entry-point plugins (the formats) are not what this test is about.
    env = {**os.environ, "MEMCORE_LOAD_PLUGINS": "jsonl-test"}
    return subprocess.run(
        [sys.executable, str(LAUNCH), *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def test_context_command(store: Path) -> None:
    url = f"jsonl-test:{store}"
    proc = run_cli("context", "--store", url, "--query", "deploy", "--budget", "260", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["store"] == url and data["query"] == "deploy" and data["budget"] == 260
    assert data["truncated"] is True and data["denied"] is None and data["chars"] == len(data["context"]) <= 260

    proc = run_cli("context", "--store", url, "-q", "vim")
    assert proc.returncode == 0 and proc.stdout.startswith("# Memory\n\n## Editor\n") and proc.stdout.endswith("\n")

    proc = run_cli("context", "--store", url, "-o", "agent_read_enabled=false")
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.startswith("memcore: note: jsonl-test: agent read is off for ")

    proc = run_cli("context", "--store", url, "--budget", "10")
    assert proc.returncode == 2 and "10 is not in the range x>=200" in proc.stderr


def test_python_dash_m_memcore_runs_the_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "context", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "--budget" in proc.stdout and "--query" in proc.stdout


def test_agent_view_hides_and_redacts(tmp_path: Path) -> None:
    class Rules(JsonlProvider):  # type: ignore[misc, valid-type]
        def agent_view(self, entry: MemoryEntry) -> MemoryEntry | None:
            if entry.scope == "session":
                return None
            return entry.model_copy(update={"body": entry.body.replace("hunter2", "[redacted]")})

    store = make_store(
        tmp_path / "m.jsonl",
        [entry(1, "Key", "Deploy key hunter2."), entry(2, "Mine", "Session-only note.", scope="session")],
    )
    with Rules(str(store)) as provider:
        block = build_context(provider)
    assert block == "# Memory\n\n" + render_entry(entry(1, "Key", "Deploy key [redacted]."))
