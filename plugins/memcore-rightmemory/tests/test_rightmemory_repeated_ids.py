"""A hand-edited graph that repeats an anchor id: every item is read, none is acted on by guess.

Issue 17, item 1: RightMemory ids are explicit (``{#x}``), but a person editing MEMORY.md can
write the same anchor twice, or in MEMORY.md and PURSUITS.md, or in a detail file. Until now
``iter_entries`` dropped every item after the first silently, ``get``/``update``/``delete``
acted on the first one, and ``migrate`` wrote the first under the id and left the other out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import _load_plugin_commands, cli
from memcore.errors import AmbiguousIdError, ConflictError
from memcore.models import MemoryEntry
from memcore_maka import MakaProvider
from memcore_rightmemory import RightMemoryProvider

MEMORY = (
    "# Memory\n"
    "\n"
    "## Deploy {#deploy}\n"  # 3
    "\n"
    "Deploy with the blue-green script.\n"
    "\n"
    "## Deploy on Fridays {#deploy}\n"  # 7
    "\n"
    "Never deploy on Fridays.\n"
    "\n"
    "## Runbook {F#runbook}\n"  # 11
    "\n"
    "The release runbook.\n"
    "\n"
    "## Backups {#backups} \u2192 [dep:deploy]\n"  # 15
    "\n"
    "Nightly at 02:00 UTC.\n"
    "\n"
    "- `cache` Redis in front of the API. \u2192 []\n"  # 19
)
DETAIL = "### Cache warmup {#cache}\n\nWarm the cache after each deploy.\n"  # MEMORY_runbook.md:1
PURSUITS = "# Pursuits\n\n## Ship v2 {#ship}\n\nShip the v2 API by March.\n"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "graph"
    root.mkdir()
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (root / "MEMORY_runbook.md").write_text(DETAIL, encoding="utf-8")
    (root / "PURSUITS.md").write_text(PURSUITS, encoding="utf-8")
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def test_iter_entries_yields_every_item_of_a_repeated_id_and_validate_names_it(store: Path) -> None:
    with RightMemoryProvider(store) as p:
        read = [(e.id, e.title) for e in p.iter_entries()]
        codes = [(d.code, d.path, d.line) for d in p.validate()]
    assert read == [
        ("deploy", "Deploy"),
        ("deploy", "Deploy on Fridays"),
        ("runbook", "Runbook"),
        ("cache", "Cache warmup"),
        ("backups", "Backups"),
        ("cache", "Redis in front of the API."),
        ("ship", "Ship v2"),
    ]
    assert ("rm.duplicate-id", "MEMORY.md", 7) in codes
    assert ("rm.duplicate-id", "MEMORY_runbook.md", 1) in codes  # "first seen" is MEMORY.md:19


def test_get_of_an_anchor_used_twice_in_one_file_names_both_lines(store: Path) -> None:
    with RightMemoryProvider(store) as p:
        with pytest.raises(AmbiguousIdError) as caught:
            p.get("deploy")
        with pytest.raises(AmbiguousIdError) as located:
            p.locate("deploy")
        assert p.get("backups").body == "Nightly at 02:00 UTC.\n"
    memory = store / "MEMORY.md"
    assert caught.value.entry_id == "deploy"
    assert caught.value.places == (f"{memory}:3", f"{memory}:7")
    assert f"{memory}:3" in str(caught.value) and f"{memory}:7" in str(caught.value)
    assert located.value.places == caught.value.places


def test_get_of_an_id_in_a_detail_file_and_its_root_names_both_files(store: Path) -> None:
    with RightMemoryProvider(store) as p, pytest.raises(AmbiguousIdError) as caught:
        p.get("cache")
    assert caught.value.places == (f"{store / 'MEMORY_runbook.md'}:1", f"{store / 'MEMORY.md'}:19")


def test_every_write_on_a_repeated_id_is_refused_and_changes_no_byte(store: Path) -> None:
    before = _tree(store)
    with RightMemoryProvider(store) as p:
        writes = {
            "update": lambda: p.update(MemoryEntry(id="deploy", title="Deploy", body="Rewritten.\n")),
            "delete": lambda: p.delete("deploy"),
            "delete node": lambda: p.delete("cache", drop_edges=True),
            "archive": lambda: p.archive("deploy"),
            "supersede": lambda: p.supersede("deploy", MemoryEntry(title="Deploy v2", body="Canary first.\n")),
            "add under it": lambda: p.add(MemoryEntry(title="Rollback", body="Redeploy the tag.\n", parent="deploy")),
            "add_edge": lambda: p.add_edge("cache", "dep", "ship"),
            "move_to_detail": lambda: p.move_to_detail("deploy"),
        }
        for name, write in writes.items():
            with pytest.raises(AmbiguousIdError, match=r"MEMORY\S*\.md:\d+, .*MEMORY\S*\.md:\d+"):
                write()
            assert _tree(store) == before, f"{name} changed the files"


def test_items_with_their_own_id_stay_writable_beside_a_repeated_one(store: Path) -> None:
    with RightMemoryProvider(store) as p:
        p.update(MemoryEntry(id="backups", title="Backups", body="Nightly at 03:00 UTC.\n", relations=[]))
        added = p.add(MemoryEntry(title="Release notes", body="Written by the release manager.\n"))
        assert added.id is not None
        p.delete(added.id)
        entries = [(e.id, e.body) for e in p.iter_entries()]
    assert ("deploy", "Deploy with the blue-green script.\n") in entries
    assert ("deploy", "Never deploy on Fridays.\n") in entries
    assert ("backups", "Nightly at 03:00 UTC.\n") in entries
    assert [ident for ident, _ in entries] == ["deploy", "deploy", "runbook", "cache", "backups", "cache", "ship"]


def test_deleting_a_heading_that_holds_the_second_item_of_a_repeated_id_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "graph"
    root.mkdir()
    memory = "# Memory\n\n- `step` Tag the release. \u2192 []\n\n## Ops {#ops}\n\n- `step` Page on-call. \u2192 []\n"
    (root / "MEMORY.md").write_text(memory, encoding="utf-8")
    (root / "PURSUITS.md").write_text("# Pursuits\n", encoding="utf-8")
    with RightMemoryProvider(root) as p, pytest.raises(ConflictError, match="heading `ops` still contains step"):
        p.delete("ops")
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == memory


def test_migrate_to_maka_fails_every_item_of_a_repeated_id_and_exits_1(store: Path, tmp_path: Path) -> None:
    _load_plugin_commands()
    dst = tmp_path / "maka" / "MEMORY.md"
    report_file = tmp_path / "report.json"
    before = _tree(store)
    result = CliRunner().invoke(cli, ["migrate", f"rightmemory:{store}", f"maka:{dst}", "--report", str(report_file)])
    assert result.exit_code == 1, result.output
    report = json.loads(report_file.read_text(encoding="utf-8"))
    actions = sorted((e["source_id"], e["action"]) for e in report["entries"])
    assert actions == [
        ("backups", "written"),
        ("cache", "failed"),
        ("cache", "failed"),
        ("deploy", "failed"),
        ("deploy", "failed"),
        ("runbook", "written"),
        ("ship", "written"),
    ]
    errors = {e["source_id"]: e["error"] for e in report["entries"] if e["action"] == "failed"}
    memory = store / "MEMORY.md"
    assert f"{memory}:3, {memory}:7" in errors["deploy"]
    assert f"{store / 'MEMORY_runbook.md'}:1, {memory}:19" in errors["cache"]
    bodies = sorted(e.body.strip() for e in MakaProvider(dst).iter_entries())
    assert bodies == ["Nightly at 02:00 UTC.", "Ship the v2 API by March.", "The release runbook."]
    assert _tree(store) == before
