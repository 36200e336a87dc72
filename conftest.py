"""Repository-wide pytest setup: the tests read the formats' authors' real files from ../shared."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "shared" / "samples"


def pytest_configure(config: pytest.Config) -> None:
    """Stop with one clear message when the authors' sample files are not beside the clone.

    Migration journals (memcore.migrate.journal) of the tests go to a folder of this run, never to the
    user's state folder (subprocesses inherit it).
    """
    os.environ["MEMCORE_STATE_DIR"] = state = tempfile.mkdtemp(prefix="memcore-test-state-")
    # Locks and index databases too: never the user's cache folder, one folder per pytest
    # process (each xdist worker runs this hook), inherited by the processes tests spawn.
    os.environ.setdefault("MEMCORE_LOCK_DIR", os.path.join(state, "locks"))
    os.environ.setdefault("MEMCORE_CACHE_DIR", os.path.join(state, "cache"))
    if not SAMPLES.is_dir():
        raise pytest.UsageError(
            f"the tests read the formats' authors' sample files from {SAMPLES}, which is missing: "
            "put the project's shared/ folder beside this clone (../shared/samples)"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove this run's journal folder."""
    state = os.environ.pop("MEMCORE_STATE_DIR", None)
    for name, sub in (("MEMCORE_LOCK_DIR", "locks"), ("MEMCORE_CACHE_DIR", "cache")):
        if state and os.environ.get(name) == os.path.join(state, sub):
            del os.environ[name]
    if state and Path(state).name.startswith("memcore-test-state-"):
        shutil.rmtree(state, ignore_errors=True)


# --- Docs that run --------------------------------------------------------------------------
# Every ``python`` and ``bash`` block of README.md and docs/ is a test (sybil), run in order per
# page, in a scratch folder holding a copy of the shipped examples under the names the pages use
# (see _DOC_LAYOUT). A block that cannot run is preceded by ``<!-- skip: next "why" -->``, which
# sybil reports as a skip with that reason. docs/tutorial-provider.md is checked by
# tests/test_tutorial.py; docs/cli.md is generated (tests/test_docs.py).

REPO = Path(__file__).resolve().parent
#: Scratch folder name -> shipped example it is a copy of.
_DOC_LAYOUT = {
    "examples": "examples",
    "vault": "examples/whitebox-vault",
    "workspace": "examples/box-workspace",
    "rm": "examples/rightmemory",
    "memory": "examples/maka",
    "mcpmemory": "examples/mcpmemory",
    "claude-memory": "examples/claudecode-memory",
    "project": "examples/basicmemory-project",
}
_SHELL_TIMEOUT_S = 120


def _doc_setup(namespace: dict[str, object]) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="memcore-docs-"))
    for name, source in _DOC_LAYOUT.items():
        shutil.copytree(REPO / source, scratch / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    saved_env = dict(os.environ)
    os.environ.pop("MEMCORE_STORE", None)
    os.environ["MEMCORE_CACHE_DIR"] = str(scratch / ".cache")
    os.environ["MEMCORE_LOCK_DIR"] = str(scratch / ".locks")
    # memcore on PATH: the scripts folder of the interpreter running the tests.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    namespace.update(_scratch=scratch, _saved_env=saved_env, _saved_cwd=os.getcwd(), Path=Path)
    os.chdir(scratch)


def _doc_teardown(namespace: dict[str, object]) -> None:
    os.chdir(str(namespace["_saved_cwd"]))
    os.environ.clear()
    os.environ.update(namespace["_saved_env"])  # type: ignore[arg-type]
    shutil.rmtree(str(namespace["_scratch"]), ignore_errors=True)


def _run_shell(example: Any) -> None:
    """Run a bash block with ``bash -euo pipefail`` in the page's scratch folder."""
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", example.parsed],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_SHELL_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"bash block exited {proc.returncode}\n--- block\n{example.parsed}--- stdout\n{proc.stdout}"
            f"--- stderr\n{proc.stderr}"
        )


try:
    from sybil import Sybil
    from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser
except ModuleNotFoundError:  # environments that only run a plugin's own tests (tox -e maka, …)
    pass
else:
    pytest_collect_file = Sybil(
        parsers=[SkipParser(), PythonCodeBlockParser(), CodeBlockParser("bash", _run_shell)],
        path=str(REPO),
        patterns=["README.md", "docs/*.md", "docs/formats/*.md"],
        # Path.match is anchored at the right: keep the other distributions' READMEs out.
        excludes=[
            "docs/tutorial-provider.md",
            "docs/cli.md",
            "plugins/*/README.md",
            "conformance/README.md",
            "examples/*/README.md",
            "examples/*/*/README.md",
        ],
        setup=_doc_setup,
        teardown=_doc_teardown,
    ).pytest()
