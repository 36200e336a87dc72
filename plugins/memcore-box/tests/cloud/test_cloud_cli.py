"""The ``memcore`` command on ``box+cloud`` against the fake Box API, configured by environment only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[4]
SAMPLES = REPO / ".." / "shared" / "samples"
VAULT = SAMPLES / "whitebox" / "vault-example"
TOKEN = "fake-dev-token-s3cr3t"


def _memcore(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "import sys; from memcore.cli import main; sys.exit(main())", *args]
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def cli_env(box_env: dict[str, str]) -> dict[str, str]:
    """The process environment (fake endpoints, token, dead proxies) without MEMCORE_STORE."""
    env = dict(os.environ)
    env.pop("MEMCORE_STORE", None)
    env["COLUMNS"] = "200"
    return env


@pytest.mark.slow
@pytest.mark.skipif(not VAULT.is_dir(), reason="the shared WhiteBox sample vault is not beside the clone")
def test_migrate_whitebox_vault_to_box_cloud(
    tmp_path: Path, cli_env: dict[str, str], fake_box: Any, workspace_id: str
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    url = f"box+cloud:{workspace_id}"
    done = _memcore("migrate", f"whitebox:{vault}", url, "--json", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert TOKEN not in done.stdout + done.stderr
    source = json.loads(_memcore("ls", "--store", f"whitebox:{vault}", "--json", env=cli_env, cwd=tmp_path).stdout)
    listed = _memcore("ls", "--store", url, "--json", env=cli_env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    target = json.loads(listed.stdout)
    assert len(target) == len(source) == 3
    assert sorted((e["kind"], e["title"], e["body"]) for e in target) == sorted(
        (e["kind"], e["title"], e["body"]) for e in source
    )
    assert TOKEN not in listed.stdout + listed.stderr
    # what Box holds: one file per memory, indexed, plus the workspace config
    files = fake_box.walk_files(workspace_id)
    memories = sorted(p for p in files if p.startswith("memories/") and p.endswith(".md"))
    assert len(memories) == 3
    index = json.loads(files["memories/_index.json"])
    assert sorted(e["filename"] for e in index["entries"]) == [p.split("/")[-1] for p in memories]
    assert all(e["file_id"] for e in index["entries"])  # Box file ids recorded
    checked = _memcore("validate", "--store", url, "--json", env=cli_env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert [e["action"] for e in report["entries"]] == ["written"] * 3
    # again: nothing new is written to Box
    uploads = len(fake_box.requests("POST", "^/upload/"))
    again = _memcore("migrate", f"whitebox:{vault}", url, "--json", env=cli_env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(fake_box.walk_files(workspace_id)) == sorted(files)
    assert len(fake_box.requests("POST", "^/upload/")) == uploads


@pytest.mark.slow
def test_init_add_ls_search_from_config_only(
    tmp_path: Path, cli_env: dict[str, str], fake_box: Any, workspace_id: str
) -> None:
    url = f"box+cloud:{workspace_id}"
    made = _memcore("init", "--store", url, "-o", "metadata_template_key=boxMemory", env=cli_env, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    config = json.loads(fake_box.read(workspace_id, "_box-memory.json"))
    assert config["metadata_template_key"] == "boxMemory"
    # memcore.toml names the store; credentials and endpoints stay in the environment
    (tmp_path / "memcore.toml").write_text(f'store = "{url}"\n', encoding="utf-8")
    added = _memcore(
        "add",
        "--title",
        "Use Box for team memory",
        "--body",
        "Decided.\n",
        "--kind",
        "decision",
        "--tag",
        "storage",
        "--json",
        env=cli_env,
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    entry = json.loads(added.stdout)
    assert entry["id"].startswith("mem_") and TOKEN not in added.stdout + added.stderr
    node = fake_box.node_at(workspace_id, "memories/decision__use-box-for-team-memory.md")
    assert node is not None
    assert node.metadata[("enterprise", "boxMemory")]["memory_id"] == entry["id"]
    listed = json.loads(_memcore("ls", "--json", env=cli_env, cwd=tmp_path).stdout)
    assert [e["id"] for e in listed] == [entry["id"]]
    before = len(fake_box.requests("POST", "metadata_queries"))
    found = _memcore("search", "--kind", "decision", "--tag", "storage", "--json", env=cli_env, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert [e["id"] for e in json.loads(found.stdout)] == [entry["id"]]
    assert len(fake_box.requests("POST", "metadata_queries")) == before + 1  # answered by a metadata query
    # a wrong token: exit 2 (configuration), the token is not printed
    bad = {**cli_env, "BOX_DEVELOPER_TOKEN": "revoked-t0ken-abc"}
    refused = _memcore("ls", "--json", env=bad, cwd=tmp_path)
    assert refused.returncode == 2
    assert "revoked-t0ken-abc" not in refused.stdout + refused.stderr
    assert "BOX_DEVELOPER_TOKEN" in refused.stdout + refused.stderr
