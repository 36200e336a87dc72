"""Shared fixtures: the authors' memory.jsonl files (read-only, copied into tmp_path before use)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "mcp-memory-jsonl"


@pytest.fixture
def sample_copy(tmp_path: Path) -> Callable[[str], Path]:
    """``copy(relative name) -> path`` of a writable copy of a sample, at ``tmp_path/memory.jsonl``."""

    def copy(name: str) -> Path:
        target = tmp_path / "memory.jsonl"
        shutil.copyfile(SAMPLES / name, target)
        os.chmod(target, 0o644)
        return target

    return copy
