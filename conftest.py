"""Repository-wide pytest setup: the tests read the formats' authors' real files from ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "shared" / "samples"


def pytest_configure(config: pytest.Config) -> None:
    """Stop with one clear message when the authors' sample files are not beside the clone."""
    if not SAMPLES.is_dir():
        raise pytest.UsageError(
            f"the tests read the formats' authors' sample files from {SAMPLES}, which is missing: "
            "put the project's shared/ folder beside this clone (../shared/samples)"
        )
