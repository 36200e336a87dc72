"""``memcore validate`` exits 1 for index drift no write repairs on its own (issue 17, item 17).

Drift the next write repairs (a file missing from its index, a row whose file is gone, with
``settings.rebuild_index_on_drift`` on, the default) stays a warning: exit 0, and the next write
does repair it. Drift no write repairs (a row that differs from its file; any drift with that
setting off) is an error: exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import cli
from memcore.models import Kind, MemoryEntry, Severity
from memcore_box.provider import BoxMemoryProvider

_HAND_WRITTEN = (
    "---\nid: mem_01J00000000000000000000009\nslug: by-hand\ntitle: By hand\nkind: fact\n"
    "status: active\ncreated_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n---\nx\n"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path))
    with BoxMemoryProvider(str(path)) as store:
        store.add(MemoryEntry(kind=Kind.FACT, title="Indexed", body="x\n"))
    return path


def _validate(root: Path) -> tuple[int, dict[str, str]]:
    result = CliRunner().invoke(cli, ["validate", "--store", f"box:{root}", "--json"])
    with BoxMemoryProvider(str(root)) as store:
        severities = {d.code: d.severity.value for d in store.validate() if d.code.startswith("box.index")}
    return result.exit_code, severities


def _set_rebuild(root: Path, value: bool) -> None:
    path = root / "_box-memory.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["settings"]["rebuild_index_on_drift"] = value
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def test_index_entry_differing_from_its_file_is_an_error_and_exit_1(root: Path) -> None:
    path = root / "memories" / "fact__indexed.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("title: Indexed", "title: Edited by hand"), encoding="utf-8"
    )
    code, severities = _validate(root)
    assert severities == {"box.index-stale-entry": "error"}
    assert code == 1
    # a write elsewhere does not repair it; reindex does
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(kind=Kind.FACT, title="Other", body="y\n"))
    assert _validate(root) == (1, {"box.index-stale-entry": "error"})
    assert CliRunner().invoke(cli, ["reindex", "--store", f"box:{root}"]).exit_code == 0
    assert _validate(root) == (0, {})


def test_unindexed_file_with_rebuild_on_drift_off_is_an_error_and_exit_1(root: Path) -> None:
    _set_rebuild(root, False)
    (root / "memories" / "fact__by-hand.md").write_text(_HAND_WRITTEN, encoding="utf-8")
    assert _validate(root) == (1, {"box.index-unindexed": "error"})
    with BoxMemoryProvider(str(root)) as store:
        message = next(d.message for d in store.validate() if d.code == "box.index-unindexed")
    assert "rebuild_index_on_drift is off" in message and "memcore reindex" in message


def test_unindexed_file_the_next_write_repairs_is_a_warning_and_exit_0(root: Path) -> None:
    (root / "memories" / "fact__by-hand.md").write_text(_HAND_WRITTEN, encoding="utf-8")
    assert _validate(root) == (0, {"box.index-unindexed": "warning"})
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(kind=Kind.FACT, title="Next", body="z\n"))
        assert not [d for d in store.validate() if d.severity is not Severity.INFO and d.code.startswith("box.index")]
    assert _validate(root) == (0, {})
