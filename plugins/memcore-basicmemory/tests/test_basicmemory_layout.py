"""A note's layout (file name, frontmatter keys and their order, flow lists) read and followed by ``add``.

The reader puts in ``extra.basicmemory.layout`` how a note's file is laid out wherever the writer
would lay it out otherwise (``file``, ``keys``, ``flow``); ``add`` follows those hints where it safely
can, so a note copied into a new project is the same file, byte for byte.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memcore.migrate import migrate
from memcore.models import MemoryEntry
from memcore_basicmemory.provider import BasicMemoryProvider

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "basic-memory"


def _one(tmp_path: Path, rel: str, data: bytes) -> MemoryEntry:
    (tmp_path / "a" / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "a" / rel).write_bytes(data)
    with BasicMemoryProvider(tmp_path / "a") as store:
        (entry,) = list(store.iter_entries())
    return entry


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("rel", sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.md")))
def test_every_sample_note_added_to_a_new_project_is_the_same_file(rel: str, tmp_path: Path) -> None:
    entry = _one(tmp_path, rel, (SAMPLES / rel).read_bytes())
    (tmp_path / "b").mkdir()
    with BasicMemoryProvider(tmp_path / "b") as store:
        stored = store.add(entry)
    assert _files(tmp_path / "b") == {rel: (SAMPLES / rel).read_bytes()}
    assert stored.id == entry.id and stored.extra == entry.extra


def test_a_note_whose_file_is_not_its_title_carries_its_file_name(tmp_path: Path) -> None:
    entry = _one(tmp_path, "valid/paul-graham.md", (SAMPLES / "fixtures" / "valid" / "paul-graham.md").read_bytes())
    assert entry.title == "Paul Graham"
    assert entry.extra["basicmemory"]["layout"] == {
        "file": "paul-graham.md",
        "keys": ["title", "type", "tags"],  # no permalink
        "flow": ["tags"],
    }


def test_a_note_laid_out_as_the_writer_writes_carries_no_hint(tmp_path: Path) -> None:
    rel = "notes/Coffee Brewing Methods.md"
    entry = _one(tmp_path, rel, (SAMPLES / "rendered-bm-0.24.1" / "project-demo" / rel).read_bytes())
    assert "layout" not in entry.extra["basicmemory"]


@pytest.mark.parametrize("name", ["../evil.md", "sub/evil.md", ".hidden.md", "evil.txt", "con.md", "a:b.md", ""])
def test_an_unsafe_file_name_falls_back_to_the_title(name: str, tmp_path: Path) -> None:
    entry = MemoryEntry(title="Safe Title", body="text", extra={"basicmemory": {"layout": {"file": name}}})
    (tmp_path / "p").mkdir()
    with BasicMemoryProvider(tmp_path / "p") as store:
        stored = store.add(entry)
    assert sorted(_files(tmp_path)) == ["p/Safe Title.md"]
    assert "file" not in stored.extra.get("basicmemory", {})


def test_a_file_name_another_note_has_falls_back_to_the_title_and_leaves_that_note_alone(tmp_path: Path) -> None:
    (tmp_path / "Other.md").write_bytes(b"---\ntitle: Other\ntype: note\npermalink: other\n---\n\nmine\n")
    before = (tmp_path / "Other.md").read_bytes()
    entry = MemoryEntry(id="copy", title="Copy", body="text", extra={"basicmemory": {"layout": {"file": "other.MD"}}})
    with BasicMemoryProvider(tmp_path) as store:
        store.add(entry)
    assert (tmp_path / "Other.md").read_bytes() == before
    assert sorted(_files(tmp_path)) == ["Copy.md", "Other.md"]


def test_a_migration_whose_file_name_is_taken_reports_the_file_name_as_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "src").mkdir()
    shutil.copyfile(SAMPLES / "fixtures" / "valid" / "paul-graham.md", tmp_path / "src" / "paul-graham.md")
    (tmp_path / "dst").mkdir()
    taken = b"---\ntitle: Someone else\ntype: note\npermalink: someone\n---\n\nnot Paul\n"
    (tmp_path / "dst" / "Paul-Graham.md").write_bytes(taken)
    report = migrate(f"basicmemory:{tmp_path / 'src'}", f"basicmemory:{tmp_path / 'dst'}")
    assert report.counts["written"] == 1 and report.counts["lossy"] == 1
    (written,) = [e for e in report.entries if e.action == "written"]
    assert [(c.field, c.written, c.stored) for c in written.losses] == [
        (
            "extra.basicmemory.layout",
            {"file": "paul-graham.md", "keys": ["title", "type", "tags"], "flow": ["tags"]},
            {"keys": ["title", "type", "tags"], "flow": ["tags"]},
        )
    ]
    assert (tmp_path / "dst" / "Paul-Graham.md").read_bytes() == taken
    assert (tmp_path / "dst" / "Paul Graham.md").is_file()


def test_keys_the_note_had_not_are_left_out_only_where_they_read_back_the_same(tmp_path: Path) -> None:
    hints = {"basicmemory": {"layout": {"keys": ["title", "tags"], "file": "x.md"}}}
    with BasicMemoryProvider(tmp_path, project="demo") as store:
        # the id is not the path's permalink (the project prefixes it): it is written
        store.add(MemoryEntry(id="x", title="X", tags=["a"], body="b", extra=hints, created_at=None))
        bare = {"basicmemory": {"layout": {"keys": []}}}
        store.add(MemoryEntry(id="demo/y", title="Y", kind="decision", body="b", extra=bare, created_at=None))
    assert (tmp_path / "x.md").read_bytes() == b"---\ntitle: X\npermalink: x\ntags:\n- a\n---\n\nb"
    assert (tmp_path / "Y.md").read_bytes() == b"---\ntype: decision\n---\n\nb"
    with BasicMemoryProvider(tmp_path, project="demo") as store:
        assert sorted((e.id, e.title, e.kind.value) for e in store.iter_entries()) == [
            ("demo/y", "Y", "decision"),
            ("x", "X", "note"),
        ]


def test_a_note_without_frontmatter_is_added_without_one_when_the_path_gives_every_value(tmp_path: Path) -> None:
    entry = _one(tmp_path, "plain.md", b"just text\n")
    (tmp_path / "b").mkdir()
    with BasicMemoryProvider(tmp_path / "b") as store:
        store.add(entry)
        store.add(entry.model_copy(update={"id": "other", "extra": entry.extra}))  # an id the path does not give
    assert (tmp_path / "b" / "plain.md").read_bytes() == b"just text\n"
    assert (tmp_path / "b" / "plain 1.md").read_bytes() == b"---\ntitle: plain\npermalink: other\n---\n\njust text\n"
    with BasicMemoryProvider(tmp_path / "b") as store:
        assert sorted(e.id or "" for e in store.iter_entries()) == ["other", "plain"]


def test_the_layout_hints_never_reach_the_memcore_key(tmp_path: Path) -> None:
    hints = {"layout": {"file": "f.md", "keys": ["permalink", "title", "type"], "flow": ["tags"]}, "folder": "n"}
    with BasicMemoryProvider(tmp_path) as store:
        store.add(
            MemoryEntry(id="n/f", title="F", tags=["a", "b"], body="x", extra={"basicmemory": hints}, created_at=None)
        )
    assert (tmp_path / "n" / "f.md").read_bytes() == (
        b"---\npermalink: n/f\ntitle: F\ntype: note\ntags: [a, b]\n---\n\nx"
    )
    assert os.listdir(tmp_path) == ["n"]


@pytest.mark.parametrize(
    ("existing", "extra", "title"),
    [
        ("\u00e9.md", {"layout": {"file": "e\u0301.md"}}, "Copy"),  # the hint NFD, the note NFC
        ("e\u0301.md", {"layout": {"file": "\u00e9.md"}}, "Copy"),  # the hint NFC, the note NFD
        ("e\u0301.md", {}, "\u00e9"),  # the title's name, the note NFD
        ("\u00e9/a.md", {"folder": "e\u0301"}, "a"),  # the folder NFD, the note's NFC
    ],
)
def test_a_file_name_another_note_has_in_another_unicode_spelling_leaves_that_note_alone(
    existing: str, extra: dict[str, object], title: str, tmp_path: Path
) -> None:
    (tmp_path / existing).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / existing).write_bytes(b"---\ntitle: Other\ntype: note\n---\n\nmine\n")
    before = _files(tmp_path)
    with BasicMemoryProvider(tmp_path) as store:
        store.add(MemoryEntry(title=title, body="text", extra={"basicmemory": extra}))
    after = _files(tmp_path)
    assert {rel: after.get(rel) for rel in before} == before
    assert len(after) == 2


@pytest.mark.parametrize("what", ["folder", "link out", "dangling link"])
def test_a_file_name_held_by_something_that_is_no_note_falls_back_to_the_title(what: str, tmp_path: Path) -> None:
    (tmp_path / "out.md").write_bytes(b"outside\n")
    root = tmp_path / "p"
    root.mkdir()
    if what == "folder":
        (root / "held.md").mkdir()
    else:
        (root / "held.md").symlink_to(tmp_path / ("out.md" if what == "link out" else "none.md"))
    entry = MemoryEntry(title="Safe Title", body="text", extra={"basicmemory": {"layout": {"file": "held.md"}}})
    with BasicMemoryProvider(root) as store:
        stored = store.add(entry)
    assert stored.id == "safe-title"
    assert (root / "Safe Title.md").is_file()
    assert (root / "held.md").is_dir() if what == "folder" else (root / "held.md").is_symlink()
    assert (tmp_path / "out.md").read_bytes() == b"outside\n"


def test_a_title_whose_file_name_is_a_folder_gets_the_next_name(tmp_path: Path) -> None:
    (tmp_path / "Copy.md").mkdir()
    with BasicMemoryProvider(tmp_path) as store:
        store.add(MemoryEntry(title="Copy", body="text"))
    assert (tmp_path / "Copy 1.md").is_file() and (tmp_path / "Copy.md").is_dir()
