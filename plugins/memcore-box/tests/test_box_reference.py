"""Box-memory files memcore writes, read by the schema's rules (issue 19): titles, links, fidelity notes.

A reader following the schema resolves ``[[Title]]`` by the exact title (``by_wikilink``) and
does not read the ``memcore:`` key; :meth:`BoxMemoryProvider.reference_reads_differently` lists
what it shows otherwise, and the migration report carries it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore_box.provider import BoxMemoryProvider
from memcore_box.reference import READER

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / ".." / "shared" / "samples" / "box-memory"
VAULT = REPO / "examples" / "whitebox-vault"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(ws))
    return ws


def _front(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))


def _schema_resolve(root: Path, link: str) -> str | None:
    """Resolve ``[[Title]]`` as the schema says: the folder indexes' by_wikilink, exact title."""
    title = link.removeprefix("[[").removesuffix("]]")
    for index in root.rglob("_index.json"):
        found = json.loads(index.read_text(encoding="utf-8")).get("by_wikilink", {}).get(title)
        if found:
            return str(found)
    return None


def test_an_untitled_memory_gets_its_id_as_title_so_links_to_it_resolve_by_the_schema(root: Path) -> None:
    with BoxMemoryProvider(str(root)) as store:
        untitled = store.add(MemoryEntry(kind=Kind.OBSERVATION, title="", body="Saw the queue back up.\n"))
        linking = store.add(
            MemoryEntry(title="Queue pressure", body="b\n", relations=[Relation(type="related", target=untitled.id)])
        )
        assert untitled.title == "" and store.get(untitled.id or "").title == ""
        path = root / store.file_of(untitled)
        link = _front(root / store.file_of(linking))["related"][0]
    front = _front(path)
    assert front["title"] == untitled.id and "memcore" not in front  # 0 bytes of memcore metadata
    assert link == f"[[{untitled.id}]]"
    assert _schema_resolve(root, link) == untitled.id
    with BoxMemoryProvider(str(root)) as store:
        notes = store.reference_reads_differently(store.get(untitled.id or ""))
    assert [(n.field, n.kept, n.shown, n.reader) for n in notes if n.field == "title"] == [
        ("title", "", untitled.id, READER)
    ]


def test_a_title_equal_to_the_id_is_kept_as_a_title(root: Path) -> None:
    entry_id = "mem_01HXYZA1B2C3D4E5F6G7H8J9Z1"
    with BoxMemoryProvider(str(root)) as store:
        store.add(MemoryEntry(id=entry_id, title=entry_id, body="x\n", scope="default"))
        assert store.get(entry_id).title == entry_id
        assert store.reference_reads_differently(store.get(entry_id)) == []
    (path,) = root.glob("memories/*.md")
    assert _front(path)["memcore"] == {"title": entry_id}


def test_a_plain_add_has_no_memcore_key_and_no_fidelity_note(root: Path) -> None:
    with BoxMemoryProvider(str(root)) as store:
        stored = store.add(MemoryEntry(kind=Kind.DECISION, title="Use JWT", body="b\n", tags=["auth"], scope="default"))
        assert store.reference_reads_differently(stored) == []
        path = root / store.file_of(stored)
    assert b"memcore" not in path.read_bytes()


def test_what_the_schema_reader_shows_otherwise_is_listed_per_field(root: Path) -> None:
    with BoxMemoryProvider(str(root)) as store:
        target = store.add(MemoryEntry(title="Target", body="t\n", scope="default"))
        entry = store.add(
            MemoryEntry(
                kind=Kind.PREFERENCE,
                title="Prefers tabs",
                body="p\n",
                parent=target.id,
                relations=[Relation(type="derived_from", target=target.id or "")],
            )
        )
        notes = {n.field: n for n in store.reference_reads_differently(entry)}
    assert sorted(notes) == ["kind", "parent", "relations"]  # no team is the default team: no note
    assert (notes["kind"].kept, notes["kind"].shown) == ("preference", "fact")
    assert notes["relations"].kept == [["derived_from", target.id]] and notes["relations"].shown == []
    assert (notes["parent"].kept, notes["parent"].shown) == (target.id, None)


def test_links_memcore_resolves_but_the_schema_does_not_are_noted(root: Path) -> None:
    memories = root / "memories"
    head = "---\nid: {id}\nslug: {slug}\ntitle: {title}\nkind: note\nstatus: active\nteam: default\n"
    head += "created_at: 2026-05-22T18:3{n}:00Z\nupdated_at: 2026-05-22T18:3{n}:00Z\n"
    old = "mem_01HXYZA1B2C3D4E5F6G7H8J9A1"
    (memories / "note__old.md").write_text(head.format(id=old, slug="old", title='""', n=1) + "---\nold\n")
    (memories / "note__login-flow.md").write_text(
        head.format(id="mem_01HXYZA1B2C3D4E5F6G7H8J9A2", slug="login-flow", title="Login Flow", n=2) + "---\nl\n"
    )
    refs = head.format(id="mem_01HXYZA1B2C3D4E5F6G7H8J9A3", slug="refs", title="Refs", n=3)
    refs += f'related:\n  - "[[{old}]]"\n  - "[[login flow]]"\n---\nr\n'
    (memories / "note__refs.md").write_text(refs)
    with BoxMemoryProvider(str(root)) as store:
        store.reindex()
        entry = store.get("mem_01HXYZA1B2C3D4E5F6G7H8J9A3")
        assert [r.target for r in entry.relations] == [old, "mem_01HXYZA1B2C3D4E5F6G7H8J9A2"]
        (note,) = store.reference_reads_differently(entry)
    assert note.field == "relations"
    assert note.shown == [["related", old], ["related", "login flow"]]  # unresolved: the link text
    assert "exact title" in note.why


def test_the_authors_examples_read_as_the_schema_reads_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memories").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "example-_box-memory.json", ws / "_box-memory.json")
    shutil.copyfile(SAMPLES / "example-_index.json", ws / "memories" / "_index.json")
    for sample, name in {
        "example-memory-decision.md": "decision__jwt-vs-sessions-decision.md",
        "example-memory-task.md": "task__rotate-jwt-keys-monthly.md",
        "example-companion.md": "companion__q2-2026-revenue-report-pdf-companion.md",
    }.items():
        shutil.copyfile(SAMPLES / sample, ws / "memories" / name)
    with BoxMemoryProvider(str(ws)) as store:
        entries = list(store.iter_entries())
        assert len(entries) == 3
        assert [store.reference_reads_differently(e) for e in entries] == [[], [], []]


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_migration_into_box_reports_the_notes_and_links_every_untitled_memory(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    ws = tmp_path / "ws"
    report = migrate(f"whitebox:{vault}", f"box:{ws}")
    fields = [n.field for e in report.entries for n in e.fidelity]
    assert fields.count("title") == 26  # the vault's untitled observations: shown as their ids
    links = [link for p in ws.rglob("*.md") for link in _front(p).get("related") or []]
    assert links and all(_schema_resolve(ws, link) is not None for link in links if link.startswith("[[mem_"))
    assert all(_front(p)["title"] for p in ws.rglob("*.md"))
    # untitled memories read back untitled: a second run writes nothing; a no-change update neither
    before = _tree(ws)
    again = migrate(f"whitebox:{vault}", f"box:{ws}")
    assert again.counts["written"] == 0 and _tree(ws) == before
    with BoxMemoryProvider(str(ws)) as store:
        for entry in list(store.iter_entries()):
            store.update(entry, expected_version=entry.version)
    assert _tree(ws) == before


def test_an_edit_of_an_untitled_file_written_before_gives_it_its_id_as_title(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "examples" / "box-workspace", ws)
    path = ws / "memories" / "observation__memo-e3b0c442-10.md"
    before = path.read_text(encoding="utf-8").split("\n")
    entry_id = "mem_01KK7Y9F00V79R4PSX2Z5384MW"
    with BoxMemoryProvider(str(ws)) as store:
        entry = store.get(entry_id)
        assert entry.title == "" and 'title: ""' in before
        entry.body += " More."
        assert store.update(entry).title == ""
        assert store.get(entry_id).title == ""
    after = path.read_text(encoding="utf-8").split("\n")
    changed = {b.split(":")[0] for b, a in zip(before, after, strict=True) if a != b}
    assert changed == {"title", "updated_at", before[-1].split(":")[0]}  # title, stamp and the body's line
    assert f"title: {entry_id}" in after
