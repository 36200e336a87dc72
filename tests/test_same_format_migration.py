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
id) unless the target changed it (a field kept in free data); a second run writes nothing,
with its journal and without.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memcore.migrate import ConversionReport, migrate
from memcore.registry import get_registry

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
    "rightmemory/test-fixture-extracted-test_graph": ("rightmemory", _folder(_RM / "test-fixture-extracted-test_graph")),
    "rightmemory/MEMORY+PURSUITS.example": (
        "rightmemory",
        _files({"MEMORY.md": _RM / "MEMORY.example.at-0fad0d5.md", "PURSUITS.md": _RM / "PURSUITS.example.at-23141ba.md"}),
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
    "basic-memory/rendered-bm-0.24.1/project-demo": ("basicmemory", _folder(_BM / "rendered-bm-0.24.1" / "project-demo")),
    "basic-memory/rendered-bm-0.24.1/import-memory-json": (
        "basicmemory",
        _folder(_BM / "rendered-bm-0.24.1" / "import-memory-json"),
    ),
    "basic-memory/fixtures": ("basicmemory", _folder(_BM / "fixtures")),
    **{
        f"mcp-memory-jsonl/{p.parent.name}/{p.name}": ("mcpmemory", _one_file(p, "memory.jsonl"))
        for p in sorted((SAMPLES / "mcp-memory-jsonl").glob("*/*.json*"))
    },
    **{f"claude-code-memory/auto-memory/{p.name}": ("claudecode", _folder(p)) for p in sorted((_CC / "auto-memory").iterdir())},
    "claude-code-memory/anthropic-claude-md": ("claudecode", _folder(_CC / "anthropic-claude-md")),
}

#: sample set -> {file: why it cannot come out byte-identical}
NEEDS: dict[str, dict[str, str]] = {}


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


@pytest.mark.parametrize("name", list(SETS))
def test_same_format_migration_gives_the_files_back(name: str, tmp_path: Path) -> None:
    fmt, make = SETS[name]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    location = make(tmp_path / "a")
    source_files = _snapshot(location)
    target = _new_target(fmt, location, tmp_path / "b")
    report = migrate(f"{fmt}:{location}", target)
    assert _snapshot(location) == source_files, "the source was modified"
    assert report.counts["failed"] == 0, [(e.source_id, e.error) for e in report.entries if e.error]
    target_files = _snapshot(target.partition(":")[2])
    differing = _differing(source_files, target_files)
    identical = len(source_files) - len(differing & source_files.keys())
    print(f"{name}: {identical}/{len(source_files)} files byte-identical; differ: {sorted(differing)}")
    assert differing == set(NEEDS.get(name, {})), {f: NEEDS.get(name, {}).get(f, "not expected") for f in differing}
