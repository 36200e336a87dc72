"""validate reports every condition that makes Maka's writes fail (issue 17, item 15)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.errors import UnsafePathError
from memcore.models import MemoryEntry, Severity
from memcore_maka.provider import MakaProvider


def test_validate_reports_a_symlinked_backup_that_makes_every_save_fail(tmp_path: Path) -> None:
    store = tmp_path / "MEMORY.md"
    MakaProvider.init_store(str(store))
    with MakaProvider(str(store)) as provider:
        provider.add(MemoryEntry(title="First", body="Before the link."))
    (tmp_path / "MEMORY.md.bak").unlink()
    os.symlink(tmp_path / "elsewhere.txt", tmp_path / "MEMORY.md.bak")
    with MakaProvider(str(store)) as provider:
        with pytest.raises(UnsafePathError, match=r"MEMORY\.md\.bak"):
            provider.add(MemoryEntry(title="Second", body="Refused by the link."))
        found = [(d.path, d.code, d.severity) for d in provider.validate()]
        snapshot = [(d.path, d.code, d.severity) for d in provider.read_all().diagnostics]
    assert ("MEMORY.md.bak", "maka.symlink", Severity.ERROR) in found
    assert ("MEMORY.md.bak", "maka.symlink", Severity.ERROR) in snapshot
