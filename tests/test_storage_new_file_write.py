"""LocalStorage's new-file write and the session's unread version give what the general paths give."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import ConflictError
from memcore.storage import CREATE, LocalStorage, WriteSession, version_token


def _write(root: Path, path: str, data: bytes, monkeypatch: pytest.MonkeyPatch, *, on: bool, **kw: Any) -> Any:
    monkeypatch.setenv("MEMCORE_NEW_FILE_WRITES", "1" if on else "0")
    try:
        return LocalStorage(root, **kw).write(path, data, expected_version=CREATE)
    except (ConflictError, OSError) as exc:
        return f"{type(exc).__name__}"


def _tree(root: Path) -> dict[str, Any]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None, stat.S_IMODE(os.lstat(p).st_mode))
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize(
    "case", ["new", "exists", "no-folder", "folder-is-a-file", "top-level", "dangling-link", "large", "mode"]
)
def test_a_create_writes_and_refuses_what_the_general_write_does(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = []
    for on in (True, False):
        root = tmp_path / ("on" if on else "off")
        (root / "memories").mkdir(parents=True)
        path, data, kw = "memories/fact__x.md", b"---\nid: a\n---\n", {}
        if case == "exists":
            (root / "memories" / "fact__x.md").write_bytes(b"old\n")
        elif case == "no-folder":
            path = "teams/eng/fact__x.md"
        elif case == "folder-is-a-file":
            (root / "teams").write_bytes(b"")
            path = "teams/fact__x.md"
        elif case == "top-level":
            path = "fact__x.md"
        elif case == "dangling-link":
            (root / "memories" / "fact__x.md").symlink_to(root / "nowhere.md")
        elif case == "large":
            data = b"x" * 70_000
        elif case == "mode":
            kw = {"file_mode": 0o600}
        item = _write(root, path, data, monkeypatch, on=on, **kw)
        results.append((item, _tree(root)))
    assert results[0] == results[1]
    if case in {"new", "top-level", "large", "mode"}:
        assert results[0][0].version == version_token(b"x" * 70_000 if case == "large" else b"---\nid: a\n---\n")


def test_the_new_file_path_asks_the_disk_about_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "memories").mkdir()
    asked: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat

    def counting_stat(p: Any, *a: Any, **k: Any) -> Any:
        asked.append(str(p))
        return real_stat(p, *a, **k)

    def counting_lstat(p: Any, *a: Any, **k: Any) -> Any:
        asked.append(str(p))
        return real_lstat(p, *a, **k)

    storage = LocalStorage(tmp_path)
    monkeypatch.setattr(os, "stat", counting_stat)
    monkeypatch.setattr(os, "lstat", counting_lstat)
    storage.write("memories/fact__x.md", b"x\n", expected_version=CREATE)
    assert [p for p in asked if p.endswith("fact__x.md")] == [f"{tmp_path}/memories/fact__x.md"]


def test_a_path_taken_as_absent_is_not_read_and_a_file_there_is_refused_then_read(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "fact__taken.md").write_bytes(b"someone's\n")
    storage = LocalStorage(tmp_path)
    reads: list[str] = []
    real_read = storage.read
    storage.read = lambda path: reads.append(path) or real_read(path)  # type: ignore[method-assign]
    session = WriteSession(storage)
    assert session.version_unread("memories/fact__new.md") is None
    session.write("memories/fact__new.md", b"new\n")
    assert [i.name for i in session.flush()] == ["fact__new.md"]
    assert session.version_unread("memories/fact__new.md") == version_token(b"new\n")  # as written
    assert session.version_unread("memories/fact__taken.md") is None  # taken as absent, unread
    session.write("memories/fact__taken.md", b"mine\n")
    with pytest.raises(ConflictError):
        session.flush()
    assert reads == []
    assert (tmp_path / "memories" / "fact__taken.md").read_bytes() == b"someone's\n"
    assert session.version("memories/fact__taken.md") == version_token(b"someone's\n")  # read now
    assert reads == ["memories/fact__taken.md"]
