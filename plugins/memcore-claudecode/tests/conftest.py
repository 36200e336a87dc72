"""Shared fixtures: the Claude Code memory samples (read-only, copied into tmp_path before use)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "claude-code-memory"


@pytest.fixture
def sample_store(tmp_path: Path) -> Callable[[str], Path]:
    """``copy(folder) -> path`` of a writable copy of a sample folder (relative to the samples)."""

    def copy(folder: str) -> Path:
        target = tmp_path / "store"
        shutil.copytree(SAMPLES / folder, target)
        return target

    return copy


@pytest.fixture
def files_of() -> Callable[[Path], dict[str, bytes]]:
    """``files_of(root)``: every file under ``root``, relative path -> bytes."""

    def read(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    return read
