"""A symbolic link leading out of a folder store is never read and is reported once, by core, for every format."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import memcore
from memcore.models import Severity

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: format -> (example store, where in it a link to a memory file would be read)
FOLDER_STORES = {
    "box": ("box-workspace", "memories/fact__outside.md"),
    "claudecode": ("claudecode-memory", "project_outside.md"),
    "basicmemory": ("basicmemory-project", "notes/outside.md"),
}


@pytest.mark.parametrize("fmt", FOLDER_STORES)
def test_a_link_out_of_the_store_is_never_read_and_validate_warns_about_it_once(tmp_path: Path, fmt: str) -> None:
    example, link_at = FOLDER_STORES[fmt]
    store_dir = tmp_path / "store"
    shutil.copytree(EXAMPLES / example, store_dir)
    secret = tmp_path / "secret.md"
    secret.write_text("---\ntitle: Secret\n---\nTOPSECRET-7731\n", encoding="utf-8")
    (store_dir / link_at).parent.mkdir(parents=True, exist_ok=True)
    (store_dir / link_at).symlink_to(secret)
    with memcore.open(f"{fmt}:{store_dir}") as store:
        assert not [e.id for e in store.iter_entries() if "TOPSECRET" in e.body]
        assert store.search("TOPSECRET") == []
        found = [d for d in store.validate() if d.code == f"{fmt}.skipped-link"]
    assert [(d.path, d.severity) for d in found] == [(link_at, Severity.WARNING)]
    assert "outside" in found[0].message and "never read or written" in found[0].message
    assert secret.read_text(encoding="utf-8").endswith("TOPSECRET-7731\n")
