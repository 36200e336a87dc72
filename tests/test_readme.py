"""The README's quick start is what CI runs: the test command in README.md is the one in .ci/run."""

from __future__ import annotations

import re

from tests.conftest import REPO


def _commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(python3 -m venv .*)\n```", readme)


def test_readme_has_two_quick_start_commands() -> None:
    main_job, tests = _commands()
    assert "memcore migrate" in main_job and "examples/" in main_job
    assert tests.endswith("python -m pytest")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _commands()[1] in ci.splitlines()
