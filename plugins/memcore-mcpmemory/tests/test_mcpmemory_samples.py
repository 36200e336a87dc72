"""Every sample in ../shared/samples/mcp-memory-jsonl reads with the values the reference server gives.

The server's ``read_graph`` returns each entity's ``name``, ``entityType`` and ``observations``
and each relation's ``from``, ``to``, ``relationType`` (spec §3); memcore shows an entity as an
entry whose id and title are the name, whose body lists the observations, whose
``extra["mcpmemory"]["entityType"]`` is the type and whose relations are those from it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memcore.models import Kind, MemoryEntry, Relation, Severity
from memcore_mcpmemory import McpMemoryProvider, observations_of

RENDERED = "rendered-server-memory-2026.8.31"
BM = "extracted-basic-memory-tests"


def _read(path: Path) -> tuple[list[MemoryEntry], list[tuple[str, int | None, Severity]]]:
    with McpMemoryProvider(str(path), read_only=True) as store:
        entries, found = store.read_all()
    return entries, [(d.code, d.line, d.severity) for d in found]


def _graph(entries: list[MemoryEntry]) -> list[tuple[str, str, list[str]]]:
    """The entities as the server's read_graph gives them: (name, entityType, observations)."""
    out = []
    for e in entries:
        observations, exact = observations_of(e.body)
        assert exact, e.body
        out.append((e.title, str(e.extra["mcpmemory"]["entityType"]), observations))
    return out


def test_readme_john_smith(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{RENDERED}/readme-john-smith.jsonl"))
    assert _graph(entries) == [
        ("John_Smith", "person", ["Speaks fluent Spanish", "Graduated in 2019", "Prefers morning meetings"])
    ]
    (john,) = entries
    assert john.id == "John_Smith" and john.kind is Kind.NOTE
    assert john.body == "- Speaks fluent Spanish\n- Graduated in 2019\n- Prefers morning meetings\n"
    # Anthropic is no entity in the file: a ghost node, read as an unresolved link
    assert john.relations == [Relation(type="works_at", target="Anthropic", resolved=False)]
    assert found == [("mcpmemory.dangling-relation", 2, Severity.WARNING)]
    assert (john.created_at, john.status.value, john.tags, john.source) == (None, "active", [], None)


def test_add_observations_dedup(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{RENDERED}/test-add-observations-dedup.jsonl"))
    assert _graph(entries) == [("Alice", "person", ["works at Acme Corp", "likes coffee", "has a dog"])]
    assert entries[0].relations == [] and found == []


def test_cascade_delete_after(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{RENDERED}/test-cascade-delete-after.jsonl"))
    assert _graph(entries) == [("Alice", "person", []), ("Charlie", "person", [])]
    assert [e.body for e in entries] == ["", ""] and found == []


def test_delete_specific_relation(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{RENDERED}/test-delete-specific-relation.jsonl"))
    assert _graph(entries) == [("Alice", "person", []), ("Bob", "person", [])]
    assert [e.relations for e in entries] == [[Relation(type="works_with", target="Bob")], []]
    assert found == []


def test_search_nodes_fixture(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{RENDERED}/test-searchNodes-fixture.jsonl"))
    assert _graph(entries) == [
        ("Alice", "person", ["works at Acme Corp", "likes programming"]),
        ("Bob", "person", ["works at TechCo"]),
        ("Acme Corp", "company", ["tech company"]),
    ]
    assert [e.relations for e in entries] == [
        [Relation(type="works_at", target="Acme Corp")],
        [Relation(type="competitor", target="Acme Corp")],
        [],
    ]
    assert found == []


def test_self_relation(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{RENDERED}/test-self-relation-jsonl-format.jsonl"))
    assert _graph(entries) == [("Alice", "person", [])]
    assert entries[0].relations == [Relation(type="self", target="Alice")] and found == []


def test_anoblet_copilot_memory_pre_2025_key_order(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy("third-party/anoblet-copilot-memory.jsonl"))
    assert [(e.id, e.extra["mcpmemory"]["entityType"]) for e in entries] == [
        ("Andrew Noblet", "User Personal Information"),
        ("Coding Standards", "User Development Preferences"),  # "entityType" before "name" on its line
    ]
    andrew, standards = (observations_of(e.body)[0] for e in entries)
    assert (len(andrew), len(standards)) == (31, 28)
    assert andrew[:3] == [
        "The user's name is Andrew Noblet.",
        "The user's GitHub profile URL is https://github.com/anoblet.",
        "The developer lived in Puerto Rico.",
    ]
    assert standards[0] == "Prefers minimal, composable, and reusable components."
    assert all(e.kind is Kind.NOTE and e.relations == [] for e in entries) and found == []


def test_oshliaer_duplicates_ghosts_and_cyrillic(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy("third-party/oshliaer-server-memory-editor-memory.jsonl"))
    assert [e.id for e in entries] == [
        "server-memory-editor",
        "mcp-memory-visualizer",
        "mcp-server-memory",
        "D3.js",
        "зонтичный-issue-7",
        "issue-8-entity-types",
        "issue-9-relation-types",
        "D3.js#2",
        "D3.js#3",
        "D3.js#4",
        "mcp-server-memory#2",
        "mcp-server-memory#3",
        "mcp-server-memory#4",
        "mcp-server-memory#5",
    ]
    by_id = {e.id: e for e in entries}
    # a later entity of a used name keeps its own type and observations, and its exact name
    assert by_id["D3.js#3"].title == "D3.js" and by_id["D3.js#3"].extra["mcpmemory"] == {
        "entityType": "library",
        "name": "D3.js",
    }
    assert observations_of(by_id["D3.js#3"].body)[0] == [
        "Поддерживает SVG, Canvas, HTML рендеринг",
        "Модульная архитектура: d3-force, d3-selection, d3-zoom",
    ]
    assert by_id["mcp-memory-visualizer"].kind is Kind.REFERENCE  # entityType "reference" is a memcore kind
    # relations from a name belong to its first entity (the server's lookups take the first)
    assert by_id["D3.js"].relations == [
        Relation(type="created by", target="Mike Bostock", resolved=False),
        Relation(type="maintained by", target="Observable", resolved=False),
    ]
    assert by_id["D3.js#2"].relations == []
    assert by_id["server-memory-editor"].relations == [
        Relation(type="reverse-engineered from", target="mcp-memory-visualizer"),
        Relation(type="visualizes data from", target="mcp-server-memory"),
        Relation(type="uses", target="D3.js"),
        Relation(type="deployed via", target="GitHub Pages", resolved=False),
    ]
    assert by_id["зонтичный-issue-7"].relations == [Relation(type="tracks", target="server-memory-editor")]
    assert [c for c, _, _ in found].count("mcpmemory.duplicate-name") == 7
    assert [(c, line) for c, line, _ in found if c == "mcpmemory.dangling-relation"] == [
        ("mcpmemory.dangling-relation", 23),
        ("mcpmemory.dangling-relation", 24),
        ("mcpmemory.dangling-relation", 25),
        ("mcpmemory.dangling-relation", 26),
        ("mcpmemory.dangling-relation", 27),
    ]
    assert all(severity is Severity.WARNING for _, _, severity in found)


def test_basic_memory_sample_entities(sample_copy: Callable[[str], Path]) -> None:
    # written by Python's json.dumps (spaces after separators): the server reads it all the same
    entries, found = _read(sample_copy(f"{BM}/sample_entities.memory.json"))
    assert _graph(entries) == [("test_entity", "test", ["Test observation 1", "Test observation 2"])]
    assert entries[0].relations == [Relation(type="test_relation", target="related_entity", resolved=False)]
    assert found == [("mcpmemory.dangling-relation", 2, Severity.WARNING)]


def test_basic_memory_old_format_legacy_keys(sample_copy: Callable[[str], Path]) -> None:
    # from_id / to_id / relation_type: the server reads no from/to/relationType on this record;
    # memcore reads them as basic-memory's importer does, and warns on each key
    entries, found = _read(sample_copy(f"{BM}/old_format.json"))
    assert _graph(entries) == [("test_entity", "test", ["Test observation"])]
    assert entries[0].relations == [Relation(type="test_relation", target="other_entity", resolved=False)]
    assert found == [
        ("mcpmemory.legacy-key", 2, Severity.WARNING),
        ("mcpmemory.legacy-key", 2, Severity.WARNING),
        ("mcpmemory.legacy-key", 2, Severity.WARNING),
        ("mcpmemory.dangling-relation", 2, Severity.WARNING),
    ]


def test_basic_memory_missing_name_variants(sample_copy: Callable[[str], Path]) -> None:
    entries, found = _read(sample_copy(f"{BM}/missing_name.json"))
    assert _graph(entries) == [
        ("test_entity_id", "test", ["Test observation with id"]),
        ("test_entity_2", "test", ["Test observation with entityName"]),
        ("test_entity_title", "test", ["Test observation with name"]),
    ]
    # the legacy key is not a fork's field: it is not kept a second time in extra
    assert all(set(e.extra["mcpmemory"]) == {"entityType"} for e in entries)
    assert found == [("mcpmemory.legacy-key", 1, Severity.WARNING), ("mcpmemory.legacy-key", 2, Severity.WARNING)]


@pytest.mark.parametrize(
    "name",
    [
        f"{RENDERED}/readme-john-smith.jsonl",
        f"{RENDERED}/test-searchNodes-fixture.jsonl",
        "third-party/anoblet-copilot-memory.jsonl",
        "third-party/oshliaer-server-memory-editor-memory.jsonl",
    ],
)
def test_a_no_change_update_of_every_entity_writes_no_byte(sample_copy: Callable[[str], Path], name: str) -> None:
    path = sample_copy(name)
    before = path.read_bytes()
    with McpMemoryProvider(str(path)) as store:
        for entry in list(store.iter_entries()):
            store.update(entry, expected_version=entry.version)
    assert path.read_bytes() == before
