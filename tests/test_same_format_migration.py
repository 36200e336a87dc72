"""Same-format migrations of the formats' authors' sample stores give their files back byte for byte.

Each sample store of ../shared/samples that is a whole store (a vault, a workspace, a graph
root, a memory file, a project, an auto-memory folder) is copied into ``tmp_path`` and migrated
into a **new** store of its own format. Every file of the source and of the new store is
hashed: a file must come out byte-identical, unless :data:`NEEDS` names it with the reason
something truly has to differ (the format's own writer encodes it otherwise, the spec makes
the writer add it, or the source holds text in no entry). The test fails on a file that
differs without being named, and on one named that no longer differs, so the list stays
exact.

No entry of such a migration carries a ``migrated_from`` stamp (every one keeps its source's
id); a second run writes nothing, with its journal and without.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memcore import open as memcore_open
from memcore.migrate import ConversionReport, migrate

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples"


def _folder(src: Path) -> Callable[[Path], str]:
    def make(dest: Path) -> str:
        shutil.copytree(src, dest / "store")
        return str(dest / "store")

    return make


def _files(files: dict[str, Path]) -> Callable[[Path], str]:
    def make(dest: Path) -> str:
        for name, path in files.items():
            (dest / "store" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / "store" / name)
        return str(dest / "store")

    return make


def _one_file(src: Path, name: str) -> Callable[[Path], str]:
    def make(dest: Path) -> str:
        (dest / "store").mkdir()
        shutil.copyfile(src, dest / "store" / name)
        return str(dest / "store" / name)

    return make


_BOX = SAMPLES / "box-memory"
_RM = SAMPLES / "rightmemory"
_BM = SAMPLES / "basic-memory"
_CC = SAMPLES / "claude-code-memory"

#: sample set -> (format, maker of a writable copy: returns the store's location)
SETS: dict[str, tuple[str, Callable[[Path], str]]] = {
    "whitebox/vault-example": ("whitebox", _folder(SAMPLES / "whitebox" / "vault-example")),
    "rightmemory/test-fixture-extracted-test_graph": (
        "rightmemory",
        _folder(_RM / "test-fixture-extracted-test_graph"),
    ),
    "rightmemory/MEMORY+PURSUITS.example": (
        "rightmemory",
        _files(
            {"MEMORY.md": _RM / "MEMORY.example.at-0fad0d5.md", "PURSUITS.md": _RM / "PURSUITS.example.at-23141ba.md"}
        ),
    ),
    "box-memory/examples": (
        "box",
        _files(
            {
                "_box-memory.json": _BOX / "example-_box-memory.json",
                "memories/_index.json": _BOX / "example-_index.json",
                "memories/decision__jwt-vs-sessions-decision.md": _BOX / "example-memory-decision.md",
                "memories/task__rotate-jwt-keys-monthly.md": _BOX / "example-memory-task.md",
                "memories/companion__q2-2026-revenue-report-pdf-companion.md": _BOX / "example-companion.md",
            }
        ),
    ),
    **{f"maka/{p.name}": ("maka", _one_file(p, "MEMORY.md")) for p in sorted((SAMPLES / "maka").glob("*.md"))},
    "basic-memory/rendered-bm-0.24.1/project-demo": (
        "basicmemory",
        _folder(_BM / "rendered-bm-0.24.1" / "project-demo"),
    ),
    "basic-memory/rendered-bm-0.24.1/import-memory-json": (
        "basicmemory",
        _folder(_BM / "rendered-bm-0.24.1" / "import-memory-json"),
    ),
    "basic-memory/fixtures": ("basicmemory", _folder(_BM / "fixtures")),
    **{
        f"mcp-memory-jsonl/{p.parent.name}/{p.name}": ("mcpmemory", _one_file(p, "memory.jsonl"))
        for p in sorted((SAMPLES / "mcp-memory-jsonl").glob("*/*.json*"))
    },
    **{
        f"claude-code-memory/auto-memory/{p.name}": ("claudecode", _folder(p))
        for p in sorted((_CC / "auto-memory").iterdir())
    },
    "claude-code-memory/anthropic-claude-md": ("claudecode", _folder(_CC / "anthropic-claude-md")),
}

# Why a file cannot come out byte-identical, one reason per kind of difference. "writer": the
# format's own writer writes it so; "spec": the spec makes the writer add it; "source": the
# source holds what no entry holds (the report lists it); "gap": not done yet.
_WB_TAGS = (
    "writer: memcore writes an observation block as WhiteBox's reference writer does (every tag double-quoted: "
    "reference-notes/whitebox.md, 'What the implementation decides' 1); the example's block was written otherwise"
)
_RM_UNREAD = (
    "source: the `---` breaks and the closing example comment between domains are text in no entry "
    "(the report's unread_text)"
)
_RM_BACKING = "source: the sample names this F# backing file without shipping it (source_errors: rm.missing-backing)"
_BOX_INDEX = (
    "spec: the writer updates a folder's _index.json on every write (convention 3): size_bytes and file_id "
    "are those of the files written (the example's are illustrative)"
)
_BOX_INIT = "spec: box-init makes every memories folder's _index.json and the root rollup; the example set has none"
_MAKA_META = (
    "writer: Maka's writer puts origin= and status= in the metadata comment of every entry it writes "
    "(manual append: `id origin=manual createdAt status=active`)"
)
_MAKA_BAK = "writer: Maka's save copies the file it replaces to MEMORY.md.bak (here the new store's empty file)"
_MAKA_END = "writer: Maka's writer ends the file with a line break (the extracted fixture has none)"
_MAKA_SHADOW = (
    "source: a second metadata comment under a heading is ignored by Maka's reader and in no entry (the "
    "report's unread_text); Maka's writer ends the file with a line break (the fixture has none)"
)
_MCP_JSON = "writer: server-memory's writer writes compact JSON, keys in its order, legacy key names in today's"
_MCP_DUP = "source: entities sharing a name are one id to the writer: the copies are renamed name#2... (reported)"

#: sample set -> {file: why it cannot come out byte-identical}
NEEDS: dict[str, dict[str, str]] = {
    "whitebox/vault-example": {"observations/2026-04.md": _WB_TAGS},
    "rightmemory/MEMORY+PURSUITS.example": {
        "MEMORY.md": _RM_UNREAD,
        "MEMORY_sample-backup-drill.md": _RM_BACKING,
        "MEMORY_sample-release-runbook.md": _RM_BACKING,
    },
    "box-memory/examples": {
        "memories/_index.json": _BOX_INDEX,
        "_index.json": _BOX_INIT,
        "teams/default/memories/_index.json": _BOX_INIT,
    },
    **{
        f"maka/{name}": {"MEMORY.md": _MAKA_META, "MEMORY.md.bak": _MAKA_BAK}
        for name in (
            "default-template.HEAD-f19eede.rendered-now-1700000000000.md",
            "default-template.v0.1-c06e13f.rendered-now-1700000000000.md",
            "fixture-session-scope.md",
            "fixture-statuses-pending-rejected-unknown.md",
            "fixture-v0.1-best-effort-metadata.md",
        )
    },
    "maka/fixture-active-vs-archived-prompt-body.md": {"MEMORY.md": _MAKA_END, "MEMORY.md.bak": _MAKA_BAK},
    "maka/fixture-first-metadata-comment-authoritative.md": {"MEMORY.md": _MAKA_SHADOW, "MEMORY.md.bak": _MAKA_BAK},
    **{
        f"mcp-memory-jsonl/{name}": {"memory.jsonl": _MCP_JSON}
        for name in (
            "extracted-basic-memory-tests/missing_name.json",
            "extracted-basic-memory-tests/old_format.json",
            "extracted-basic-memory-tests/sample_entities.memory.json",
            "third-party/anoblet-copilot-memory.jsonl",
        )
    },
    "mcp-memory-jsonl/third-party/oshliaer-server-memory-editor-memory.jsonl": {"memory.jsonl": _MCP_DUP},
}


def _snapshot(location: str) -> dict[str, str]:
    """``{path relative to the store's folder: sha256}`` of every file (a one-file store: its folder)."""
    path = Path(location)
    root = path.parent if path.is_file() or path.suffix else path
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _new_target(fmt: str, location: str, where: Path) -> str:
    path = Path(location)
    return f"{fmt}:{where / path.name}" if path.is_file() else f"{fmt}:{where / 'store'}"


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test


def _differing(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def _run(source: str, target: str) -> ConversionReport:
    report = migrate(source, target)
    assert report.counts["failed"] == 0, [(e.source_id, e.error) for e in report.entries if e.error]
    return report


@pytest.mark.parametrize("name", list(SETS))
def test_same_format_migration_gives_the_files_back(name: str, tmp_path: Path) -> None:
    fmt, make = SETS[name]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    location = make(tmp_path / "a")
    source_files = _snapshot(location)
    target = _new_target(fmt, location, tmp_path / "b")
    report = _run(f"{fmt}:{location}", target)
    assert _snapshot(location) == source_files, "the source was modified"
    target_files = _snapshot(target.partition(":")[2])
    differing = _differing(source_files, target_files)
    identical = len(source_files) - len(differing & source_files.keys())
    print(f"{name}: {identical}/{len(source_files)} files byte-identical; differ: {sorted(differing)}")
    needs = NEEDS.get(name, {})
    assert differing == set(needs), {f: needs.get(f, "differs, not named in NEEDS") for f in differing ^ set(needs)}
    # every entry kept its id, so none carries a provenance stamp (nothing was kept in free data)
    assert all(e.target_id == e.source_id for e in report.entries), name
    assert not any(e.kept for e in report.entries)
    stamped = [f for f in target_files if b"migrated_from" in _read_target_file(target, f)]
    assert stamped == []
    # what the source holds in no entry, or cannot read, is in the report
    if any(reason.startswith("source:") for reason in needs.values()):
        assert report.unread_text or report.source_errors or report.counts["lossy"], name


def _read_target_file(target: str, name: str) -> bytes:
    path = Path(target.partition(":")[2])
    root = path.parent if path.suffix else path
    return (root / name).read_bytes()


@pytest.mark.parametrize("name", list(SETS))
def test_same_format_migration_again_writes_nothing_with_or_without_journal(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt, make = SETS[name]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    source = f"{fmt}:{make(tmp_path / 'a')}"
    target = _new_target(fmt, source.partition(":")[2], tmp_path / "b")
    _run(source, target)
    written = _snapshot(target.partition(":")[2])
    again = _run(source, target)
    assert (again.counts["written"], again.counts["updated"]) == (0, 0)
    assert _snapshot(target.partition(":")[2]) == written
    # no journal (another machine, a deleted state folder): entries are matched by id and content
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "other-state"))
    blind = _run(source, target)
    assert (blind.counts["written"], blind.counts["updated"], blind.counts["conflict"]) == (0, 0, 0)
    assert _snapshot(target.partition(":")[2]) == written


def _edit_source_body(location: str, old: bytes, new: bytes) -> None:
    path = Path(location) / "memories" / "decision__jwt-vs-sessions-decision.md"
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


def test_a_changed_source_entry_is_updated_in_place_without_a_stamp(tmp_path: Path) -> None:
    """With the journal, an unstamped copy is known as the earlier run's: updated, still unstamped."""
    fmt, make = SETS["box-memory/examples"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    location = make(tmp_path / "a")
    target = _new_target(fmt, location, tmp_path / "b")
    _run(f"{fmt}:{location}", target)
    _edit_source_body(location, b"how long do we keep them?", b"how long do we keep them (revised)?")
    again = _run(f"{fmt}:{location}", target)
    assert (again.counts["updated"], again.counts["written"]) == (1, 0)
    updated = [e for e in again.entries if e.action == "updated"]
    assert [e.target_id for e in updated] == ["mem_01HXYZA1B2C3D4E5F6G7H8J9K0"]
    text = Path(target.partition(":")[2], "memories", "decision__jwt-vs-sessions-decision.md").read_bytes()
    assert b"(revised)" in text and b"migrated_from" not in text


def test_without_a_journal_an_unstamped_entry_holding_something_else_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No journal: the copy under the source's id may be another's or edited; the source entry goes beside it."""
    fmt, make = SETS["box-memory/examples"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    location = make(tmp_path / "a")
    target = _new_target(fmt, location, tmp_path / "b")
    _run(f"{fmt}:{location}", target)
    kept = Path(target.partition(":")[2], "memories", "decision__jwt-vs-sessions-decision.md").read_bytes()
    _edit_source_body(location, b"how long do we keep them?", b"how long do we keep them (revised)?")
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "other-state"))
    again = _run(f"{fmt}:{location}", target)
    assert (again.counts["updated"], again.counts["written"], again.counts["unchanged"]) == (0, 1, 2)
    assert Path(target.partition(":")[2], "memories", "decision__jwt-vs-sessions-decision.md").read_bytes() == kept
    (beside,) = [e for e in again.entries if e.action == "written"]
    assert beside.target_id != beside.source_id
    with memcore_open(target) as store:
        assert "migrated_from" in store.get(beside.target_id or "").extra["memcore"]
