"""``file_reader`` (LocalStorage.reader: reads through folder descriptors) gives what ``LocalStorage.read`` gives.

Same bytes, same version, the same exception type for every path ``read`` refuses or cannot
find: plain files, files in nested folders and at the root, links inside and outside the store,
link loops, a folder, a missing file or folder, device names, non-ASCII names, files of 64 KiB and
more (whose versions ``read`` remembers); with the descriptor reads on and off
(``MEMCORE_BULK_READ=0``), and ``versions=False`` giving ``None`` exactly where the version is
``version_token`` of the bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.storage import BULK_READ_ENV, LocalStorage, bulk_reads, file_reader, version_token

POSIX = pytest.mark.skipif(os.name != "posix", reason="descriptor reads are POSIX only")


def _outcome(read: object, path: str) -> tuple[str, object]:
    try:
        data, version = read(path)  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return "error", type(exc)
    return "ok", (data, version)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / "memories" / "deep").mkdir(parents=True)
    (root / "memories" / "fact__x.md").write_bytes(b"---\nid: a\n---\nbody\n")
    (root / "memories" / "empty.md").write_bytes(b"")
    (root / "memories" / "deep" / "note__y.md").write_bytes("caf\u00e9\n".encode())
    (root / "memories" / "_index.json").write_bytes(b"{" + b" " * 70_000 + b"}\n")
    (root / "memories" / "exact.md").write_bytes(b"x" * 65_536)
    (root / "memories" / "caf\u00e9.md").write_bytes(b"accent\n")
    (root / "top.md").write_bytes(b"at the root\n")
    (root / "memories" / "a folder.md").mkdir()
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"secret\n")
    (root / "memories" / "inside-link.md").symlink_to(root / "memories" / "fact__x.md")
    (root / "memories" / "outside-link.md").symlink_to(outside)
    (root / "memories" / "loop.md").symlink_to(root / "memories" / "loop.md")
    (root / "linked").symlink_to(root / "memories", target_is_directory=True)
    return root


PATHS = [
    "memories/fact__x.md",
    "memories/empty.md",
    "memories/deep/note__y.md",
    "memories/_index.json",
    "memories/exact.md",
    "memories/caf\u00e9.md",
    "top.md",
    "memories/a folder.md",
    "memories/inside-link.md",
    "memories/outside-link.md",
    "memories/loop.md",
    "linked/fact__x.md",
    "memories/missing.md",
    "nowhere/fact__x.md",
    "memories/con.md",
    "memories/x.",
    "memories/x ",
    "memories/../top.md",
]


@POSIX
@pytest.mark.parametrize("switch", ["1", "0"])
def test_every_path_reads_or_fails_as_read_does(store: Path, monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    monkeypatch.setenv(BULK_READ_ENV, switch)
    assert bulk_reads() == (switch == "1")
    expected = [_outcome(LocalStorage(store).read, path) for path in PATHS]
    storage = LocalStorage(store)
    with file_reader(storage) as read:
        got = [_outcome(read, path) for path in PATHS]
        again = [_outcome(read, path) for path in reversed(PATHS)]  # folders kept open, read again
    assert got == expected and again == expected[::-1]
    assert ("ok", (b"---\nid: a\n---\nbody\n", version_token(b"---\nid: a\n---\nbody\n"))) in got
    assert got[PATHS.index("memories/outside-link.md")][0] == "error"  # never read outside the store


@POSIX
def test_without_versions_the_version_is_none_exactly_where_it_is_the_hash(store: Path) -> None:
    storage = LocalStorage(store)
    expected = {path: _outcome(storage.read, path) for path in PATHS}
    with file_reader(storage, versions=False) as read:
        for path in PATHS:
            outcome = _outcome(read, path)
            if outcome[0] == "error":
                assert outcome == expected[path]
                continue
            data, version = outcome[1]  # type: ignore[misc]
            assert data == expected[path][1][0]  # type: ignore[index]
            assert (version or version_token(data)) == expected[path][1][1]  # type: ignore[index]
            if path in ("memories/fact__x.md", "memories/empty.md", "top.md"):
                assert version is None


@POSIX
def test_a_file_changed_between_reads_is_read_anew(store: Path) -> None:
    storage = LocalStorage(store)
    with file_reader(storage) as read:
        first = read("memories/fact__x.md")
        (store / "memories" / "fact__x.md").write_bytes(b"changed\n")
        second = read("memories/fact__x.md")
    assert first[0] != second[0] == b"changed\n" and second[1] == version_token(b"changed\n")


@POSIX
def test_many_folders_keep_a_bounded_number_open(tmp_path: Path) -> None:
    for number in range(70):
        folder = tmp_path / f"f{number}"
        folder.mkdir()
        (folder / "x.md").write_bytes(f"{number}\n".encode())
    storage = LocalStorage(tmp_path)
    with file_reader(storage) as read:
        got = [read(f"f{number}/x.md")[0] for number in range(70)] + [read("f0/x.md")[0]]
    assert got == [f"{number}\n".encode() for number in range(70)] + [b"0\n"]


def test_another_storage_reads_through_its_own_read() -> None:
    class Plain:
        def read(self, path: str) -> tuple[bytes, str]:
            return path.encode(), "v1"

    with file_reader(Plain()) as read:  # type: ignore[arg-type]
        assert read("a/b.md") == (b"a/b.md", "v1")
