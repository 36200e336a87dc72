"""Regressions for the adversarial tester's findings (C3, D4, W2, W3, W8) against files in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.errors import ConfigError, UnsafePathError
from memcore.models import MemoryEntry
from memcore_maka import MakaProvider


def _one_entry(path: Path, meta: str) -> Path:
    path.write_text(f"# Maka Memory\n\n## A\n<!-- maka-memory: id=a {meta} -->\nx\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "meta",
    [
        "createdAt=1700000000000 decayTtlMs=300000000000000",
        "createdAt=1 decayTtlMs=1e17",
        "createdAt=0x10 decayTtlMs=1e308",
    ],
)
def test_c3_huge_decay_ttl_reads_as_unset_with_a_warning(tmp_path: Path, meta: str) -> None:
    path = _one_entry(tmp_path / "M.md", meta)
    provider = MakaProvider(path)
    [entry] = list(provider.iter_entries())
    assert entry.id == "a"
    assert entry.expires_at is None
    assert entry.extra["maka"]["decayTtlMs"] == meta.split("decayTtlMs=")[1]
    bad = [d for d in provider.validate() if d.code == "maka.bad-value"]
    assert [(d.line, d.entry_id) for d in bad] == [(4, "a")]
    assert "decayTtlMs" in bad[0].message


def test_w2_reserved_store_file_name_can_be_read(tmp_path: Path) -> None:
    path = _one_entry(tmp_path / "nul.md", "createdAt=1700000000000")
    provider = MakaProvider(path)
    assert [e.id for e in provider.iter_entries()] == ["a"]
    assert provider.validate() == []
    # a write would need nul.md.bak, a name memcore refuses: fails closed, file untouched
    before = path.read_bytes()
    with pytest.raises(UnsafePathError):
        provider.add(MemoryEntry(title="t", body="b"))
    assert path.read_bytes() == before


@pytest.mark.parametrize("off", [False, 0, "0", "false", "False", "no", "off", " OFF "])
def test_w3_switches_accept_the_usual_false_spellings(tmp_path: Path, off: object) -> None:
    path = tmp_path / "MEMORY.md"
    assert MakaProvider(path, enabled=off).enabled is False
    assert MakaProvider(path, agent_read_enabled=off).agent_read_enabled is False
    assert MakaProvider(path, incognito=off).incognito is False
    assert MakaProvider(path, read_only=off).read_only is False


@pytest.mark.parametrize("on", [True, 1, "1", "true", "TRUE", "yes", "on"])
def test_w3_switches_accept_the_usual_true_spellings(tmp_path: Path, on: object) -> None:
    path = tmp_path / "MEMORY.md"
    assert MakaProvider(path, enabled=on).enabled is True
    assert MakaProvider(path, agent_read_enabled=on).agent_read_enabled is True
    assert MakaProvider(path, incognito=on).incognito is True
    assert MakaProvider(path, read_only=on).read_only is True


def test_w3_unknown_switch_values_fail_closed(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    assert MakaProvider(path, enabled="maybe").enabled is True
    assert MakaProvider(path, agent_read_enabled="maybe").agent_read_enabled is False
    assert MakaProvider(path, incognito="maybe").incognito is True
    assert MakaProvider(path, read_only="maybe").read_only is True


def test_w3_enabled_zero_from_the_cli_turns_memory_off(tmp_path: Path) -> None:
    path = _one_entry(tmp_path / "MEMORY.md", "createdAt=1700000000000")
    provider = MakaProvider(path, enabled=0)
    assert list(provider.iter_entries()) == []
    assert provider.state.status == "disabled"


def test_w8_opening_a_missing_store_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "x.md"
    with pytest.raises(ConfigError, match="memcore init"):
        MakaProvider(missing).open()
    assert not missing.parent.exists()


def test_w8_an_existing_folder_without_memory_md_opens_empty(tmp_path: Path) -> None:
    with MakaProvider(tmp_path).open() as provider:
        assert list(provider.iter_entries()) == []


def test_w8_symlink_loop_is_refused_on_open_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    os.symlink("MEMORY.md", path)
    with pytest.raises(UnsafePathError, match="symlink"):
        MakaProvider(path).open()
    provider = MakaProvider(path)
    assert list(provider.iter_entries()) == []
    assert [d.code for d in provider.validate()] == ["maka.symlink"]


def test_d4_symlinked_memory_md_is_never_read_or_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = _one_entry(outside / "target.md", "createdAt=1700000000000")
    before = target.read_bytes()
    store = tmp_path / "store"
    store.mkdir()
    link = store / "MEMORY.md"
    os.symlink(target, link)
    with pytest.raises(UnsafePathError):
        MakaProvider(link).open()
    provider = MakaProvider(link)
    assert list(provider.iter_entries()) == []
    [diag] = provider.validate()
    assert (diag.code, diag.path, diag.severity.value) == ("maka.symlink", str(link), "error")
    with pytest.raises(UnsafePathError):
        provider.add(MemoryEntry(title="t", body="b"))
    assert link.is_symlink()
    assert target.read_bytes() == before
    assert sorted(p.name for p in store.iterdir()) == ["MEMORY.md"]


def test_d4_symlinked_pending_md_is_never_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Maka Pending Memory\n", encoding="utf-8")
    store = tmp_path / "store"
    store.mkdir()
    _one_entry(store / "MEMORY.md", "createdAt=1700000000000")
    os.symlink(outside, store / "PENDING.md")
    provider = MakaProvider(store / "MEMORY.md")
    assert provider.pending() == []
    assert "maka.symlink" in [d.code for d in provider.validate()]
    with pytest.raises(UnsafePathError):
        provider.propose(MemoryEntry(title="t", body="b"))
    assert (store / "PENDING.md").is_symlink()
    assert outside.read_text(encoding="utf-8") == "# Maka Pending Memory\n"
