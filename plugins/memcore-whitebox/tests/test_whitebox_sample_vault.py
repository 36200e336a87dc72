"""The WhiteBox authors' own example vault reads as it is, validates clean and is never changed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.models import Kind, Query, Severity
from memcore_whitebox.provider import WhiteBoxProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples"
VAULT = SAMPLES / "whitebox" / "vault-example"

pytestmark = pytest.mark.skipif(not VAULT.is_dir(), reason="shared samples not present")


def _hashes(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[path.relative_to(root).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns)
    return out


def _memcore(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MEMCORE_LOCK_DIR=str(Path(cwd or ".").resolve() / ".locks")) if cwd else None
    return subprocess.run(
        [sys.executable, "-c", "from memcore.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env=env,
    )


def test_cli_ls_json_shows_the_observation_and_the_stable_facts() -> None:
    before = _hashes(VAULT)
    result = _memcore("ls", "--store", f"whitebox:{VAULT}", "--json")
    assert result.returncode == 0, result.stderr
    entries = {e["id"]: e for e in json.loads(result.stdout)}
    assert sorted(entries) == ["identity.md", "observations/2026-04.md#1", "working-style.md"]
    obs = entries["observations/2026-04.md#1"]
    assert obs["kind"] == "observation"
    assert obs["created_at"] == "2026-04-19T00:00:00Z"
    assert obs["date_only"] is True
    assert obs["source"] == "claude-opus-4-7"
    assert obs["tags"] == ["working-style", "preference"]
    assert obs["confidence"] == 0.7  # the label "high"
    assert obs["body"].startswith("Example observation. Replace with real entries.")
    assert obs["body"].endswith("the context it was learned in.")
    assert obs["extra"] == {}
    for fact_id, title in (("identity.md", "Identity"), ("working-style.md", "Working style")):
        fact = entries[fact_id]
        assert fact["kind"] == "fact"
        assert fact["title"] == title
        assert fact["extra"] == {"whitebox": {"schema": "whitebox/1.0"}}
        assert fact["body"] == (VAULT / fact_id).read_text(encoding="utf-8").split("---\n", 2)[2]
    assert _hashes(VAULT) == before


def test_cli_validate_reports_nothing() -> None:
    result = _memcore("validate", "--store", f"whitebox:{VAULT}", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def test_opening_reading_and_validating_change_no_byte() -> None:
    before = _hashes(VAULT)
    with WhiteBoxProvider(str(VAULT)) as store:
        entries = list(store.iter_entries())
        assert len(entries) == 3
        assert store.get("observations/2026-04.md#1").source == "claude-opus-4-7"
        assert [e.id for e in store.search("agent learned")] == ["observations/2026-04.md#1"]
        assert [e.id for e in store.iter_entries(Query(kinds=[Kind.FACT]))] == ["identity.md", "working-style.md"]
        assert [d for d in store.validate() if d.severity is not Severity.INFO] == []
        registry = store.tag_registry()
        assert registry is not None
        assert registry.knows("relationship:alex") and registry.knows("project:memcore")
        assert not registry.knows("brand-new")
    assert _hashes(VAULT) == before


def test_sniff_recognises_the_vault(tmp_path: Path) -> None:
    assert WhiteBoxProvider.sniff(VAULT)
    assert not WhiteBoxProvider.sniff(tmp_path)
    assert not WhiteBoxProvider.sniff(VAULT / "identity.md")
    copy = tmp_path / "v"
    shutil.copytree(VAULT, copy)
    (copy / "AGENTS.md").unlink()
    assert WhiteBoxProvider.sniff(copy)  # tags.md + observations/
    other = tmp_path / "repo"
    other.mkdir()
    (other / "AGENTS.md").write_text("# Instructions for coding agents\n", encoding="utf-8")
    assert not WhiteBoxProvider.sniff(other)  # an AGENTS.md of some other tool
    result = _memcore("ls", "--store", str(copy), "--json", cwd=tmp_path)  # bare path: sniffed
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == 3
