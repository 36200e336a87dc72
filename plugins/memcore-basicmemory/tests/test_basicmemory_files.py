"""What the basic-memory provider writes, byte for byte, and what it refuses to touch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memcore.errors import ParseError
from memcore.models import MemoryEntry, Relation, Status
from memcore_basicmemory.provider import BasicMemoryProvider

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "basic-memory"
RENDERED = SAMPLES / "rendered-bm-0.24.1" / "project-demo"


def _without_times(data: bytes) -> bytes:
    lines = data.decode("utf-8").split("\n")
    return "\n".join(line for line in lines if not line.startswith(("created: ", "modified: "))).encode()


def _body(path: Path) -> str:
    return path.read_text("utf-8").split("---\n\n", 1)[1]


@pytest.mark.parametrize(
    ("rel", "entry"),
    [
        (
            "notes/Coffee Brewing Methods.md",
            MemoryEntry(
                id="demo/notes/coffee-brewing-methods",
                title="Coffee Brewing Methods",
                tags=["coffee", "brewing"],
                body=_body(RENDERED / "notes" / "Coffee Brewing Methods.md"),
                extra={"basicmemory": {"folder": "notes"}},
            ),
        ),
        (
            "specs/2025/API- Design-Review v2.0.md",
            MemoryEntry(
                id="demo/specs/2025/api-design-review-v2.0",
                title="API: Design/Review v2.0?",
                body="Body only, no heading. [[Coffee Brewing Methods]]",
                extra={"basicmemory": {"folder": "specs/2025", "type": "spec"}},
            ),
        ),
        (
            "Über Café.md",
            MemoryEntry(id="custom/perma", title="Über Café", status=Status.DRAFT, body="# Über\n- [idea] x"),
        ),
    ],
)
def test_add_writes_the_file_basic_memory_write_note_writes(rel: str, entry: MemoryEntry, tmp_path: Path) -> None:
    with BasicMemoryProvider(tmp_path) as store:
        stored = store.add(entry)
    written = (tmp_path / rel).read_bytes()
    assert _without_times(written) == (RENDERED / rel).read_bytes()
    assert b"memcore" not in written and str(tmp_path).encode() not in written
    with BasicMemoryProvider(tmp_path) as store:
        assert store.get(stored.id or "") == stored


@pytest.mark.parametrize("name", sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.md")))
def test_an_update_that_changes_nothing_writes_no_byte(name: str, tmp_path: Path) -> None:
    (tmp_path / Path(name).parent).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / name, tmp_path / name)
    before = (tmp_path / name).stat().st_mtime_ns
    with BasicMemoryProvider(tmp_path) as store:
        (entry,) = list(store.iter_entries())
        again = store.update(entry)
    assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes()
    assert (tmp_path / name).stat().st_mtime_ns == before
    assert again == entry


def test_a_title_change_rewrites_only_the_title_line(tmp_path: Path) -> None:
    shutil.copyfile(SAMPLES / "fixtures" / "schemas" / "Person.md", tmp_path / "Person.md")
    with BasicMemoryProvider(tmp_path) as store:
        (entry,) = list(store.iter_entries())
        entry.title = "Human"
        store.update(entry)
    old = (SAMPLES / "fixtures" / "schemas" / "Person.md").read_text("utf-8").split("\n")
    new = (tmp_path / "Person.md").read_text("utf-8").split("\n")
    assert [(a, b) for a, b in zip(old, new, strict=True) if a != b] == [("title: Person", "title: Human")]


def test_malformed_frontmatter_reads_as_body_and_is_never_rewritten(tmp_path: Path) -> None:
    text = b"---\ntitle: [unclosed\n---\n\n- [fact] still read #x\n"
    (tmp_path / "bad.md").write_bytes(text)
    with BasicMemoryProvider(tmp_path) as store:
        (entry,) = list(store.iter_entries())
        diagnostics = store.validate()
        with pytest.raises(ParseError):
            store.update(entry.model_copy(update={"title": "other"}))
        with pytest.raises(ParseError):
            store.delete(entry.id or "")
    assert (tmp_path / "bad.md").read_bytes() == text
    assert entry.title == "bad" and entry.extra["basicmemory"]["frontmatter"] == "malformed"
    assert entry.body == text.decode()
    errors = [(d.path, d.line, d.code) for d in diagnostics if d.severity.value == "error"]
    assert errors == [("bad.md", 3, "basicmemory.malformed-frontmatter")]


def test_relations_the_body_does_not_hold_are_appended_and_read_back(tmp_path: Path) -> None:
    with BasicMemoryProvider(tmp_path) as store:
        target = store.add(MemoryEntry(title="Target note", body="x"))
        given = MemoryEntry(
            title="Source",
            body="Plain text.\n",
            relations=[
                Relation(type="depends_on", target=target.id or ""),
                Relation(type="pairs well with", target="Nowhere", resolved=False),
            ],
        )
        stored = store.add(given)
    text = (tmp_path / "Source.md").read_text("utf-8")
    assert text.endswith(
        'Plain text.\n\n\n## Relations\n- depends_on [[target-note]]\n- "pairs well with" [[Nowhere]]\n'
    )
    assert stored.body == "Plain text.\n"
    assert stored.relations == given.relations


def test_fields_basic_memory_has_no_slot_for_go_in_one_memcore_key(tmp_path: Path) -> None:
    with BasicMemoryProvider(tmp_path) as store:
        stored = store.add(MemoryEntry(title="Sure", body="b", confidence=0.7, source="agent-x", scope="work"))
    text = (tmp_path / "Sure.md").read_text("utf-8")
    assert "memcore:\n  confidence: 0.7\n  source: agent-x\n  scope: work\n" in text
    assert (stored.confidence, stored.source, stored.scope) == (0.7, "agent-x", "work")


def test_two_notes_claiming_one_permalink_get_basic_memorys_suffix(tmp_path: Path) -> None:
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(f"---\ntitle: {name}\npermalink: same\n---\n\nx\n", encoding="utf-8")
    with BasicMemoryProvider(tmp_path) as store:
        ids = [e.id for e in store.iter_entries()]
        warnings = [(d.path, d.line, d.code) for d in store.validate() if d.severity.value == "warning"]
    assert ids == ["same", "same-1"]
    assert warnings == [("b.md", 3, "basicmemory.duplicate-permalink")]


def test_validate_names_the_line_of_a_relation_basic_memory_demotes(tmp_path: Path) -> None:
    text = "---\ntitle: T\ntype: note\npermalink: t\n---\n\n- depends_on [[T]] and more prose\n- uses [[T]] (fine)\n"
    (tmp_path / "T.md").write_text(text, encoding="utf-8")
    with BasicMemoryProvider(tmp_path) as store:
        (entry,) = list(store.iter_entries())
        found = [(d.path, d.line, d.code) for d in store.validate()]
    assert found == [("T.md", 7, "basicmemory.prose-tail")]
    assert sorted((r.type, r.target) for r in entry.relations) == [("links_to", "t"), ("uses", "t")]
