"""Writes that would leave a workspace its own ``validate`` flags are refused before anything is written.

Issue 17, items 9 (a write validate would call an error), 11 (a value of the wrong YAML type) and
14 (team names that cannot name a folder of their own).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError, MemcoreError, UnsafePathError
from memcore.models import Kind, MemoryEntry, Severity
from memcore_box.provider import BoxMemoryProvider


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path), teams="default,eng")
    return path


@pytest.fixture
def store(root: Path) -> BoxMemoryProvider:
    provider = BoxMemoryProvider(str(root)).open()
    yield provider
    provider.close()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _errors(store: BoxMemoryProvider) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in store.validate() if d.severity is Severity.ERROR]


# -- item 14: team names ---------------------------------------------------------------------------
@pytest.mark.parametrize("team", [".git", ".memcore", ".", ".."])
def test_reserved_team_name_is_refused_and_nothing_is_written(store: BoxMemoryProvider, root: Path,
                                                              team: str) -> None:
    before = _files(root)
    with pytest.raises(UnsafePathError, match="team name|dot name"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Hidden", body="x\n", scope=team))
    assert _files(root) == before
    assert not (root / "teams" / team).exists() or team in {".", ".."}


def test_team_differing_only_in_case_from_a_known_team_is_refused(store: BoxMemoryProvider, root: Path) -> None:
    before = _files(root)
    with pytest.raises(UnsafePathError, match=r"'ENG' differs from the existing team 'eng' only in case"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Twin", body="x\n", scope="ENG"))
    with pytest.raises(UnsafePathError, match="only in case"):
        store.add(MemoryEntry(kind=Kind.FACT, title="Twin", body="x\n", scope="Default"))
    assert _files(root) == before
    stored = store.add(MemoryEntry(kind=Kind.FACT, title="Fine", body="x\n", scope="eng"))
    assert store.file_of(stored) == "teams/eng/memories/fact__fine.md"


def test_init_refuses_case_twin_and_reserved_teams(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="only in case"):
        BoxMemoryProvider.init_store(str(tmp_path / "a"), teams="eng,Eng")
    with pytest.raises(UnsafePathError, match="reserved"):
        BoxMemoryProvider.init_store(str(tmp_path / "b"), teams="default,.git")
    assert not (tmp_path / "a" / "teams" / "Eng").exists()
