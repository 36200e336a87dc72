"""Settings and state: enabled, agent_read_enabled, incognito; decay as a visible rewrite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.errors import MemcoreError, ReadOnlyStoreError
from memcore.models import MemoryEntry, Status
from memcore_maka import IncognitoBlockedError, MakaProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "maka"


def test_defaults(tmp_path: Path) -> None:
    provider = MakaProvider(tmp_path / "MEMORY.md")
    state = provider.state
    assert (state.enabled, state.agent_read_enabled, state.incognito, state.status) == (True, False, False, "ok")
    # on/off options read true/false, 1/0, yes/no, on/off alike (BREAKIT W3); unknown: off.
    assert MakaProvider(tmp_path / "MEMORY.md", agent_read_enabled="maybe").agent_read_enabled is False
    assert MakaProvider(tmp_path / "MEMORY.md", agent_read_enabled=2).agent_read_enabled is False
    assert MakaProvider(tmp_path / "MEMORY.md", agent_read_enabled="true").agent_read_enabled is True
    # enabled: off only for a false value; incognito fails closed.
    assert MakaProvider(tmp_path / "MEMORY.md", enabled="yes").enabled is True
    assert MakaProvider(tmp_path / "MEMORY.md", enabled="false").enabled is False
    assert MakaProvider(tmp_path / "MEMORY.md", incognito="1").incognito is True
    assert MakaProvider(tmp_path / "MEMORY.md", incognito=False).incognito is False


def test_incognito_blocks_reads_and_writes_before_the_disk(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    provider = MakaProvider(folder / "MEMORY.md", incognito=True)
    assert provider.state.status == "incognito_blocked"
    for call in (
        lambda: list(provider.iter_entries()),
        lambda: provider.get("x"),
        lambda: provider.validate(),
        lambda: provider.add(MemoryEntry(title="t", body="b")),
        lambda: provider.delete("x"),
        lambda: provider.pending(),
        lambda: provider.propose(MemoryEntry(title="t", body="b")),
        lambda: provider.approve("proposal-x"),
    ):
        with pytest.raises(IncognitoBlockedError):
            call()
    assert issubclass(IncognitoBlockedError, ReadOnlyStoreError) and issubclass(IncognitoBlockedError, MemcoreError)
    assert not folder.exists()


def test_incognito_on_existing_file_leaves_it_alone(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes((SAMPLES / "fixture-session-scope.md").read_bytes())
    os.chmod(path, 0o000)  # any read attempt would fail with PermissionError, not IncognitoBlockedError
    try:
        provider = MakaProvider(path, incognito=True, agent_read_enabled=True)
        with pytest.raises(IncognitoBlockedError):
            list(provider.iter_entries())
        assert provider.render_prompt() == ""
    finally:
        os.chmod(path, 0o600)


def test_disabled_reads_nothing_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes((SAMPLES / "fixture-session-scope.md").read_bytes())
    before = path.read_bytes()
    provider = MakaProvider(path, enabled=False)
    assert provider.state.status == "disabled"
    assert list(provider.iter_entries()) == []
    with pytest.raises(ReadOnlyStoreError, match="disabled"):
        provider.add(MemoryEntry(title="t", body="b"))
    assert path.read_bytes() == before


def test_read_only_option(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## A\na\n", encoding="utf-8")
    with pytest.raises(ReadOnlyStoreError, match="read-only"):
        MakaProvider(path, read_only=True).archive("a")
    assert path.read_text(encoding="utf-8") == "## A\na\n"


def test_state_counts(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes((SAMPLES / "fixture-statuses-pending-rejected-unknown.md").read_bytes())
    state = MakaProvider(path).state
    assert (state.status, state.entry_count, state.active_count, state.archived_count) == ("ok", 4, 1, 0)


DECAYING = (
    "# Maka Memory\n\n"
    "## Expired\n<!-- maka-memory: id=old origin=manual createdAt=1000 status=active decayTtlMs=5000 -->\nold\n\n"
    "## Fresh\n<!-- maka-memory: id=new origin=manual createdAt=1000 decayTtlMs=99999999999999 -->\nnew\n"
)


def test_decay_archives_on_next_load_as_a_visible_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(DECAYING, encoding="utf-8")
    provider = MakaProvider(path)
    old, new = provider.iter_entries()
    assert (old.status, new.status) == (Status.ARCHIVED, Status.ACTIVE)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[3].startswith("<!-- maka-memory: id=old origin=manual createdAt=1000 updatedAt=")
    assert "status=archived archivedAt=" in lines[3]
    assert "archiveReason=decayTtlMs-expired decayTtlMs=5000 -->" in lines[3]
    assert lines[6:] == [
        "## Fresh",
        "<!-- maka-memory: id=new origin=manual createdAt=1000 decayTtlMs=99999999999999 -->",
        "new",
        "",
    ]
    assert provider.backup_path.read_text(encoding="utf-8") == DECAYING
    assert oct(path.stat().st_mode & 0o777) == oct(0o600) and oct(tmp_path.stat().st_mode & 0o777) == oct(0o700)
    assert old.expires_at is not None and old.created_at is not None
    assert (old.expires_at - old.created_at).total_seconds() == 5


def test_no_decay_when_it_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(DECAYING, encoding="utf-8")
    for options in ({"read_only": True}, {"apply_decay": False}):
        old, _ = MakaProvider(path, **options).iter_entries()
        assert old.status is Status.ACTIVE
    assert path.read_text(encoding="utf-8") == DECAYING
