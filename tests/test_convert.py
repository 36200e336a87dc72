"""memcore.migrate with two small file-backed providers defined here.

``full`` keeps every MemoryEntry field (a JSON file per store); ``tiny`` keeps only kind
(fact or note), title, stripped body, tags and a free-data blob, and stamps ``updated_at``
itself; ``bare`` is ``tiny`` without the free-data blob. They are real providers (files on
disk, versions, ids), registered on a fresh plugin manager, so the conversion is measured
against real stored data.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore import hookimpl
from memcore.errors import ConflictError, EntryNotFoundError, InvalidEntryError
from memcore.migrate import (
    ConversionReport,
    compare_entries,
    convert,
    find_converter,
    migrate,
    restore_kept,
    source_options_for,
)
from memcore.migrate.run import _Run
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Relation, Severity, Status
from memcore.plugins import get_plugin_manager
from memcore.provider import BaseProvider, Capability
from memcore.registry import ProviderRegistry
from memcore.storage import atomic_write

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


class FullProvider(BaseProvider):
    """Keeps every field in ``<dir>/entries.json``; ids given are kept, else ``f-<n>``."""

    format_name: ClassVar[str] = "full"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.ADD, Capability.UPDATE, Capability.DELETE, Capability.ARCHIVE, Capability.SUPERSEDE}
    )
    writes = 0

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        super().__init__(location, **options)
        self.read_only = bool(options.get("read_only", False))

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        Path(location).mkdir(parents=True)
        atomic_write(Path(location) / "entries.json", b"[]\n")

    @property
    def _file(self) -> Path:
        return Path(self.location) / "entries.json"

    def _load(self) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = json.loads(self._file.read_text(encoding="utf-8"))
        return data

    def _save(self, rows: list[dict[str, Any]]) -> None:
        assert not self.read_only, "source opened read-only was written"
        FullProvider.writes += 1
        atomic_write(self._file, (json.dumps(rows, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))

    def _to_entry(self, row: dict[str, Any]) -> MemoryEntry:
        entry = MemoryEntry.model_validate(self._decode(row))
        entry.version = hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest()[:12]
        return entry

    def _decode(self, row: dict[str, Any]) -> dict[str, Any]:
        return row

    def _encode(self, entry: MemoryEntry) -> dict[str, Any]:
        return entry.content_dict()

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        entries = (self._to_entry(row) for row in self._load())
        yield from (query.apply(entries) if query else entries)

    def _new_id(self, rows: list[dict[str, Any]], entry: MemoryEntry) -> str:
        taken = {r["id"] for r in rows}
        if entry.id and entry.id not in taken:
            return entry.id
        n = len(rows) + 1
        while f"f-{n}" in taken:
            n += 1
        return f"f-{n}"

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        self.require(Capability.ADD, "add")
        rows = self._load()
        entry = entry.model_copy(deep=True)
        entry.id = self._new_id(rows, entry)
        rows.append(self._encode(entry))
        self._save(rows)
        return self._to_entry(rows[-1])

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        self.require(Capability.UPDATE, "update")
        rows = self._load()
        for i, row in enumerate(rows):
            if row["id"] == entry.id:
                if expected_version is not None and self._to_entry(row).version != expected_version:
                    raise ConflictError(f"{self.format_name}: {entry.id} changed")
                rows[i] = self._encode(entry)
                self._save(rows)
                return self._to_entry(rows[i])
        raise EntryNotFoundError(entry.id or "")

    def delete(self, entry_id: str) -> None:
        rows = self._load()
        self._save([r for r in rows if r["id"] != entry_id])


class TinyProvider(FullProvider):
    """Holds kind fact/note, title, stripped body, tags, relations and a free-data ``extra`` blob."""

    format_name: ClassVar[str] = "tiny"
    keeps_extra = True

    def _new_id(self, rows: list[dict[str, Any]], entry: MemoryEntry) -> str:
        return f"t-{len(rows) + 1:04d}"

    def _encode(self, entry: MemoryEntry) -> dict[str, Any]:
        if entry.kind is Kind.COMPANION:
            raise InvalidEntryError("tiny: companions cannot be stored")
        row: dict[str, Any] = {
            "id": entry.id,
            "kind": "fact" if entry.kind is Kind.FACT else "note",
            "title": entry.title,
            "body": entry.body.strip(),
            "tags": entry.tags,
            "links": [[r.type, r.target] for r in entry.relations if r.resolved],
            "stamp": "2026-11-01T00:00:00Z",
        }
        if self.keeps_extra:
            row["free"] = entry.extra
        return row

    def _decode(self, row: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": row["id"],
            "kind": row["kind"],
            "title": row["title"],
            "body": row["body"],
            "tags": row["tags"],
            "relations": [{"type": t, "target": x} for t, x in row["links"]],
            "updated_at": row["stamp"],
            "extra": row.get("free", {}),
        }


class BareProvider(TinyProvider):
    """``tiny`` without free data: cannot keep provenance nor anything else."""

    format_name: ClassVar[str] = "bare"
    keeps_extra = False


class _Plugin:
    @hookimpl
    def memcore_register_providers(self) -> list[type[Any]]:
        return [FullProvider, TinyProvider, BareProvider]


@pytest.fixture
def registry() -> ProviderRegistry:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(_Plugin(), name="fakes")
    return ProviderRegistry(pm)


def _entries() -> list[MemoryEntry]:
    old = MemoryEntry(
        id="pref-editor-old",
        kind=Kind.PREFERENCE,
        title="Editor: vim",
        body="Uses vim for everything.\n",
        status=Status.SUPERSEDED,
        tags=["tools", "editor"],
        confidence=0.7,
        source="claude",
        created_at=T0,
        updated_at=T0,
        relations=[Relation(type="superseded_by", target="pref-editor")],
    )
    new = MemoryEntry(
        id="pref-editor",
        kind=Kind.PREFERENCE,
        title="Editor: helix",
        body="Switched to helix in March; keeps vim keybindings in the browser.\n",
        tags=["tools", "editor"],
        confidence=0.9,
        source="claude",
        created_at=T0.replace(day=20),
        updated_at=T0.replace(day=20),
        relations=[Relation(type="supersedes", target="pref-editor-old")],
        extra={"full": {"pinned": True}},
    )
    fact = MemoryEntry(
        id="fact-tz",
        kind=Kind.FACT,
        title="Timezone",
        body="Works from Lisbon (WET/WEST).",
        tags=["identity"],
        scope="personal",
        created_at=T0,
        date_only=True,
        relations=[
            Relation(type="related", target="pref-editor"),
            Relation(type="related", target="Somewhere Else", resolved=False),
            Relation(type="related", target="ghost-id"),
        ],
    )
    child = MemoryEntry(
        id="fact-tz-note", kind=Kind.NOTE, title="DST", body="Clocks change in March.", parent="fact-tz"
    )
    return [old, new, fact, child]


def _make_store(registry: ProviderRegistry, fmt: str, where: Path, entries: list[MemoryEntry]) -> str:
    cls = registry.get(fmt)
    cls.init_store(str(where))
    with cls(str(where)) as store:
        for entry in entries:
            store.add(entry)
    return f"{fmt}:{where}"


def _hash_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _read(registry: ProviderRegistry, url: str) -> list[MemoryEntry]:
    fmt, _, loc = url.partition(":")
    with registry.get(fmt)(loc) as store:
        return list(store.iter_entries())


def test_full_to_full_copies_every_field_and_keeps_ids(registry: ProviderRegistry, tmp_path: Path) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    before = _hash_tree(tmp_path / "a")
    report = migrate(src, f"full:{tmp_path / 'b'}", registry=registry)
    assert _hash_tree(tmp_path / "a") == before
    assert report.counts["read"] == 4 and report.counts["written"] == 4 and report.counts["lossy"] == 0
    assert report.lossless
    copied = {e.id: e for e in _read(registry, f"full:{tmp_path / 'b'}")}
    for original in _entries():
        got = copied[original.id]
        assert got.id == original.id and "memcore" not in got.extra  # kept its id: no provenance stamp
        if original.id == "fact-tz":
            # the unknown id became an unresolved link; the dangling title link stayed as it was
            assert got.relations == [
                Relation(type="related", target="pref-editor"),
                Relation(type="related", target="Somewhere Else", resolved=False),
                Relation(type="related", target="ghost-id", resolved=False),
            ]
            got.relations = original.relations
        assert got.content_dict() == original.content_dict()
    links = {(u.source_id, u.target, u.reason) for u in report.unresolved_links}
    assert links == {
        ("fact-tz", "Somewhere Else", "unresolved in source"),
        ("fact-tz", "ghost-id", "not in source"),
    }


def test_second_run_writes_nothing_and_a_changed_entry_is_updated(registry: ProviderRegistry, tmp_path: Path) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    dst = f"tiny:{tmp_path / 'b'}"
    first = migrate(src, dst, registry=registry)
    assert first.counts["written"] == 4
    target_bytes = _hash_tree(tmp_path / "b")
    FullProvider.writes = 0
    second = migrate(src, dst, registry=registry)
    assert second.counts == {**second.counts, "written": 0, "updated": 0, "unchanged": 4, "failed": 0}
    assert _hash_tree(tmp_path / "b") == target_bytes
    assert FullProvider.writes == 0  # tiny inherits the counter: nothing was saved at all
    with FullProvider(str(tmp_path / "a")) as store:
        entry = store.get("fact-tz")
        entry.body = "Works from Porto now."
        store.update(entry)
    third = migrate(src, dst, registry=registry)
    assert third.entry("fact-tz").action == "updated"
    assert third.counts["updated"] == 1 and third.counts["unchanged"] == 3
    bodies = {e.title: e.body for e in _read(registry, dst)}
    assert bodies["Timezone"] == "Works from Porto now."
    assert len(bodies) == 4


def test_lossy_target_report_is_measured_and_kept_fields_come_back(registry: ProviderRegistry, tmp_path: Path) -> None:
    originals = _entries()
    src = _make_store(registry, "full", tmp_path / "a", originals)
    there = migrate(src, f"tiny:{tmp_path / 'b'}", registry=registry)
    # tiny holds no confidence, source, scope, dates, status, parent; strips bodies; maps kinds.
    # All of that is kept in its free-data blob, so nothing is lost, and the report says so.
    assert there.counts["lossy"] == 0, there.lost_fields
    kept = {e.source_id: sorted(c.field for c in e.kept) for e in there.entries}
    assert kept["pref-editor"] == [
        "body",
        "confidence",
        "created_at",
        "kind",
        "source",
        "updated_at",
    ]
    assert kept["fact-tz"] == ["created_at", "date_only", "relations", "scope", "updated_at"]
    assert kept["fact-tz-note"] == ["parent", "updated_at"]
    assert kept["pref-editor-old"] == ["body", "confidence", "created_at", "kind", "source", "status", "updated_at"]
    back = migrate(f"tiny:{tmp_path / 'b'}", f"full:{tmp_path / 'c'}", registry=registry)
    assert back.counts["written"] == 4 and back.counts["lossy"] == 0
    got = {e.id: e for e in _read(registry, f"full:{tmp_path / 'c'}")}
    # ids came back too: each tiny entry remembered the full id it came from
    assert set(got) == {e.id for e in originals}
    for original in originals:
        entry = got[original.id]
        entry.extra.pop("memcore")
        want = original.content_dict()
        if original.id == "fact-tz":
            want["relations"][2]["resolved"] = False  # ghost-id is reported, not invented
        assert entry.content_dict() == want


def test_target_without_free_data_lists_exactly_what_it_lost(registry: ProviderRegistry, tmp_path: Path) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    report = migrate(src, f"bare:{tmp_path / 'b'}", registry=registry)
    losses = {e.source_id: sorted(c.field for c in e.losses) for e in report.entries}
    assert losses["pref-editor"] == [
        "body",
        "confidence",
        "created_at",
        "extra.full.pinned",
        "kind",
        "source",
        "updated_at",
    ]
    assert losses["fact-tz-note"] == ["parent", "updated_at"]
    loss = next(c for c in report.entry("pref-editor").losses if c.field == "confidence")
    assert (loss.written, loss.stored) == (0.9, None)
    assert report.lost_fields["updated_at"] == 4
    assert report.counts["lossy"] == 4
    assert any("did not keep extra.memcore.migrated_from" in n for n in report.notes)
    # without provenance a re-run still writes nothing: entries are matched by title and body
    again = migrate(src, f"bare:{tmp_path / 'b'}", registry=registry)
    assert again.counts["unchanged"] == 4 and again.counts["written"] == 0


def test_strict_refuses_and_writes_nothing(registry: ProviderRegistry, tmp_path: Path) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    report = migrate(src, f"bare:{tmp_path / 'b'}", registry=registry, strict=True)
    assert report.refused and not report.ok
    assert report.counts["lossy"] == 4  # measured in the scratch run
    assert not (tmp_path / "b").exists()
    ok = migrate(src, f"full:{tmp_path / 'c'}", registry=registry, strict=True)
    assert ok.lossless and not ok.refused and not ok.dry_run
    assert len(_read(registry, f"full:{tmp_path / 'c'}")) == 4


def test_dry_run_measures_on_a_copy_and_leaves_the_target_alone(registry: ProviderRegistry, tmp_path: Path) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    dst = _make_store(registry, "full", tmp_path / "b", [MemoryEntry(title="already there")])
    before = _hash_tree(tmp_path / "b")
    report = migrate(src, dst, registry=registry, dry_run=True)
    assert report.dry_run and report.counts["written"] == 4
    assert _hash_tree(tmp_path / "b") == before
    assert report.target == dst


def test_failed_entries_are_reported_and_links_to_them_too(registry: ProviderRegistry, tmp_path: Path) -> None:
    entries = [
        *_entries(),
        MemoryEntry(id="pdf", kind=Kind.COMPANION, title="Companion — scan.pdf"),
        MemoryEntry(id="uses-pdf", title="See the scan", relations=[Relation(type="related", target="pdf")]),
    ]
    src = _make_store(registry, "full", tmp_path / "a", entries)
    report = migrate(src, f"tiny:{tmp_path / 'b'}", registry=registry)
    failed = report.entry("pdf")
    assert failed.action == "failed" and "companions cannot be stored" in (failed.error or "")
    assert not report.ok
    assert any(u.source_id == "uses-pdf" and u.reason == "not migrated" for u in report.unresolved_links)
    assert report.by_kind["companion"]["failed"] == 1


def test_resume_after_interruption(registry: ProviderRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    dst = f"tiny:{tmp_path / 'b'}"
    calls = {"n": 0}
    real_add = TinyProvider.add

    def flaky_add(self: TinyProvider, entry: MemoryEntry) -> MemoryEntry:
        if self.location != str(tmp_path / "b"):  # the trial run into a scratch copy
            return real_add(self, entry)
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_add(self, entry)

    monkeypatch.setattr(TinyProvider, "add", flaky_add)
    with pytest.raises(KeyboardInterrupt):
        migrate(src, dst, registry=registry)
    monkeypatch.setattr(TinyProvider, "add", real_add)
    assert len(_read(registry, dst)) == 2
    resumed = migrate(src, dst, registry=registry)
    assert resumed.counts["written"] == 2
    # the entry interrupted before its relations were written (hash "pending") is repaired
    assert resumed.counts["written"] + resumed.counts["updated"] + resumed.counts["unchanged"] == 4
    final = migrate(src, dst, registry=registry)
    assert final.counts["unchanged"] == 4
    by_title = {e.title: e for e in _read(registry, dst)}
    assert len(by_title) == 4
    ids = {e.title: e.id for e in by_title.values()}
    assert Relation(type="supersedes", target=ids["Editor: vim"]) in by_title["Editor: helix"].relations
    assert Relation(type="superseded_by", target=ids["Editor: helix"]) in by_title["Editor: vim"].relations


def test_relations_are_rewritten_to_target_ids_including_cycles(registry: ProviderRegistry, tmp_path: Path) -> None:
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    migrate(src, f"tiny:{tmp_path / 'b'}", registry=registry)
    got = {e.title: e for e in _read(registry, f"tiny:{tmp_path / 'b'}")}
    ids = {title: e.id for title, e in got.items()}
    assert all(i is not None and i.startswith("t-") for i in ids.values())
    assert got["Editor: helix"].relations == [Relation(type="supersedes", target=ids["Editor: vim"])]
    assert got["Editor: vim"].relations == [Relation(type="superseded_by", target=ids["Editor: helix"])]
    assert Relation(type="related", target=ids["Editor: helix"]) in got["Timezone"].relations


def test_compare_entries_and_restore_kept() -> None:
    a = MemoryEntry(title="x", body="  b\n", confidence=0.25, extra={"box": {"team": "core"}})
    b = MemoryEntry(title="x", body="b", confidence=0.3, extra={"box": {"team": "core", "slug": "x"}})
    assert [c.field for c in compare_entries(a, b)] == ["body", "confidence"]
    b.extra["box"]["team"] = "other"
    assert [c.field for c in compare_entries(a, b)] == ["body", "confidence", "extra.box.team"]
    from memcore.migrate.fidelity import _sha, _stash_for

    changes = compare_entries(a, b)[:2]
    b.extra["memcore"] = {"kept": {c.field: _stash_for(c, b) for c in changes}}
    assert b.extra["memcore"]["kept"]["body"] == {"if_sha256": _sha("b")[:16], "prefix": "  ", "suffix": "\n"}  # type: ignore[index]
    restored = restore_kept(b)
    assert (restored.body, restored.confidence) == ("  b\n", 0.25)
    assert "memcore" not in restored.extra
    b.confidence = 0.9  # edited after the migration: the edit wins
    assert restore_kept(b).confidence == 0.9


def test_source_opened_read_only_when_the_provider_declares_it(registry: ProviderRegistry, tmp_path: Path) -> None:
    class Declares(FullProvider):
        options: ClassVar[frozenset[str]] = frozenset({"read_only"})  # type: ignore[assignment]

    class Strict(FullProvider):
        def __init__(self, location: str) -> None:
            super().__init__(location)

    assert source_options_for(Declares) == {"read_only": True}
    assert source_options_for(FullProvider) == {"read_only": True}  # takes **options
    assert source_options_for(Strict) == {}
    src_dir = tmp_path / "a"
    _make_store(registry, "full", src_dir, _entries())
    report = migrate(Declares(str(src_dir)), f"full:{tmp_path / 'b'}", registry=registry)
    assert report.counts["written"] == 4


def test_same_location_and_missing_source_are_usage_errors(registry: ProviderRegistry, tmp_path: Path) -> None:
    from memcore.errors import ConfigError

    src = _make_store(registry, "full", tmp_path / "a", _entries())
    with pytest.raises(ConfigError, match="same location"):
        migrate(src, f"tiny:{tmp_path / 'a'}", registry=registry)
    with pytest.raises(ConfigError, match="does not exist"):
        migrate(f"full:{tmp_path / 'nope'}", f"tiny:{tmp_path / 'b'}", registry=registry)


def test_direct_converter_is_preferred(tmp_path: Path) -> None:
    seen: list[str] = []

    class Direct:
        source_format = "full"
        target_format = "tiny"

        def convert(self, source: Any, target: Any, report: ConversionReport) -> None:
            seen.append(f"{source.format_name}->{target.format_name}")
            convert(source, target, report)

    class _Conv:
        @hookimpl
        def memcore_register_converters(self) -> list[Any]:
            return [Direct()]

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(_Plugin(), name="fakes")
    pm.register(_Conv(), name="conv")
    reg = ProviderRegistry(pm)
    assert find_converter("full", "tiny", pm) is not None and find_converter("tiny", "full", pm) is None
    src = _make_store(reg, "full", tmp_path / "a", _entries())
    report = migrate(src, f"tiny:{tmp_path / 'b'}", registry=reg)
    assert seen == ["full->tiny"]
    assert report.converter.endswith("Direct")
    assert report.counts["written"] == 4


def test_two_sources_into_one_target_do_not_collide(registry: ProviderRegistry, tmp_path: Path) -> None:
    a = _make_store(registry, "full", tmp_path / "a", _entries())
    b = _make_store(registry, "full", tmp_path / "b", _entries())  # the same ids, another store
    dst = f"tiny:{tmp_path / 'c'}"
    assert migrate(a, dst, registry=registry).counts["written"] == 4
    second = migrate(b, dst, registry=registry)
    assert second.counts["written"] == 4 and second.counts["updated"] == 0
    assert len(_read(registry, dst)) == 8
    assert migrate(a, dst, registry=registry).counts["unchanged"] == 4


def test_dry_run_and_strict_refuse_a_remote_target(registry: ProviderRegistry, tmp_path: Path) -> None:
    from memcore.errors import ConfigError

    class Remote(FullProvider):
        format_name: ClassVar[str] = "remotefull"
        capabilities: ClassVar[frozenset[Capability]] = FullProvider.capabilities | {Capability.REMOTE}

    src = _make_store(registry, "full", tmp_path / "a", _entries())
    for flags in ({"dry_run": True}, {"strict": True}):
        with pytest.raises(ConfigError, match="remote store"):
            migrate(src, Remote("folder-123"), registry=registry, **flags)  # type: ignore[arg-type]


def test_source_text_in_no_entry_is_reported_and_strict_refuses(
    registry: ProviderRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader's ``*.unread-text`` warnings are losses: listed, counted, never "nothing lost"."""
    src = _make_store(registry, "full", tmp_path / "a", _entries())
    prose = Diagnostic(
        path="entries.json",
        line=3,
        code="full.unread-text",
        severity=Severity.WARNING,
        message="text outside every entry",
    )
    other = Diagnostic(path="entries.json", line=1, code="full.style", severity=Severity.WARNING, message="style")
    monkeypatch.setattr(
        FullProvider, "validate", lambda self: [prose, other] if Path(self.location).name == "a" else []
    )
    report = migrate(src, f"full:{tmp_path / 'b'}", registry=registry)
    assert report.unread_text == [prose] and report.counts["unread_text"] == 1
    assert report.ok and not report.lossless  # every entry written, but not every byte of text
    assert report.counts["written"] == 4
    refused = migrate(src, f"full:{tmp_path / 'c'}", registry=registry, strict=True)
    assert refused.refused and not (tmp_path / "c").exists()


def _formats_and_fakes() -> ProviderRegistry:
    """A fresh registry holding the installed formats (through their entry points) and the fakes."""
    pm = get_plugin_manager(load_entrypoints=False)
    pm.load_setuptools_entrypoints("memcore")
    pm.register(_Plugin(), name="fakes")
    return ProviderRegistry(pm)


def test_an_append_only_target_that_plans_ids_needs_no_trial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WhiteBox observations cannot be updated: their forward links come from plan_ids(), not a trial."""
    registry = _formats_and_fakes()
    src = _make_store(registry, "full", tmp_path / "a", _entries())

    def no_trial(*args: Any, **kwargs: Any) -> dict[str, str]:
        raise AssertionError("a trial run was made")

    monkeypatch.setattr(_Run, "predict_ids", no_trial)
    phases: list[str] = []
    report = migrate(
        src,
        f"whitebox:{tmp_path / 'b'}",
        registry=registry,
        progress=lambda phase, done, total: phases.append(phase) if phase not in phases else None,
    )
    assert report.ok and report.counts["written"] == 4
    assert phases == ["read", "plan", "write", "verify"]  # no second pass ("link")
    old, new = report.entry("pref-editor-old"), report.entry("pref-editor")
    assert old.target_id is not None and "#" in old.target_id  # an observation: append-only
    assert new.target_id is not None
    with registry.get("whitebox")(str(tmp_path / "b")) as wb:
        stored = wb.get(old.target_id)
    # written once, by add, already pointing at an entry added after it
    assert Relation(type="superseded_by", target=new.target_id) in stored.relations
    assert not [c for c in old.losses if c.field == "relations"]


def test_json_same_is_equality_of_canonical_json() -> None:
    """compare_entries' fast extra comparison agrees with comparing canonical JSON text."""
    from memcore.migrate.fidelity import _canon, _json_same

    values: list[Any] = [1, 1.0, True, False, 0, 0.0, None, "1", "", [1], [1.0], [True], (1,), [], [[]], [{}]]
    values += [{}, {"a": 1}, {"a": 1.0}, {"b": 1}, {"a": [1, {"c": True}]}, {"a": [1, {"c": 1}]}, {"a": 1, "b": 2}]
    pairs = [(a, b) for a in values for b in values]
    assert [(_json_same(a, b), a, b) for a, b in pairs] == [(_canon(a) == _canon(b), a, b) for a, b in pairs]
    assert not _json_same({"a": 1}, {"a": True})


def test_links_to_an_entry_that_failed_stay_reported_on_every_run(tmp_path: Path) -> None:
    """An append-only observation written with the id planned for an entry whose add then failed."""
    registry = _formats_and_fakes()
    blocked = MemoryEntry(
        id="m", kind=Kind.FACT, title="X", body="A project.", extra={"whitebox": {"path": "projects/x.md"}}
    )
    linking = MemoryEntry(
        id="l",
        kind=Kind.OBSERVATION,
        body="See the project.",
        created_at=T0,
        relations=[Relation(type="related", target="m")],  # forward: m is written after l
    )
    src = _make_store(registry, "full", tmp_path / "a", [linking, blocked])
    registry.get("whitebox").init_store(str(tmp_path / "b"))
    (tmp_path / "b" / "projects").write_text("a file where the folder should go\n", encoding="utf-8")
    first = migrate(src, f"whitebox:{tmp_path / 'b'}", registry=registry)
    assert first.entry("m").action == "failed" and not first.ok
    assert [c.field for c in first.entry("l").losses] == ["relations"]
    assert any(u.source_id == "l" and u.reason == "not migrated" for u in first.unresolved_links)
    again = migrate(src, f"whitebox:{tmp_path / 'b'}", registry=registry)
    loss = again.entry("l")
    assert loss.action == "unchanged" and [c.field for c in loss.losses] == ["relations"]
    assert loss.losses[0].written == [{"type": "related", "target": "m", "resolved": False}]
    assert loss.losses[0].stored == [{"type": "related", "target": "projects/x.md", "resolved": True}]


def test_an_append_only_entry_waiting_for_its_links_is_not_failed_forever(tmp_path: Path) -> None:
    """Its forward link's entry failed, then was fixed: the observation cannot be rewritten, so the
    missing link is a loss listed on each run, not a failure."""
    registry = _formats_and_fakes()
    a = MemoryEntry(
        id="a", kind=Kind.OBSERVATION, body="first", created_at=T0, relations=[Relation(type="related", target="b")]
    )
    b = MemoryEntry(id="b", kind=Kind.OBSERVATION, body="second", created_at=datetime(2026, 4, 5, tzinfo=UTC))
    src = _make_store(registry, "full", tmp_path / "a", [a, b])
    vault = tmp_path / "b"
    registry.get("whitebox").init_store(str(vault))
    bad = vault / "observations" / "2026-04.md"
    bad.parent.mkdir(exist_ok=True)
    bad.write_bytes(b"# Observations\n\nsource: caf\xe9\n")  # not UTF-8: b cannot be added, a waits for it
    first = migrate(src, f"whitebox:{vault}", registry=registry)
    assert first.entry("b").action == "failed"
    bad.write_bytes(b"# Observations\n\nsource: cafe\n")
    for _ in range(2):
        again = migrate(src, f"whitebox:{vault}", registry=registry)
        assert again.ok, [(e.source_id, e.action, e.error) for e in again.entries]
        assert again.entry("b").action in ("written", "unchanged")
        assert again.entry("a").action == "unchanged" and [c.field for c in again.entry("a").losses] == ["relations"]


def test_a_link_to_an_entry_that_failed_is_repaired_once_it_is_written(
    registry: ProviderRegistry, tmp_path: Path
) -> None:
    """Run 1: M fails, X keeps its link to M as text. M is fixed in the source: run 2 writes M
    and updates X (unchanged in the source) to point at M's new id."""
    x = MemoryEntry(id="x", title="See M", relations=[Relation(type="related", target="m")])
    m = MemoryEntry(id="m", kind=Kind.COMPANION, title="M")  # tiny cannot store companions
    src = _make_store(registry, "full", tmp_path / "a", [x, m])
    dst = f"tiny:{tmp_path / 'b'}"
    first = migrate(src, dst, registry=registry)
    assert first.entry("m").action == "failed" and first.entry("x").action == "written"
    with registry.get("full")(str(tmp_path / "a")) as store:
        fixed = store.get("m")
        fixed.kind = Kind.NOTE
        store.update(fixed)
    second = migrate(src, dst, registry=registry)
    m_id = second.entry("m").target_id
    assert second.entry("m").action == "written" and m_id is not None
    assert second.entry("x").action == "updated" and second.ok
    by_title = {e.title: e for e in _read(registry, dst)}
    assert by_title["See M"].relations == [Relation(type="related", target=m_id)]
    assert migrate(src, dst, registry=registry).counts["unchanged"] == 2
