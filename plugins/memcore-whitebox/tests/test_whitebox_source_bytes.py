"""``read_all``/``validate`` hand core the bytes they read (``MEMCORE_WHITEBOX_SOURCE_BYTES``).

Core checks every source file of a store for refused control characters. WhiteBox's checking
pass (:func:`memcore_whitebox.validate.scan`) hands it each file's bytes as it reads them
(:meth:`memcore.provider.BaseProvider.source_bytes_read`), so core reads no file a second time.
Both ways give the same entries and the same diagnostics in the same order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_whitebox import validate
from memcore_whitebox.provider import WhiteBoxProvider

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / ".." / "shared" / "samples" / "whitebox" / "vault-example"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A vault of memcore's writes, a month file and a stable file with a bell, and a file by hand."""
    root = tmp_path / "vault"
    WhiteBoxProvider.init_store(str(root))
    with WhiteBoxProvider(str(root), as_user=True) as store:
        for n in range(6):
            store.add(MemoryEntry(kind=Kind.OBSERVATION, body=f"seen {n}", tags=["t"], source="x", confidence=0.5))
        store.add(MemoryEntry(kind=Kind.FACT, title="Bell", body="a fact"))
    month = next((root / "observations").glob("*.md"))
    month.write_bytes(month.read_bytes().replace(b"seen 3", b"seen\x07 3"))
    (root / "bell.md").write_bytes((root / "bell.md").read_bytes().replace(b"a fact", b"a\x1b fact"))
    (root / "projects").mkdir(exist_ok=True)
    (root / "projects" / "by-hand.md").write_bytes(b"---\ntitle: By hand\n---\nplain\n")
    return root


def _read(root: Path, monkeypatch: pytest.MonkeyPatch, switch: str) -> tuple[Any, ...]:
    monkeypatch.setenv("MEMCORE_WHITEBOX_SOURCE_BYTES", switch)
    with WhiteBoxProvider(str(root)) as store:
        snapshot = store.read_all()
        validated = store.validate()
    entries = [(e.model_dump(mode="json"), sorted(e.model_fields_set)) for e in snapshot.entries]
    return entries, [d.model_dump(mode="json") for d in snapshot.diagnostics], [d.model_dump() for d in validated]


@pytest.mark.parametrize("which", ["memcore", "sample"])
def test_read_all_and_validate_give_the_same_entries_and_diagnostics_with_the_switch_on_and_off(
    vault: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    root = vault if which == "memcore" else SAMPLE
    on = _read(root, monkeypatch, "1")
    off = _read(root, monkeypatch, "0")
    assert on == off
    entries, diagnostics, validated = on
    assert diagnostics == [{**d, "severity": d["severity"].value} for d in validated]
    if which == "memcore":
        assert len(entries) == 8
        month = next((vault / "observations").glob("*.md")).relative_to(vault).as_posix()
        bells = sorted(d["path"] for d in diagnostics if d["code"] == "whitebox.control-char")
        assert bells == sorted(["bell.md", month])


def test_core_checks_take_the_bytes_the_pass_read_and_read_no_vault_file_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_again: list[str] = []
    read_bytes = Path.read_bytes

    def recording(path: Path) -> bytes:
        read_again.append(path.name)
        return read_bytes(path)

    monkeypatch.setenv("MEMCORE_WHITEBOX_SOURCE_BYTES", "1")
    monkeypatch.setattr(Path, "read_bytes", recording)
    with WhiteBoxProvider(str(vault)) as store:
        snapshot = store.read_all()
        store.validate()
    assert [name for name in read_again if name.endswith(".md")] == []
    assert sum(d.code == "whitebox.control-char" for d in snapshot.diagnostics) == 2

    monkeypatch.setenv("MEMCORE_WHITEBOX_SOURCE_BYTES", "0")
    with WhiteBoxProvider(str(vault)) as store:
        store.read_all()
    assert sorted(name for name in read_again if name.endswith(".md")) == sorted(
        ["bell.md", "by-hand.md", next((vault / "observations").glob("*.md")).name]
    )


def test_the_switch_reads_zero_and_off_as_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_WHITEBOX_SOURCE_BYTES", "off")
    assert validate.hands_bytes() is False
    monkeypatch.setenv("MEMCORE_WHITEBOX_SOURCE_BYTES", "1")
    assert validate.hands_bytes() is True
