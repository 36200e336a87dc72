"""Writes: byte-identical to the reference server where the entry fits, its rules applied, fail closed."""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memcore
from memcore.errors import ConflictError, InvalidEntryError, ParseError
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation, Severity, Status
from memcore.plugins import get_plugin_manager
from memcore.registry import get_registry
from memcore_mcpmemory import McpMemoryProvider, plugin

from .conftest import SAMPLES

RENDERED = SAMPLES / "rendered-server-memory-2026.8.31"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "memory.jsonl"
    McpMemoryProvider.init_store(str(path))
    return path


def person(name: str, *observations: str, relations: list[Relation] | None = None) -> MemoryEntry:
    body = "".join(f"- {o}\n" for o in observations)
    return MemoryEntry(title=name, body=body, relations=relations or [], extra={"mcpmemory": {"entityType": "person"}})


def test_an_empty_store_is_a_zero_byte_file(store: Path) -> None:
    assert store.read_bytes() == b""
    with McpMemoryProvider(str(store)) as p:
        assert list(p.iter_entries()) == [] and p.validate() == []


def test_plain_adds_write_the_servers_own_bytes_readme_john_smith(store: Path) -> None:
    with McpMemoryProvider(str(store)) as p:
        john = person("John_Smith", "Speaks fluent Spanish", "Graduated in 2019", "Prefers morning meetings")
        john.relations = [Relation(type="works_at", target="Anthropic", resolved=False)]
        stored = p.add(john)
    assert stored.id == "John_Smith"
    assert store.read_bytes() == (RENDERED / "readme-john-smith.jsonl").read_bytes()


def test_adds_then_linking_updates_write_the_search_nodes_fixture(store: Path) -> None:
    with McpMemoryProvider(str(store)) as p:
        alice = p.add(person("Alice", "works at Acme Corp", "likes programming"))
        bob = p.add(person("Bob", "works at TechCo"))
        p.add(MemoryEntry(title="Acme Corp", body="- tech company\n", extra={"mcpmemory": {"entityType": "company"}}))
        alice.relations = [Relation(type="works_at", target="Acme Corp")]
        p.update(alice, expected_version=alice.version)
        bob.relations = [Relation(type="competitor", target="Acme Corp")]
        p.update(bob, expected_version=bob.version)
    assert store.read_bytes() == (RENDERED / "test-searchNodes-fixture.jsonl").read_bytes()


def test_a_self_relation_is_written_as_the_server_writes_it(store: Path) -> None:
    with McpMemoryProvider(str(store)) as p:
        p.add(person("Alice", relations=[Relation(type="self", target="Alice")]))
    assert store.read_bytes() == (RENDERED / "test-self-relation-jsonl-format.jsonl").read_bytes()


def test_delete_cascades_to_the_relations_from_and_to_the_name(store: Path) -> None:
    # knowledge-graph.test.ts "should cascade delete relations": Alice -> Bob -> Charlie, delete Bob
    with McpMemoryProvider(str(store)) as p, p.batch():
        p.add(person("Alice", relations=[Relation(type="knows", target="Bob", resolved=False)]))
        p.add(person("Bob", relations=[Relation(type="knows", target="Charlie", resolved=False)]))
        p.add(person("Charlie"))
    with McpMemoryProvider(str(store)) as p:
        assert p.get("Alice").relations == [Relation(type="knows", target="Bob")]  # resolved once Bob exists
        p.delete("Bob")
    assert store.read_bytes() == (RENDERED / "test-cascade-delete-after.jsonl").read_bytes()


def test_one_entity_per_name_and_each_relation_once(store: Path) -> None:
    with McpMemoryProvider(str(store)) as p:
        p.add(person("Alice"))
        with pytest.raises(ConflictError, match="Alice"):
            p.add(person("Alice").model_copy(update={"id": "Alice"}))
        second = p.add(person("Alice", "another Alice"))
        twice = [Relation(type="knows", target="Alice"), Relation(type="knows", target="Alice")]
        third = p.add(person("Carol", relations=twice))
    assert (second.id, second.title) == ("Alice (2)", "Alice")
    assert third.relations == [Relation(type="knows", target="Alice")]
    lines = store.read_text(encoding="utf-8").split("\n")
    assert [json.loads(line).get("name") for line in lines] == ["Alice", "Alice (2)", "Carol", None]
    assert json.loads(lines[1])["memcore"] == {"title": "Alice"}  # the title differs from the name


def test_an_added_entity_takes_over_the_relations_from_its_ghost_name(store: Path) -> None:
    store.write_text('{"type":"relation","from":"Hal","to":"Ivy","relationType":"knows"}', encoding="utf-8")
    with McpMemoryProvider(str(store)) as p:
        assert [d.code for d in p.validate()] == ["mcpmemory.ghost-source"]
        hal = p.add(person("Hal"))
        assert hal.relations == [Relation(type="knows", target="Ivy", resolved=False)]
        assert p.get("Hal").relations == hal.relations
    assert store.read_text(encoding="utf-8").split("\n")[0].startswith('{"type":"entity","name":"Hal"')


def test_repeated_observations_are_stored_once_and_the_body_kept_exactly(store: Path) -> None:
    with McpMemoryProvider(str(store)) as p:
        stored = p.add(person("Dana", "likes tea", "likes tea", "runs"))
    record = json.loads(store.read_text(encoding="utf-8"))
    assert record["observations"] == ["likes tea", "runs"]  # add_observations adds a text once
    assert record["memcore"] == {"body": "- likes tea\n- likes tea\n- runs\n"}
    assert stored.body == "- likes tea\n- likes tea\n- runs\n"


def test_fields_without_a_slot_are_kept_in_the_memcore_key_and_read_back(store: Path) -> None:
    given = MemoryEntry(
        kind=Kind.DECISION,
        title="Use the blue pool",
        body="The green pool is being drained.\n\nUntil Friday.\n",
        status=Status.SUPERSEDED,
        tags=["ops", "project:atlas"],
        confidence=0.8,
        source="claude",
        created_at=datetime(2026, 3, 2, 9, 15, tzinfo=UTC),
        updated_at=datetime(2026, 3, 3, 10, 0, tzinfo=UTC),
        scope="work",
        extra={"box": {"team": "dispatch"}},
    )
    with McpMemoryProvider(str(store)) as p:
        stored = p.add(given)
    with McpMemoryProvider(str(store)) as p:
        back = p.get("Use the blue pool")
    assert back.content_dict() == stored.content_dict()
    assert {k: v for k, v in back.content_dict().items() if k not in ("id", "extra")} == {
        k: v for k, v in given.content_dict().items() if k not in ("id", "extra")
    }
    assert back.extra == {"box": {"team": "dispatch"}, "mcpmemory": {"entityType": "decision"}}
    record = json.loads(store.read_text(encoding="utf-8"))
    # the server sees one observation per paragraph
    assert record["observations"] == ["The green pool is being drained.", "Until Friday."]
    assert record["entityType"] == "decision"


def test_observations_the_server_changed_win_over_the_kept_body(store: Path) -> None:
    with McpMemoryProvider(str(store)) as p:
        p.add(MemoryEntry(title="Eve", body="Eve moved to Porto.\n", tags=["people"]))
    # the reference server's add_observations rewrites the record without the memcore key
    record = json.loads(store.read_text(encoding="utf-8"))
    record["observations"].append("speaks French")
    store.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    with McpMemoryProvider(str(store)) as p:
        eve = p.get("Eve")
    assert eve.body == "- Eve moved to Porto.\n- speaks French\n" and eve.tags == ["people"]


def test_an_edit_rewrites_one_record_and_keeps_every_other_line_byte_for_byte(
    sample_copy: Callable[[str], Path],
) -> None:
    path = sample_copy("third-party/anoblet-copilot-memory.jsonl")
    before = path.read_bytes().split(b"\n")
    with McpMemoryProvider(str(path)) as p:
        andrew = p.get("Andrew Noblet")
        andrew.body += "- The developer writes Python.\n"
        p.update(andrew, expected_version=andrew.version)
    after = path.read_bytes().split(b"\n")
    assert after[1] == before[1]  # the pre-2025 line ("entityType" before "name") is untouched
    assert json.loads(after[0])["observations"][-1] == "The developer writes Python."
    assert "memcore" not in json.loads(after[0])  # the body is still a list: nothing to keep


def test_a_forks_extra_keys_survive_an_update(store: Path) -> None:
    line = {"type": "entity", "name": "Fay", "entityType": "person", "observations": [], "createdAt": "2025-01-02"}
    store.write_text(json.dumps(line), encoding="utf-8")
    with McpMemoryProvider(str(store)) as p:
        fay = p.get("Fay")
        assert fay.extra["mcpmemory"] == {"entityType": "person", "fields": {"createdAt": "2025-01-02"}}
        fay.body = "- new\n"
        p.update(fay, expected_version=fay.version)
    assert store.read_text(encoding="utf-8") == (
        '{"type":"entity","name":"Fay","entityType":"person","observations":["new"],"createdAt":"2025-01-02"}'
    )


def test_line_separators_inside_strings_stay_raw_and_in_one_line(store: Path) -> None:
    text = "first\u2028second\u2029third\x85fourth"
    with McpMemoryProvider(str(store)) as p:
        p.add(person("Gus", text))
    raw = store.read_bytes()
    assert raw.count(b"\n") == 0 and "\u2028".encode() in raw  # JSON.stringify leaves them raw
    with McpMemoryProvider(str(store)) as p:
        assert p.get("Gus").body == f"- {text}\n"


def test_a_bad_line_is_reported_with_its_line_and_blocks_every_write(
    sample_copy: Callable[[str], Path],
) -> None:
    path = sample_copy("rendered-server-memory-2026.8.31/test-searchNodes-fixture.jsonl")
    damaged = path.read_bytes().replace(b'{"type":"entity","name":"Bob"', b'{"type":"entity","name":"Bob",,', 1)
    path.write_bytes(damaged)
    with McpMemoryProvider(str(path)) as p:
        assert [e.id for e in p.iter_entries()] == ["Alice", "Acme Corp"]
        errors = [d for d in p.validate() if d.severity is Severity.ERROR]
        assert [(d.path, d.line, d.code) for d in errors] == [("memory.jsonl", 2, "mcpmemory.syntax")]
        with pytest.raises(ParseError, match=r"memory\.jsonl:2"):
            p.add(person("Zed"))
        alice = p.get("Alice")
        with pytest.raises(ParseError):
            p.update(alice.model_copy(update={"body": "- x\n"}), expected_version=alice.version)
        with pytest.raises(ParseError):
            p.delete("Alice")
    assert path.read_bytes() == damaged


def test_an_entity_with_the_wrong_field_types_is_an_error_not_a_crash(store: Path) -> None:
    store.write_text(
        '{"type":"entity","name":"A","entityType":"x","observations":"not a list"}\n'
        '{"type":"relation","from":"A"}\n'
        '{"type":"note","text":"ignored by the server"}\n'
        "[1, 2]\n",
        encoding="utf-8",
    )
    with McpMemoryProvider(str(store)) as p:
        assert list(p.iter_entries()) == []
        found = [(d.line, d.code, d.severity) for d in p.validate()]
    assert found == [
        (1, "mcpmemory.syntax", Severity.ERROR),
        (2, "mcpmemory.syntax", Severity.ERROR),
        (3, "mcpmemory.ignored-record", Severity.WARNING),
        (4, "mcpmemory.syntax", Severity.ERROR),
    ]


def test_duplicate_named_entities_keep_their_lines_until_edited(sample_copy: Callable[[str], Path]) -> None:
    path = sample_copy("third-party/oshliaer-server-memory-editor-memory.jsonl")
    before = path.read_bytes()
    with McpMemoryProvider(str(path)) as p:
        p.add(person("Mike Bostock"))
        later = p.get("D3.js#2")
        with pytest.raises(InvalidEntryError, match="relations from that name belong to"):
            p.update(later.model_copy(update={"relations": [Relation(type="uses", target="D3.js")]}))
        assert p.get("D3.js").relations[0] == Relation(type="created by", target="Mike Bostock")  # resolved now
    after = path.read_bytes()
    lines = before.split(b"\n")
    # the new entity goes after the last entity line, before the relations; the rest is unchanged
    assert after == b"\n".join(
        [*lines[:14], b'{"type":"entity","name":"Mike Bostock","entityType":"person","observations":[]}', *lines[14:]]
    )


def test_crlf_and_trailing_newline_files_read_and_keep_their_line_ending(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    sample = (RENDERED / "test-searchNodes-fixture.jsonl").read_bytes()
    path.write_bytes(sample.replace(b"\n", b"\r\n") + b"\r\n")
    with McpMemoryProvider(str(path)) as p:
        assert [e.id for e in p.iter_entries()] == ["Alice", "Bob", "Acme Corp"]
        p.delete("Bob")
    assert path.read_bytes().count(b"\r\n") == 2 and not path.read_bytes().endswith(b"\n")


def test_a_migration_into_it_writes_no_path_of_this_machine(tmp_path: Path) -> None:
    """Provenance is core's opaque ``<key>.<digest>`` stamp, never the source's location."""
    target = tmp_path / "out" / "memory.jsonl"
    report = migrate(f"whitebox:{EXAMPLES / 'whitebox-vault'}", f"mcpmemory:{target}")
    assert report.ok and report.counts["failed"] == 0
    text = target.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.split("\n")]
    stamps = [r["memcore"]["extra"]["memcore"]["migrated_from"] for r in records if r["type"] == "entity"]
    assert stamps and all(re.fullmatch(r"[0-9a-f]{12}\.[0-9a-f]{8}", s) for s in stamps)
    assert str(tmp_path) not in text and str(EXAMPLES.parent) not in text and "/home/" not in text
    with McpMemoryProvider(str(target)) as p:
        assert [d for d in p.validate() if d.severity is Severity.ERROR] == []


def test_the_hook_registers_the_provider() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(plugin, name="mcpmemory")
    assert get_registry(pm).get("mcpmemory") is McpMemoryProvider


def test_the_installed_distribution_is_found_through_its_entry_point(store: Path) -> None:
    dist = importlib.metadata.distribution("memcore-unified-mcpmemory")
    points = {(ep.group, ep.name, ep.value) for ep in dist.entry_points}
    assert ("memcore", "mcpmemory", "memcore_mcpmemory.plugin") in points
    assert ("memcore_conformance", "mcpmemory", "memcore_mcpmemory.conformance:McpMemoryConformance") in points
    with memcore.open(f"mcpmemory:{store}") as p:
        assert isinstance(p, McpMemoryProvider)
    assert McpMemoryProvider.sniff(RENDERED / "readme-john-smith.jsonl")
