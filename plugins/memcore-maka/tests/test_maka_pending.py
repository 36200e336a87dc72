"""PENDING.md proposals: propose, approve into MEMORY.md as active, reject; and the CLI group."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import _load_plugin_commands, cli
from memcore.errors import ConflictError, EntryNotFoundError
from memcore.models import Kind, MemoryEntry, Status
from memcore_maka import MakaProvider, stable_proposal_id
from memcore_maka._parse import parse_document

T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)


def modes(provider: MakaProvider) -> set[tuple[str, int]]:
    folder = provider.path.parent
    out = {(p.name, stat.S_IMODE(p.stat().st_mode)) for p in folder.iterdir()}
    return out | {(".", stat.S_IMODE(folder.stat().st_mode))}


def meta_of(path: Path, entry_id: str) -> dict[str, str]:
    doc = parse_document(path.read_text(encoding="utf-8"))
    [section] = [s for s in doc.entries if s.id == entry_id]
    return dict(section.meta or {})


@pytest.fixture
def provider(tmp_path: Path) -> MakaProvider:
    return MakaProvider(tmp_path / "memory" / "MEMORY.md", agent_read_enabled=True)


def test_propose_writes_a_review_required_proposal(provider: MakaProvider) -> None:
    proposal = provider.propose(
        MemoryEntry(
            title="Theme preference", body="Remember dark mode preference.", created_at=T0, kind=Kind.PREFERENCE
        )
    )
    assert proposal.id == stable_proposal_id("Remember dark mode preference.", 1700000000000)
    assert proposal.id == "proposal-e6ab8f36e9096a9f"
    assert proposal.status is Status.REVIEW_REQUIRED and proposal.kind is Kind.PREFERENCE
    text = provider.pending_path.read_text(encoding="utf-8")
    assert text.startswith("# Maka Pending Memory\n\n## Theme preference\n")
    meta = meta_of(provider.pending_path, proposal.id or "")
    assert {k: meta[k] for k in ("id", "proposalId", "origin", "source", "proposedAt", "status", "scope")} == {
        "id": "proposal-e6ab8f36e9096a9f",
        "proposalId": "proposal-e6ab8f36e9096a9f",
        "origin": "extracted",
        "source": "chat_extracted",
        "proposedAt": "1700000000000",
        "status": "review_required",
        "scope": "workspace",
    }
    assert [p.id for p in provider.pending()] == [proposal.id]
    assert not provider.path.exists()  # nothing reaches MEMORY.md (nor the prompt) before approval
    assert provider.render_prompt() == ""
    assert modes(provider) == {(".", 0o700), ("PENDING.md", 0o600)}


def test_approve_moves_it_into_memory_as_active(provider: MakaProvider) -> None:
    proposal = provider.propose(
        MemoryEntry(
            title="Session tool",
            body="Use the session toolchain.",
            scope="session",
            extra={"maka": {"sessionId": "session-123", "sourceTurnId": "turn-1"}},
            tags=["tools"],
        )
    )
    entry = provider.approve(proposal.id or "", entry_id="mem-session123")
    assert (entry.id, entry.status, entry.source, entry.scope, entry.tags) == (
        "mem-session123",
        Status.ACTIVE,
        "extracted",
        "session",
        ["tools"],
    )
    meta = meta_of(provider.path, "mem-session123")
    assert meta["proposalId"] == proposal.id
    assert meta["source"] == "chat_extracted" and meta["approvedBy"] == "user"
    assert meta["approvalSurface"] == "settings_review_queue"
    assert meta["sessionId"] == "session-123" and meta["sourceTurnId"] == "turn-1"
    assert meta["createdAt"] == meta["updatedAt"] == meta["confirmedAt"]
    assert "proposedAt" not in meta
    assert provider.pending() == [] and "Session tool" not in provider.pending_path.read_text(encoding="utf-8")
    assert provider.render_prompt() == ""
    assert "session toolchain" in provider.render_prompt(session_id="session-123")
    with pytest.raises(EntryNotFoundError):
        provider.approve(proposal.id or "")
    assert modes(provider) == {(".", 0o700), ("MEMORY.md", 0o600), ("PENDING.md", 0o600), ("PENDING.md.bak", 0o600)}


def test_approve_default_id_and_reject(provider: MakaProvider) -> None:
    keep = provider.propose(MemoryEntry(title="Keep", body="Keep me."))
    drop = provider.propose(MemoryEntry(title="Drop", body="Do not save this."))
    rejected = provider.reject(drop.id or "")
    assert rejected.status is Status.REJECTED
    meta = meta_of(provider.pending_path, drop.id or "")
    assert meta["status"] == "rejected" and int(meta["rejectedAt"]) > 0
    with pytest.raises(ConflictError, match="not pending"):
        provider.approve(drop.id or "")
    with pytest.raises(ConflictError):
        provider.reject(drop.id or "")
    entry = provider.approve(keep.id or "")
    assert (entry.id or "").startswith("mem-") and len(entry.id or "") == 20
    assert [e.id for e in provider.iter_entries()] == [entry.id]
    assert [p.id for p in provider.proposals()] == [drop.id]
    assert "Do not save this" not in provider.render_prompt()
    assert all(mode == (0o700 if name == "." else 0o600) for name, mode in modes(provider))


def test_cli_group(tmp_path: Path) -> None:
    _load_plugin_commands()
    location = tmp_path / "memory" / "MEMORY.md"
    provider = MakaProvider(location)
    provider.add(MemoryEntry(title="Visible", body="Prefer direct answers.", tags=["style"]))
    proposal = provider.propose(MemoryEntry(title="Proposed", body="Proposed body."))
    store = f"maka:{location}"
    runner = CliRunner()
    result = runner.invoke(cli, ["maka", "pending", "--store", store, "--json"])
    assert result.exit_code == 0, result.output
    assert [p["id"] for p in json.loads(result.output)] == [proposal.id]
    result = runner.invoke(cli, ["maka", "render", "--store", store])
    assert result.exit_code == 0 and result.output == "\n"  # agent read is off by default
    result = runner.invoke(cli, ["maka", "render", "--store", store, "-o", "agent_read_enabled=true"])
    assert result.output == "## Visible\nTags: style\nPrefer direct answers.\n"
    result = runner.invoke(cli, ["maka", "approve", proposal.id or "", "--store", store, "--entry-id", "mem-cli123"])
    assert result.exit_code == 0 and "mem-cli123" in result.output
    result = runner.invoke(cli, ["maka", "reject", "proposal-missing", "--store", store])
    assert result.exit_code == 1 and "no entry 'proposal-missing'" in result.output
    result = runner.invoke(cli, ["maka", "state", "--store", store, "--json"])
    assert json.loads(result.output)["entry_count"] == 2
