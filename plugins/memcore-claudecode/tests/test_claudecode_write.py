"""Files memcore writes read as Claude Code's own; files it could not parse are never rewritten.

- a plain add writes Claude Code's current shape (``name``, ``description``, ``metadata.type``,
  ``metadata.modified``) and a ``- [Title](file.md) — hook`` line, with no memcore key and no
  path of this machine;
- an update that changes nothing writes no byte; one that changes the body keeps the
  frontmatter's bytes; a rename rewrites the index line when its link text was the title;
- delete removes the file and its index line, and only those;
- what Claude Code has no slot for goes to ``memcore:`` (frontmatter) or a first-line comment;
- invalid frontmatter: read as text, reported with file:line, never rewritten; imports that
  leave the store (``..``, absolute, through a symbolic link) are refused and never read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError, ParseError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_claudecode.provider import ClaudeCodeProvider

Files = Callable[[Path], dict[str, bytes]]


def test_plain_add_writes_claude_codes_shape_and_an_index_line(tmp_path: Path, files_of: Files) -> None:
    root = tmp_path / "memory"
    ClaudeCodeProvider.init_store(str(root))
    with ClaudeCodeProvider(root) as store:
        stored = store.add(
            MemoryEntry(
                kind=Kind.PREFERENCE,
                title="Short answers",
                body="Give the short answer first. Details only when asked.\n",
                created_at=datetime(2026, 3, 1, 9, 30, tzinfo=UTC),
            )
        )
    assert stored.id == "feedback_short_answers.md"
    files = files_of(root)
    assert files == {
        "MEMORY.md": b"- [Short answers](feedback_short_answers.md) \xe2\x80\x94 Give the short answer first.\n",
        "feedback_short_answers.md": (
            b"---\nname: Short answers\ndescription: Give the short answer first.\nmetadata:\n  type: feedback\n"
            b"  modified: 2026-03-01T09:30:00Z\n---\nGive the short answer first. Details only when asked.\n"
        ),
    }
    assert all(str(tmp_path).encode() not in data and b"memcore" not in data for data in files.values())


def test_fields_without_a_slot_go_to_the_memcore_key_and_come_back(tmp_path: Path) -> None:
    ClaudeCodeProvider.init_store(str(tmp_path))
    given = MemoryEntry(
        kind=Kind.DECISION,
        title="Use Postgres advisory locks",
        body="Locks are taken per job.\n",
        status=Status.SUPERSEDED,
        tags=["dispatch", "db"],
        confidence=0.7,
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
        updated_at=datetime(2026, 2, 3, 4, 5, 6, 789000, tzinfo=UTC),
        extra={"box": {"team": "work"}},
    )
    with ClaudeCodeProvider(tmp_path) as store:
        stored = store.add(given)
    text = (tmp_path / "project_use_postgres_advisory_locks.md").read_text(encoding="utf-8")
    assert "  type: project\n  modified: 2026-02-03T04:05:06.789Z\n" in text
    assert "memcore:\n  kind: decision\n  status: superseded\n" in text
    with ClaudeCodeProvider(tmp_path) as store:
        back = store.get(str(stored.id))
    for name in ("kind", "status", "tags", "confidence", "created_at", "updated_at"):
        assert getattr(back, name) == getattr(given, name), name
    assert back.extra["box"] == {"team": "work"}


def test_update_that_changes_nothing_writes_no_byte_on_every_sample(
    sample_store: Callable[[str], Path], files_of: Files
) -> None:
    for n, folder in enumerate(
        ("auto-memory/mpechner-jenkins_lab", "auto-memory/0WAQ-gsim-ops", "anthropic-claude-md")
    ):
        root = sample_store(folder)
        before = files_of(root)
        stamps = {p: os.stat(root / p).st_mtime_ns for p in before}
        with ClaudeCodeProvider(root) as store:
            for entry in list(store.iter_entries()):
                assert store.update(entry, expected_version=entry.version) == entry
        assert files_of(root) == before, folder
        assert {p: os.stat(root / p).st_mtime_ns for p in before} == stamps, folder
        os.rename(root, root.with_name(f"done-{n}"))


def test_body_change_keeps_the_frontmatter_bytes(sample_store: Callable[[str], Path]) -> None:
    root = sample_store("auto-memory/0WAQ-gsim-ops")
    path = root / "feedback_reply_style.md"
    head = path.read_bytes().split(b"---\n", 2)[1]
    with ClaudeCodeProvider(root) as store:
        entry = store.get("feedback_reply_style.md")
        entry.body = "\nReply in Chinese.\n"
        entry.relations = []  # the body's [[feedback-commit-style]] link is gone with it
        store.update(entry, expected_version=entry.version)
    assert path.read_bytes() == b"---\n" + head + b"---\n\nReply in Chinese.\n"


def test_rename_keeps_the_index_in_step(tmp_path: Path) -> None:
    ClaudeCodeProvider.init_store(str(tmp_path))
    with ClaudeCodeProvider(tmp_path) as store:
        first = store.add(MemoryEntry(title="Old name", body="One.\n"))
        store.add(MemoryEntry(title="Other", body="Two.\n"))
        entry = store.get(str(first.id))
        entry.title = "New name"
        store.update(entry, expected_version=entry.version)
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [New name](project_old_name.md) — One.\n- [Other](project_other.md) — Two.\n"
    )
    assert "name: New name\n" in (tmp_path / "project_old_name.md").read_text(encoding="utf-8")


def test_delete_removes_the_file_and_its_index_line_only(sample_store: Callable[[str], Path]) -> None:
    root = sample_store("auto-memory/mpechner-jenkins_lab")
    lines = (root / "MEMORY.md").read_text(encoding="utf-8").splitlines(keepends=True)
    with ClaudeCodeProvider(root) as store:
        store.delete("user_role.md")
    assert not (root / "user_role.md").exists()
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == "".join(lines[1:])
    assert (root / "feedback_no_bitnami.md").exists()


def test_claude_md_free_data_is_a_stripped_html_comment(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Project\n\nRun `make test`.\n", encoding="utf-8")
    with ClaudeCodeProvider(tmp_path) as store:
        entry = store.get("CLAUDE.md")
        entry.tags = ["build"]
        store.update(entry, expected_version=entry.version)
        assert store.get("CLAUDE.md").tags == ["build"]
    assert (tmp_path / "CLAUDE.md").read_text(encoding="utf-8") == (
        '<!-- memcore: {"tags":["build"]} -->\n# Project\n\nRun `make test`.\n'
    )


def test_invalid_frontmatter_is_read_as_text_reported_and_never_rewritten(tmp_path: Path) -> None:
    raw = b"---\nname: broken\ndescription: [unclosed\n---\nBody text.\n"
    (tmp_path / "broken.md").write_bytes(raw)
    with ClaudeCodeProvider(tmp_path) as store:
        entry = store.get("broken.md")
        assert (entry.title, entry.body) == ("broken", raw.decode())
        errors = [d for d in store.validate() if d.code == "claudecode.frontmatter"]
        assert [(d.path, d.severity.value) for d in errors] == [("broken.md", "error")]
        assert errors[0].line is not None and errors[0].line >= 2
        entry.body = "Changed.\n"
        with pytest.raises(ParseError):
            store.update(entry)
        with pytest.raises(ParseError):
            store.delete("broken.md")
    assert (tmp_path / "broken.md").read_bytes() == raw


@pytest.mark.parametrize(
    ("token", "reason"),
    [("../outside.md", "leaves the store"), ("/etc/hostname", "absolute path"), ("linked/secret.md", "symbolic link")],
)
def test_import_escaping_the_store_is_refused_and_never_read(tmp_path: Path, token: str, reason: str) -> None:
    root = tmp_path / "store"
    root.mkdir()
    secret = tmp_path / "secret-folder"
    secret.mkdir()
    (secret / "secret.md").write_text("TOP SECRET\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("TOP SECRET\n", encoding="utf-8")
    (root / "linked").symlink_to(secret)
    (root / "CLAUDE.md").write_text(f"# Rules\n\nSee @{token} for more.\n", encoding="utf-8")
    with ClaudeCodeProvider(root, read_only=True) as store:
        entries = list(store.iter_entries())
        refused = [d for d in store.validate() if d.code == "claudecode.import-refused"]
    assert [e.id for e in entries] == ["CLAUDE.md"]
    assert all("TOP SECRET" not in e.body for e in entries)
    assert entries[0].relations == [Relation(type="imports", target=token, resolved=False)]
    assert [(d.path, d.line) for d in refused] == [("CLAUDE.md", 3)]
    assert reason in refused[0].message


def test_imports_are_followed_four_hops_and_no_further(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("@d/1.md\n", encoding="utf-8")
    (tmp_path / "d").mkdir()
    for n in range(1, 6):
        (tmp_path / "d" / f"{n}.md").write_text(f"# Hop {n}\n\n@{n + 1}.md\n", encoding="utf-8")
    (tmp_path / "d" / "6.md").write_text("# Hop 6\n", encoding="utf-8")
    with ClaudeCodeProvider(tmp_path, read_only=True) as store:
        ids = [e.id for e in store.iter_entries()]
        deep = [(d.path, d.line) for d in store.validate() if d.code == "claudecode.import-depth"]
    assert ids == ["CLAUDE.md", "d/1.md", "d/2.md", "d/3.md", "d/4.md"]
    assert deep == [("d/4.md", 3)]


def test_an_id_that_is_no_memory_file_path_is_refused(tmp_path: Path) -> None:
    with ClaudeCodeProvider(tmp_path) as store:
        for bad in ("mem_01ABC", "sub/topic.md", "MEMORY.md"):
            with pytest.raises(InvalidEntryError):
                store.add(MemoryEntry(id=bad, title="x", body="y\n"))
        assert store.add(MemoryEntry(id="notes.md", title="x", body="y\n")).id == "notes.md"
        assert (
            store.add(MemoryEntry(id="pkg/CLAUDE.md", kind=Kind.FACT, title="Pkg", body="# Pkg\n")).extra["claudecode"][
                "role"
            ]
            == "instructions"
        )
    assert list(os.listdir(tmp_path / "pkg")) == ["CLAUDE.md"]
    assert (tmp_path / "pkg" / "CLAUDE.md").read_text(encoding="utf-8") == "# Pkg\n"  # fields all fit: no comment


def test_unreadable_free_data_is_reported_and_the_file_never_rewritten(tmp_path: Path) -> None:
    raw = b"---\nname: x\nmemcore:\n  confidence: 7\n---\nBody.\n"
    (tmp_path / "x.md").write_bytes(raw)
    with ClaudeCodeProvider(tmp_path) as store:
        entry = store.get("x.md")
        assert (entry.title, entry.confidence) == ("x", None)
        assert [(d.path, d.code) for d in store.validate() if d.severity.value == "error"] == [
            ("x.md", "claudecode.free-data")
        ]
        with pytest.raises(ParseError):
            store.update(entry.model_copy(update={"body": "New.\n"}))
    assert (tmp_path / "x.md").read_bytes() == raw
