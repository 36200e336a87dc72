"""The Box-memory authors' example files read, reindex and validate (issue 5, "Reads the authors' files")."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import cli
from memcore.models import Kind, Relation, Severity, Status
from memcore_box.provider import BoxMemoryProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "box-memory"

# The example index names the files; the samples are stored under example-* names.
FILES = {
    "example-memory-decision.md": "decision__jwt-vs-sessions-decision.md",
    "example-memory-task.md": "task__rotate-jwt-keys-monthly.md",
    "example-companion.md": "companion__q2-2026-revenue-report-pdf-companion.md",
}
DECISION = "mem_01HXYZA1B2C3D4E5F6G7H8J9K0"
TASK = "mem_01HXYZA1B2C3D4E5F6G7H8J9K2"
COMPANION = "mem_01HXYZA1B2C3D4E5F6G7H8J9L5"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memories").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "example-_box-memory.json", root / "_box-memory.json")
    shutil.copyfile(SAMPLES / "example-_index.json", root / "memories" / "_index.json")
    for sample, name in FILES.items():
        shutil.copyfile(SAMPLES / sample, root / "memories" / name)
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_examples_read_without_errors(workspace: Path) -> None:
    before = _tree(workspace)
    with BoxMemoryProvider(str(workspace)) as store:
        entries = {e.id: e for e in store.iter_entries()}
        assert list(entries) == [DECISION, TASK, COMPANION]  # created 18:32, 18:34, 19:14
        decision = entries[DECISION]
        assert decision.kind is Kind.DECISION and decision.status is Status.ACTIVE
        assert decision.title == "JWT vs Sessions Decision"
        assert decision.tags == ["auth", "mobile", "security"]
        assert decision.confidence == 0.9
        assert decision.source == "claude-code" and decision.scope == "default"
        assert decision.created_at is not None and decision.created_at.isoformat() == "2026-05-22T18:32:00+00:00"
        assert decision.body.startswith("\n# JWT vs Sessions Decision\n\n> We're going with JWT")
        assert decision.extra["box"]["links"] == [
            {"url": "https://datatracker.ietf.org/doc/html/rfc7519", "label": "RFC 7519 (JWT)"}
        ]
        assert decision.relations == [
            Relation(type="related", target="Login Flow", resolved=False),
            Relation(type="related", target="Session Management Pattern", resolved=False),
        ]
        # The task's [[JWT vs Sessions Decision]] resolves through the title to the decision's id.
        assert entries[TASK].relations == [Relation(type="related", target=DECISION, resolved=True)]
        assert entries[TASK].confidence == 0.95 and entries[TASK].kind is Kind.TASK
        companion = entries[COMPANION]
        assert companion.kind is Kind.COMPANION
        assert companion.extra["box"]["companion_for"] == {
            "file_id": "1844291673322",
            "filename": "Q2-2026-revenue-report.pdf",
            "sha256": "f3a9c2d8e1b5740a9e3c2f8d716b4a9c0e3d2f1b5a8c7d6e4f2a1b0c9d8e7f6a",
            "hash_algo": "sha256",
            "size_bytes": 2847291,
            "mime_type": "application/pdf",
            "reviewed_at": "2026-05-22T19:14:00Z",
            "reviewed_by": "claude-code",
        }
        assert store.get(TASK).title == "Rotate JWT signing keys monthly"
        diagnostics = store.validate()
    assert [d for d in diagnostics if d.severity is Severity.ERROR] == []
    unresolved = sorted((d.path, d.line, d.message) for d in diagnostics if d.code == "box.unresolved-wikilink")
    assert unresolved == [
        (
            "memories/companion__q2-2026-revenue-report-pdf-companion.md",
            21,
            "related [[Q1 2026 Revenue Report Companion]] matches no memory title in the workspace",
        ),
        (
            "memories/decision__jwt-vs-sessions-decision.md",
            13,
            "related [[Login Flow]] matches no memory title in the workspace",
        ),
        (
            "memories/decision__jwt-vs-sessions-decision.md",
            13,
            "related [[Session Management Pattern]] matches no memory title in the workspace",
        ),
    ]
    assert _tree(workspace) == before, "reading and validating must write nothing"


def test_reindex_reproduces_the_example_index(workspace: Path) -> None:
    example = json.loads((SAMPLES / "example-_index.json").read_text(encoding="utf-8"))
    memory_bytes = {name: (workspace / "memories" / name).read_bytes() for name in FILES.values()}
    with BoxMemoryProvider(str(workspace)) as store:
        report = store.reindex()
    assert [d for d in report if d.severity is Severity.ERROR] == []
    rebuilt = json.loads((workspace / "memories" / "_index.json").read_text(encoding="utf-8"))
    assert list(rebuilt) == list(example)  # same keys, same order
    for key in ("version", "folder_id", "folder_path", "tier", "entry_count"):
        assert rebuilt[key] == example[key], key
    for key in ("by_id", "by_slug", "by_wikilink", "by_kind", "by_tag", "by_status", "by_companion_for"):
        assert rebuilt[key] == example[key], key
        assert list(rebuilt[key]) == list(example[key]), f"{key}: key order"
    assert rebuilt["by_companion_for"] == {"1844291673322": COMPANION}
    assert rebuilt["by_kind"] == {"decision": [DECISION], "task": [TASK], "companion": [COMPANION]}
    for got, want in zip(rebuilt["entries"], example["entries"], strict=True):
        assert list(got) == list(want)
        # size_bytes is the real size of the memory file (the example's are placeholders).
        name = got["filename"]
        assert got["size_bytes"] == len(memory_bytes[name])
        assert {k: v for k, v in got.items() if k != "size_bytes"} == {
            k: v for k, v in want.items() if k != "size_bytes"
        }
    # Memory files are never written by reindex; the rollup now exists and aggregates the folder.
    assert {n: (workspace / "memories" / n).read_bytes() for n in FILES.values()} == memory_bytes
    rollup = json.loads((workspace / "_index.json").read_text(encoding="utf-8"))
    assert rollup["folder_path"] == "/" and rollup["entry_count"] == 3
    assert rollup["folder_id"] == "284711992800"
    assert rollup["child_indexes"] == [{"folder_path": "memories/", "folder_id": "284711992847", "index_file_id": None}]
    assert [e["id"] for e in rollup["entries"]] == [DECISION, TASK, COMPANION]
    assert {e["folder_path"] for e in rollup["entries"]} == {"memories/"}


def test_cli_validate_reports_no_errors(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--store", f"box:{workspace}", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    items = found if isinstance(found, list) else found.get("diagnostics", [])
    assert [d for d in items if d["severity"] == "error"] == []
    assert {d["code"] for d in items} == {"box.unresolved-wikilink", "box.companion-unchecked", "box.rollup-missing"}


def test_updating_an_example_touches_only_what_changed(workspace: Path) -> None:
    path = workspace / "memories" / "decision__jwt-vs-sessions-decision.md"
    before = path.read_text(encoding="utf-8").splitlines(keepends=True)
    with BoxMemoryProvider(str(workspace)) as store:
        entry = store.get(DECISION)
        entry.tags = [*entry.tags, "tokens"]
        stored = store.update(entry)
    after = path.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = [(i, a, b) for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert [i for i, _, _ in changed] == [9, 11]  # updated_at and tags; the rest byte for byte
    assert after[11] == "tags: [auth, mobile, security, tokens]\n"
    assert after[9].startswith("updated_at: ") and stored.updated_at is not None
    assert re.fullmatch(r"updated_at: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z\n", after[9]), after[9]
    index = json.loads((workspace / "memories" / "_index.json").read_text(encoding="utf-8"))
    assert index["entries"][index["by_id"][DECISION]]["tags"] == ["auth", "mobile", "security", "tokens"]
    assert index["by_tag"]["tokens"] == [DECISION]


def _snapshot_equals_two_passes(root: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Assert read_all() == (iter_entries, validate) on ``root``; return its ids and (code, path)s."""
    with BoxMemoryProvider(str(root)) as store:
        snapshot = store.read_all()
    with BoxMemoryProvider(str(root)) as store:
        entries = list(store.iter_entries())
        diagnostics = store.validate()
    assert [e.model_dump() for e in snapshot.entries] == [e.model_dump() for e in entries]
    assert snapshot.diagnostics == diagnostics
    return [e.id or "" for e in snapshot.entries], [(d.code, d.path) for d in snapshot.diagnostics]


def test_read_all_is_one_pass_of_iter_entries_and_validate(workspace: Path) -> None:
    before = _tree(workspace)
    ids, diagnostics = _snapshot_equals_two_passes(workspace)
    assert ids == [DECISION, TASK, COMPANION]
    # The companion's binary is a Box file id, not in this folder; the example ids use
    # letters outside Crockford base32 (accepted); the rollup does not exist yet.
    assert ("box.companion-unchecked", "memories/companion__q2-2026-revenue-report-pdf-companion.md") in diagnostics
    assert ("box.rollup-missing", "_index.json") in diagnostics
    assert _tree(workspace) == before  # reading writes nothing


def test_read_all_on_a_drifted_workspace(workspace: Path) -> None:
    memories = workspace / "memories"
    decision = (memories / FILES["example-memory-decision.md"]).read_text(encoding="utf-8")
    # A second file with the decision's id (created earlier: it sorts first and wins), an
    # orphan without frontmatter, and a file the index does not list.
    (memories / "decision__copy.md").write_text(
        decision.replace("created_at: 2026-05-22T18:32:00Z", "created_at: 2026-05-01T00:00:00Z"), encoding="utf-8"
    )
    (memories / "note__orphan.md").write_text("no frontmatter here\n", encoding="utf-8")
    task = (memories / FILES["example-memory-task.md"]).read_text(encoding="utf-8")
    (memories / "task__unindexed.md").write_text(
        task.replace("mem_01HXYZA1B2C3D4E5F6G7H8J9K2", "mem_01HXYZA1B2C3D4E5F6G7H8J9K3"), encoding="utf-8"
    )
    ids, diagnostics = _snapshot_equals_two_passes(workspace)
    assert ids == [DECISION, TASK, "mem_01HXYZA1B2C3D4E5F6G7H8J9K3", COMPANION]
    codes = {code for code, _ in diagnostics}
    assert {"box.duplicate-id", "box.orphan", "box.index-unindexed"} <= codes
    assert ("box.orphan", "memories/note__orphan.md") in diagnostics
