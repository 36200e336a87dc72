# ruff: noqa: RUF001 - fullwidth letters are a slug test case on purpose
"""The Box-memory provider on a local folder: workspace, files, ids, slugs, lifecycle, indexes."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memcore.cli import cli
from memcore.errors import ConflictError, EntryNotFoundError, ImmutableEntryError, UnsafePathError
from memcore.models import Kind, MemoryEntry, Relation, Severity, Status
from memcore.storage import ANY_VERSION, CREATE, LocalStorage
from memcore_box.mapping import slugify
from memcore_box.provider import BoxMemoryProvider

ULID_ID = re.compile(r"^mem_[0-9A-HJKMNP-TV-Z]{26}$")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    BoxMemoryProvider.init_store(str(path), agents=["claude-code"], teams="default,core")
    return path


@pytest.fixture
def store(root: Path) -> BoxMemoryProvider:
    provider = BoxMemoryProvider(str(root)).open()
    yield provider
    provider.close()


def _index(root: Path, folder: str = "memories") -> dict:
    return json.loads((root / folder / "_index.json").read_text(encoding="utf-8"))


def _frontmatter_keys(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    head = text.split("---\n")[1]
    return [line.split(":", 1)[0] for line in head.splitlines() if line and not line.startswith((" ", "-"))]


# -- storage ----------------------------------------------------------------------------------
def test_local_storage_conditional_writes(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path)
    storage.make_folder("memories/sub")
    first = storage.write("memories/a.md", b"one", expected_version=CREATE)
    assert first.version == "sha256:" + hashlib.sha256(b"one").hexdigest() and first.size == 3
    with pytest.raises(ConflictError):
        storage.write("memories/a.md", b"two", expected_version=CREATE)
    second = storage.write("memories/a.md", b"two", expected_version=first.version)
    with pytest.raises(ConflictError):
        storage.write("memories/a.md", b"three", expected_version=first.version)
    assert storage.read("memories/a.md") == (b"two", second.version)
    storage.write("memories/a.md", b"four", expected_version=ANY_VERSION)
    with pytest.raises(ConflictError):
        storage.delete("memories/a.md", expected_version=second.version)
    (tmp_path / "memories" / ".a.md.0123.tmp").write_bytes(b"torn")
    assert [(i.name, i.is_folder) for i in storage.list("memories")] == [("a.md", False), ("sub", True)]
    assert storage.checksum("memories/a.md") == ("sha256", hashlib.sha256(b"four").hexdigest(), 4)
    storage.delete("memories/a.md")
    with pytest.raises(FileNotFoundError):
        storage.read("memories/a.md")
    with pytest.raises(FileNotFoundError):
        storage.write("nowhere/a.md", b"x", expected_version=CREATE)
    for bad in ("../escape.md", "/etc/passwd", "memories/../../x"):
        with pytest.raises(UnsafePathError):
            storage.write(bad, b"x", expected_version=ANY_VERSION)


# -- workspace ----------------------------------------------------------------------------------
def test_cli_init_writes_config_layout_and_indexes(tmp_path: Path) -> None:
    location = tmp_path / "cli-ws"
    result = CliRunner().invoke(cli, ["init", "--store", f"box:{location}", "-o", "teams=default,ops"])
    assert result.exit_code == 0, result.output
    config = json.loads((location / "_box-memory.json").read_text(encoding="utf-8"))
    schema_fields = [
        "version",
        "schema_version",
        "workspace_name",
        "workspace_root_id",
        "created_at",
        "updated_at",
        "tier",
        "tier_detected_at",
        "capabilities",
        "metadata_template_key",
        "metadata_template_created_at",
        "teams",
        "agents",
        "settings",
    ]
    assert all(key in config for key in schema_fields), set(schema_fields) - set(config)
    assert config["workspace_name"] == "cli-ws" and config["teams"] == ["default", "ops"]
    assert set(config["capabilities"]) >= {
        "custom_metadata_templates",
        "body_search",
        "max_file_size_mb",
        "storage_unlimited",
        "box_sign",
        "retention_policies",
        "legal_holds",
        "keysafe",
        "compliance",
    }
    assert config["settings"]["default_team"] == "default"
    assert config["settings"]["companion_layout"] == "sibling"
    assert config["settings"]["rebuild_index_on_drift"] is True
    assert "team_ops_memories" in config["folder_ids"]
    for folder in ("memories", "files", "companions", "teams/ops/memories", "teams/ops/files", "teams/ops/companions"):
        assert (location / folder).is_dir(), folder
    index = _index(location)
    assert list(index) == [
        "version",
        "folder_id",
        "folder_path",
        "updated_at",
        "tier",
        "entry_count",
        "entries",
        "by_id",
        "by_slug",
        "by_wikilink",
        "by_kind",
        "by_tag",
        "by_status",
        "by_companion_for",
    ]
    assert index["folder_path"] == "memories/" and index["entry_count"] == 0
    rollup = json.loads((location / "_index.json").read_text(encoding="utf-8"))
    assert rollup["folder_path"] == "/"
    assert [c["folder_path"] for c in rollup["child_indexes"]] == [
        "memories/",
        "teams/default/memories/",
        "teams/ops/memories/",
    ]
    assert BoxMemoryProvider.sniff(location) and not BoxMemoryProvider.sniff(tmp_path)


def test_unknown_config_fields_are_kept(root: Path) -> None:
    config_path = root / "_box-memory.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["hub"] = {"id": "h1", "created_at": "2026-01-01T00:00:00Z"}
    config["settings"]["future_setting"] = [1, 2]
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    BoxMemoryProvider.init_store(str(root))  # idempotent: the existing config stays as it is
    with BoxMemoryProvider(str(root)) as store:
        stored = store.add(MemoryEntry(title="Team fact", scope="research"))  # adds a team to the config
        store.delete(stored.id or "")  # records a tombstone in the config
    after = json.loads(config_path.read_text(encoding="utf-8"))
    assert after["hub"] == {"id": "h1", "created_at": "2026-01-01T00:00:00Z"}
    assert after["settings"]["future_setting"] == [1, 2]
    assert after["teams"] == ["default", "core", "research"]
    assert after["memcore"]["deleted_ids"] == [stored.id]


# -- memory files -------------------------------------------------------------------------------
def test_new_memory_file_layout(store: BoxMemoryProvider, root: Path) -> None:
    stored = store.add(
        MemoryEntry(
            kind=Kind.DECISION,
            title="JWT vs Sessions",
            body="\n# JWT vs Sessions\n",
            tags=["auth", "no"],
            confidence=0.9,
            source="claude-code",
            scope="default",
            extra={"box": {"links": [{"url": "https://example.org", "label": "Spec"}]}},
        )
    )
    assert stored.id is not None and ULID_ID.match(stored.id)
    path = root / "memories" / "decision__jwt-vs-sessions.md"
    text = path.read_text(encoding="utf-8")
    created = stored.created_at
    assert created is not None
    stamp = created.strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{created.microsecond // 1000:03d}" if created.microsecond else ""
    )
    assert text == (
        "---\n"
        f"id: {stored.id}\n"
        "slug: jwt-vs-sessions\n"
        "title: JWT vs Sessions\n"
        "kind: decision\n"
        "status: active\n"
        "team: default\n"
        "agent: claude-code\n"
        f"created_at: {stamp}Z\n"
        f"updated_at: {stamp}Z\n"
        "confidence: 0.9\n"
        'tags: [auth, "no"]\n'
        "links:\n"
        "  - url: https://example.org\n"
        "    label: Spec\n"
        "---\n"
        "\n# JWT vs Sessions\n"
    )
    assert store.get(stored.id) == stored
    entry = _index(root)["entries"][0]
    assert list(entry) == [
        "id",
        "file_id",
        "filename",
        "title",
        "slug",
        "kind",
        "status",
        "team",
        "tags",
        "related",
        "companion_for",
        "sha256",
        "size_bytes",
        "created_at",
        "updated_at",
    ]
    assert entry["filename"] == "decision__jwt-vs-sessions.md" and entry["size_bytes"] == len(text.encode())
    assert entry["tags"] == ["auth", "no"] and entry["companion_for"] is None


def test_absent_optional_fields_are_omitted(store: BoxMemoryProvider, root: Path) -> None:
    store.add(MemoryEntry(title="Bare"))
    keys = _frontmatter_keys(root / "memories" / "note__bare.md")
    assert keys == ["id", "slug", "title", "kind", "status", "created_at", "updated_at"]
    assert "null" not in (root / "memories" / "note__bare.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("JWT vs Sessions Decision", "jwt-vs-sessions-decision"),
        ("  Hello,   World!! ", "hello-world"),
        ("Café Übersicht — naïve", "cafe-ubersicht-naive"),
        ("Ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "fullwidth-abc"),
        ("記憶の整理", "memo-" + hashlib.sha256("記憶の整理".encode()).hexdigest()[:8]),
        ("🚀🚀", "memo-" + hashlib.sha256("🚀🚀".encode()).hexdigest()[:8]),
        ("", "memo-" + hashlib.sha256(b"").hexdigest()[:8]),
        ("a" * 200, "a" * 80),
    ],
)
def test_slug_rule(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_slug_collisions_are_case_insensitive_and_non_ascii_unique(store: BoxMemoryProvider, root: Path) -> None:
    slugs = [store.add(MemoryEntry(title=t)).extra["box"]["slug"] for t in ("Login Flow", "LOGIN flow", "login-flow")]
    assert slugs == ["login-flow", "login-flow-2", "login-flow-3"]
    cjk = [store.add(MemoryEntry(title=t)).extra["box"]["slug"] for t in ("東京", "大阪", "東京")]
    assert cjk[0] != cjk[1] and cjk[2] == cjk[0] + "-2"
    assert all(s.startswith("memo-") for s in cjk)
    names = sorted(p.name for p in (root / "memories").glob("*.md"))
    assert names == sorted(f"note__{s}.md" for s in slugs + cjk)
    # A file nobody indexed holding the next name is skipped over, not overwritten.
    (root / "memories" / "note__login-flow-4.md").write_text("hand-written\n", encoding="utf-8")
    assert store.add(MemoryEntry(title="Login flow")).extra["box"]["slug"] == "login-flow-5"
    assert (root / "memories" / "note__login-flow-4.md").read_text(encoding="utf-8") == "hand-written\n"


def test_updated_at_changes_on_every_write_and_slug_is_stable(store: BoxMemoryProvider) -> None:
    stored = store.add(
        MemoryEntry(
            title="Original title",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            updated_at=datetime(2026, 1, 2, tzinfo=UTC),
        )
    )
    assert stored.updated_at == datetime(2026, 1, 2, tzinfo=UTC)  # an import keeps its history
    stored.title = "Renamed title"
    updated = store.update(stored)
    assert updated.updated_at is not None and updated.updated_at > datetime(2026, 1, 2, tzinfo=UTC)
    assert updated.created_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert updated.extra["box"]["slug"] == "original-title"
    again = store.update(updated)
    assert again.updated_at is not None and again.updated_at >= updated.updated_at
    with pytest.raises(ConflictError):
        store.update(stored)  # stale version token


def test_ids_are_never_reused(store: BoxMemoryProvider, root: Path) -> None:
    first = store.add(MemoryEntry(title="Doomed"))
    assert first.id is not None
    store.delete(first.id)
    with pytest.raises(EntryNotFoundError):
        store.get(first.id)
    with pytest.raises(ConflictError, match="never reuses ids"):
        store.add(MemoryEntry(id=first.id, title="Reborn"))
    with BoxMemoryProvider(str(root)) as reopened:  # the tombstone survives a reopen
        with pytest.raises(ConflictError):
            reopened.add(MemoryEntry(id=first.id, title="Reborn"))
    ids = {store.add(MemoryEntry(title=f"n{i}")).id for i in range(50)}
    assert len(ids) == 50 and first.id not in ids


def test_kind_and_team_changes_move_the_file(store: BoxMemoryProvider, root: Path) -> None:
    stored = store.add(MemoryEntry(title="Mover"))
    stored.kind = Kind.FACT
    stored.scope = "core"
    moved = store.update(stored)
    assert not (root / "memories" / "note__mover.md").exists()
    assert (root / "teams" / "core" / "memories" / "fact__mover.md").is_file()
    assert _index(root)["entry_count"] == 0
    assert [e["id"] for e in _index(root, "teams/core/memories")["entries"]] == [moved.id]
    assert store.get(moved.id or "").scope == "core"


# -- lifecycle ----------------------------------------------------------------------------------
def test_supersede_and_archive(store: BoxMemoryProvider, root: Path) -> None:
    old = store.add(MemoryEntry(kind=Kind.TASK, title="Old way", status=Status.DRAFT))
    assert old.id is not None
    new = store.supersede(old.id, MemoryEntry(kind=Kind.TASK, title="New way"))
    assert new.relations == [Relation(type="supersedes", target=old.id)]
    old_after = store.get(old.id)
    assert old_after.status is Status.SUPERSEDED
    assert old_after.relations == [Relation(type="superseded_by", target=new.id or "")]
    text = (root / "memories" / "task__old-way.md").read_text(encoding="utf-8")
    assert f"superseded_by: {new.id}\n" in text and "status: superseded\n" in text
    assert f"supersedes: [{old.id}]\n" in (root / "memories" / "task__new-way.md").read_text(encoding="utf-8")
    index = _index(root)
    assert index["by_status"] == {"superseded": [old.id], "active": [new.id]}
    archived = store.archive(new.id or "")
    assert archived.status is Status.ARCHIVED


def test_held_memories_are_immutable(store: BoxMemoryProvider, root: Path) -> None:
    held = store.add(MemoryEntry(title="Under hold", status=Status.HELD))
    assert held.id is not None
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    held.title = "Changed"
    with pytest.raises(ImmutableEntryError, match="legal hold"):
        store.update(held)
    with pytest.raises(ImmutableEntryError):
        store.delete(held.id)
    with pytest.raises(ImmutableEntryError):
        store.archive(held.id)
    with pytest.raises(ImmutableEntryError):
        store.supersede(held.id, MemoryEntry(title="Replacement"))
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


# -- mapping ------------------------------------------------------------------------------------
def test_entry_fields_without_a_box_slot_survive(store: BoxMemoryProvider, root: Path) -> None:
    target = store.add(MemoryEntry(title="Target"))
    given = MemoryEntry(
        kind=Kind.PURSUIT,
        title="Learn Rust",
        status=Status.DONE,
        date_only=True,
        created_at=datetime(2025, 10, 24, tzinfo=UTC),
        parent=target.id,
        expires_at=datetime(2027, 1, 1, 12, 30, tzinfo=UTC),
        relations=[
            Relation(type="dep", target=target.id or ""),
            Relation(type="related", target=target.id or ""),
            Relation(type="related", target="Nowhere", resolved=False),
        ],
        extra={
            "whitebox": {"confidence_label": "high", "nested": {"a": [1, "no"]}},
            "box": {"custom_field": "kept", "id": "shadowed"},
        },
    )
    stored = store.add(given)
    back = BoxMemoryProvider(str(root)).open().get(stored.id or "")
    assert back.kind is Kind.PURSUIT and back.status is Status.DONE and back.date_only
    assert back.parent == target.id and back.expires_at == given.expires_at
    assert back.relations == given.relations
    assert back.extra["whitebox"] == given.extra["whitebox"]
    assert back.extra["box"]["custom_field"] == "kept" and back.extra["box"]["id"] == "shadowed"
    text = (root / "memories" / "task__learn-rust.md").read_text(encoding="utf-8")
    assert "kind: task\n" in text and "status: archived\n" in text  # Box words on disk
    assert '  - "[[Target]]"\n  - "[[Nowhere]]"\n' in text
    assert _frontmatter_keys(root / "memories" / "task__learn-rust.md")[-1] == "memcore"


def test_wikilinks_resolve_by_title(store: BoxMemoryProvider, root: Path) -> None:
    decision = store.add(MemoryEntry(kind=Kind.DECISION, title="JWT vs Sessions Decision"))
    (root / "memories" / "note__linker.md").write_text(
        "---\nid: mem_01HZZZZZZZZZZZZZZZZZZZZZZZ\nslug: linker\ntitle: Linker\nkind: note\nstatus: active\n"
        "created_at: 2026-05-22T18:32:00Z\nupdated_at: 2026-05-22T18:32:00Z\n"
        'related:\n  - "[[jwt vs sessions decision|the decision]]"\n  - "[[Missing Memory]]"\n---\nBody\n',
        encoding="utf-8",
    )
    store.reindex()
    linker = store.get("mem_01HZZZZZZZZZZZZZZZZZZZZZZZ")
    assert linker.relations == [
        Relation(type="related", target=decision.id or ""),
        Relation(type="related", target="Missing Memory", resolved=False),
    ]
    diagnostics = store.validate()
    assert [(d.code, d.severity) for d in diagnostics if d.entry_id == linker.id] == [
        ("box.unresolved-wikilink", Severity.WARNING)
    ]
    # Updating something else keeps the aliased wikilink exactly as written.
    linker.tags = ["x"]
    store.update(linker)
    assert '  - "[[jwt vs sessions decision|the decision]]"\n' in (root / "memories" / "note__linker.md").read_text(
        encoding="utf-8"
    )


# -- companions -----------------------------------------------------------------------------------
def test_companion_hash_and_staleness(store: BoxMemoryProvider, root: Path) -> None:
    binary = root / "files" / "Q2-report.pdf"
    binary.write_bytes(b"%PDF-1.7 fake report\n" * 100)
    companion = store.add_companion("files/Q2-report.pdf", MemoryEntry(body="\n# Companion\n"), reviewed_by="claude")
    block = companion.extra["box"]["companion_for"]
    assert block["file_id"] == "files/Q2-report.pdf" and block["filename"] == "Q2-report.pdf"
    assert block["sha256"] == hashlib.sha256(binary.read_bytes()).hexdigest()
    assert block["size_bytes"] == 2100 and block["mime_type"] == "application/pdf"
    assert block["hash_algo"] == "sha256" and block["reviewed_by"] == "claude"
    assert companion.title == "Companion — Q2-report.pdf" and companion.tags == ["companion", "pdf"]
    # Sibling layout: the companion sits next to its binary, indexed in that folder.
    path = root / "files" / "companion__q2-report-pdf-companion.md"
    assert path.is_file()
    index = _index(root, "files")
    assert index["by_companion_for"] == {"files/Q2-report.pdf": companion.id}
    assert index["entries"][0]["sha256"] == block["sha256"]
    assert [d for d in store.validate() if d.code.startswith("box.companion")] == []
    binary.write_bytes(b"%PDF-1.7 changed\n")
    stale = [d for d in store.validate() if d.code.startswith("box.companion")]
    assert [(d.code, d.severity, d.entry_id) for d in stale] == [
        ("box.companion-stale", Severity.WARNING, companion.id)
    ]
    binary.unlink()
    gone = [d.code for d in store.validate() if d.code.startswith("box.companion")]
    assert gone == ["box.companion-vanished"]


# -- indexes, batch, reindex, validate ------------------------------------------------------------
def test_index_maps_follow_every_write(store: BoxMemoryProvider, root: Path) -> None:
    a = store.add(MemoryEntry(kind=Kind.FACT, title="Alpha", tags=["auth", "ops"]))
    b = store.add(MemoryEntry(kind=Kind.TASK, title="Beta", tags=["ops"], status=Status.DRAFT))
    index = _index(root)
    assert index["entry_count"] == 2
    assert index["by_id"] == {a.id: 0, b.id: 1}
    assert index["by_slug"] == {"alpha": a.id, "beta": b.id}
    assert index["by_wikilink"] == {"Alpha": a.id, "Beta": b.id}
    assert index["by_kind"] == {"fact": [a.id], "task": [b.id]}
    assert index["by_tag"] == {"auth": [a.id], "ops": [a.id, b.id]}
    assert index["by_status"] == {"active": [a.id], "draft": [b.id]}
    store.delete(a.id or "")
    index = _index(root)
    assert index["by_id"] == {b.id: 0} and index["by_tag"] == {"ops": [b.id]}
    rollup = json.loads((root / "_index.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in rollup["entries"]] == [b.id] and rollup["by_slug"] == {"beta": b.id}


def test_batch_writes_each_index_once_at_the_end(store: BoxMemoryProvider, root: Path) -> None:
    index_path = root / "memories" / "_index.json"
    before = index_path.read_bytes()
    with store.batch():
        ids = [store.add(MemoryEntry(title=f"Batch {i}")).id for i in range(20)]
        assert index_path.read_bytes() == before, "an index was written inside the batch"
        assert len(list((root / "memories").glob("note__batch-*.md"))) == 20
    index = _index(root)
    assert [e["id"] for e in index["entries"]] == ids


def test_reindex_reports_orphans_duplicates_and_conflicts(store: BoxMemoryProvider, root: Path) -> None:
    good = store.add(MemoryEntry(title="Good"))
    memories = root / "memories"
    orphans = {
        "no-frontmatter.md": b"# Just markdown\n",
        "note__no-id.md": b"---\nkind: note\ntitle: No id\n---\nbody\n",
        "note__bad-yaml.md": b"---\nid: mem_X\nkind: [unclosed\n---\nbody\n",
        "note__latin1.md": "---\nid: mem_Y\nkind: note\ntitle: caf\xe9\n---\n".encode("latin-1"),
    }
    for name, data in orphans.items():
        (memories / name).write_bytes(data)
    dup = (memories / "note__good.md").read_text(encoding="utf-8").replace("slug: good", "slug: good-copy")
    (memories / "note__good-copy.md").write_text(dup, encoding="utf-8")
    conflict = dup.replace(good.id or "", "mem_01J00000000000000000000000").replace("slug: good-copy", "slug: Good")
    (memories / "note__good-twin.md").write_text(conflict, encoding="utf-8")
    report = store.reindex()
    by_code: dict[str, set[str]] = {}
    for d in report:
        by_code.setdefault(d.code, set()).add(d.path or "")
    assert by_code["box.orphan"] == {f"memories/{name}" for name in orphans}
    assert by_code["box.duplicate-id"] == {"memories/note__good.md", "memories/note__good-copy.md"}
    assert by_code["box.slug-conflict"] == {"memories/note__good.md", "memories/note__good-twin.md"}
    assert all(d.severity is Severity.ERROR for d in report)
    assert {name: (memories / name).read_bytes() for name in orphans} == orphans, "orphans must be left alone"
    latin = next(d for d in report if d.path == "memories/note__latin1.md")
    assert latin.line == 4 and "UTF-8" in latin.message
    indexed = [e["filename"] for e in _index(root)["entries"]]
    assert sorted(indexed) == ["note__good-copy.md", "note__good-twin.md", "note__good.md"]


def test_an_indexed_memory_whose_yaml_broke_is_reported_unreadable_not_gone(
    store: BoxMemoryProvider, root: Path
) -> None:
    broken = store.add(MemoryEntry(title="Broken"))
    gone = store.add(MemoryEntry(title="Gone"))
    (root / "memories" / "note__broken.md").write_text("---\nid: [unclosed\n---\nBody.\n", encoding="utf-8")
    (root / "memories" / "note__gone.md").unlink()
    found = {d.entry_id: d.message for d in store.validate() if d.code == "box.index-missing-file"}
    assert found[broken.id].endswith(
        "but the file no longer reads as a memory (its own diagnostic says why; fix it there)"
    )
    assert "but the file is gone;" in found[gone.id]


def test_validate_reports_drift_both_ways(store: BoxMemoryProvider, root: Path) -> None:
    kept = store.add(MemoryEntry(title="Kept"))
    lost = store.add(MemoryEntry(title="Lost"))
    assert [d for d in store.validate() if d.severity is not Severity.INFO] == []
    (root / "memories" / "note__lost.md").unlink()
    text = (root / "memories" / "note__kept.md").read_text(encoding="utf-8")
    (root / "memories" / "note__hand.md").write_text(
        text.replace(kept.id or "", "mem_01J11111111111111111111111").replace("slug: kept", "slug: hand"),
        encoding="utf-8",
    )
    drift = {(d.code, d.entry_id) for d in store.validate() if d.code.startswith("box.index")}
    assert drift == {("box.index-missing-file", lost.id), ("box.index-unindexed", "mem_01J11111111111111111111111")}
    # The first write of a newly opened store repairs the index (settings.rebuild_index_on_drift).
    with BoxMemoryProvider(str(root)) as writer:
        writer.add(MemoryEntry(title="Trigger"))
    assert [d for d in store.validate() if d.code.startswith("box.index")] == []
    assert sorted(e["filename"] for e in _index(root)["entries"]) == [
        "note__hand.md",
        "note__kept.md",
        "note__trigger.md",
    ]


def test_two_providers_see_each_others_writes(root: Path) -> None:
    one = BoxMemoryProvider(str(root)).open()
    two = BoxMemoryProvider(str(root)).open()
    a = one.add(MemoryEntry(title="From one"))
    b = two.add(MemoryEntry(title="From two"))
    assert two.get(a.id or "").title == "From one"
    assert sorted(e["id"] for e in _index(root)["entries"]) == sorted([a.id, b.id])
    one.close()
    two.close()


def test_update_leaves_a_file_where_its_author_put_it(store: BoxMemoryProvider, root: Path) -> None:
    # A companion filed next to its binary under the schema's <original-filename>.md name, with
    # a Box file id that a local folder cannot resolve.
    (root / "files" / "deck.pdf.md").write_text(
        "---\nid: mem_01J22222222222222222222222\nslug: deck-pdf-companion\ntitle: Companion — deck.pdf\n"
        "kind: companion\nstatus: active\ncreated_at: 2026-05-22T19:14:00Z\nupdated_at: 2026-05-22T19:14:00Z\n"
        'companion_for:\n  file_id: "1844291673322"\n  filename: deck.pdf\n---\nBody\n',
        encoding="utf-8",
    )
    store.reindex()
    entry = store.get("mem_01J22222222222222222222222")
    entry.tags = ["deck"]
    store.update(entry)
    assert (root / "files" / "deck.pdf.md").read_text(encoding="utf-8").count("tags: [deck]\n") == 1
    assert [e["filename"] for e in _index(root, "files")["entries"]] == ["deck.pdf.md"]
    assert not list((root / "memories").glob("*.md"))


def test_every_field_in_the_writers_order(store: BoxMemoryProvider, root: Path) -> None:
    old = store.add(MemoryEntry(title="Older"))
    newer = store.add(MemoryEntry(title="Newer"))
    binary = root / "files" / "a.bin"
    binary.write_bytes(b"\x00\x01")
    stored = store.add(
        MemoryEntry(
            kind=Kind.COMPANION,
            title="Everything",
            status=Status.ACTIVE,
            scope="default",
            source="agent-x",
            confidence=0.7,
            tags=["t"],
            expires_at=datetime(2030, 1, 1, tzinfo=UTC),
            relations=[
                Relation(type="related", target=old.id or ""),
                Relation(type="supersedes", target=old.id or ""),
                Relation(type="superseded_by", target=newer.id or ""),
            ],
            extra={
                "box": {
                    "zeta": 1,
                    "companion_for": {"file_id": "files/a.bin"},
                    "sources": [{"type": "url", "ref": "https://x"}],
                    "links": [],
                }
            },
        )
    )
    path = next(root.rglob("companion__everything.md"))
    assert path.parent == root / "files"  # sibling layout
    assert _frontmatter_keys(path) == [
        "id",
        "slug",
        "title",
        "kind",
        "status",
        "team",
        "agent",
        "created_at",
        "updated_at",
        "confidence",
        "companion_for",
        "tags",
        "related",
        "links",
        "sources",
        "supersedes",
        "superseded_by",
        "expires_at",
        "zeta",
    ]
    block = stored.extra["box"]["companion_for"]
    assert list(block) == [
        "file_id",
        "filename",
        "sha256",
        "hash_algo",
        "size_bytes",
        "mime_type",
        "reviewed_at",
        "reviewed_by",
    ]
    assert block["sha256"] == hashlib.sha256(b"\x00\x01").hexdigest() and block["size_bytes"] == 2
    assert 'file_id: "files/a.bin"' in path.read_text(encoding="utf-8")


def test_cli_add_ls_show_reindex(root: Path) -> None:
    runner = CliRunner()
    store = f"box:{root}"
    added = runner.invoke(
        cli,
        [
            "add",
            "--store",
            store,
            "--kind",
            "decision",
            "--title",
            "Use ULIDs",
            "--tag",
            "ids",
            "--body",
            "Because they sort.\n",
            "--json",
        ],
    )
    assert added.exit_code == 0, added.output
    entry_id = json.loads(added.output)["id"]
    assert ULID_ID.match(entry_id)
    assert (root / "memories" / "decision__use-ulids.md").is_file()
    shown = runner.invoke(cli, ["show", "--store", store, entry_id, "--json"])
    assert shown.exit_code == 0 and json.loads(shown.output)["title"] == "Use ULIDs"
    listed = runner.invoke(cli, ["ls", "--store", store, "--json"])
    assert [e["id"] for e in json.loads(listed.output)] == [entry_id]
    (root / "memories" / "_index.json").unlink()
    assert runner.invoke(cli, ["reindex", "--store", store]).exit_code == 0
    assert [e["id"] for e in _index(root)["entries"]] == [entry_id]
    validated = runner.invoke(cli, ["validate", "--store", store])
    assert validated.exit_code == 0, validated.output


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_round_trips(store: BoxMemoryProvider, root: Path, kind: Kind) -> None:
    # a companion needs its companion_for block (without one, add refuses: issue 17 item 9)
    extra = {"box": {"companion_for": {"file_id": "12345", "filename": "a.pdf"}}} if kind is Kind.COMPANION else {}
    stored = store.add(MemoryEntry(kind=kind, title=f"Kind {kind.value}", extra=extra))
    assert BoxMemoryProvider(str(root)).open().get(stored.id or "").kind is kind
    on_disk = next(root.rglob(f"*__kind-{kind.value}.md")).name.split("__")[0]
    assert on_disk in {"decision", "fact", "task", "observation", "reference", "note", "companion"}


@pytest.mark.parametrize("status", list(Status))
def test_every_status_round_trips(store: BoxMemoryProvider, root: Path, status: Status) -> None:
    stored = store.add(MemoryEntry(title=f"Status {status.value}", status=status))
    assert BoxMemoryProvider(str(root)).open().get(stored.id or "").status is status
    text = next(root.rglob(f"*__status-{status.value.replace('_', '-')}.md")).read_text(encoding="utf-8")
    box_word = text.split("\nstatus: ", 1)[1].split("\n", 1)[0]
    assert box_word in {"active", "draft", "superseded", "archived", "held"}


def test_a_get_that_misses_inside_a_batch_keeps_the_batchs_index_changes(store: BoxMemoryProvider, root: Path) -> None:
    """update A, delete B, get(B) in one batch: after it, A's index row equals A's file, B's row is gone.

    The get that misses re-syncs the indexes; it must not re-read a folder index over the
    batch's pending (not yet written) changes.
    """
    from memcore_box.index import index_row

    a = store.add(MemoryEntry(title="Before the batch", body="Written before the batch.\n"))
    b = store.add(MemoryEntry(title="Deleted in the batch"))
    before = {e["id"]: e for e in _index(root)["entries"]}[a.id]
    with store.batch():
        current = store.get(a.id or "")
        edited = store.update(
            current.model_copy(update={"title": "Edited in the batch"}), expected_version=current.version
        )
        store.delete(b.id or "")
        with pytest.raises(EntryNotFoundError):
            store.get(b.id or "")
    rows = {e["id"]: e for e in _index(root)["entries"]}
    fresh = BoxMemoryProvider(str(root)).open()
    f = fresh._read_file(a.id or "")
    assert f.meta["title"] == edited.title == "Edited in the batch"
    expected = index_row(f.meta, filename=f.name, file_id=f.file_id, size=f.size).as_dict()
    assert json.loads(json.dumps(expected, default=str)) == rows[a.id]
    assert rows[a.id]["title"] == "Edited in the batch"
    assert rows[a.id]["updated_at"] != before["updated_at"]
    assert set(rows) == {a.id}, "the batch's delete is not in the index"
    rollup = json.loads((root / "_index.json").read_text(encoding="utf-8"))
    assert [(e["id"], e["title"]) for e in rollup["entries"]] == [(a.id, "Edited in the batch")]
    diags = fresh.validate()
    assert [d for d in diags if d.severity == Severity.ERROR or d.code.startswith("box.index")] == []
    fresh.close()
