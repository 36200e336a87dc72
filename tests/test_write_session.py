"""The core write session, read-only handling and local storage every provider builds on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore.errors import ConflictError, ReadOnlyStoreError
from memcore.models import MemoryEntry, Query
from memcore.provider import BaseProvider, Capability, option_flag
from memcore.storage import CREATE, LocalStorage, WriteSession, version_token


class _Recording(LocalStorage):
    """A local folder that records the order of writes and deletions."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, label="rec")
        self.calls: list[tuple[str, str]] = []

    def write(self, path: str, data: bytes, *, expected_version: str | None) -> Any:
        self.calls.append(("write", path))
        return super().write(path, data, expected_version=expected_version)

    def delete(self, path: str, *, expected_version: str | None = None) -> None:
        self.calls.append(("delete", path))
        super().delete(path, expected_version=expected_version)


class _Lines(BaseProvider):
    """A store of one file per entry, ``<id>.txt``, written only through the core session."""

    format_name = "lines"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.ADD, Capability.DELETE})

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        session = self.active_session()
        for item in self.storage.list():
            path = item.name
            data = session.read(path) if session else self.storage.read(path)[0]
            if data is not None:
                yield MemoryEntry(id=path.removesuffix(".txt"), body=data.decode())
        if session:
            for path, data in session.staged.items():
                if data is not None and not self.storage.exists(path):
                    yield MemoryEntry(id=path.removesuffix(".txt"), body=data.decode())

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        with self.session("add") as session:
            session.write(f"{entry.id}.txt", entry.body.encode())
            session.count()
        return entry

    def delete(self, entry_id: str) -> None:
        with self.session("delete") as session:
            session.delete(f"{entry_id}.txt")


def test_version_token_is_the_sha256_of_one_bytes_part_and_separates_parts() -> None:
    assert version_token(b"one") == "sha256:7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"
    assert version_token("ab", "c") != version_token("a", "bc")
    assert version_token("\udcff") != version_token("\udcfe")  # lone surrogates kept


@pytest.mark.parametrize(
    ("value", "on"),
    [
        (None, False),
        (False, False),
        ("false", False),
        (" No ", False),
        ("0", False),
        ("", False),
        (True, True),
        ("true", True),
        ("ture", True),
        ("1", True),
        (1, True),
        ("yes please", True),
    ],
)
def test_option_flag_is_off_only_for_a_recognised_false_value(value: object, on: bool) -> None:
    assert option_flag(value) is on


def test_flush_writes_new_files_then_replacements_then_deletions(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_bytes(b"old")
    (tmp_path / "gone.txt").write_bytes(b"gone")
    storage = _Recording(tmp_path)
    session = WriteSession(storage)
    session.delete("gone.txt")
    session.write("old.txt", b"new text")
    session.write("sub/new.txt", b"fresh")
    session.flush()
    assert storage.calls == [("write", "sub/new.txt"), ("write", "old.txt"), ("delete", "gone.txt")]
    assert (tmp_path / "sub/new.txt").read_bytes() == b"fresh"
    assert (tmp_path / "old.txt").read_bytes() == b"new text"
    assert not (tmp_path / "gone.txt").exists()


def test_a_file_changed_on_disk_since_the_session_read_it_is_a_conflict_and_nothing_is_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")
    (tmp_path / "b.txt").write_bytes(b"b")
    session = WriteSession(LocalStorage(tmp_path), label="lines")
    assert session.read("a.txt") == b"a"
    session.write("a.txt", b"a2")
    session.write("b.txt", b"b2")
    session.write("c.txt", b"c")
    (tmp_path / "a.txt").write_bytes(b"edited by hand")
    with pytest.raises(ConflictError, match=r"lines: .*/a\.txt changed on disk during the write"):
        session.flush()
    assert (tmp_path / "a.txt").read_bytes() == b"edited by hand"
    assert (tmp_path / "b.txt").read_bytes() == b"b"
    assert not (tmp_path / "c.txt").exists()


def test_a_staged_new_file_that_appeared_meanwhile_is_a_conflict(tmp_path: Path) -> None:
    session = WriteSession(LocalStorage(tmp_path))
    assert session.read("new.txt") is None
    session.write("new.txt", b"mine")
    (tmp_path / "new.txt").write_bytes(b"theirs")
    with pytest.raises(ConflictError, match=r"/new\.txt changed on disk during the write"):
        session.flush()
    assert (tmp_path / "new.txt").read_bytes() == b"theirs"


def test_reads_in_a_session_see_staged_writes_and_read_each_file_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")
    session = WriteSession(LocalStorage(tmp_path))
    assert session.read("a.txt") == b"a"
    (tmp_path / "a.txt").write_bytes(b"changed")  # not read again: the session's copy stands
    assert session.read("a.txt") == b"a"
    session.write("a.txt", b"staged")
    assert session.read("a.txt") == b"staged"
    session.delete("a.txt")
    assert session.read("a.txt") is None


def test_unchanged_bytes_are_not_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"same")
    storage = _Recording(tmp_path)
    session = WriteSession(storage)
    session.write("a.txt", session.read("a.txt") or b"")
    assert session.flush() == []
    assert storage.calls == []


def test_a_batch_writes_each_file_once_when_the_block_ends(tmp_path: Path) -> None:
    store = _Lines(tmp_path)
    with store.batch():
        store.add(MemoryEntry(id="a", body="one"))
        store.add(MemoryEntry(id="a", body="two"))
        store.add(MemoryEntry(id="b", body="three"))
        assert not (tmp_path / "a.txt").exists()  # staged, not written yet
        assert store.active_session() is not None
        assert store.active_session().writes == 3  # type: ignore[union-attr]
    assert (tmp_path / "a.txt").read_bytes() == b"two"
    assert (tmp_path / "b.txt").read_bytes() == b"three"
    assert store.active_session() is None


def test_what_a_failing_batch_applied_is_still_saved(tmp_path: Path) -> None:
    store = _Lines(tmp_path)
    with pytest.raises(RuntimeError, match="boom"), store.batch():
        store.add(MemoryEntry(id="a", body="one"))
        raise RuntimeError("boom")
    assert (tmp_path / "a.txt").read_bytes() == b"one"


def test_a_session_belongs_to_its_thread_and_a_second_thread_waits_for_it(tmp_path: Path) -> None:
    store = _Lines(tmp_path)
    order: list[str] = []
    inside = threading.Event()

    def other() -> None:
        inside.wait(10)
        assert store.active_session() is None  # the first thread's session is not this one's
        store.add(MemoryEntry(id="b", body="second"))
        order.append("second")

    worker = threading.Thread(target=other)
    worker.start()
    with store.batch():
        store.add(MemoryEntry(id="a", body="first"))
        inside.set()
        time.sleep(0.3)
        order.append("first")
    worker.join(10)
    assert order == ["first", "second"]
    assert (tmp_path / "b.txt").read_bytes() == b"second"


@pytest.mark.parametrize("value", [True, "true", "yes", "on please"])
def test_a_read_only_store_refuses_each_write_before_any_io(tmp_path: Path, value: object) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")
    store = _Lines(tmp_path, read_only=value)
    with pytest.raises(ReadOnlyStoreError, match="opened read-only; `add` refused"):
        store.add(MemoryEntry(id="b", body="b"))
    with pytest.raises(ReadOnlyStoreError, match="`delete` refused"):
        store.delete("a")
    with pytest.raises(ReadOnlyStoreError, match="`add` refused"), store.batch():
        store.add(MemoryEntry(id="c", body="c"))
    with pytest.raises(ReadOnlyStoreError, match="`write` refused"), store.session():
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert (tmp_path / "a.txt").read_bytes() == b"a"
    assert store._storage is None  # refused before the storage was even made


def test_storage_conditional_write_refuses_a_stale_version(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path, label="x")
    first = storage.write("f.txt", b"one", expected_version=CREATE)
    assert first.version == version_token(b"one")
    storage.write("f.txt", b"two", expected_version=first.version)
    with pytest.raises(ConflictError, match=r"^x: .*changed since it was read"):
        storage.write("f.txt", b"three", expected_version=first.version)
    assert (tmp_path / "f.txt").read_bytes() == b"two"
