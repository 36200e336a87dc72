"""Fixtures the WhiteBox tests share: a fresh copy of the authors' example vault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

#: The WhiteBox authors' example vault, in the project's shared/ folder beside the clone.
SAMPLE_VAULT = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "whitebox" / "vault-example"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A copy of the example vault in ``tmp_path / "vault"``, folders 0755 and files 0644."""
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, root)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root
