"""``box+cloud``: updating every memory with itself writes nothing to Box (issue 19).

The workspaces are the Box-memory authors' example files and examples/box-workspace, uploaded
to the fake Box API as they are; every memory is read and given back to ``update`` unchanged.
Box then holds the same files with the same bytes (memory files, every ``_index.json``,
``_box-memory.json``: no ``updated_at`` stamped), and the provider sent no upload, no
metadata write and no delete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memcore_box.cloud_provider import BoxCloudProvider

REPO = Path(__file__).resolve().parents[4]
_BOX = REPO / ".." / "shared" / "samples" / "box-memory"
_EXAMPLE = REPO / "examples" / "box-workspace"

#: The authors' files under the names their example index gives them.
_SAMPLES = {
    "_box-memory.json": _BOX / "example-_box-memory.json",
    "memories/_index.json": _BOX / "example-_index.json",
    "memories/decision__jwt-vs-sessions-decision.md": _BOX / "example-memory-decision.md",
    "memories/task__rotate-jwt-keys-monthly.md": _BOX / "example-memory-task.md",
    "memories/companion__q2-2026-revenue-report-pdf-companion.md": _BOX / "example-companion.md",
}


def _files(name: str) -> dict[str, bytes]:
    if name == "samples":
        return {rel: path.read_bytes() for rel, path in _SAMPLES.items()}
    return {p.relative_to(_EXAMPLE).as_posix(): p.read_bytes() for p in sorted(_EXAMPLE.rglob("*")) if p.is_file()}


def _writes(fake: Any) -> list[tuple[str, str]]:
    return [(r["method"], r["path"]) for r in fake.requests() if r["method"] in {"POST", "PUT", "DELETE"}]


@pytest.mark.parametrize(("name", "memories"), [("samples", 3), ("examples", 66)])
def test_updating_every_memory_with_itself_sends_no_write_to_box(
    name: str, memories: int, box_env: dict[str, str], fake_box: Any, workspace_id: str
) -> None:
    files = _files(name)
    for rel, data in files.items():
        fake_box.put(workspace_id, rel, data)
    assert fake_box.walk_files(workspace_id) == files
    with BoxCloudProvider(workspace_id) as store:
        entries = list(store.iter_entries())
        assert len(entries) == memories
        writes = _writes(fake_box)
        for entry in entries:
            returned = store.update(entry, expected_version=entry.version)
            assert returned.version == entry.version, entry.id
            assert returned.content_dict() == entry.content_dict(), entry.id
        assert _writes(fake_box) == writes, "a no-change update sent a write to Box"
    assert fake_box.walk_files(workspace_id) == files
