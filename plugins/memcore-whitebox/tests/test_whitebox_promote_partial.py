"""One bad group never aborts a promotion (issue 17, item 7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_whitebox.promotion import run_promotion
from memcore_whitebox.provider import WhiteBoxProvider

BAD_TAG = "project:nul"  # projects/nul.md: a Windows device name, refused by safe_join


@pytest.fixture
def vault(vault: Path) -> Path:
    root = vault
    with WhiteBoxProvider(str(root)) as store:
        for tag in (BAD_TAG, "project:memcore"):
            for n in range(3):
                store.add(
                    MemoryEntry(
                        kind=Kind.OBSERVATION,
                        body=f"Uses uv {n} ({tag}).",
                        source=f"s{n}",
                        tags=[tag],
                        confidence=0.7,
                        created_at="2026-04-23",
                        date_only=True,
                    )
                )
    return root


def _promote(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from memcore.cli import main; main()",
            "whitebox",
            "promote",
            "--store",
            f"whitebox:{vault}",
            "--as-of",
            "2026-04-24",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_promote_skips_and_reports_a_group_with_an_unsafe_tag_and_promotes_the_rest(vault: Path) -> None:
    dry = _promote(vault, "--dry-run", "--json")
    dry_actions = {tuple(r["tags"]): r["action"] for r in json.loads(dry.stdout) if r["meets_rule"]}
    assert dry_actions == {(BAD_TAG,): "failed", ("project:memcore",): "would-propose"}
    assert dry.returncode == 1
    done = _promote(vault, "--json")
    assert done.returncode == 1, done.stderr
    rows = {tuple(r["tags"]): r for r in json.loads(done.stdout)}
    assert rows[(BAD_TAG,)]["action"] == "failed" and "nul" in rows[(BAD_TAG,)]["error"]
    good = rows[("project:memcore",)]
    assert good["action"] == "proposed"
    proposal = (vault / good["path"]).read_text(encoding="utf-8")
    assert "projects/memcore.md" in proposal
    text = _promote(vault)
    assert text.returncode == 1 and f"group [{BAD_TAG}] skipped" in text.stderr


def test_run_promotion_returns_a_failed_row_instead_of_raising(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        rows = run_promotion(store, threshold=3)
    assert sorted((r["tags"][0], r["action"]) for r in rows if r["meets_rule"]) == [
        ("project:memcore", "proposed"),
        (BAD_TAG, "failed"),
    ]
