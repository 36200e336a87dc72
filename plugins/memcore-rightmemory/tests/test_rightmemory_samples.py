"""RightMemory provider against the authors' own files (../shared/samples/rightmemory)."""

from __future__ import annotations

import difflib
import hashlib
import shutil
from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry, Relation
from memcore_rightmemory import RightMemoryProvider

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "rightmemory"
FIXTURE = SAMPLES / "test-fixture-extracted-test_graph"
MEMORY_EXAMPLE = SAMPLES / "MEMORY.example.at-0fad0d5.md"
PURSUITS_EXAMPLE = SAMPLES / "PURSUITS.example.at-23141ba.md"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _writable_copy(src_files: dict[str, Path], dest: Path) -> Path:
    dest.mkdir()
    for name, src in src_files.items():
        shutil.copyfile(src, dest / name)
    return dest


@pytest.fixture
def fixture_store(tmp_path: Path) -> Path:
    return _writable_copy({p.name: p for p in FIXTURE.iterdir()}, tmp_path / "fixture")


@pytest.fixture
def example_store(tmp_path: Path) -> Path:
    return _writable_copy({"MEMORY.md": MEMORY_EXAMPLE, "PURSUITS.md": PURSUITS_EXAMPLE}, tmp_path / "example")


# -- the graph fixture from RightMemory's own tests ---------------------------------------------
def test_fixture_validates_with_zero_diagnostics() -> None:
    with RightMemoryProvider(FIXTURE) as provider:
        assert provider.validate() == []


def test_fixture_items_and_parents_cross_the_f_file() -> None:
    with RightMemoryProvider(FIXTURE) as provider:
        entries = {e.id: e for e in provider.iter_entries()}
        assert [e.id for e in provider.iter_entries()] == [
            "project", "project-fact", "child", "details", "detail-topic", "detail-fact",
        ]  # fmt: skip
        parents = {ident: e.parent for ident, e in entries.items()}
        assert parents == {
            "project": None,
            "project-fact": "project",
            "child": "project",
            "details": None,
            "detail-topic": "details",
            "detail-fact": "detail-topic",
        }
        # detail-topic's ancestor chain crosses from MEMORY_details.md into MEMORY.md.
        topic = entries["detail-topic"]
        assert topic.extra["rightmemory"]["file"] == "MEMORY_details.md"
        assert entries[topic.parent or ""].extra["rightmemory"]["file"] == "MEMORY.md"
        assert entries["details"].extra["rightmemory"]["marker"] == "F#"
        assert entries["details"].extra["rightmemory"]["backing"] == "MEMORY_details.md"
        assert (topic.title, topic.body) == ("Detail Topic", "Detail body.\n")
        assert (entries["project-fact"].title, entries["project-fact"].body) == ("Fact.", "")
        assert entries["project"].body == "Project body.\n"
        assert entries["details"].body == "Detail summary.\n"
        assert {e.kind for e in entries.values()} == {Kind.FACT}
        assert provider.search("evidence")[0].id == "detail-fact"


# -- the installer's examples ------------------------------------------------------------------
def test_examples_read_in_full(example_store: Path) -> None:
    with RightMemoryProvider(example_store) as provider:
        entries = list(provider.iter_entries())
    ids = [e.id for e in entries]
    assert len(ids) == 30 and len(set(ids)) == 30  # 14 headings + 15 nodes + 1 Pursuit
    by_id = {e.id: e for e in entries}
    assert ids[:3] == ["sample-project-graph", "sample-app", "sample-project-working-preferences"]
    assert ids[-1] == "sample-pursuit-release-readiness"
    web = by_id["proj-web"]
    assert web.title == "web-app — example frontend, TypeScript + Vite, calls `proj-api` for data."
    assert [(r.type, r.target) for r in web.relations] == [
        ("dep", "lib-utils"), ("dep", "proj-api"), ("rel", "proj-deploy"),
    ]  # fmt: skip
    assert web.parent == "sample-deployable-units"
    assert by_id["sample-app"].relations == [Relation(type="rel", target="sample-infra")]
    drill = by_id["sample-backup-drill"]
    assert drill.extra["rightmemory"]["depth"] == 4 and drill.parent == "sample-database-stack"
    assert drill.body.startswith("Detailed restore drill notes live in `MEMORY_sample-backup-drill.md`")
    pursuit = by_id["sample-pursuit-release-readiness"]
    assert pursuit.kind == Kind.PURSUIT and pursuit.parent is None
    assert pursuit.extra["rightmemory"]["sections"] == ["Pursuits"]
    fields = pursuit.extra["rightmemory"]["fields"]
    assert fields["next"] == [
        {
            "action": "ask",
            "text": "Decide which observable checks define release readiness for the `staging` candidate.",
        }
    ]
    assert fields["state"].startswith("The candidate is deployed to `staging`")
    assert "**Done when:**" in pursuit.body


def test_examples_validate_reports_exactly_the_missing_detail_files(example_store: Path) -> None:
    with RightMemoryProvider(example_store) as provider:
        found = [(d.code, d.path, d.line, d.entry_id) for d in provider.validate()]
    assert found == [
        ("rm.missing-backing", "MEMORY.md", 27, "sample-release-runbook"),
        ("rm.missing-backing", "MEMORY.md", 43, "sample-backup-drill"),
    ]


@pytest.mark.parametrize(
    "files",
    [
        {p.name: p for p in FIXTURE.iterdir()},
        {"MEMORY.md": MEMORY_EXAMPLE, "PURSUITS.md": PURSUITS_EXAMPLE},
        {"MEMORY.md": MEMORY_EXAMPLE},
        {
            "MEMORY.md": FIXTURE / "MEMORY.md",
            "PURSUITS.md": FIXTURE / "PURSUITS.md",
            "MEMORY_details.md": FIXTURE / "MEMORY_details.md",
            "corrections.md": SAMPLES / "RIGHTMEMORY_EDIT_CORRECTIONS.example.md",
            "MEMORY_agent-corrections-writing.md": SAMPLES / "AGENT_CORRECTIONS_EXAMPLES.md",
        },
    ],
    ids=["fixture", "examples", "memory-only", "with-corrections"],
)
def test_open_validate_close_changes_no_byte(tmp_path: Path, files: dict[str, Path]) -> None:
    store = _writable_copy(files, tmp_path / "s")
    before = _tree(store)
    provider = RightMemoryProvider(store).open()
    list(provider.iter_entries())
    provider.validate()
    provider.close()
    assert _tree(store) == before
    assert {name: hashlib.sha256(data).hexdigest() for name, data in before.items()} == {
        name: hashlib.sha256(src.read_bytes()).hexdigest() for name, src in files.items()
    }


def test_shared_samples_read_in_place_without_writing() -> None:
    before = _tree(FIXTURE)
    with RightMemoryProvider(FIXTURE) as provider:
        list(provider.iter_entries())
        provider.validate()
    assert _tree(FIXTURE) == before


# -- adding one node changes exactly one line range of one file -------------------------------------
def _changed_ranges(before: bytes, after: bytes) -> list[tuple[str, int, int, int, int]]:
    matcher = difflib.SequenceMatcher(
        a=before.decode().splitlines(keepends=True), b=after.decode().splitlines(keepends=True), autojunk=False
    )
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


@pytest.mark.parametrize("parent", ["sample-deployable-units", "sample-user-goals", "sample-infra"])
def test_add_node_changes_one_line_range_of_one_file(example_store: Path, parent: str) -> None:
    before = _tree(example_store)
    with RightMemoryProvider(example_store) as provider:
        stored = provider.add(
            MemoryEntry(
                kind=Kind.FACT,
                title="Staging uses the same image",
                parent=parent,
                relations=[Relation(type="rel", target="proj-api")],
            )
        )
        assert stored.id == "staging-uses-the-same-image" and stored.parent == parent
    after = _tree(example_store)
    changed = [name for name in before if before[name] != after[name]]
    assert changed == ["MEMORY.md"] and set(after) == set(before)
    ranges = _changed_ranges(before["MEMORY.md"], after["MEMORY.md"])
    assert len(ranges) == 1 and ranges[0][0] == "insert"
    added = after["MEMORY.md"].decode().splitlines()[ranges[0][3] : ranges[0][4]]
    node_lines = [line for line in added if line.startswith("- `")]
    assert node_lines == ["- `staging-uses-the-same-image` Staging uses the same image \u2192 [rel:proj-api]"]


def test_add_node_into_f_detail_file_changes_only_that_file(fixture_store: Path) -> None:
    before = _tree(fixture_store)
    with RightMemoryProvider(fixture_store) as provider:
        stored = provider.add(MemoryEntry(kind=Kind.FACT, title="Detail level fact", parent="details"))
        assert stored.parent == "details"
        assert stored.extra["rightmemory"]["file"] == "MEMORY_details.md"
        assert provider.validate() == []
    after = _tree(fixture_store)
    assert [n for n in before if before[n] != after[n]] == ["MEMORY_details.md"]
    assert len(_changed_ranges(before["MEMORY_details.md"], after["MEMORY_details.md"])) == 1


def test_authors_correction_examples_validate_clean(tmp_path: Path) -> None:
    store = _writable_copy(
        {
            **{p.name: p for p in FIXTURE.iterdir()},
            "corrections.md": SAMPLES / "RIGHTMEMORY_EDIT_CORRECTIONS.example.md",
            "MEMORY_agent-corrections-writing.md": SAMPLES / "AGENT_CORRECTIONS_EXAMPLES.md",
        },
        tmp_path / "s",
    )
    with RightMemoryProvider(store) as provider:
        assert provider.validate() == []
        corrections = [e for e in provider.iter_entries() if e.kind == Kind.CORRECTION]
    assert [(e.id, e.title) for e in corrections] == [
        ("agent-corrections-writing#13", "Preserve the requested comparison structure"),
        ("agent-corrections-writing#27", "Verify ambiguous remote state before retrying"),
    ]
