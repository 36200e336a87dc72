"""128 KiB safe mode, the size limit on writes, and files memcore cannot parse fully."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.errors import ReadOnlyStoreError, StoreLimitError
from memcore.models import MemoryEntry, Severity
from memcore_maka import MakaProvider

HEAD = "# Maka Memory\n\n## Big\n<!-- maka-memory: id=big origin=manual status=active -->\n"


def sized(path: Path, size: int) -> Path:
    path.write_bytes((HEAD + "x" * (size - len(HEAD) - 1) + "\n").encode("utf-8"))
    assert path.stat().st_size == size
    return path


def test_exactly_128_kib_is_read(tmp_path: Path) -> None:
    path = sized(tmp_path / "MEMORY.md", 131_072)
    provider = MakaProvider(path)
    [entry] = provider.iter_entries()
    assert entry.id == "big" and len(entry.body) == 131_072 - len(HEAD) - 1
    assert provider.state.status == "ok"


def test_one_byte_over_opens_in_safe_mode(tmp_path: Path) -> None:
    path = sized(tmp_path / "MEMORY.md", 131_073)
    before = path.read_bytes()
    provider = MakaProvider(path)
    assert list(provider.iter_entries()) == []
    state = provider.state
    assert (state.status, state.reason, state.size, state.entry_count) == ("safe_mode", "oversize", 131_073, 0)
    [diag] = provider.validate()
    assert diag.code == "maka.oversize" and diag.severity is Severity.ERROR
    assert "131,073 bytes" in diag.message and str(path) == diag.path
    with pytest.raises(ReadOnlyStoreError):
        provider.add(MemoryEntry(title="t", body="b"))
    with pytest.raises(ReadOnlyStoreError):
        provider.delete("big")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]


def test_write_over_the_limit_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = sized(tmp_path / "MEMORY.md", 130_850)
    before = path.read_bytes()
    provider = MakaProvider(path)
    with pytest.raises(StoreLimitError, match="128 KiB"):
        provider.add(MemoryEntry(title="One more", body="y" * 200))
    big = provider.get("big")
    big.body += "z" * 300
    with pytest.raises(StoreLimitError):
        provider.update(big)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]
    # A write that still fits goes through.
    provider.add(MemoryEntry(title="Small", body="ok"))
    assert path.stat().st_size <= 131_072


def test_not_utf8_is_read_fail_open_and_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"# Maka Memory\n\n## A\n<!-- maka-memory: id=a status=active -->\nbad \xff byte\n")
    before = path.read_bytes()
    provider = MakaProvider(path)
    [entry] = provider.iter_entries()
    assert entry.id == "a" and entry.body == "bad \ufffd byte"
    assert provider.state.status == "error"
    [diag] = [d for d in provider.validate() if d.severity is Severity.ERROR]
    assert (diag.code, diag.line) == ("maka.encoding", 5)
    entry.title = "changed"
    with pytest.raises(ReadOnlyStoreError):
        provider.update(entry)
    assert path.read_bytes() == before


def test_empty_and_missing_files(tmp_path: Path) -> None:
    missing = MakaProvider(tmp_path / "memory" / "MEMORY.md")
    assert list(missing.iter_entries()) == [] and missing.state.reason == "missing"
    assert not (tmp_path / "memory").exists()
    blank = tmp_path / "blank.md"
    blank.write_text("  \n\n", encoding="utf-8")
    provider = MakaProvider(blank)
    assert list(provider.iter_entries()) == [] and provider.state.reason == "empty"
