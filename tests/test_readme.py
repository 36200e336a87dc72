"""The README's quick start is what CI runs, and every other example runs in a fresh clone.

The test command in README.md is the one in .ci/run; the README's other examples (the blocks
not marked ``<!-- skip: next -->``) run in a copy of the checkout's tracked files and leave
nothing in it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
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


def _examples(readme: str) -> list[tuple[str, str]]:
    """Return ``(language, code)`` of every bash and python block of ``readme`` that is not skipped."""
    blocks = []
    skip = False
    for match in re.finditer(r"<!-- skip: next .*?-->|```(bash|python)\n(.*?)```", readme, re.S):
        if match.group(0).startswith("<!--"):
            skip = True
            continue
        if not skip:
            blocks.append((match.group(1), match.group(2)))
        skip = False
    return blocks


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file and folder under ``root`` (relative path -> bytes; b"/" for a folder), symlinks included."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = b"/" if path.is_dir() and not path.is_symlink() else path.read_bytes() if path.is_file() else b"@"
    return out


@pytest.mark.slow
def test_every_readme_example_runs_in_a_fresh_clone_and_leaves_nothing_in_it(tmp_path: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, text=True
    ).stdout.split("\0")
    clone = tmp_path / "clone"  # the checkout's tracked files, as a fresh clone has them
    for rel in filter(None, listed):
        if (REPO / rel).is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, clone / rel)
    blocks = _examples((clone / "README.md").read_text(encoding="utf-8"))
    assert {lang for lang, _ in blocks} == {"bash", "python"}
    assert any("memcore init" in code for _, code in blocks)
    env = {k: v for k, v in os.environ.items() if k not in {"MEMCORE_STORE", "MEMCORE_LOAD_PLUGINS"}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["TMPDIR"] = str(tmp_path / "tmp")  # mktemp -d: outside the clone, and removed with the test
    (tmp_path / "tmp").mkdir()
    before = _snapshot(clone)
    for lang, code in blocks:
        command = ["bash", "-euo", "pipefail", "-c", code] if lang == "bash" else [sys.executable, "-c", code]
        proc = subprocess.run(
            command, cwd=clone, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, f"--- block\n{code}--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    after = _snapshot(clone)
    assert sorted(set(after) - set(before)) == []
    assert sorted(rel for rel in before if after.get(rel) != before[rel]) == []
