"""validate reports every condition that makes WhiteBox writes fail (issue 17, item 15)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.errors import MemcoreError
from memcore.models import Kind, MemoryEntry, Severity
from memcore_whitebox.provider import WhiteBoxProvider


def _obs() -> MemoryEntry:
    return MemoryEntry(
        kind=Kind.OBSERVATION,
        body="An observation.",
        source="claude",
        tags=["preference"],
        confidence=0.7,
        created_at="2026-04-20",
        date_only=True,
    )


def _symlink_errors(root: Path) -> set[str]:
    with WhiteBoxProvider(str(root)) as store:
        return {str(d.path) for d in store.validate() if d.code == "wb.symlink" and d.severity is Severity.ERROR}


def test_validate_reports_a_symlinked_month_log_that_makes_appends_fail(vault: Path, tmp_path: Path) -> None:
    month = vault / "observations" / "2026-04.md"
    kept = tmp_path / "kept-2026-04.md"
    month.rename(kept)
    os.symlink(kept, month)
    with WhiteBoxProvider(str(vault)) as store, pytest.raises(MemcoreError):
        store.add(_obs())
    assert _symlink_errors(vault) == {"observations/2026-04.md"}


def test_validate_reports_a_symlinked_observations_folder(vault: Path, tmp_path: Path) -> None:
    moved = tmp_path / "obs-elsewhere"
    (vault / "observations").rename(moved)
    os.symlink(moved, vault / "observations")
    with WhiteBoxProvider(str(vault)) as store, pytest.raises(MemcoreError):
        store.add(_obs())
    assert _symlink_errors(vault) == {"observations"}
