"""C6 + W1: symbolic links in a local workspace (a loop, one leading outside, a broken one).

``LocalStorage.list`` skips such an entry and records it in ``LocalStorage.skipped`` as
``(workspace-relative path, reason)``; the rest of the workspace stays readable, nothing outside
it is read, and direct access to such a path raises a :class:`memcore.errors.MemcoreError`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memcore.errors import MemcoreError, UnsafePathError
from memcore.storage import LocalStorage
from memcore_box.provider import BoxMemoryProvider

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "box-workspace"
SECRET = "outside-secret-text-7f3a"

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symlinks")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "fact__secret.md").write_text(
        f"---\nid: mem_01JOUTSIDEOUTSIDEOUTSIDE01\nkind: fact\ntitle: {SECRET}\n---\n{SECRET}\n", encoding="utf-8"
    )
    (folder / "memories").mkdir()
    shutil.copyfile(folder / "fact__secret.md", folder / "memories" / "fact__secret.md")
    return folder


def _ids(root: Path) -> list[str]:
    with BoxMemoryProvider(str(root)) as store:
        return sorted(e.id or "" for e in store.iter_entries())


def test_symlink_loop_is_skipped_not_raised(workspace: Path) -> None:
    expected = _ids(workspace)
    os.symlink("fact__loop.md", workspace / "memories" / "fact__loop.md")
    storage = LocalStorage(workspace, label="box", noun="workspace")
    names = [i.name for i in storage.list("memories")]
    assert "fact__loop.md" not in names
    assert "fact__python-tooling.md" in names
    assert [p for p, _ in storage.skipped] == ["memories/fact__loop.md"]
    assert "loop" in storage.skipped[0][1]
    assert _ids(workspace) == expected
    with BoxMemoryProvider(str(workspace)) as store:
        store.validate()
    with pytest.raises(UnsafePathError):
        storage.read("memories/fact__loop.md")
    with pytest.raises(MemcoreError):
        storage.stat("memories/fact__loop.md")


def test_symlink_to_a_file_outside_is_skipped_and_never_read(workspace: Path, outside: Path) -> None:
    expected = _ids(workspace)
    os.symlink(outside / "fact__secret.md", workspace / "memories" / "fact__link.md")
    storage = LocalStorage(workspace, label="box", noun="workspace")
    assert "fact__link.md" not in [i.name for i in storage.list("memories")]
    assert storage.skipped == [("memories/fact__link.md", storage.skipped[0][1])]
    assert "outside the workspace" in storage.skipped[0][1]
    assert _ids(workspace) == expected
    with BoxMemoryProvider(str(workspace)) as store:
        diags = store.validate()
        titles = [e.title for e in store.iter_entries()]
    assert SECRET not in " ".join(titles)
    assert all(SECRET not in d.message for d in diags)
    with pytest.raises(UnsafePathError):
        storage.read("memories/fact__link.md")


def test_team_folder_linked_outside_is_skipped(workspace: Path, outside: Path) -> None:
    expected = _ids(workspace)
    os.symlink(outside, workspace / "teams" / "elsewhere")
    storage = LocalStorage(workspace, label="box", noun="workspace")
    assert "elsewhere" not in [i.name for i in storage.list("teams")]
    assert [p for p, _ in storage.skipped] == ["teams/elsewhere"]
    assert _ids(workspace) == expected
    with BoxMemoryProvider(str(workspace)) as store:
        store.validate()


def test_folder_linked_to_its_ancestor_is_skipped(workspace: Path) -> None:
    expected = _ids(workspace)
    os.symlink("..", workspace / "memories" / "up")
    os.symlink(".", workspace / "teams" / "self")
    storage = LocalStorage(workspace, label="box", noun="workspace")
    assert "up" not in [i.name for i in storage.list("memories")]
    assert "self" not in [i.name for i in storage.list("teams")]
    assert sorted(p for p, _ in storage.skipped) == ["memories/up", "teams/self"]
    assert _ids(workspace) == expected


def test_broken_symlink_is_skipped(workspace: Path) -> None:
    expected = _ids(workspace)
    os.symlink("nowhere.md", workspace / "memories" / "fact__gone.md")
    storage = LocalStorage(workspace, label="box", noun="workspace")
    assert "fact__gone.md" not in [i.name for i in storage.list("memories")]
    assert [p for p, _ in storage.skipped] == ["memories/fact__gone.md"]
    assert storage.skipped[0][1] == "broken symbolic link to nowhere.md"
    assert _ids(workspace) == expected


def test_link_inside_the_workspace_is_still_followed(workspace: Path) -> None:
    (workspace / "memories" / "fact__python-tooling.md").rename(workspace / "real.md")
    os.symlink("../real.md", workspace / "memories" / "fact__python-tooling.md")
    storage = LocalStorage(workspace, label="box", noun="workspace")
    assert "fact__python-tooling.md" in [i.name for i in storage.list("memories")]
    assert storage.skipped == []


def test_fixed_link_leaves_skipped(workspace: Path) -> None:
    link = workspace / "memories" / "fact__loop.md"
    os.symlink("fact__loop.md", link)
    storage = LocalStorage(workspace, label="box", noun="workspace")
    storage.list("memories")
    assert storage.skipped
    link.unlink()
    storage.list("memories")
    assert storage.skipped == []


def test_validate_reports_skipped_links(tmp_path: Path) -> None:
    from memcore_box import BoxMemoryProvider

    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    (root / "memories" / "fact__loop.md").symlink_to("fact__loop.md")
    with BoxMemoryProvider(str(root)) as store:
        assert list(store.iter_entries()) == []
        diags = [d for d in store.validate() if d.code == "box.skipped-link"]
    assert [(d.path, d.severity.value) for d in diags] == [("memories/fact__loop.md", "warning")]


def test_index_entries_that_are_not_objects_are_a_warning_not_a_crash(tmp_path: Path) -> None:
    from memcore import MemoryEntry

    root = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(title="Keep me", body="x"))
    (root / "memories" / "_index.json").write_text('{"entries": [5, null, {"id": 3}], "by_id": {}}')
    with BoxMemoryProvider(str(root)) as store:
        assert [e.title for e in store.iter_entries()] == ["Keep me"]
        codes = {d.code for d in store.validate()}
    assert "box.index-missing" in codes
