"""Box-memory's write fast paths (``MEMCORE_BOX_WRITE_FAST``) and reference memo (``MEMCORE_REFERENCE_MEMO``).

``add`` builds the entry it returns from the values it wrote (:func:`memcore_box.codec.written_entry`)
instead of mapping its frontmatter through :func:`~memcore_box.codec.entry_from_meta`. These tests
prove, over the benchmarks' corpus (each source format's store migrated into Box), the authors'
Box samples and random entries, that:

- the frontmatter ``add`` builds directly for a plain entry is the general one, value types included;
- every entry the fast path builds equals the general mapping (fields set included), the general
  check finds no error in its frontmatter, and the bytes written read back as that frontmatter;
- a migration into Box writes the same bytes and the same report with the switches on and off;
- the reference notes of every migrated entry are the same from the kept frontmatter as from a
  read of its file, and an entry read from other bytes (an update since) is answered from the file.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import shutil
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.comments import CommentedSeq
from ulid import ULID

import memcore_box._plan
import memcore_box._state
import memcore_box._workspace
import memcore_box.provider
import memcore_box.reference
from memcore.errors import MemcoreError
from memcore.frontmatter import to_plain
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.registry import get_registry
from memcore_box import codec
from memcore_box._parse import _File
from memcore_box.provider import BoxMemoryProvider
from memcore_box.reference import _READ_KEYS
from memcore_box.validate import file_errors

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples" / "box-memory"
SOURCES = ("whitebox", "box", "rightmemory", "maka")


def _bench_migrate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_migrate_corpus", ROOT / "benchmarks" / "bench_migrate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    monkeypatch.setenv("MEMCORE_STATE_DIR", str(tmp_path / "state"))


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _typed(value: Any) -> Any:
    """``value`` with the type of every value in it (and a sequence's flow style): what the dump depends on."""
    if isinstance(value, dict):
        return type(value).__name__, [(k, _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        flow = value.fa.flow_style() if isinstance(value, CommentedSeq) else None
        return type(value).__name__, flow, [_typed(v) for v in value]
    return type(value).__name__, value


class _Checked:
    """Wraps ``written_entry`` in the provider: each entry it builds is checked against the general path."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fast = 0
        self.general = 0
        real = codec.written_entry

        def checking(entry: MemoryEntry, meta: dict[str, Any]) -> MemoryEntry | None:
            built = real(entry, meta)
            if built is None:
                self.general += 1
                return None
            self.fast += 1
            store = _current["store"]
            mapped, errors = file_errors(store, "memories/x.md", meta, entry.body, None)
            assert errors == []
            assert built == mapped
            assert built.model_fields_set == mapped.model_fields_set
            assert built.model_dump(mode="json") == mapped.model_dump(mode="json")
            return built

        monkeypatch.setattr(memcore_box.provider, "written_entry", checking)
        real_meta = memcore_box.provider.meta_from_entry

        def same_meta(entry: MemoryEntry, **kwargs: Any) -> dict[str, Any]:
            meta = real_meta(entry, **kwargs)
            with monkeypatch.context() as general:
                general.setenv("MEMCORE_BOX_WRITE_FAST", "0")
                assert _typed(meta) == _typed(real_meta(entry, **kwargs))
            return meta

        monkeypatch.setattr(memcore_box.provider, "meta_from_entry", same_meta)
        real_render = memcore_box.provider.render

        def read_back(meta: dict[str, Any], body: str) -> bytes:
            data = real_render(meta, body)
            parsed = _current["store"]._parse("memories/x.md", data, "v", fast=True)
            assert isinstance(parsed, _File)
            assert to_plain(dict(parsed.meta)) == to_plain(meta)  # the bytes read back as the frontmatter
            assert parsed.body == body
            return data

        monkeypatch.setattr(memcore_box.provider, "render", read_back)


_current: dict[str, Any] = {}


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Checked]:
    real_open = BoxMemoryProvider.open

    def remember(self: BoxMemoryProvider) -> BoxMemoryProvider:
        _current["store"] = self
        return real_open(self)

    monkeypatch.setattr(BoxMemoryProvider, "open", remember)
    yield _Checked(monkeypatch)
    _current.clear()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store of each source format holding the benchmark's first 120 entries (Maka: what fits)."""
    bench = _bench_migrate()
    root = tmp_path_factory.mktemp("corpus")
    return {fmt: bench.build_source(fmt, 120, root / fmt)[0] for fmt in SOURCES}


@pytest.mark.parametrize("source", SOURCES)
def test_each_entry_add_builds_fast_is_the_one_its_frontmatter_reads_as(
    source: str, corpus: dict[str, str], checked: _Checked, tmp_path: Path
) -> None:
    report = migrate(f"{source}:{corpus[source]}", f"box:{tmp_path / 'ws'}")
    assert report.counts["failed"] == 0
    assert checked.fast >= 80  # the plain entries (no relation) of the 120
    assert checked.general >= 10  # those with relations: mapped after indexing, as before


def test_the_authors_samples_copied_by_add_read_as_the_general_path_maps_them(
    checked: _Checked, tmp_path: Path
) -> None:
    source = tmp_path / "samples"
    (source / "memories").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "example-_box-memory.json", source / "_box-memory.json")
    for sample in ("example-memory-decision.md", "example-memory-task.md", "example-companion.md"):
        shutil.copyfile(SAMPLES / sample, source / "memories" / sample.removeprefix("example-memory-"))
    with BoxMemoryProvider(str(source)) as store:
        entries = list(store.iter_entries())
    assert len(entries) == 3
    target = tmp_path / "copy"
    BoxMemoryProvider.init_store(str(target))
    plain = [e.model_copy(update={"relations": [], "extra": {}}) for e in entries if e.kind is not Kind.COMPANION]
    with BoxMemoryProvider(str(target)) as store:
        for entry in entries[:2] + plain:
            store.add(entry.model_copy(update={"id": None, "version": None}))
    assert checked.fast == 2 and checked.general == 2  # the samples hold links and relations


_TEXT = st.text(alphabet=st.sampled_from("aZ é\u0065\u0301-_:#[]'\"0\n\t"), max_size=12)


@st.composite
def _random_entries(draw: st.DrawFn) -> list[MemoryEntry]:
    out = []
    for i in range(draw(st.integers(1, 5))):
        out.append(
            MemoryEntry(
                id=draw(st.sampled_from([None, f"r{i}", f"mem_{'0' * 26}"[: 30 - i]])),
                kind=draw(st.sampled_from(list(Kind))),
                title=draw(st.sampled_from(["", f"r{i}", "yes", "2026-01-01"]) | _TEXT),
                body=draw(_TEXT),
                status=draw(st.sampled_from(list(Status))),
                tags=draw(st.lists(st.sampled_from(["a", "b é", "0.5", "yes", "e\u0301"]), max_size=3, unique=True)),
                confidence=draw(st.sampled_from([None, 0.0, 0.25, 1.0])),
                scope=draw(st.sampled_from([None, "default", "eng"])),
                source=draw(st.sampled_from([None, "me", "null"])),
                date_only=draw(st.booleans()),
                parent=draw(st.sampled_from([None, "p1"])),
                created_at=draw(st.sampled_from([None, datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)])),
                expires_at=draw(st.sampled_from([None, datetime(2027, 1, 1, tzinfo=UTC)])),
                relations=draw(st.sampled_from([[], [Relation(type="depends_on", target="r0")]])),
                extra=draw(
                    st.sampled_from(
                        [{}, {"box": {"slug": "same"}}, {"x": {"k": [1, 2.5, None]}}, {"x": {"k": 1}, "y": {"b": "é"}}]
                    )
                ),
            )
        )
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=_random_entries())
def test_random_entries_add_builds_fast_are_those_their_frontmatter_reads_as(
    entries: list[MemoryEntry], tmp_path_factory: pytest.TempPathFactory, checked: _Checked
) -> None:
    root = tmp_path_factory.mktemp("random")
    BoxMemoryProvider.init_store(str(root))
    with BoxMemoryProvider(str(root)) as store, store.batch():
        store.add_many(entries)
    with BoxMemoryProvider(str(root)) as store, contextlib.suppress(MemcoreError):
        store.add(entries[0].model_copy(update={"id": None}))


def _migrated(source: str, location: str, target: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    ulids = (ULID.from_int(i) for i in itertools.count(1))
    monkeypatch.setattr(memcore_box._state, "ULID", ulids.__next__)
    monkeypatch.setattr(memcore_box._plan, "ULID", ulids.__next__)
    report = migrate(f"{source}:{location}", f"box:{target}")
    dump = report.model_dump(mode="json", exclude={"started_at", "duration_ms", "target"})
    files = {k: v for k, v in _files(target).items() if not k.startswith(".")}
    return repr(dump).replace(str(target), "<target>"), files


@pytest.mark.parametrize("source", SOURCES)
def test_a_migration_into_box_writes_and_reports_the_same_with_the_switches_on_and_off(
    source: str, corpus: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    for module in (memcore_box.provider, memcore_box._state, memcore_box._workspace):
        monkeypatch.setattr(module, "utc_now", lambda: now)
    results = []
    for on in ("1", "0"):
        monkeypatch.setenv("MEMCORE_BOX_WRITE_FAST", on)
        monkeypatch.setenv("MEMCORE_REFERENCE_MEMO", on)
        results.append(_migrated(source, corpus[source], tmp_path / on / "ws", monkeypatch))
    assert results[0] == results[1]
    assert "'fidelity': [{'field'" in results[0][0]  # reference notes were given
    assert len([k for k in results[0][1] if k.endswith(".md")]) >= 100


@pytest.mark.parametrize("source", SOURCES)
def test_reference_notes_from_the_kept_frontmatter_are_those_of_a_read_of_each_file(
    source: str, corpus: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with get_registry().get(source)(corpus[source]) as reader:
        sent = [e.model_copy(update={"id": None, "version": None}) for e in reader.iter_entries()]
    BoxMemoryProvider.init_store(str(tmp_path / "ws"))
    with BoxMemoryProvider(str(tmp_path / "ws")) as store:
        with store.batch():
            added = store.add_many(sent)
        assert all(isinstance(e, MemoryEntry) for e in added)
        entries = store.read_all().entries
        kept = [store._written_meta(e) for e in entries]
        for entry, meta in zip(entries, kept, strict=True):  # what add kept is what the file holds
            file_meta = store._read_file(entry.id or "").meta
            assert meta == {key: to_plain(file_meta[key]) for key in _READ_KEYS if key in file_meta}
        from_memo = [store.reference_reads_differently(e) for e in entries]
        monkeypatch.setenv("MEMCORE_REFERENCE_MEMO", "0")
        assert [store._written_meta(e) for e in entries] == [None] * len(entries)
        from_files = [store.reference_reads_differently(e) for e in entries]
    assert from_memo == from_files
    assert any(from_memo)  # e.g. a preference written as fact, an untitled observation


def test_an_entry_read_from_other_bytes_than_add_wrote_is_answered_from_its_file(tmp_path: Path) -> None:
    BoxMemoryProvider.init_store(str(tmp_path / "ws"))
    with BoxMemoryProvider(str(tmp_path / "ws")) as store:
        added = store.add(MemoryEntry(kind=Kind.PREFERENCE, title="Tabs", body="tabs"))
        assert store._written_meta(store.get(added.id or "")) == {"title": "Tabs", "kind": "fact", "status": "active"}
        # by hand, another writer: the file now says another title, its bytes another version
        path = next((tmp_path / "ws" / "memories").glob("fact__tabs.md"))
        path.write_text(path.read_text(encoding="utf-8").replace("title: Tabs", "title: Spaces"), encoding="utf-8")
        entry = store.get(added.id or "")
        assert store._written_meta(entry) is None
        notes = {n.field: n.shown for n in store.reference_reads_differently(entry)}
        assert notes == {"kind": "fact"}  # the title read now is the entry's: no title note
        updated = store.update(entry.model_copy(update={"title": "Both"}))
        assert store._written_meta(updated) is None  # update forgets what add kept


def test_the_kept_frontmatters_are_bounded_the_oldest_answered_from_their_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memcore_box.reference, "_KEPT_MAX", 2)
    BoxMemoryProvider.init_store(str(tmp_path / "ws"))
    with BoxMemoryProvider(str(tmp_path / "ws")) as store:
        added = [store.add(MemoryEntry(kind=Kind.FACT, title=f"T{i}", body="b")) for i in range(3)]
        entries = [store.get(e.id or "") for e in added]
        assert [store._written_meta(e) is not None for e in entries] == [False, True, True]
        assert [store.reference_reads_differently(e) for e in entries] == [[], [], []]
