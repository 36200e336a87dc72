"""Repository-wide pytest setup: the tests read the formats' authors' real files from ../shared."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "shared" / "samples"


def pytest_configure(config: pytest.Config) -> None:
    """Stop with one clear message when the authors' sample files are not beside the clone.

    Migration journals (memcore.migrate.journal) of the tests go to a folder of this run, never to the
    user's state folder (subprocesses inherit it).
    """
    os.environ["MEMCORE_STATE_DIR"] = tempfile.mkdtemp(prefix="memcore-test-state-")
    if not SAMPLES.is_dir():
        raise pytest.UsageError(
            f"the tests read the formats' authors' sample files from {SAMPLES}, which is missing: "
            "put the project's shared/ folder beside this clone (../shared/samples)"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove this run's journal folder."""
    state = os.environ.pop("MEMCORE_STATE_DIR", None)
    if state and Path(state).name.startswith("memcore-test-state-"):
        shutil.rmtree(state, ignore_errors=True)
