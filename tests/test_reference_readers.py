"""The test-side reference readers read the formats' authors' own files as the reference notes say.

Each reader in tests/reference_readers implements one format's own parser from
../shared/specs/reference-notes/ (not memcore's code); these tests pin what it reads from the
authors' files in ../shared/samples, so the fidelity tests (test_reference_fidelity.py) rest on
readers proven against the real thing.
"""

from __future__ import annotations

from pathlib import Path

from reference_readers import box, maka, rightmemory, whitebox
from reference_readers.compare import Row, native

from memcore.models import MemoryEntry

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def test_whitebox_reader_reads_the_example_vaults_fenced_observation() -> None:
    text = (SAMPLES / "whitebox" / "vault-example" / "observations" / "2026-04.md").read_text(encoding="utf-8")
    (obs,) = whitebox.parse_observations(text)
    assert obs.fields == {
        "date": "2026-04-19",
        "source": "claude-opus-4-7",
        "tags": "[working-style, preference]",
        "confidence": "high",
    }
    assert obs.tags == ["working-style", "preference"]
    assert obs.body.startswith("Example observation. Replace with real entries.")
    assert obs.body.endswith("the context it was learned in.")
    assert obs.kind is None


def test_whitebox_reader_keeps_quotes_skips_unfenced_and_malformed_blocks_and_cuts_at_a_fence() -> None:
    text = (
        "---\ndate: 2026-01-01\nsource: bare\n---\n\nUnfenced, as the spec draws it.\n\n"
        '```\n---\ndate: 2026-01-02\nsource: "claude"\ntags: ["a", \'b\', , c]\nkind: note\n---\n\nQuoted.\n```\n\n'
        "```\nno frontmatter here\n```\n\n"
        "````\n---\ndate: 2026-01-03\nsource: x\ntags: []\nkind: quote\n---\n\nBefore\n```\ncode\n```\nafter\n````\n"
    )
    quoted, cut = whitebox.parse_observations(text)
    assert quoted.fields["source"] == '"claude"'  # the reference test: quotes are part of the value
    assert quoted.tags == ["a", "b", "c"]
    assert quoted.kind is None  # kind keeps only quote / inference
    assert cut.kind == "quote"
    assert cut.body == "Before"  # the regex ends the block at the body's own fence


def test_whitebox_reader_reads_a_stable_files_schema_frontmatter() -> None:
    text = (SAMPLES / "whitebox" / "vault-example" / "identity.md").read_text(encoding="utf-8")
    frontmatter, body = whitebox.parse_stable(text)
    assert frontmatter == {"schema": "whitebox/1.0"}
    assert body.lstrip().startswith("# Identity\n")


def test_maka_reader_reads_the_default_templates_as_maka_shows_them() -> None:
    (head,) = maka.parse((SAMPLES / "maka" / "default-template.HEAD-f19eede.rendered-now-1700000000000.md").read_text())
    assert (head.id, head.title, head.origin, head.status, head.scope) == (
        "mem-e060c48e23fe4573",
        "示例\uff1a我的偏好",  # fullwidth colon, as written
        "manual",
        "active",
        "workspace",
    )
    assert head.time("createdAt") == 1700000000000
    (old,) = maka.parse((SAMPLES / "maka" / "default-template.v0.1-c06e13f.rendered-now-1700000000000.md").read_text())
    assert old.id == "manual-1700000000000"


def test_maka_reader_applies_the_first_comment_the_fallback_id_and_the_status_rules() -> None:
    (canonical,) = maka.parse((SAMPLES / "maka" / "fixture-first-metadata-comment-authoritative.md").read_text())
    assert (canonical.id, canonical.status, canonical.scope) == ("canonical", "active", "workspace")
    assert canonical.content == "Keep this entry active.\nKeep parsing content after the ignored metadata comment."
    entries = maka.parse((SAMPLES / "maka" / "fixture-v0.1-best-effort-metadata.md").read_text())
    assert [(e.id, e.title, e.origin) for e in entries] == [
        ("pref-1", "偏好", "manual"),
        ("手写条目", "手写条目", "unknown"),
    ]
    statuses = maka.parse((SAMPLES / "maka" / "fixture-statuses-pending-rejected-unknown.md").read_text())
    assert [(e.id, e.status) for e in statuses] == [
        ("active", "active"),
        ("pending", "review_required"),
        ("rejected", "rejected"),
        ("future", "unknown"),
    ]
    sessions = maka.parse((SAMPLES / "maka" / "fixture-session-scope.md").read_text())
    assert [e.scope for e in sessions] == ["workspace", "session", "session", "session"]


def test_maka_reader_normalises_tags_and_drops_empty_sections_and_oversize_files() -> None:
    assert maka.parse_tags("KB:x, 10:00,Dup,dup,,a b") == ["kb-x", "10-00", "dup", "a-b"]
    assert [e.title for e in maka.parse("## Empty\n<!-- maka-memory: id=e -->\n\n## Kept\nText\n")] == ["Kept"]
    assert maka.parse("## Big\n" + "x" * maka.MAX_BYTES) == []
    assert maka.slug("Hello, World!") == "hello-world" and maka.slug("!!!") == "memory-entry"


def test_rightmemory_reader_reads_graph_pys_test_fixture_across_the_f_file() -> None:
    items = rightmemory.parse_graph(SAMPLES / "rightmemory" / "test-fixture-extracted-test_graph")
    assert [(i.id, i.item, i.marker, i.parent, i.file) for i in items] == [
        ("project", "heading", "#", None, "MEMORY.md"),
        ("project-fact", "node", "node", "project", "MEMORY.md"),
        ("child", "heading", "#", "project", "MEMORY.md"),
        ("details", "heading", "F#", None, "MEMORY.md"),
        ("detail-topic", "heading", "#", "details", "MEMORY_details.md"),
        ("detail-fact", "node", "node", "detail-topic", "MEMORY_details.md"),
    ]
    assert [(i.title, i.body) for i in items[:4]] == [
        ("Project", "Project body."),
        ("Fact.", ""),
        ("Child", "Child body."),
        ("Details", "Detail summary."),
    ]


def test_rightmemory_reader_reads_the_installers_example_graph() -> None:
    text = (SAMPLES / "rightmemory" / "MEMORY.example.at-0fad0d5.md").read_text(encoding="utf-8")
    items = {i.id: i for i in rightmemory.parse_file(text, "memory", "MEMORY.md")}
    assert len(items) == 29
    app = items["sample-app"]
    assert (app.title, app.edges, app.parent) == (
        "Example Application",
        [("rel", "sample-infra")],
        "sample-project-graph",
    )
    web = items["proj-web"]
    assert web.title == "web-app — example frontend, TypeScript + Vite, calls `proj-api` for data."
    assert web.edges == [("dep", "lib-utils"), ("dep", "proj-api"), ("rel", "proj-deploy")]
    assert items["sample-backup-drill"].marker == "F#"
    assert items["sample-backup-drill"].parent == "sample-database-stack"
    assert items["pref-env-check"].edges == []


def test_box_reader_reads_the_authors_example_memories_by_the_schema() -> None:
    fm, body = box.parse_memory((SAMPLES / "box-memory" / "example-memory-decision.md").read_text()) or ({}, "")
    assert fm["id"] == "mem_01HXYZA1B2C3D4E5F6G7H8J9K0"
    assert (fm["title"], fm["kind"], fm["status"], fm["agent"]) == (
        "JWT vs Sessions Decision",
        "decision",
        "active",
        "claude-code",
    )
    assert fm["created_at"] == "2026-05-22T18:32:00Z"  # timestamps stay the strings written
    assert fm["tags"] == ["auth", "mobile", "security"]
    assert [box.wikilink_title(r) for r in fm["related"]] == ["Login Flow", "Session Management Pattern"]
    assert body.startswith("\n# JWT vs Sessions Decision\n")
    companion = box.parse_memory((SAMPLES / "box-memory" / "example-companion.md").read_text())
    assert companion is not None and companion[0]["kind"] == "companion"
    assert box.parse_memory("# no frontmatter\n") is None
    assert box.wikilink_title("[[Title|alias]]") == "Title" and box.wikilink_title("mem_1") is None


def test_native_keeps_only_what_the_format_has_a_place_for() -> None:
    plain = MemoryEntry(title="t", body="b", extra={"rightmemory": {"marker": "#"}})
    typed = MemoryEntry(title="t", body="b", extra={"rightmemory": {"marker": "M#"}})
    rels = Row("x", "relations", [("related", "a"), ("depends_on", "b")], [("related", "a")])
    assert native("box", plain, rels) == Row("x", "relations", [("related", "a")], [("related", "a")])
    assert native("box", plain, Row("x", "kind", "preference", "fact")) is None
    assert native("box", plain, Row("x", "kind", "decision", "fact")) == Row("x", "kind", "decision", "fact")
    assert native("whitebox", plain, Row("x", "kind", "note", "observation")) is None
    assert native("rightmemory", plain, Row("x", "kind", "reference", "fact")) is None
    assert native("rightmemory", typed, Row("x", "kind", "reference", "reference")) is not None
    assert native("maka", plain, Row("x", "tags", ["Work Stuff"], ["work-stuff"])) is None
    assert native("maka", plain, Row("x", "tags", ["work-stuff"], ["work-stuff"])) is not None
    assert native("maka", plain, Row("x", "source", "claude", "imported")) is None
    assert native("maka", plain, Row("x", "title", "", "Untitled memory")) is None
