"""``ProviderConformance``: the suite as a base class whose test methods third parties inherit.

Subclass it in a test module with ``provider_cls`` set::

    from memcore_conformance import ProviderConformance
    from memcore_maka.provider import MakaProvider

    class TestMakaConformance(ProviderConformance):
        provider_cls = MakaProvider
        rejected_corpus = frozenset({"empty-body", "whitespace-body", "large-body"})

See the class docstring for every knob, :mod:`memcore_conformance.fixtures` for the fixtures,
and docs/conformance.md for the rules.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore.errors import (
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    MemcoreError,
    UnsafePathError,
    UnsupportedOperationError,
)
from memcore.models import Diagnostic, MemoryEntry, Query, Relation, Severity, Status
from memcore.provider import Capability, MemoryProvider, plan_ids, read_all
from memcore.storage import check_component
from memcore_conformance._checks import (
    CONTENT_FIELDS,
    VICTIM_MARKER,
    BadFile,
    assert_entry_matches,
    changed_files,
    entry_overrides,
    errors_of,
    missing_capabilities,
    read_tree,
)
from memcore_conformance._gates import GateTests
from memcore_conformance._ids import IdCollisionTests
from memcore_conformance._names import NamesConformance
from memcore_conformance._private import PrivateFilesTests
from memcore_conformance._workers import add_entries, write_until_killed
from memcore_conformance.corpus import CORPUS_CASES

__all__ = ["ProviderConformance"]

requires = pytest.mark.memcore_requires
slow = pytest.mark.slow

C = Capability
_WRITE_OPS = (C.ADD, C.UPDATE, C.DELETE, C.SUPERSEDE, C.ARCHIVE)


def _mp_context() -> Any:
    """Return the ``forkserver`` context where the platform has it, else ``spawn``.

    Forkserver children fork from a server that imported memcore once (16 spawns cost ~7 s of
    imports on 2 cores). Never ``fork``: the parent runs pytest and may hold threads and locks.
    """
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["memcore", "memcore.storage", "memcore_conformance._workers"])
        return ctx
    return multiprocessing.get_context("spawn")


def _missing_id(existing: str) -> str:
    """An id shaped like ``existing`` that is not in the store (last character changed)."""
    last = existing[-1]
    return existing[:-1] + ("0" if last != "0" else "1")


class ProviderConformance(IdCollisionTests, NamesConformance, PrivateFilesTests, GateTests):
    """The memcore conformance suite; subclass it with ``provider_cls = YourProvider``.

    Every ``test_*`` method is a check of the provider contract (src/memcore/provider.py) run
    through the API and, separately, through the raw files. Tests needing a capability carry
    ``@pytest.mark.memcore_requires(...)`` and are skipped, naming what is missing, when the
    provider does not declare it; an operation whose capability is *not* declared must raise
    :class:`~memcore.errors.UnsupportedOperationError`.

    Knobs (class attributes; all optional except ``provider_cls``):

    Attributes:
        provider_cls: The provider class under test. ``None`` only on the ``--pyargs`` route,
            where ``--memcore-provider`` supplies it.
        provider_options: Options for ``init_store`` and the constructor (``memcore_provider_options``).
        roundtrip_fields: ``MemoryEntry`` fields that survive a write and a reopen exactly (after
            :meth:`normalize_expected`). Default: every content field. Must include ``id`` and
            ``body``. ``extra`` is compared as a subset (the provider may add keys).
        rejected_corpus: Corpus case names (:data:`memcore_conformance.corpus.CORPUS_CASES`)
            the format cannot store; ``add`` must raise ``InvalidEntryError`` for each and write
            nothing. Every other case must round-trip. E.g. Maka drops empty sections, so it
            lists ``empty-body`` and ``whitespace-body`` and must refuse them, not drop them.
        insertion_ordered: ``iter_entries`` yields entries in the order they were added
            (default ``True``). ``False`` for formats with their own order (e.g. by file path);
            the order must still be the same on every call and after a reopen.
        index_files: Glob patterns (``fnmatch``, relative posix paths) of derived files any
            write may rewrite, e.g. ``("**/_index.json", "_index.json")``. Every other file a
            write does not need must keep its bytes, inode and mtime.
        provider_import_path: ``"module:QualName"`` a spawned process imports to get the
            provider class (default: from ``provider_cls``). Needed when the class lives in a
            module a fresh interpreter cannot import by its ``__module__``.
        concurrent_processes: Processes in the concurrency test (16).
        concurrent_adds: Adds per process in the concurrency test (25).
        crash_writes: Writes in the crash test (100).
        crash_kills: SIGKILLs during those writes (4).
        field_values: Values :meth:`test_every_roundtrip_field_survives` uses instead of its
            defaults, by field name (e.g. ``{"status": Status.DRAFT, "scope": "work"}``;
            ``"relation_type"`` picks the edge type, default ``"related"``).
    """

    provider_cls: ClassVar[type[Any] | None] = None
    provider_options: ClassVar[dict[str, Any]] = {}
    roundtrip_fields: ClassVar[frozenset[str]] = frozenset(CONTENT_FIELDS)
    rejected_corpus: ClassVar[frozenset[str]] = frozenset()
    insertion_ordered: ClassVar[bool] = True
    index_files: ClassVar[tuple[str, ...]] = ()
    provider_import_path: ClassVar[str | None] = None
    concurrent_processes: ClassVar[int] = 16
    concurrent_adds: ClassVar[int] = 25
    crash_writes: ClassVar[int] = 100
    crash_kills: ClassVar[int] = 4
    field_values: ClassVar[dict[str, Any]] = {}

    # -- hooks a provider may override ------------------------------------------------
    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """Return ``entry`` as this format stores it; default: unchanged.

        Called on every entry the suite expects to read back (with ``id`` and timestamps the
        provider returned already filled in). Override to apply the format's documented,
        deterministic normalisations, e.g. confidence snapped to a label's number, times
        truncated to seconds, a title's surrounding whitespace stripped. Never use it to drop
        data the format can hold; list fields it cannot hold out of ``roundtrip_fields``.

        Args:
            entry: A copy the method may modify and return.
        """
        return entry

    # -- plumbing ---------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _memcore_capability_gate(self, request: pytest.FixtureRequest, memcore_provider_cls: type[Any]) -> None:
        """Skip a test whose ``memcore_requires`` capabilities the provider lacks."""
        missing = missing_capabilities(memcore_provider_cls, request.node.iter_markers("memcore_requires"))
        if missing:
            pytest.skip(f"{memcore_provider_cls.format_name}: provider lacks capability {', '.join(missing)}")

    def _fields(self, *drop: str) -> set[str]:
        return set(self.roundtrip_fields) - set(drop)

    def _expected(self, given: MemoryEntry, stored: MemoryEntry) -> MemoryEntry:
        """What reading ``stored.id`` back should give, from what was ``given`` to a write."""
        expected = given.model_copy(deep=True)
        expected.id = stored.id
        expected.version = None
        for name in ("created_at", "updated_at"):
            if getattr(expected, name) is None:
                setattr(expected, name, getattr(stored, name))
        return self.normalize_expected(expected)

    def _check_roundtrip(
        self, given: MemoryEntry, stored: MemoryEntry, reopened: MemoryEntry, context: str, *drop: str
    ) -> None:
        fields = self._fields(*drop)
        expected = self._expected(given, stored)
        assert_entry_matches(stored, expected, fields, f"{context}: what add/update returned")
        assert_entry_matches(reopened, expected, fields, f"{context}: read back after reopen")
        assert_entry_matches(reopened, stored, self._fields(), f"{context}: reopened differs from returned")

    def _import_path(self, provider_cls: type[Any]) -> str:
        return self.provider_import_path or f"{provider_cls.__module__}:{provider_cls.__qualname__}"

    @staticmethod
    def _ids(provider: Any, query: Query | None = None) -> list[str]:
        return [str(e.id) for e in provider.iter_entries(query)]

    # == declaration ==================================================================
    def test_declaration(self, memcore_provider_cls: type[Any], memcore_provider: Any) -> None:
        """format_name, capabilities and the knobs are well-formed; the instance is a MemoryProvider."""
        assert isinstance(memcore_provider_cls.format_name, str) and memcore_provider_cls.format_name
        caps = memcore_provider_cls.capabilities
        assert isinstance(caps, frozenset) and all(isinstance(c, Capability) for c in caps), caps
        assert isinstance(memcore_provider, MemoryProvider)
        unknown = set(self.roundtrip_fields) - set(CONTENT_FIELDS)
        assert not unknown, f"roundtrip_fields names unknown fields {sorted(unknown)}"
        assert {"id", "body"} <= set(self.roundtrip_fields), "id and body must survive a round trip"
        unknown_cases = set(self.rejected_corpus) - set(CORPUS_CASES)
        assert not unknown_cases, f"rejected_corpus names unknown cases {sorted(unknown_cases)}"

    def test_open_close_empty_store(
        self,
        memcore_reopen: Callable[[], Any],
        memcore_raw_files: Callable[[], dict[str, bytes]],
        memcore_file_identity: Callable[[], dict[str, tuple[int, int]]],
    ) -> None:
        """A fresh store has no entries, validates clean, and opening+closing writes nothing."""
        before, ident = memcore_raw_files(), memcore_file_identity()
        provider = memcore_reopen()
        assert list(provider.iter_entries()) == []
        assert provider.search("anything") == []
        assert errors_of(provider.validate()) == []
        provider.close()
        assert changed_files(before, memcore_raw_files(), ident, memcore_file_identity()) == {
            "added": [],
            "removed": [],
            "changed": [],
            "rewritten": [],
        }

    # == add / get / iterate ==========================================================
    @requires(C.ADD)
    def test_add_then_get(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Add returns the entry as stored (id, timestamps, version); get returns it, also after reopen."""
        given = memcore_make_entry(
            title="Add then get", body="The body.\n", tags=["alpha", "beta"], source="conformance-suite"
        )
        stored = memcore_provider.add(given)
        assert stored.id, "add must return the entry with its id"
        assert given.id is None, "add must not modify the entry it was given"
        if C.UPDATE in memcore_provider.capabilities:
            assert stored.version, "add must return a version token when the provider can update"
        for name in ("created_at", "updated_at"):
            if name in self.roundtrip_fields:
                assert getattr(stored, name) is not None, f"add must set {name}"
        same = memcore_provider.get(stored.id)
        assert_entry_matches(same, stored, self._fields(), "get on the same instance")
        reopened = memcore_reopen().get(stored.id)
        self._check_roundtrip(given, stored, reopened, "add then get")

    @requires(C.ADD)
    def test_get_missing_raises_entry_not_found(self, memcore_provider: Any, memcore_make_entry: Any) -> None:
        """Get of an unknown id raises EntryNotFoundError (also a LookupError)."""
        stored = memcore_provider.add(memcore_make_entry())
        with pytest.raises(EntryNotFoundError):
            memcore_provider.get(_missing_id(stored.id))

    @requires(C.ADD)
    def test_iteration_order_is_stable(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """iter_entries yields every entry once, in the same order each time and after reopen."""
        added = [memcore_provider.add(memcore_make_entry(title=f"Ordered {n}")).id for n in range(6)]
        first = self._ids(memcore_provider)
        assert sorted(map(str, first)) == sorted(added), "iter_entries must yield every added entry exactly once"
        assert self._ids(memcore_provider) == first, "a second iteration changed the order"
        other = memcore_reopen()
        assert self._ids(other) == first, "a reopened store iterates in another order"
        assert self._ids(other) == first, "a second iteration of the reopened store changed the order"
        if self.insertion_ordered:
            assert first == added, (
                "entries are not in insertion order; set insertion_ordered = False if the format "
                "has an order of its own"
            )

    @requires(C.ADD)
    def test_ids_stable_across_reopen(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """The ids add returned identify the same entries after close and reopen, twice."""
        stored = [memcore_provider.add(memcore_make_entry(title=f"Stable id {n}")) for n in range(3)]
        memcore_provider.close()
        for _ in range(2):
            provider = memcore_reopen()
            assert sorted(self._ids(provider)) == sorted(e.id for e in stored)
            for entry in stored:
                assert provider.get(entry.id).title == entry.title
            provider.close()

    @requires(C.ADD)
    def test_every_roundtrip_field_survives(
        self, memcore_provider: Any, memcore_provider_cls: type[Any], memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """An entry with every field of ``roundtrip_fields`` set to a non-default value reads back equal.

        Fields: status, tags (one namespaced), confidence, source, created_at, updated_at,
        scope, relations (to another entry), parent (another entry), expires_at, extra. Fields
        outside ``roundtrip_fields`` are left at their defaults; ``field_values`` overrides any.
        """
        caps = memcore_provider_cls.capabilities
        anchor = memcore_provider.add(memcore_make_entry(title="Anchor entry"))
        assert anchor.id
        knobs = dict(self.field_values)
        relation_type = knobs.pop("relation_type", "related")
        defaults: dict[str, Any] = {
            "tags": ["conformance", "namespace:value"],
            "confidence": 0.7,
            "source": "conformance-agent",
            "created_at": datetime(2025, 10, 24, 9, 30, 15, tzinfo=UTC),
            "updated_at": datetime(2025, 10, 25, 18, 45, 30, tzinfo=UTC),
            "scope": "conformance-scope",
            "relations": [Relation(type=relation_type, target=anchor.id)],
            "parent": anchor.id,
            "expires_at": datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC),
            "extra": {memcore_provider_cls.format_name: {"conformance": "kept", "count": 3}},
        }
        if C.ARCHIVE in caps:
            defaults["status"] = Status.ARCHIVED
        defaults.update(knobs)
        values = {name: value for name, value in defaults.items() if name in self.roundtrip_fields}
        given = memcore_make_entry(title="Every field", body="Every field set.\n", **values)
        stored = memcore_provider.add(given)
        other = memcore_reopen()
        self._check_roundtrip(given, stored, other.get(stored.id), f"entry with fields {sorted(values)}")
        assert errors_of(other.validate()) == []

    @requires(C.ADD, C.GRAPH)
    def test_dangling_relation_is_refused_or_reported(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """GRAPH: an edge to an id not in the store is refused, reported by validate(), or read back unresolved."""
        anchor = memcore_provider.add(memcore_make_entry(title="Graph anchor"))
        ghost = _missing_id(str(anchor.id))
        relation_type = self.field_values.get("relation_type", "related")
        given = memcore_make_entry(title="Dangling edge", relations=[Relation(type=relation_type, target=ghost)])
        try:
            stored = memcore_provider.add(given)
        except MemcoreError:
            return
        other = memcore_reopen()
        diagnostics = other.validate()
        reported = [d for d in diagnostics if d.entry_id == stored.id or ghost in d.message]
        unresolved = [r for r in other.get(stored.id).relations if r.target == ghost and not r.resolved]
        assert reported or unresolved, (
            f"an edge to the missing id {ghost!r} was stored silently: validate() said {diagnostics}"
        )

    @requires(C.ADD)
    def test_query_filters_and_search(self, memcore_provider: Any, memcore_make_entry: Any) -> None:
        """iter_entries(query) and search(query) agree with Query.matches over the store's entries."""
        p = memcore_provider
        a = p.add(memcore_make_entry(title="Apple pie recipe", body="Flour and apples.\n", tags=["alpha"]))
        b = p.add(memcore_make_entry(title="Banana bread", body="Ripe bananas.\n", tags=["beta"]))
        c = p.add(memcore_make_entry(title="Cherry tart", body="Apple-free.\n", tags=["alpha", "beta"]))
        everything = list(p.iter_entries())
        assert {e.id for e in everything} == {a.id, b.id, c.id}
        queries = [
            Query(text="apple"),
            Query(text="BANANA"),
            Query(text="apple pie"),
            Query(tags_any=["alpha"]),
            Query(tags_all=["alpha", "beta"]),
            Query(ids=[b.id]),
            Query(ids=[a.id, c.id]),
            Query(kinds=[a.kind]),
            Query(statuses=[Status.ACTIVE]),
            Query(text="nothing-matches-this"),
        ]
        for query in queries:
            expected = [str(e.id) for e in query.apply(everything)]
            assert self._ids(p, query) == expected, f"iter_entries({query!r})"
            assert sorted(str(e.id) for e in p.search(query)) == sorted(expected), f"search({query!r})"
        assert a.id in {e.id for e in p.search("apple")}
        assert b.id not in {e.id for e in p.search("apple")}
        limited = self._ids(p, Query(limit=2))
        assert limited == self._ids(p)[:2]
        assert len(p.search(Query(text="a", limit=1))) <= 1

    # == update / version tokens ======================================================
    @requires(C.ADD, C.UPDATE)
    def test_update_replaces_entry(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Update replaces the stored entry, returns a new version token, and survives reopen."""
        stored = memcore_provider.add(memcore_make_entry(title="Before update", tags=["old"]))
        current = memcore_provider.get(stored.id)
        changed = current.model_copy(deep=True)
        changed.title = "After update"
        changed.body = "A new body.\n"
        changed.tags = ["new", "tags"]
        updated = memcore_provider.update(changed, expected_version=current.version)
        assert updated.id == stored.id
        assert updated.version and updated.version != current.version, "update must return a new version"
        reopened = memcore_reopen().get(stored.id)
        self._check_roundtrip(changed, updated, reopened, "update", "updated_at")
        assert len(self._ids(memcore_provider)) == 1, "update must not add an entry"

    @requires(C.ADD, C.UPDATE)
    def test_stale_version_raises_conflict(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any
    ) -> None:
        """An update with a stale expected_version raises ConflictError and writes nothing."""
        stored = memcore_provider.add(memcore_make_entry(title="Version 1"))
        read = memcore_provider.get(stored.id)
        first = read.model_copy(deep=True)
        first.title = "Version 2"
        memcore_provider.update(first, expected_version=read.version)
        before = memcore_raw_files()
        second = read.model_copy(deep=True)
        second.title = "Version 2 from a stale copy"
        with pytest.raises(ConflictError):
            memcore_provider.update(second, expected_version=read.version)
        assert memcore_raw_files() == before, "a refused update changed files"
        assert memcore_provider.get(stored.id).title == "Version 2"

    @requires(C.ADD, C.UPDATE)
    def test_update_missing_raises_entry_not_found(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any
    ) -> None:
        """Update of an id that is not in the store raises EntryNotFoundError and writes nothing."""
        stored = memcore_provider.add(memcore_make_entry())
        ghost = stored.model_copy(deep=True)
        ghost.id = _missing_id(stored.id)
        before = memcore_raw_files()
        with pytest.raises(EntryNotFoundError):
            memcore_provider.update(ghost)
        assert memcore_raw_files() == before

    # == delete / archive / supersede =================================================
    @requires(C.ADD, C.DELETE)
    def test_delete_removes_entry(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Delete removes exactly that entry, for good; deleting it again raises EntryNotFoundError."""
        a = memcore_provider.add(memcore_make_entry(title="To delete"))
        b = memcore_provider.add(memcore_make_entry(title="To keep"))
        memcore_provider.delete(a.id)
        with pytest.raises(EntryNotFoundError):
            memcore_provider.get(a.id)
        assert self._ids(memcore_provider) == [b.id]
        other = memcore_reopen()
        assert self._ids(other) == [b.id], "the deleted entry is back after reopen"
        with pytest.raises(EntryNotFoundError):
            other.get(a.id)
        with pytest.raises(EntryNotFoundError):
            other.delete(a.id)
        assert errors_of(other.validate()) == []

    @requires(C.ADD, C.ARCHIVE)
    def test_archive_marks_archived(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Archive returns the entry with status archived, kept after reopen, content unchanged."""
        given = memcore_make_entry(title="To archive", body="Archived body.\n")
        stored = memcore_provider.add(given)
        archived = memcore_provider.archive(stored.id)
        assert archived.id == stored.id and archived.status == Status.ARCHIVED
        reopened = memcore_reopen().get(stored.id)
        assert reopened.status == Status.ARCHIVED
        expected = given.model_copy(update={"status": Status.ARCHIVED})
        self._check_roundtrip(expected, archived, reopened, "archive", "updated_at")

    @requires(C.ADD, C.SUPERSEDE)
    def test_supersede_marks_old_and_adds_new(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """Supersede adds the new entry and marks the old one superseded (both kept)."""
        old = memcore_provider.add(memcore_make_entry(title="Old fact", body="Old.\n"))
        new_given = memcore_make_entry(title="New fact", body="New.\n")
        new = memcore_provider.supersede(old.id, new_given)
        assert new.id and new.id != old.id
        other = memcore_reopen()
        assert sorted(self._ids(other)) == sorted([old.id, new.id])
        assert other.get(old.id).status == Status.SUPERSEDED
        got_new = other.get(new.id)
        assert (got_new.title, got_new.body) == (
            self.normalize_expected(new_given.model_copy()).title,
            self.normalize_expected(new_given.model_copy()).body,
        )
        if "relations" in self.roundtrip_fields:
            assert any(r.type == "supersedes" and r.target == old.id for r in got_new.relations), got_new.relations

    @requires(C.ADD, C.SUPERSEDE)
    def test_supersede_missing_writes_nothing(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any
    ) -> None:
        """Supersede of an unknown id raises EntryNotFoundError before writing anything."""
        stored = memcore_provider.add(memcore_make_entry())
        before = memcore_raw_files()
        with pytest.raises(EntryNotFoundError):
            memcore_provider.supersede(_missing_id(stored.id), memcore_make_entry(title="Orphan"))
        assert memcore_raw_files() == before
        assert self._ids(memcore_provider) == [stored.id]

    # == forbidden operations =========================================================
    def test_undeclared_operations_raise_unsupported(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any
    ) -> None:
        """Each write operation whose capability is not declared raises UnsupportedOperationError."""
        caps = memcore_provider.capabilities
        existing = next(iter(memcore_provider.iter_entries()), None)
        target = existing or memcore_make_entry(id="conformance-no-such-entry")
        assert target.id is not None
        calls: dict[Capability, Callable[[], object]] = {
            C.ADD: lambda: memcore_provider.add(memcore_make_entry()),
            C.UPDATE: lambda: memcore_provider.update(target, expected_version=target.version),
            C.DELETE: lambda: memcore_provider.delete(target.id),
            C.SUPERSEDE: lambda: memcore_provider.supersede(target.id, memcore_make_entry()),
            C.ARCHIVE: lambda: memcore_provider.archive(target.id),
        }
        before = memcore_raw_files()
        for cap in _WRITE_OPS:
            if cap in caps:
                continue
            with pytest.raises(UnsupportedOperationError):
                calls[cap]()
            assert memcore_raw_files() == before, f"refused {cap.value} changed files"

    @requires(C.APPEND_ONLY)
    def test_append_only_entries_refuse_edits(
        self, memcore_provider: Any, memcore_make_append_only_entry: Any, memcore_raw_files: Any
    ) -> None:
        """An append-only entry can be added, but update and delete raise UnsupportedOperationError."""
        assert memcore_make_append_only_entry is not None, (
            "the provider declares APPEND_ONLY: override memcore_make_append_only_entry"
        )
        stored = memcore_provider.add(memcore_make_append_only_entry())
        before = memcore_raw_files()
        edited = memcore_provider.get(stored.id).model_copy(deep=True)
        edited.body = "Edited append-only body.\n"
        with pytest.raises(UnsupportedOperationError):
            memcore_provider.update(edited, expected_version=edited.version)
        if C.DELETE in memcore_provider.capabilities:
            with pytest.raises(UnsupportedOperationError):
                memcore_provider.delete(stored.id)
        assert memcore_raw_files() == before, "a refused edit of an append-only entry changed files"
        assert memcore_provider.get(stored.id).body == stored.body

    # == validate / batch / reindex ===================================================
    @requires(C.ADD)
    def test_validate_clean_after_api_writes(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """Whatever the API wrote is a valid store for the provider's own validate()."""
        p = memcore_provider
        stored = [p.add(memcore_make_entry(title=f"Valid {n}", tags=[f"t{n}"])) for n in range(4)]
        caps = p.capabilities
        if C.UPDATE in caps:
            current = p.get(stored[0].id)
            p.update(current.model_copy(update={"title": "Valid 0 edited"}), expected_version=current.version)
        if C.ARCHIVE in caps:
            p.archive(stored[1].id)
        if C.SUPERSEDE in caps:
            p.supersede(stored[2].id, memcore_make_entry(title="Valid 2 replacement"))
        if C.DELETE in caps:
            p.delete(stored[3].id)
        diagnostics = memcore_reopen().validate()
        assert all(isinstance(d, Diagnostic) for d in diagnostics)
        assert errors_of(diagnostics) == []

    @requires(C.ADD, C.BATCH)
    def test_batch_writes_everything(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Entries added inside batch() are all there after it ends, as add returned them, and the store validates."""
        with memcore_provider.batch():
            stored = [memcore_provider.add(memcore_make_entry(title=f"Batched {n}")) for n in range(5)]
        other = memcore_reopen()
        assert sorted(self._ids(other)) == sorted(e.id for e in stored)
        for entry in stored:
            assert_entry_matches(other.get(entry.id), entry, self._fields(), "added in batch(), read after reopen")
        assert errors_of(other.validate()) == []

    @requires(C.ADD, C.BATCH)
    def test_plan_ids_match_add(self, memcore_provider: Any, memcore_make_entry: Any) -> None:
        """plan_ids() writes nothing, and adds of the same entries in order get exactly the ids it planned."""
        memcore_provider.add(memcore_make_entry(title="Already there"))
        entries = [memcore_make_entry(title=f"Planned {n % 3}", body=f"Planned body {n}.") for n in range(6)]
        before = sorted(self._ids(memcore_provider))
        planned = plan_ids(memcore_provider, entries)
        if planned is None:
            pytest.skip(
                f"{memcore_provider.format_name} does not plan ids (optional: migrations then link "
                "forward relations by a second pass or a trial run)"
            )
        assert len(planned) == len(entries)
        assert sorted(self._ids(memcore_provider)) == before, "plan_ids() changed the store"
        assert any(p is not None for p in planned), "plan_ids() planned no id at all"
        with memcore_provider.batch():
            stored = [memcore_provider.add(e) for e in entries]
        for n, (want, got) in enumerate(zip(planned, stored, strict=True)):
            if want is not None:
                assert got.id == want, f"entry {n}: planned {want!r}, add gave {got.id!r}"

    @requires(C.ADD)
    def test_read_all_is_iter_entries_plus_validate(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """read_all() gives exactly list(iter_entries()) and validate(), in store order."""
        for n in range(4):
            memcore_provider.add(memcore_make_entry(title=f"Snapshot {n}", tags=[f"s{n}"]))
        reader = memcore_reopen()
        entries, diagnostics = read_all(reader)
        assert [e.model_dump() for e in entries] == [e.model_dump() for e in reader.iter_entries()]
        assert diagnostics == reader.validate()

    @requires(C.ADD, C.REINDEX)
    def test_reindex_keeps_entries(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Reindex returns diagnostics (no errors on a valid store) and loses no entry."""
        stored = [memcore_provider.add(memcore_make_entry(title=f"Indexed {n}")) for n in range(3)]
        diagnostics = memcore_provider.reindex()
        assert isinstance(diagnostics, list) and errors_of(diagnostics) == []
        other = memcore_reopen()
        for entry in stored:
            assert_entry_matches(other.get(entry.id), entry, self._fields(), "after reindex")

    # == adversarial corpus and generated entries =====================================
    @requires(C.ADD)
    @pytest.mark.parametrize("case", CORPUS_CASES)
    def test_corpus_roundtrip(
        self,
        case: str,
        memcore_provider: Any,
        memcore_corpus: dict[str, MemoryEntry],
        memcore_reopen: Any,
        memcore_raw_files: Any,
    ) -> None:
        """Each corpus case round-trips through a reopened store, or is refused whole if declared so."""
        if case not in memcore_corpus:
            pytest.fail(f"memcore_corpus lacks case {case!r}: list it in rejected_corpus instead of removing it")
        given = memcore_corpus[case]
        if case in self.rejected_corpus:
            before = memcore_raw_files()
            with pytest.raises(InvalidEntryError):
                memcore_provider.add(given)
            assert memcore_raw_files() == before, f"refused corpus case {case!r} changed files"
            assert self._ids(memcore_reopen()) == []
            return
        stored = memcore_provider.add(given)
        other = memcore_reopen()
        self._check_roundtrip(given, stored, other.get(stored.id), f"corpus case {case!r}")
        assert errors_of(other.validate()) == []

    @requires(C.ADD)
    def test_corpus_in_one_store(
        self, memcore_provider: Any, memcore_corpus: dict[str, MemoryEntry], memcore_reopen: Any
    ) -> None:
        """Every storable corpus case, added to one store, reads back intact beside the others."""
        stored: dict[str, tuple[MemoryEntry, MemoryEntry]] = {}
        for case, given in memcore_corpus.items():
            if case not in self.rejected_corpus:
                stored[case] = (given, memcore_provider.add(given))
        other = memcore_reopen()
        ids = self._ids(other)
        assert sorted(ids) == sorted(str(st.id) for _, st in stored.values())
        if self.insertion_ordered:
            assert ids == [st.id for _, st in stored.values()], "corpus entries came back in another order"
        for case, (given, st) in stored.items():
            self._check_roundtrip(given, st, other.get(st.id), f"corpus case {case!r} among the others")
        assert errors_of(other.validate()) == []

    @requires(C.ADD)
    def test_generated_entries_roundtrip(
        self,
        request: pytest.FixtureRequest,
        memcore_provider: Any,
        memcore_provider_cls: type[Any],
        memcore_make_entry: Any,
        memcore_reopen: Any,
    ) -> None:
        """Hypothesis: generated entries (>= 200 in the memcore-ci profile) round-trip through a reopen.

        Every example adds a new entry to this test's store (ids are unique), reopens the store
        and compares. Bodies and titles are never blank here (the corpus covers blank ones).
        """
        from hypothesis import given, settings

        from memcore_conformance._checks import register_hypothesis_profiles
        from memcore_conformance.plugin import option

        register_hypothesis_profiles()
        profile = option(request.config, "memcore_hypothesis_profile") or "memcore-ci"
        strategy = entry_overrides(memcore_provider_cls.format_name, self.roundtrip_fields)
        seen: list[str] = []

        @settings(settings.get_profile(profile))
        @given(overrides=strategy)
        def roundtrip(overrides: dict[str, Any]) -> None:
            entry = memcore_make_entry(**overrides)
            stored = memcore_provider.add(entry)
            other = memcore_reopen()
            try:
                got = other.get(stored.id)
            finally:
                other.close()
            self._check_roundtrip(entry, stored, got, f"generated entry {overrides!r}")
            seen.append(stored.id)

        roundtrip()
        assert len(set(seen)) == len(seen), "add returned the same id twice"
        wanted = settings.get_profile(profile).max_examples
        assert len(seen) >= wanted, f"only {len(seen)} of {wanted} generated entries were tried"
        assert errors_of(memcore_reopen().validate()) == []

    # == raw files ====================================================================
    @requires(C.ADD)
    def test_reading_writes_nothing(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_reopen: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
    ) -> None:
        """Opening, reading, searching, validating and closing leave every file as it was."""
        stored = [memcore_provider.add(memcore_make_entry(title=f"Raw {n}")) for n in range(3)]
        memcore_provider.close()
        before, ident = memcore_raw_files(), memcore_file_identity()
        provider = memcore_reopen()
        list(provider.iter_entries())
        provider.get(stored[1].id)
        provider.search("Raw")
        provider.search(Query(tags_any=["conformance"]))
        provider.validate()
        provider.close()
        diff = changed_files(before, memcore_raw_files(), ident, memcore_file_identity())
        assert diff == {"added": [], "removed": [], "changed": [], "rewritten": []}, "reading wrote files"

    def _seed_store(self, provider: Any, make_entry: Any) -> list[MemoryEntry]:
        return [
            provider.add(make_entry(title=f"Seed {n}", body=f"seed-body-marker-{n}\n", tags=[f"seed{n}"]))
            for n in range(4)
        ]

    def _assert_one_file_touched(
        self,
        operation: str,
        before: dict[str, bytes],
        ident: dict[str, tuple[int, int]],
        after: dict[str, bytes],
        ident_after: dict[str, tuple[int, int]],
        holder_marker: bytes | None,
    ) -> None:
        diff = changed_files(before, after, ident, ident_after, ignore=self.index_files)
        assert diff["rewritten"] == [], (
            f"{operation} rewrote files it did not change (same bytes, new inode/mtime); "
            "declare derived files in index_files"
        )
        touched = diff["changed"] + diff["removed"]
        assert len(touched) <= 1, f"{operation} changed or removed several existing files: {touched}"
        assert len(diff["added"]) <= 1, f"{operation} added several files: {diff['added']}"
        if holder_marker is not None:
            for path in touched:
                assert holder_marker in before[path], (
                    f"{operation} changed {path}, which did not hold the entry it was about"
                )

    @requires(C.ADD)
    def test_add_leaves_other_files_alone(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
        memcore_reopen: Any,
    ) -> None:
        """Adding one entry adds or changes one file (plus index_files); others keep bytes and inode."""
        self._seed_store(memcore_provider, memcore_make_entry)
        before, ident = memcore_raw_files(), memcore_file_identity()
        new = memcore_provider.add(memcore_make_entry(title="The new one", body="new-body-marker\n"))
        self._assert_one_file_touched("add", before, ident, memcore_raw_files(), memcore_file_identity(), None)
        assert memcore_reopen().get(new.id).title == "The new one"

    @requires(C.ADD, C.UPDATE)
    def test_update_leaves_other_files_alone(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
    ) -> None:
        """Updating one entry changes only the file holding it (plus index_files)."""
        seeded = self._seed_store(memcore_provider, memcore_make_entry)
        target = memcore_provider.get(seeded[2].id)
        before, ident = memcore_raw_files(), memcore_file_identity()
        memcore_provider.update(
            target.model_copy(update={"body": "seed-body-marker-2 edited\n"}), expected_version=target.version
        )
        self._assert_one_file_touched(
            "update", before, ident, memcore_raw_files(), memcore_file_identity(), b"seed-body-marker-2"
        )

    @requires(C.ADD, C.DELETE)
    def test_delete_leaves_other_files_alone(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
    ) -> None:
        """Deleting one entry changes or removes only the file holding it (plus index_files)."""
        seeded = self._seed_store(memcore_provider, memcore_make_entry)
        before, ident = memcore_raw_files(), memcore_file_identity()
        memcore_provider.delete(seeded[1].id)
        self._assert_one_file_touched(
            "delete", before, ident, memcore_raw_files(), memcore_file_identity(), b"seed-body-marker-1"
        )

    # == bad input ====================================================================
    @requires(C.ADD)
    def test_bad_input_fails_open_and_closed(
        self,
        memcore_provider: Any,
        memcore_provider_cls: type[Any],
        memcore_provider_options: dict[str, Any],
        memcore_location: str,
        memcore_store_root: Path,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_bad_files: Any,
    ) -> None:
        """Damaged files: reading yields diagnostics, never a non-memcore exception; writes never touch them.

        For each ``BadFile`` (written into a copy of a one-entry store): opening, iterating,
        getting, searching raise nothing but ``MemcoreError``; ``validate()`` raises nothing and
        every error diagnostic names a path; ``must_diagnose`` damage gets an ``error`` naming the
        file; ``must_read`` damage still reads the entry. A file the provider reports as an
        error is never changed by update, delete, archive or add. A file it accepts may be
        rewritten by an update, keeping what ``preserved`` names.
        """
        victim = memcore_provider.add(memcore_make_entry(title="Bad input victim", body=f"{VICTIM_MARKER}\n"))
        memcore_provider.close()
        pristine = memcore_raw_files()
        cases = [
            case if isinstance(case, BadFile) else BadFile(name=str(case[0]), path=str(case[0]), data=bytes(case[1]))
            for case in memcore_bad_files(memcore_location)
        ]
        assert cases, "memcore_bad_files returned no cases"
        caps = memcore_provider_cls.capabilities
        for case in cases:
            _restore(memcore_store_root, pristine)
            target = memcore_store_root / case.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(case.data)
            provider = memcore_provider_cls(memcore_location, **memcore_provider_options)
            try:
                self._check_bad_file(
                    case, provider, victim, caps, memcore_store_root, memcore_raw_files, memcore_make_entry
                )
            finally:
                provider.close()

    def _check_bad_file(
        self,
        case: BadFile,
        provider: Any,
        victim: MemoryEntry,
        caps: frozenset[Capability],
        root: Path,
        raw_files: Callable[[], dict[str, bytes]],
        make_entry: Any,
    ) -> None:
        """One case of :meth:`test_bad_input_fails_open_and_closed` (the file is already written)."""
        where = f"bad file {case.name!r} ({case.path})"
        try:
            provider.open()
        except MemcoreError:
            assert raw_files()[case.path] == case.data, f"{where}: a refused open changed it"
            return
        entries = _call_failing_open(where, "iter_entries", lambda: list(provider.iter_entries()))
        _call_failing_open(where, "search", lambda: provider.search("victim"))
        got = _call_failing_open(where, "get", lambda: provider.get(str(victim.id)))
        try:
            diagnostics = provider.validate()
        except Exception as exc:  # noqa: BLE001 - any exception is the failure reported
            pytest.fail(f"{where}: validate() raised {exc!r}; it must report, never raise")
        unplaced = [str(d) for d in diagnostics if d.severity == Severity.ERROR and not d.path]
        assert not unplaced, f"{where}: error diagnostics without a path: {unplaced}"
        about = [d for d in diagnostics if _same_file(d.path, case.path, root)]
        errors = [d for d in about if d.severity == Severity.ERROR]
        if case.must_diagnose:
            assert errors, f"{where}: validate() reported no error for it: {diagnostics}"
        if case.must_read:
            assert entries is not None and victim.id in [e.id for e in entries], f"{where}: the entry is no longer read"
            assert isinstance(got, MemoryEntry) and got.title == victim.title, f"{where}: get {got!r}"
        assert raw_files()[case.path] == case.data, f"{where}: reading changed it"
        writes = _write_attempts(provider, caps, victim, make_entry)
        if errors:
            for name, write in writes:
                _call_failing_open(where, name, write)
                assert raw_files().get(case.path) == case.data, (
                    f"{where}: {name} changed a file validate() reported as an error"
                )
        elif case.must_read and C.UPDATE in caps and isinstance(got, MemoryEntry):
            _call_failing_open(
                where,
                "update",
                lambda: provider.update(
                    got.model_copy(update={"title": "Bad input victim edited"}), expected_version=got.version
                ),
            )
            rewritten = raw_files().get(case.path)
            if rewritten is not None and rewritten != case.data:
                if case.preserved == "bom":
                    assert rewritten.startswith(b"\xef\xbb\xbf"), f"{where}: a rewrite dropped the BOM"
                if case.preserved == "crlf":
                    assert b"\n" not in rewritten.replace(b"\r\n", b""), f"{where}: a rewrite mixed LF into a CRLF file"
            assert errors_of(d for d in provider.validate() if _same_file(d.path, case.path, root)) == [], (
                f"{where}: the rewrite left an invalid file"
            )

    # == path safety ==================================================================
    @requires(C.ADD)
    def test_hostile_names_stay_inside_the_store(
        self,
        tmp_path: Path,
        memcore_provider: Any,
        memcore_provider_cls: type[Any],
        memcore_store_root: Path,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
    ) -> None:
        """Ids, titles, tags, slugs with ../, /, \\, NUL or reserved names never touch a file outside the store.

        Each hostile entry is either refused with a ``MemcoreError`` or stored and readable
        by its returned id. Lookups and deletes by hostile ids raise ``MemcoreError``. Files
        planted outside the store (a sentinel folder and siblings) keep their bytes, no file
        appears outside, and every path the provider created inside is portable.
        """
        fmt = memcore_provider_cls.format_name
        outside = _plant_sentinels(tmp_path)
        parent_listing = sorted(os.listdir(tmp_path.parent))
        before_outside = _outside_snapshot(tmp_path, memcore_store_root)
        stored_ids: set[str] = set()
        attempts: list[tuple[str, dict[str, Any]]] = []
        for value in HOSTILE_IDS:
            attempts.append((f"id={value!r}", {"id": value}))
        for value in HOSTILE_NAMES:
            attempts.append((f"title={value!r}", {"title": value}))
            attempts.append((f"tags=[{value!r}]", {"tags": [value]}))
        attempts.append(("scope", {"scope": "../../escape"}))
        attempts.append(("source", {"source": "../../escape"}))
        attempts.append(
            ("extra slug/path", {"extra": {fmt: {"slug": "../../escape", "path": "../../escape.md", "file": "/tmp/x"}}})
        )
        for label, overrides in attempts:
            try:
                entry = memcore_make_entry(**overrides)
            except ValueError:
                continue  # the model itself refuses it (e.g. NUL in an id)
            try:
                stored = memcore_provider.add(entry)
            except MemcoreError:
                continue
            except Exception as exc:  # noqa: BLE001 - any other exception is the failure reported
                pytest.fail(f"add with hostile {label} raised {exc!r}; refuse with a MemcoreError (UnsafePathError)")
            stored_ids.add(str(stored.id))
            assert memcore_provider.get(stored.id).id == stored.id, f"hostile {label}: stored but not readable"
        for hostile in HOSTILE_IDS:
            if hostile in stored_ids:
                continue
            for name in ("get", "delete"):
                if name == "delete" and C.DELETE not in memcore_provider.capabilities:
                    continue
                try:
                    getattr(memcore_provider, name)(hostile)
                except MemcoreError:
                    pass
                except Exception as exc:  # noqa: BLE001 - reported
                    pytest.fail(f"{name}({hostile!r}) raised {exc!r}; expected EntryNotFoundError or UnsafePathError")
                else:
                    pytest.fail(f"{name}({hostile!r}) succeeded for an id that was never stored")
        assert _outside_snapshot(tmp_path, memcore_store_root) == before_outside, (
            "files outside the store were created, changed or removed"
        )
        assert sorted(os.listdir(tmp_path.parent)) == parent_listing, "a file appeared beside the test folder"
        assert all(p.exists() for p in outside)
        for rel in memcore_raw_files():
            for component in rel.split("/"):
                try:
                    check_component(component)
                except UnsafePathError as exc:
                    pytest.fail(f"the provider created a non-portable path {rel!r}: {exc}")

    # == processes ====================================================================
    @slow
    @requires(C.ADD, C.CONCURRENT)
    def test_concurrent_processes_lose_nothing(
        self,
        tmp_path: Path,
        memcore_provider_cls: type[Any],
        memcore_provider_options: dict[str, Any],
        memcore_location: str,
        memcore_make_entry: Any,
        memcore_reopen: Any,
    ) -> None:
        """16 spawned processes x 25 adds to one store: all 400 entries present, store valid."""
        procs_n, adds_n = self.concurrent_processes, self.concurrent_adds
        ctx = _mp_context()
        go = ctx.Event()
        results = tmp_path / "results"
        results.mkdir()
        titles: dict[str, str] = {}
        procs = []
        for p in range(procs_n):
            batch = [
                memcore_make_entry(title=f"Process {p} entry {n}", body=f"Written by process {p}, entry {n}.\n")
                for n in range(adds_n)
            ]
            for entry in batch:
                titles[entry.title] = entry.body
            payload = [e.model_dump(mode="json") for e in batch]
            proc = ctx.Process(
                target=add_entries,
                args=(
                    self._import_path(memcore_provider_cls),
                    memcore_location,
                    memcore_provider_options,
                    payload,
                    str(results / f"{p}.json"),
                    go,
                ),
            )
            proc.start()
            procs.append(proc)
        go.set()
        for proc in procs:
            proc.join(timeout=300)
        failures = []
        for p, proc in enumerate(procs):
            if proc.is_alive():
                proc.kill()
                proc.join()
                failures.append(f"process {p} hung")
            elif proc.exitcode != 0:
                err = results / f"{p}.json.err"
                failures.append(f"process {p} exit {proc.exitcode}: {err.read_text() if err.exists() else ''}")
        assert not failures, "\n".join(failures)
        returned = [i for p in range(procs_n) for i in json.loads((results / f"{p}.json").read_text())]
        assert len(returned) == procs_n * adds_n and len(set(returned)) == len(returned), "ids repeated"
        provider = memcore_reopen()
        found = {e.id: e for e in provider.iter_entries()}
        missing = sorted(set(returned) - set(found))
        assert not missing, f"{len(missing)} of {len(returned)} acknowledged entries are missing: {missing[:5]}"
        assert len(found) == procs_n * adds_n, "the store holds entries nobody added"
        for entry_id in returned:
            entry = found[entry_id]
            assert titles.get(entry.title) is not None, f"entry {entry_id} has a foreign title {entry.title!r}"
        assert errors_of(provider.validate()) == []

    @slow
    @requires(C.ADD)
    def test_sigkill_loses_no_acknowledged_write(
        self,
        request: pytest.FixtureRequest,
        memcore_provider_cls: type[Any],
        memcore_provider_options: dict[str, Any],
        memcore_location: str,
        memcore_make_entry: Any,
        memcore_reopen: Any,
    ) -> None:
        """A writer SIGKILLed at random points during 100 adds: every acknowledged add is there, no file torn."""
        if not hasattr(signal, "SIGKILL"):
            pytest.skip("no SIGKILL on this platform")
        from memcore_conformance.plugin import option

        seed_text = option(request.config, "memcore_seed")
        seed = int(seed_text) if seed_text else random.SystemRandom().randrange(2**32)
        rng = random.Random(seed)
        total = self.crash_writes
        entries = [
            memcore_make_entry(
                title=f"Crash entry {n}", body=f"Crash body {n}.\n" + "padding line\n" * rng.randrange(50)
            )
            for n in range(total)
        ]
        kill_after = sorted(rng.sample(range(1, total), self.crash_kills))
        acked: dict[str, MemoryEntry] = {}
        intervals: list[float] = []
        ctx = _mp_context()
        position = 0
        rounds = [*kill_after, None]
        for kill_at in rounds:
            if position >= total:
                break
            parent, child = ctx.Pipe(duplex=False)
            payload = [e.model_dump(mode="json") for e in entries[position:]]
            proc = ctx.Process(
                target=write_until_killed,
                args=(
                    self._import_path(memcore_provider_cls),
                    memcore_location,
                    memcore_provider_options,
                    payload,
                    child,
                ),
            )
            proc.start()
            child.close()
            start = position
            last_ack: float | None = None
            try:
                while True:
                    if not parent.poll(120):
                        pytest.fail(f"seed {seed}: the writer stopped answering")
                    try:
                        message = parent.recv()
                    except EOFError:
                        break
                    if message[0] == "error":
                        pytest.fail(f"seed {seed}: the writer failed:\n{message[1]}")
                    if message[0] == "ack":
                        _, index, entry_id = message
                        acked[entry_id] = entries[start + index]
                        position = start + index + 1
                        now = time.monotonic()
                        if last_ack is not None:
                            intervals.append(now - last_ack)
                        last_ack = now
                        if kill_at is not None and position >= kill_at:
                            # somewhere inside the next write: up to 1.2 x the median write time
                            typical = sorted(intervals)[len(intervals) // 2] if intervals else 0.005
                            time.sleep(rng.uniform(0, 1.2 * typical))
                            os.kill(proc.pid, signal.SIGKILL)
                            kill_at = None
                            while parent.poll(0.5):
                                try:
                                    late = parent.recv()
                                except EOFError:
                                    break
                                if late[0] == "ack":
                                    acked[late[2]] = entries[start + late[1]]
                                    position = start + late[1] + 1
                            break
                    if message[0] == "done":
                        break
            finally:
                proc.join(timeout=60)
                parent.close()
        provider = memcore_reopen()
        found = {e.id: e for e in provider.iter_entries()}
        missing = [entry_id for entry_id in acked if entry_id not in found]
        assert not missing, f"seed {seed}: acknowledged writes lost after SIGKILL: {missing[:5]}"
        for entry_id, given in acked.items():
            got = found[entry_id]
            assert (got.title, got.body) == (given.title, given.body), f"seed {seed}: entry {entry_id} torn"
        assert errors_of(provider.validate()) == [], f"seed {seed}: the store is damaged after SIGKILL"


def _restore(root: Path, snapshot: dict[str, bytes]) -> None:
    """Make the files under ``root`` exactly ``snapshot`` again (test-side, not the provider)."""
    for rel in read_tree(root):
        if rel not in snapshot:
            (root / rel).unlink()
    for rel, data in snapshot.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)


#: Ids that try to leave the store or are not portable file names.
HOSTILE_IDS: tuple[str, ...] = (
    "../escape",
    "../../escape",
    "../../../escape",
    "../sentinel/victim",
    "../../sentinel/victim",
    "/tmp/memcore-escape",
    "a/../../escape",
    "sub/dir",
    "a\\b",
    "..\\..\\escape",
    "C:\\escape",
    "CON",
    "nul",
    "aux.txt",
    "COM1",
    "LPT1.md",
    ".",
    "..",
    "...",
    "~",
    "x\x00y",
    "trailing.",
    "trailing ",
)

#: Titles and tags that try to leave the store through a derived slug or file name.
HOSTILE_NAMES: tuple[str, ...] = (
    "../escape",
    "../../escape",
    "../sentinel/victim",
    "/etc/passwd",
    "a\\..\\..\\escape",
    "CON",
    "nul.txt",
    "x\x00y",
    "..",
    "~/escape",
)


def _plant_sentinels(tmp_path: Path) -> list[Path]:
    """Files a naive provider would hit with the hostile names above, all outside the store."""
    planted = []
    for folder in (tmp_path, tmp_path / "sentinel"):
        folder.mkdir(exist_ok=True)
        for stem in ("escape", "victim", "CON"):
            for suffix in ("", ".md", ".json", ".jsonl"):
                path = folder / f"{stem}{suffix}"
                path.write_bytes(b"sentinel: must stay byte-identical\n")
                planted.append(path)
    return planted


def _outside_snapshot(tmp_path: Path, store_root: Path) -> dict[str, bytes]:
    store = store_root.resolve()
    return {
        rel: data
        for rel, data in read_tree(tmp_path).items()
        if store != (tmp_path / rel).resolve() and store not in (tmp_path / rel).resolve().parents
    }


def _same_file(diag_path: str | None, rel: str, root: Path) -> bool:
    """Whether a diagnostic's path (relative to the store root, or absolute) is ``rel``."""
    if not diag_path:
        return False
    path = Path(diag_path)
    if not path.is_absolute():
        if path.as_posix() == rel or path.as_posix().endswith("/" + rel):
            return True
        path = root / path
    try:
        return path.resolve() == (root / rel).resolve()
    except OSError:
        return False


def _call_failing_open(where: str, name: str, call: Callable[[], Any]) -> Any:
    """Call ``call``; a MemcoreError is allowed (returns None), any other exception fails the test."""
    try:
        return call()
    except MemcoreError:
        return None
    except Exception as exc:  # noqa: BLE001 - any other exception is the failure reported
        pytest.fail(
            f"{where}: {name} raised {type(exc).__name__}: {exc}; readers fail open and writers "
            "refuse with a MemcoreError subclass"
        )


def _write_attempts(
    provider: Any, caps: frozenset[Capability], victim: MemoryEntry, make_entry: Any
) -> list[tuple[str, Callable[[], Any]]]:
    """The writes the bad-input test tries against a store holding a damaged file."""
    edited = victim.model_copy(update={"title": "Bad input victim edited"})
    attempts: list[tuple[str, Callable[[], Any]]] = []
    if C.UPDATE in caps:
        attempts.append(("update", lambda: provider.update(edited, expected_version=victim.version)))
    if C.ARCHIVE in caps:
        attempts.append(("archive", lambda: provider.archive(str(victim.id))))
    if C.DELETE in caps:
        attempts.append(("delete", lambda: provider.delete(str(victim.id))))
    attempts.append(("add", lambda: provider.add(make_entry(title="Added beside a damaged file"))))
    return attempts
