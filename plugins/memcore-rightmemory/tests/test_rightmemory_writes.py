"""Surgical writes: nodes, headings, edges, deletes, F# moves; refusals; bytes kept."""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import pytest

from memcore.errors import ConflictError, EntryNotFoundError, InvalidEntryError, UnsupportedOperationError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore_rightmemory import GraphInvariantError, RightMemoryProvider
from memcore_rightmemory._header import inline_text
from memcore_rightmemory._parse import fenced_lines

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "rightmemory"
FIXTURE = SAMPLES / "test-fixture-extracted-test_graph"
MEMORY_EXAMPLE = SAMPLES / "MEMORY.example.at-0fad0d5.md"
PURSUITS_EXAMPLE = SAMPLES / "PURSUITS.example.at-23141ba.md"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    root = tmp_path / "example"
    root.mkdir()
    shutil.copyfile(MEMORY_EXAMPLE, root / "MEMORY.md")
    shutil.copyfile(PURSUITS_EXAMPLE, root / "PURSUITS.md")
    # Ship the two detail files the example names, so the store starts valid.
    (root / "MEMORY_sample-release-runbook.md").write_text("### Rollout {#sample-rollout}\n\n- `step-1` Tag. → []\n")
    (root / "MEMORY_sample-backup-drill.md").write_text("")
    return root


@pytest.fixture
def fixture(tmp_path: Path) -> Path:
    root = tmp_path / "fixture"
    shutil.copytree(FIXTURE, root)
    for path in root.iterdir():
        path.chmod(0o644)
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def _diff(before: bytes, after: bytes) -> list[tuple[str, int, int, int, int]]:
    a, b = before.decode().splitlines(keepends=True), after.decode().splitlines(keepends=True)
    return [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]


def test_example_with_detail_files_is_valid(example: Path) -> None:
    with RightMemoryProvider(example) as p:
        assert p.validate() == []
        assert p.get("sample-rollout").parent == "sample-release-runbook"


def test_add_heading_under_parent_is_one_insert(example: Path) -> None:
    before = _tree(example)
    with RightMemoryProvider(example) as p:
        h = p.add(
            MemoryEntry(kind=Kind.FACT, title="Caching", body="Redis in front of the API.\n", parent="sample-infra")
        )
        assert (h.id, h.parent, h.extra["rightmemory"]["depth"]) == ("caching", "sample-infra", 3)
        assert p.validate() == []
    after = _tree(example)
    assert [n for n in before if before[n] != after[n]] == ["MEMORY.md"]
    ops = _diff(before["MEMORY.md"], after["MEMORY.md"])
    assert len(ops) == 1 and ops[0][0] == "insert"
    text = after["MEMORY.md"].decode()
    # a plain add whose fields all fit: RightMemory's own syntax, no memcore comment
    assert "\n### Caching {#caching}\n\nRedis in front of the API.\n" in text
    assert "memcore:" not in text
    # It sits at the end of sample-infra's block, before the `---` of the next domain.
    assert text.index("{#caching}") < text.index("# User Context")
    # It is the last thing of sample-infra's block (after its closing `---`).
    assert "---\n\n### Caching" in text


def test_new_ids_are_derived_and_unique(example: Path) -> None:
    with RightMemoryProvider(example) as p:
        a = p.add(MemoryEntry(kind=Kind.FACT, title="Proj Web!", parent="sample-app"))
        b = p.add(MemoryEntry(kind=Kind.FACT, title="Proj Web!", parent="sample-app"))
        assert (a.id, b.id) == ("proj-web-2", "proj-web-3")  # `proj-web` exists already
        with pytest.raises(InvalidEntryError):
            p.add(MemoryEntry(id="bad id", title="x", parent="sample-app"))
        with pytest.raises(GraphInvariantError) as info:
            p.add(MemoryEntry(id="proj-api", title="again", parent="sample-app"))
        assert [d.code for d in info.value.diagnostics] == ["rm.duplicate-id"]


def test_refused_writes_change_nothing(example: Path) -> None:
    before = _tree(example)
    with RightMemoryProvider(example) as p:
        with pytest.raises(GraphInvariantError) as info:
            p.add(MemoryEntry(title="x", parent="sample-app", relations=[Relation(type="dep", target="ghost")]))
        assert [(d.code, d.path) for d in info.value.diagnostics] == [("rm.dangling-edge", "MEMORY.md")]
        with pytest.raises(GraphInvariantError) as info:
            p.add_edge("proj-web", "rel", "sample-deployable-units")
        assert [d.code for d in info.value.diagnostics] == ["rm.containment-edge"]
        with pytest.raises(GraphInvariantError):
            p.add_edge("proj-web", "likes", "proj-api")
        with pytest.raises(GraphInvariantError) as info:
            p.add_edge("proj-web", "dep", "proj-web")
        assert [d.code for d in info.value.diagnostics] == ["rm.self-edge"]
        with pytest.raises(GraphInvariantError) as info:  # a `#` heading under ### would be a bad ####
            p.add(MemoryEntry(title="Too deep", body="x\n", parent="sample-database-stack"))
        assert [d.code for d in info.value.diagnostics] == ["rm.terminal-marker"]
        with pytest.raises(InvalidEntryError):
            p.add(MemoryEntry(title="x", parent="proj-web"))  # a node is not a container
    assert _tree(example) == before


def test_edit_node_text_and_edges_touch_one_line(example: Path) -> None:
    before = _tree(example)
    with RightMemoryProvider(example) as p:
        node = p.get("lib-utils")
        node.title = "shared-utils — utility library, now also used by the deploy bundle."
        p.update(node, expected_version=node.version)
        p.add_edge("lib-utils", "out", "proj-deploy")
        p.remove_edge("lib-utils", "rel", "proj-web")
        got = p.get("lib-utils")
        assert [(r.type, r.target) for r in got.relations] == [("rel", "proj-api"), ("out", "proj-deploy")]
        with pytest.raises(EntryNotFoundError):
            p.remove_edge("lib-utils", "rel", "proj-web")
    after = _tree(example)
    ops = _diff(before["MEMORY.md"], after["MEMORY.md"])
    assert len(ops) == 1 and ops[0][0] == "replace" and ops[0][2] - ops[0][1] == 1
    line = after["MEMORY.md"].decode().splitlines()[ops[0][3]]
    assert line.startswith("- `lib-utils` shared-utils — utility library, now also used by the deploy bundle. \u2192 [")
    assert line.endswith("[rel:proj-api, out:proj-deploy]")


def test_heading_edges_and_body_edit(example: Path) -> None:
    with RightMemoryProvider(example) as p:
        p.add_edge("sample-interface-contracts", "doc", "proj-api")
        h = p.get("sample-interface-contracts")
        assert h.relations == [Relation(type="doc", target="proj-api")]
        h.body = "Contracts the API promises to its clients.\n"
        p.update(h, expected_version=h.version)
        got = p.get("sample-interface-contracts")
        assert got.body == "Contracts the API promises to its clients.\n"
        assert [e.id for e in p.iter_entries() if e.parent == "sample-interface-contracts"] == [
            "api-public-contract",
            "auth-session-contract",
        ]
        assert p.validate() == []
    text = (example / "MEMORY.md").read_text()
    assert "### Interface Contracts {#sample-interface-contracts} \u2192 [doc:proj-api]\n" in text


def test_stale_version_conflicts(example: Path) -> None:
    with RightMemoryProvider(example) as p:
        old = p.get("db-postgres")
        fresh = p.get("db-postgres")
        fresh.title = "postgres-db — PostgreSQL 16."
        p.update(fresh, expected_version=fresh.version)
        old.title = "stale"
        with pytest.raises(ConflictError):
            p.update(old, expected_version=old.version)


def test_delete_refuses_while_referenced_then_drops_edges(example: Path) -> None:
    with RightMemoryProvider(example) as p:
        with pytest.raises(ConflictError) as info:
            p.delete("proj-api")
        for referrer in ("proj-pref-contract-first", "proj-web", "lib-utils", "proj-deploy", "db-postgres"):
            assert referrer in str(info.value)
        with pytest.raises(ConflictError):
            p.delete("sample-database-stack")  # still holds nodes
        p.delete("proj-api", drop_edges=True)
        assert p.validate() == []
        assert all(r.target != "proj-api" for e in p.iter_entries() for r in e.relations)
        with pytest.raises(EntryNotFoundError):
            p.get("proj-api")
        p.delete("pref-env-check")
        p.delete("pref-principle-first")
        p.delete("sample-user-workflow-preferences")
        assert p.validate() == []
        assert "sample-user-workflow-preferences" not in (example / "MEMORY.md").read_text()


def test_delete_focused_pursuit_drops_focus_reference(tmp_path: Path) -> None:
    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    (root / "PURSUITS.md").write_text("# Pursuits\n\n## Focus\n\n- `ship` now\n\n## Ship {#ship}\n\nGo.\n")
    with RightMemoryProvider(root) as p:
        assert p.validate() == []
        with pytest.raises(ConflictError, match=r"focus:PURSUITS\.md:5"):
            p.delete("ship")
        p.delete("ship", drop_edges=True)
        assert p.validate() == []
    assert (root / "PURSUITS.md").read_text() == "# Pursuits\n\n## Focus\n\n"


def test_move_children_to_detail_file_and_back(fixture: Path) -> None:
    original = _tree(fixture)
    with RightMemoryProvider(fixture) as p:
        parents = {e.id: e.parent for e in p.iter_entries()}
        name = p.move_to_detail("project")
        assert name == "MEMORY_project.md"
        assert p.validate() == []
        assert {e.id: e.parent for e in p.iter_entries()} == parents
        assert p.get("project").extra["rightmemory"]["marker"] == "F#"
        assert p.get("child").extra["rightmemory"]["file"] == "MEMORY_project.md"
        moved = _tree(fixture)
        assert moved["MEMORY.md"].decode() == (
            "# Memory\n\n## Project {F#project}\n\nProject body.\n\n## Details {F#details}\n\nDetail summary.\n"
        )
        assert (
            moved["MEMORY_project.md"].decode()
            == "- `project-fact` Fact. \u2192 []\n\n### Child {#child}\n\nChild body.\n"
        )
        p.inline_detail("project")
        assert p.validate() == []
        assert {e.id: e.parent for e in p.iter_entries()} == parents
    assert _tree(fixture) == original


def test_inline_refused_when_depth_would_break(fixture: Path) -> None:
    (fixture / "MEMORY_details.md").write_text("# Top level {#toplevel}\n")
    before = _tree(fixture)
    with RightMemoryProvider(fixture) as p:
        assert p.get("toplevel").parent == "details"
        with pytest.raises(InvalidEntryError):
            p.inline_detail("details")
    assert _tree(fixture) == before


def test_meta_comment_round_trip_and_is_plain_text_to_the_reference(tmp_path: Path) -> None:
    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    with RightMemoryProvider(root) as p:
        given = MemoryEntry(
            kind=Kind.DECISION,
            title="Use Postgres",
            status=Status.SUPERSEDED,
            tags=["db", "KB:x"],
            source="agent-7",
            scope="team-a",
            confidence=0.9,
            created_at="2026-01-02T03:04:05.678Z",
            relations=[Relation(type="supersedes", target="old-choice", resolved=False)],
            extra={"box": {"team": "core", "n": 1}, "rightmemory": {"note": "kept"}},
        )
        stored = p.add(given)
        again = p.get(stored.id)
        for field in ("kind", "status", "tags", "source", "scope", "confidence", "created_at", "relations"):
            assert getattr(again, field) == getattr(given, field), field
        assert again.extra["box"] == {"team": "core", "n": 1}
        assert again.extra["rightmemory"]["note"] == "kept"
        assert p.validate() == []
    lines = (root / "MEMORY.md").read_text().splitlines()
    # the comment is kept in the file's header, before its first heading, where graph.py reads nothing
    assert lines[0] == "<!-- memcore: items"
    assert lines[1].startswith(f"{stored.id} {{") and lines[2] == "-->"
    assert [line for line in lines if "memcore" in line] == lines[:1]
    # None of the reference parser's line patterns (reference-notes/rightmemory.md) matches a header line.
    for line in lines[:3]:
        for pattern in (
            r"^(#+)\s+",
            r"^\s*-\s+`",
            r"^ {0,3}(`{3,}|~{3,})",
            r"^\s*\*\*(State|Next|Done when|Status):\*\*",
        ):
            assert re.match(pattern, line) is None


def test_uncertain_reads_low_confidence(tmp_path: Path) -> None:
    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    (root / "MEMORY.md").write_text("# Memory\n\n- `maybe` Uncertain: the user prefers tabs. \u2192 []\n")
    with RightMemoryProvider(root) as p:
        entry = p.get("maybe")
        assert entry.confidence == 0.3 and entry.extra["rightmemory"]["uncertain"] is True
        entry.title = "Uncertain: the user prefers tabs in Go only."
        p.update(entry, expected_version=entry.version)
    assert "<!--" not in (root / "MEMORY.md").read_text().split("\n")[2].split("\u2192")[0]


def test_crlf_and_bom_files_keep_their_bytes(fixture: Path) -> None:
    data = b"\xef\xbb\xbf" + (fixture / "MEMORY.md").read_bytes().replace(b"\n", b"\r\n")
    (fixture / "MEMORY.md").write_bytes(data)
    with RightMemoryProvider(fixture) as p:
        assert p.validate() == []
        p.add(MemoryEntry(kind=Kind.FACT, title="Windows fact", parent="project"))
    after = (fixture / "MEMORY.md").read_bytes()
    assert after.startswith(b"\xef\xbb\xbf") and b"\n" not in after.replace(b"\r\n", b"")
    assert after.replace(b"- `windows-fact` Windows fact \xe2\x86\x92 []\r\n", b"", 1).startswith(data[:60])


def test_corrections_entries_are_read_only(tmp_path: Path) -> None:
    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    (root / "MEMORY_agent-corrections-design.md").write_bytes((SAMPLES / "AGENT_CORRECTIONS_EXAMPLES.md").read_bytes())
    with RightMemoryProvider(root) as p:
        corrections = [e for e in p.iter_entries() if e.kind == Kind.CORRECTION]
        assert [e.title for e in corrections] == [
            "Preserve the requested comparison structure",
            "Verify ambiguous remote state before retrying",
        ]
        assert corrections[0].id == "agent-corrections-design#13"
        assert p.get(corrections[1].id).body.startswith("After a deployment command returned")
        with pytest.raises(UnsupportedOperationError):
            p.update(corrections[0])
        with pytest.raises(UnsupportedOperationError):
            p.delete(corrections[0].id or "")


def test_sniff_and_init(tmp_path: Path) -> None:
    assert RightMemoryProvider.sniff(FIXTURE)
    assert RightMemoryProvider.sniff(FIXTURE / "MEMORY.md")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "MEMORY.md").write_text("# Notes\n\nNo anchors here.\n")
    assert not RightMemoryProvider.sniff(plain)
    assert not RightMemoryProvider.sniff(tmp_path / "missing")
    store = tmp_path / "new"
    RightMemoryProvider.init_store(str(store))
    assert RightMemoryProvider.sniff(store)
    with RightMemoryProvider(store) as p:
        assert p.validate() == [] and list(p.iter_entries()) == []
        pursuit = p.add(MemoryEntry(kind=Kind.PURSUIT, title="Ship v1", body="**State:** started.\n"))
        assert pursuit.extra["rightmemory"]["module"] == "pursuit"
        assert pursuit.extra["rightmemory"]["fields"] == {"state": "started."}
        assert p.locate(pursuit.id or "") == ("PURSUITS.md", 7)
        assert p.validate() == []


def test_node_after_continuation_and_nested_items(tmp_path: Path) -> None:
    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    (root / "MEMORY.md").write_text(
        "# Memory\n\n## H {#h}\n\n- `a` first \u2192 []\n  continued text\n  - `b` nested \u2192 []\n\n## Next {#next}\n"
    )
    with RightMemoryProvider(root) as p:
        c = p.add(
            MemoryEntry(kind=Kind.FACT, title="third", parent="h",
                        relations=[Relation(type="supersedes", target="zz", resolved=False), Relation(type="dep", target="a")])
        )  # fmt: skip
        assert [(r.type, r.target) for r in c.relations] == [("dep", "a"), ("supersedes", "zz")]
        assert [e.id for e in p.iter_entries() if e.parent == "h"] == ["a", "b", "third"]
    lines = inline_text((root / "MEMORY.md").read_text()).splitlines()
    assert lines[7].startswith("- `third` third \u2192 [dep:a]") and lines[6] == "  - `b` nested \u2192 []"
    assert lines[8] == '  <!-- memcore: {"relations":[["supersedes","zz",false]]} -->'
    assert (root / "MEMORY.md").read_text().startswith('<!-- memcore: items\nthird {"relations":')


def test_read_only_option_refuses_writes(fixture: Path) -> None:
    from memcore.errors import ReadOnlyStoreError

    before = _tree(fixture)
    with RightMemoryProvider(fixture, read_only=True) as p:
        assert len(list(p.iter_entries())) == 6
        with pytest.raises(ReadOnlyStoreError):
            p.add(MemoryEntry(title="x", parent="project"))
        with pytest.raises(ReadOnlyStoreError):
            p.delete("project-fact")
        with pytest.raises(ReadOnlyStoreError):
            p.move_to_detail("project")
    assert _tree(fixture) == before


def test_migrating_a_store_into_rightmemory_keeps_graph_and_layout(example: Path, tmp_path: Path) -> None:
    from memcore.migrate import convert

    target = tmp_path / "copy"
    RightMemoryProvider.init_store(str(target))
    with RightMemoryProvider(example) as src, RightMemoryProvider(target) as dst:
        report = convert(src, dst)
        assert report.lossless
        assert dst.validate() == []
        original = {e.id: e for e in src.iter_entries()}
        copied = {e.id: e for e in dst.iter_entries()}
        assert set(copied) == set(original)
        for ident, entry in original.items():
            got = copied[ident]
            assert (got.title, got.body, got.parent, got.kind) == (entry.title, entry.body, entry.parent, entry.kind)
            assert got.relations == entry.relations
            info, was = got.extra["rightmemory"], entry.extra["rightmemory"]
            assert (info["marker"], info.get("depth"), info["file"]) == (was["marker"], was.get("depth"), was["file"])


@pytest.mark.parametrize("title", ["Anchor in code `{#x}`", "Arrow in code `→ [dep:a]`", "Set {F#y} here"])
def test_titles_the_reference_would_read_as_graph_syntax_are_refused(example: Path, title: str) -> None:
    before = _tree(example)
    with RightMemoryProvider(example) as p, pytest.raises(InvalidEntryError):
        p.add(MemoryEntry(kind=Kind.FACT, title=title, body="x\n", parent="sample-app"))
    assert _tree(example) == before


@pytest.mark.parametrize("family", ["memory", "pursuit"])
def test_graph_syntax_in_bodies_is_escaped_and_round_trips(example: Path, family: str) -> None:
    body = (
        "# Identity\n\\## already escaped {#x}\n- `injected` node → []\n  - \\`two` → []\n"
        "<div>\n- `hidden-node` x → []\n</div>\n\n    - `indented` x → []\n"
        "```\n## fenced {#y}\n- `z` w → []\n```\n**Next:**\n- `do` keep this action\n"
    )
    kind = Kind.PURSUIT if family == "pursuit" else Kind.FACT
    parent = None if family == "pursuit" else "sample-app"
    with RightMemoryProvider(example) as p:
        stored = p.add(MemoryEntry(kind=kind, title="Escapes", body=body, parent=parent))
        assert stored.body == body
        assert p.validate() == []
        file, _line = p.locate(stored.id or "")
    written = (example / file).read_text()
    assert "\n\\# Identity\n\\\\## already escaped {#x}\n- \\`injected` node → []\n  - \\\\`two` → []\n" in written
    assert "\n- \\`hidden-node` x → []\n" in written and "\n    - \\`indented` x → []\n" in written
    assert "```\n## fenced {#y}\n- `z` w → []\n```\n" in written  # fenced code is left alone
    action = "- `do` keep this action" if family == "pursuit" else "- \\`do` keep this action"
    assert f"**Next:**\n{action}\n" in written


def test_every_kind_and_status_round_trips(tmp_path: Path) -> None:
    from memcore_rightmemory.mapping import kind_for

    root = tmp_path / "s"
    RightMemoryProvider.init_store(str(root))
    statuses = list(Status)
    with RightMemoryProvider(root) as p:
        for n, kind in enumerate(Kind):  # 12 kinds cover all 10 statuses
            status = statuses[n % len(statuses)]
            stored = p.add(MemoryEntry(kind=kind, status=status, title=f"{kind.value} {status.value}"))
            got = p.get(stored.id or "")
            assert (got.kind, got.status) == (kind, status)
            derived = kind_for(got.extra["rightmemory"]["module"], got.extra["rightmemory"]["marker"])
            file, line = p.locate(got.id or "")
            lines = (root / file).read_text().splitlines()
            assert f"{{{got.extra['rightmemory']['marker']}{got.id}}}" in lines[line - 1] or lines[line - 1].startswith(
                f"- `{got.id}`"
            )
            comment = next((x for x in lines if x.startswith(f"{got.id} {{")), "")  # its header line
            assert (f'"kind":"{kind.value}"' in comment) != (kind == derived)
        assert p.validate() == []
    assert kind_for("memory", "S#") == Kind.SKILL and kind_for("memory", "M#") == Kind.REFERENCE
    assert kind_for("pursuit", "#") == Kind.PURSUIT and kind_for("memory", "node") == Kind.FACT


def test_lone_surrogate_is_refused_as_invalid_entry_before_anything_is_written(tmp_path: Path) -> None:
    root = tmp_path / "rm"
    RightMemoryProvider.init_store(str(root))
    provider = RightMemoryProvider(root).open()
    good = provider.add(MemoryEntry(title="Good", body="", kind=Kind.FACT))
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    bad = MemoryEntry(title="t", kind=Kind.FACT).model_copy(update={"title": "bad \ud800"})
    with pytest.raises(InvalidEntryError, match=r"entry\.title has a lone surrogate \(U\+D800\) at character 4"):
        provider.add(bad)
    with pytest.raises(InvalidEntryError, match=r"entry\.tags\[0\]"):
        provider.update(good.model_copy(update={"tags": ["\udfff"]}))
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before


def test_a_relation_repeated_as_the_same_edge_is_written_once(tmp_path: Path) -> None:
    """The schema allows no duplicate edge on one item: the second is not written, nothing fails."""
    RightMemoryProvider.init_store(str(tmp_path))
    twice = [Relation(type="rel", target="x"), Relation(type="dep", target="x"), Relation(type="rel", target="x")]
    unresolved = [Relation(type="rel", target="ghost", resolved=False)] * 2
    with RightMemoryProvider(tmp_path) as p:
        p.add(MemoryEntry(id="x", title="X"))
        node = p.add(MemoryEntry(id="n", title="N", relations=twice + unresolved))
        head = p.add(MemoryEntry(id="h", title="H", body="Body.\n", relations=twice))
        once = [Relation(type="rel", target="x"), Relation(type="dep", target="x")]
        assert node.relations == once + unresolved  # unresolved ones live in the comment, both kept
        assert head.relations == once
        updated = p.update(head.model_copy(update={"relations": [*twice, *twice]}), expected_version=head.version)
        assert updated.relations == once
        with pytest.raises(GraphInvariantError) as info:  # asked for explicitly, a repeat is refused
            p.add_edge("h", "dep", "x")
        assert [d.code for d in info.value.diagnostics] == ["rm.duplicate-edge"]
    text = (tmp_path / "MEMORY.md").read_text()
    assert "- `n` N \u2192 [rel:x, dep:x]\n" in text
    assert "# H {#h} \u2192 [rel:x, dep:x]\n" in text
    with RightMemoryProvider(tmp_path) as p:
        assert p.validate() == []
        assert p.get("n") == node
        assert p.get("h") == updated


def test_migrating_a_box_memory_that_links_one_memory_twice(tmp_path: Path) -> None:
    """Box `related: [[[X]], [[X]]]` used to fail the whole entry (duplicate edge); now the
    entry is written with one `rel` edge and the read-back compare reports the relation change."""
    from memcore.errors import UnknownFormatError
    from memcore.migrate import migrate
    from memcore.registry import get_registry

    try:
        box = get_registry().get("box")
    except UnknownFormatError:
        pytest.skip("memcore-box is not installed")
    box.init_store(str(tmp_path / "box"))
    with box(str(tmp_path / "box")) as b:
        x = b.add(MemoryEntry(title="X", body="x body\n"))
        assert x.id is not None
        y = b.add(MemoryEntry(title="Y", body="y body\n", relations=[Relation(type="related", target=x.id)] * 2))
        assert len(y.relations) == 2
    RightMemoryProvider.init_store(str(tmp_path / "rm"))
    report = migrate(f"box:{tmp_path / 'box'}", f"rightmemory:{tmp_path / 'rm'}")
    assert report.counts["failed"] == 0 and report.counts["written"] == 2
    (rep,) = [r for r in report.entries if r.source_id == y.id]
    changed = {c.field: c for c in [*rep.losses, *rep.kept]}
    assert changed["relations"].stored == [{"type": "rel", "target": "x", "resolved": True}]
    assert len(changed["relations"].written) == 2
    assert "# Y {#y} \u2192 [rel:x]\n" in (tmp_path / "rm" / "MEMORY.md").read_text()


@pytest.mark.parametrize(
    "body",
    [
        "```\ncode\n",
        "~~~~\ncode\n~~~\n",  # a shorter fence does not close it
        "Text.\n\n```python\nprint()\n",
        "<pre>\nx\n",
        "<!--\nnote\n",
        "<?php\necho 1;\n",
        "<!DOCTYPE html\n",
        "<![CDATA[\nx\n",
        "   <script>\nx\n",
        "```\n<!--\n",  # a comment inside an open fence
        "<!--\n```\n",  # a fence inside an open comment
        "```\n# heading-like line in code\n- `x` node-like \u2192 []\n",
    ],
)
def test_a_body_left_open_is_closed_in_the_file_and_reads_back(tmp_path: Path, body: str) -> None:
    """A heading body that leaves a code fence or an HTML block open would swallow every item
    written after it (the next add failed; RightMemory's parser lost it): memcore writes closing
    lines after it (``body_close`` in the comment), so it reads back as given and swallows nothing."""
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as p:
        added = p.add(MemoryEntry(id="open", title="Open", body=body))
        assert added.body == body
        ok = p.add(MemoryEntry(id="ok", title="Ok", body="Closed.\n"))
        updated = p.update(ok.model_copy(update={"body": body}), expected_version=ok.version)
        assert updated.body == body
        p.add(MemoryEntry(id="after", title="After", body="Still read.\n"))
        p.add(MemoryEntry(id="node", title="A node"))
    text = (tmp_path / "MEMORY.md").read_text()
    assert '"body_close":' in text
    assert not [line for number, line, in_code in fenced_lines(text.splitlines()) if in_code and "{#" in line]
    with RightMemoryProvider(tmp_path) as p:
        got = {e.id: e for e in p.read_all().entries}
        assert list(got) == ["node", "open", "ok", "after"]
        assert (got["open"], got["ok"]) == (added, updated)
        assert got["after"].body == "Still read.\n"
        assert p.validate() == []
        again = p.update(got["ok"].model_copy(update={"body": "Closed again.\n"}), expected_version=updated.version)
        assert again.body == "Closed again.\n"
    assert (tmp_path / "MEMORY.md").read_text().count('"body_close":') == 1


@pytest.mark.parametrize(
    "body",
    [
        "```\n```python\n```\n",  # closed for CommonMark, open for RightMemory's tracker
        "```\ncode\n```python\n",  # closed for RightMemory's tracker (at ```python), open for CommonMark
    ],
)
def test_a_body_no_closing_line_closes_for_both_parsers_is_refused(tmp_path: Path, body: str) -> None:
    """The two parsers disagree on whether ```python closes a fence: any closing fence line would
    close one's block and open the other's, so the body is refused and nothing written."""
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as p:
        before = (tmp_path / "MEMORY.md").read_bytes()
        with pytest.raises(InvalidEntryError, match="open at its end"):
            p.add(MemoryEntry(id="open", title="Open", body=body))
        assert (tmp_path / "MEMORY.md").read_bytes() == before


@pytest.mark.parametrize(
    "body",
    [
        "```\ncode\n```\n",
        "~~~\ncode\n~~~~\n",
        "<div>\n\nx\n",
        "<b>bold</b> text\n",
        "< not a tag\n",
        "<!-- a comment -->\n",
        "<pre>x</pre>\n",
        "    ```\n    indented, not a fence\n",
    ],
)
def test_a_closed_body_with_fences_or_html_is_written(tmp_path: Path, body: str) -> None:
    RightMemoryProvider.init_store(str(tmp_path))
    with RightMemoryProvider(tmp_path) as p:
        assert p.add(MemoryEntry(id="b", title="B", body=body)).body == body
        p.add(MemoryEntry(id="after", title="After", body="Still read.\n"))
    with RightMemoryProvider(tmp_path) as p:
        assert [(e.id, e.body) for e in p.read_all().entries] == [("b", body), ("after", "Still read.\n")]


def test_random_bodies_of_block_syntax_never_swallow_later_items(tmp_path: Path) -> None:
    """Bodies made of fence, HTML-block, heading and node lines, each added at the end of one
    store: every body reads back exactly (or is refused, nothing written), and every item added
    after it still reads back, for memcore's parser and RightMemory's fence tracker alike."""
    import random

    pieces = [
        "```", "````", "~~~", "```python", "<pre>", "</pre>", "<!--", "-->", "<?x", "?>", "<!DOC", ">",
        "<![CDATA[", "]]>", "<div>", "</div>", "<script>", "# heading-like", "- `n` node-like \u2192 []",
        "text", "", "    indented", "\\# escaped", "> quote",
    ]  # fmt: skip
    rng = random.Random(9)
    RightMemoryProvider.init_store(str(tmp_path))
    written: dict[str, str] = {}
    with RightMemoryProvider(tmp_path) as p:
        for i in range(250):
            body = "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) + "\n"
            if not body.strip():
                continue
            try:
                got = p.add(MemoryEntry(id=f"b{i}", title=f"B {i}", body=body))
            except InvalidEntryError as exc:
                assert "open at its end" in str(exc)
                continue
            assert got.body == body
            written[f"b{i}"] = body
    assert len(written) > 200
    text = (tmp_path / "MEMORY.md").read_text()
    in_code = [line for _n, line, code in fenced_lines(text.splitlines()) if code and line.startswith("# B ")]
    assert in_code == []
    with RightMemoryProvider(tmp_path) as p:
        assert {e.id: e.body for e in p.read_all().entries} == written
        assert [d for d in p.validate() if d.severity.value == "error"] == []


@pytest.mark.parametrize("body", ["line one\r\nline two\r\n", "a\rb"])
def test_carriage_returns_in_a_body_are_written_as_the_files_line_breaks(example: Path, body: str) -> None:
    """A CRLF body (a Maka entry written on Windows) is stored with LF, as add() returns it, not refused."""
    store = RightMemoryProvider(example).open()
    stored = store.add(MemoryEntry(title="Windows note", body=body))
    assert stored.body == body.replace("\r\n", "\n").replace("\r", "\n")
    updated = store.update(stored.model_copy(update={"body": "changed\r\nagain\r\n"}), expected_version=stored.version)
    assert updated.body == "changed\nagain\n"
    again = RightMemoryProvider(example).open().get(stored.id or "")
    assert again.model_dump() == updated.model_dump()
    assert b"\r" not in (example / "MEMORY.md").read_bytes()
