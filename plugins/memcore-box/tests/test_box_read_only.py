"""A store opened ``read_only`` refuses every write before any I/O; a batch sees files edited under it.

Issue 18: read-only and write sessions come from core (``BaseProvider``); Box used to ignore
``read_only`` (an ``add`` succeeded on a store opened with it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import ConflictError, ReadOnlyStoreError
from memcore.models import Kind, MemoryEntry
from memcore_box.provider import BoxMemoryProvider


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _fact(title: str) -> MemoryEntry:
    return MemoryEntry(kind=Kind.FACT, title=title, body=f"{title}.\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path))
    (path / "files").mkdir(exist_ok=True)
    (path / "files" / "report.pdf").write_bytes(b"%PDF fake\n")
    with BoxMemoryProvider(str(path)) as store:
        store.add(_fact("First"))
        store.add(_fact("Second"))
    return path


def _writes(store: BoxMemoryProvider) -> dict[str, Callable[[], Any]]:
    """Every write operation of the Box provider, each on an entry of the store."""
    first, second = sorted(store.iter_entries(), key=lambda e: e.title)

    def update() -> Any:
        changed = first.model_copy(update={"body": "changed\n"})
        return store.update(changed, expected_version=first.version)

    return {
        "add": lambda: store.add(_fact("Third")),
        "update": update,
        "delete": lambda: store.delete(first.id or ""),
        "archive": lambda: store.archive(first.id or ""),
        "supersede": lambda: store.supersede(second.id or "", _fact("Second, again")),
        "add_companion": lambda: store.add_companion("files/report.pdf"),
        "reindex": store.reindex,
    }


OPERATIONS = ["add", "update", "delete", "archive", "supersede", "add_companion", "reindex"]


def test_every_write_operation_is_listed() -> None:
    assert set(OPERATIONS) == set(BoxMemoryProvider.write_operations)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_read_only_store_refuses_each_write_and_changes_no_byte(root: Path, operation: str) -> None:
    before = _files(root)
    with BoxMemoryProvider(str(root), read_only=True) as store:
        assert store.read_only
        write = _writes(store)[operation]
        # archive is BaseProvider's (an update): refused as that update, before any I/O
        name = "update" if operation == "archive" else operation
        with pytest.raises(ReadOnlyStoreError, match=rf"read-only; `{name}` refused"):
            write()
        with pytest.raises(ReadOnlyStoreError), store.batch():
            write()
        assert len(list(store.iter_entries())) == 2  # reads still work
    assert _files(root) == before


@pytest.mark.parametrize("value", ["true", "yes", "ture"])
def test_read_only_option_is_fail_closed(root: Path, value: str) -> None:
    before = _files(root)
    with BoxMemoryProvider(str(root), read_only=value) as store, pytest.raises(ReadOnlyStoreError):
        store.add(_fact("Refused"))
    assert _files(root) == before


def test_file_edited_on_disk_during_a_batch_makes_it_raise_conflict_and_write_nothing(root: Path) -> None:
    with BoxMemoryProvider(str(root)) as store:
        target = next(e for e in store.iter_entries() if e.title == "First")
        path = root / store.file_of(target)
        with pytest.raises(ConflictError), store.batch():
            seen = store.get(target.id or "")  # the batch reads the file once
            path.write_bytes(path.read_bytes().replace(b"First.", b"Edited by someone else."))
            edited = _files(root)
            store.update(seen.model_copy(update={"body": "mine\n"}))
        assert _files(root) == edited  # no memory file, index or config written
        assert "Edited by someone else." in store.get(target.id or "").body
