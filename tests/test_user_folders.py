"""The cache, state and lock folders come from platformdirs, and each has its env override."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from memcore.index import default_cache_dir
from memcore.migrate.journal import journal_dir
from memcore.storage import lock_path_for


@pytest.fixture
def no_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("MEMCORE_CACHE_DIR", "MEMCORE_STATE_DIR", "MEMCORE_LOCK_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    return tmp_path


def test_defaults_are_platformdirs_user_folders(no_overrides: Path) -> None:
    cache = Path(platformdirs.user_cache_dir("memcore", appauthor=False, ensure_exists=False))
    state = Path(platformdirs.user_state_dir("memcore", appauthor=False, ensure_exists=False))
    assert default_cache_dir() == cache
    assert journal_dir() == state / "migrations"
    assert lock_path_for(no_overrides / "store").parent == cache / "locks"


def test_defaults_follow_xdg_variables_on_linux(no_overrides: Path) -> None:
    if sys.platform == "darwin" or sys.platform == "win32":
        pytest.skip("platformdirs follows the XDG variables on Linux and the BSDs only")
    assert default_cache_dir() == no_overrides / "xdg-cache" / "memcore"
    assert journal_dir() == no_overrides / "xdg-state" / "memcore" / "migrations"
    assert lock_path_for(no_overrides / "store").parent == no_overrides / "xdg-cache" / "memcore" / "locks"


def test_env_variables_override_each_folder(no_overrides: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(no_overrides / "c"))
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(no_overrides / "s"))
    monkeypatch.setenv("MEMCORE_LOCK_DIR", str(no_overrides / "l"))
    assert default_cache_dir() == no_overrides / "c"
    assert journal_dir() == no_overrides / "s"
    assert lock_path_for(no_overrides / "store").parent == no_overrides / "l"
