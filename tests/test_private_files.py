"""Derived files are as private as their source; locks belong to one user (issue 17, items 5 and 6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from tests.conftest import JsonDirProvider

from memcore import MemoryEntry
from memcore.errors import LockPathError, MemcoreError
from memcore.index import SearchIndex
from memcore.migrate.journal import save_journal
from memcore.storage import atomic_write, file_lock, lock_path_for

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def wide_umask():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_index_database_and_side_files_are_0600_in_a_0700_folder(tmp_path: Path, wide_umask: None) -> None:
    root = tmp_path / "store"
    root.mkdir()
    store = JsonDirProvider(root)
    store.add(MemoryEntry(id="secret", title="Secret", body="the vault code"))
    cache = tmp_path / "cache" / "memcore"
    with SearchIndex(store, cache_dir=cache) as index:
        assert index.search("vault")
        files = sorted(p for p in cache.iterdir())
        assert index.path in files
        assert any(p.name.endswith("-wal") for p in files), files
        assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
    assert _mode(cache) == 0o700
    assert _mode(cache.parent) == 0o700  # every folder memcore created


def test_an_index_database_left_0644_by_an_older_version_is_narrowed_to_0600(tmp_path: Path, wide_umask: None) -> None:
    root = tmp_path / "store"
    root.mkdir()
    store = JsonDirProvider(root)
    store.add(MemoryEntry(id="a", title="A", body="alpha"))
    cache = tmp_path / "cache"
    cache.mkdir()
    with SearchIndex(store, cache_dir=cache) as index:
        path = index.path
    os.chmod(path, 0o644)
    with SearchIndex(store, cache_dir=cache) as index:
        assert index.search("alpha")
    assert _mode(path) == 0o600


def test_migration_journal_is_0600_in_0700_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wide_umask: None
) -> None:
    state = tmp_path / "state" / "memcore" / "migrations"
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(state))
    path = save_journal("maka:/a/MEMORY.md", "box:/b", {"mem_1": "sha256:00"})
    assert _mode(path) == 0o600
    assert _mode(state) == 0o700
    assert _mode(state.parent) == 0o700
    assert _mode(state.parent.parent) == 0o700


def test_atomic_write_keeps_0600_of_the_file_it_replaces(tmp_path: Path, wide_umask: None) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o600)
    atomic_write(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert _mode(path) == 0o600


def test_locks_live_in_a_private_per_user_folder_not_a_shared_tmp_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wide_umask: None
) -> None:
    monkeypatch.delenv("MEMCORE_LOCK_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = tmp_path / "store"
    lock = lock_path_for(store)
    assert lock.parent == tmp_path / "cache" / "memcore" / "locks"
    with file_lock(store):
        assert _mode(lock) == 0o600
    assert _mode(lock.parent) == 0o700
    assert _mode(lock.parent.parent) == 0o700
    assert lock.parent.stat().st_uid == os.getuid()


def test_lock_folder_is_the_same_with_or_without_a_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A login shell (XDG_RUNTIME_DIR set) and a cron job (unset) writing one store share one lock."""
    monkeypatch.delenv("MEMCORE_LOCK_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runtime = tmp_path / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    in_session = lock_path_for(tmp_path / "store")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert lock_path_for(tmp_path / "store") == in_session


def test_relative_lock_dir_is_refused_naming_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_LOCK_DIR", "locks")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LockPathError, match="absolute path"):
        lock_path_for(tmp_path / "store")
    assert not (tmp_path / "locks").exists()


def test_symlink_planted_at_a_lock_path_is_refused_and_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_LOCK_DIR", str(tmp_path / "locks"))
    store = tmp_path / "store"
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    lock = lock_path_for(store)
    os.symlink(victim, lock)
    with pytest.raises(LockPathError) as err:
        with file_lock(store):
            pass
    assert str(lock) in str(err.value) and "remove it" in str(err.value)
    assert isinstance(err.value, MemcoreError)
    assert victim.read_bytes() == b"precious\n"
    assert os.path.islink(lock)


def test_folder_planted_at_a_lock_path_is_refused_naming_path_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_LOCK_DIR", str(tmp_path / "locks"))
    store = tmp_path / "store"
    lock = lock_path_for(store)
    lock.mkdir()
    with pytest.raises(LockPathError) as err:
        with file_lock(store):
            pass
    assert str(lock) in str(err.value) and "remove it" in str(err.value)


def test_lock_folder_open_to_other_users_is_refused_naming_path_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "memcore-locks"
    shared.mkdir()
    os.chmod(shared, 0o755)
    monkeypatch.setenv("MEMCORE_LOCK_DIR", str(shared))
    with pytest.raises(LockPathError) as err:
        with file_lock(tmp_path / "store"):
            pass
    assert str(shared) in str(err.value) and "chmod 700" in str(err.value)


def test_lock_folder_that_is_a_symlink_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "locks"
    os.symlink(real, link)
    monkeypatch.setenv("MEMCORE_LOCK_DIR", str(link))
    with pytest.raises(LockPathError, match="symlink"):
        with file_lock(tmp_path / "store"):
            pass


def test_sweep_removes_only_old_files_named_as_memcores_temps(tmp_path: Path) -> None:
    import time

    from memcore.storage import sweep_temp_files

    (tmp_path / "sub").mkdir()
    old = time.time() - 3600
    stale = tmp_path / "sub" / ".note.md.0123456789ab.tmp"
    fresh = tmp_path / ".note.md.ba9876543210.tmp"
    foreign = [tmp_path / ".note.md.tmp", tmp_path / ".note.md.0123456789AB.tmp", tmp_path / "note.md.0123456789ab.tmp"]
    for path in [stale, fresh, *foreign]:
        path.write_bytes(b"x")
        os.utime(path, (old, old))
    os.utime(fresh, None)  # a live writer's temp file: written just now
    assert sweep_temp_files(tmp_path) == [stale]
    assert not stale.exists()
    assert fresh.exists() and all(p.exists() for p in foreign)


def test_migration_scratch_copy_is_0600_files_in_0700_folders(tmp_path: Path, wide_umask: None) -> None:
    from memcore.migrate.stores import _scratch_copy

    store = tmp_path / "vault"
    (store / "sensitive").mkdir(parents=True)
    (store / "sensitive" / "keys.md").write_text("the vault code\n")
    os.chmod(store / "sensitive" / "keys.md", 0o644)
    os.chmod(store / "sensitive", 0o755)
    with _scratch_copy(str(store)) as scratch:
        copy = Path(scratch)
        assert (copy / "sensitive" / "keys.md").read_text() == "the vault code\n"
        assert _mode(copy.parent) == 0o700
        assert _mode(copy) == 0o700 and _mode(copy / "sensitive") == 0o700
        assert _mode(copy / "sensitive" / "keys.md") == 0o600
    single = tmp_path / "MEMORY.md"
    single.write_text("# Maka Memory\n")
    os.chmod(single, 0o644)
    with _scratch_copy(str(single)) as scratch:
        assert _mode(Path(scratch)) == 0o600
