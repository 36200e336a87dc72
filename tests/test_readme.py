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
    assert tests.endswith("python -m pytest -n auto --dist loadfile")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _commands()[1] in ci.splitlines()


def test_ci_runs_the_readme_main_job() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _commands()[0] in ci.splitlines()


def test_ci_runs_every_readme_check_in_order() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*3\. The checks CI runs.*?```bash\n(.*?)```", readme, re.S)
    assert block, "README.md has no quick-start command 3 (the checks)"
    checks = block.group(1).splitlines()
    assert [
        c for c in checks if "ruff check" in c or "mypy" in c or "mkdocs build --strict" in c or "memcore-jsonl" in c
    ]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    positions = [ci.index(c) for c in checks]  # ValueError: a README check that .ci/run does not run
    assert positions == sorted(positions)
    assert "python3 -m venv .venv && .venv/bin/pip install -q -r requirements-dev.txt" in ci  # the setup, first
