"""What a new user hit on a first trial (issue 21), each fixed and proved here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _site_with_broken_plugin(tmp_path: Path) -> Path:
    """A folder for PYTHONPATH holding a distribution whose ``memcore`` entry point fails to import."""
    site = tmp_path / "site"
    dist_info = site / "memcore_broken_demo-0.1.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: memcore-broken-demo\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[memcore]\nbrokendemo = memcore_broken_demo\n")
    (site / "memcore_broken_demo.py").write_text("import a_module_that_is_not_installed  # noqa\n")
    return site


def _memcore(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcore", *args], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def test_a_plugin_that_fails_to_load_gives_exit_2_and_one_line_naming_it(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(_site_with_broken_plugin(tmp_path))}
    for var in ("MEMCORE_DEBUG", "MEMCORE_LOAD_PLUGINS", "MEMCORE_DISABLE_PLUGINS"):
        env.pop(var, None)
    proc = _memcore(["formats"], env)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "memcore: error: plugin 'brokendemo' (distribution 'memcore-broken-demo') failed to load: "
        "ModuleNotFoundError: No module named 'a_module_that_is_not_installed'; fix or uninstall it, "
        "or block it with MEMCORE_DISABLE_PLUGINS=memcore-broken-demo"
    ]
    debug = _memcore(["--debug", "formats"], env)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "import a_module_that_is_not_installed" in debug.stderr
    blocked = _memcore(["formats", "--json"], {**env, "MEMCORE_DISABLE_PLUGINS": "memcore-broken-demo"})
    assert blocked.returncode == 0, blocked.stderr


def test_show_prints_tags_as_a_list_of_names(tmp_path: Path) -> None:
    store = f"maka:{tmp_path / 'MEMORY.md'}"
    env = {k: v for k, v in os.environ.items() if k not in {"MEMCORE_STORE", "MEMCORE_LOAD_PLUGINS"}}
    assert _memcore(["init", "--store", store], env).returncode == 0
    added = _memcore(
        [
            "add",
            "--store",
            store,
            "--title",
            "Prefers tea",
            "--body",
            "Green.",
            "--tag",
            "food",
            "--tag",
            "morning",
            "--json",
        ],
        env,
    )
    assert added.returncode == 0, added.stderr
    entry_id = json.loads(added.stdout)["id"]
    shown = _memcore(["show", entry_id, "--store", store], env)
    assert shown.returncode == 0, shown.stderr
    assert "tags: food, morning" in shown.stdout.splitlines()
    assert "[" not in shown.stdout
