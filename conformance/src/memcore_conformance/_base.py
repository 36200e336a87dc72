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

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore.errors import ConflictError, EntryNotFoundError, UnsupportedOperationError
from memcore.models import Diagnostic, MemoryEntry, Query, Status
from memcore.provider import Capability, MemoryProvider
from memcore_conformance._checks import (
    CONTENT_FIELDS,
    assert_entry_matches,
    changed_files,
    errors_of,
    missing_capabilities,
    read_tree,
)
from memcore_conformance.corpus import CORPUS_CASES

__all__ = ["ProviderConformance"]

requires = pytest.mark.memcore_requires
slow = pytest.mark.slow

C = Capability
_WRITE_OPS = (C.ADD, C.UPDATE, C.DELETE, C.SUPERSEDE, C.ARCHIVE)


def _missing_id(existing: str) -> str:
    """An id shaped like ``existing`` that is not in the store (last character changed)."""
    last = existing[-1]
    return existing[:-1] + ("0" if last != "0" else "1")


class ProviderConformance:
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
        return [e.id for e in provider.iter_entries(query)]

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
            "added": [], "removed": [], "changed": [], "rewritten": []
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
        assert sorted(first) == sorted(added), "iter_entries must yield every added entry exactly once"
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
            expected = [e.id for e in query.apply(everything)]
            assert self._ids(p, query) == expected, f"iter_entries({query!r})"
            assert sorted(e.id for e in p.search(query)) == sorted(expected), f"search({query!r})"
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
        """Entries added inside batch() are all there after it ends, and the store validates."""
        with memcore_provider.batch():
            ids = [memcore_provider.add(memcore_make_entry(title=f"Batched {n}")).id for n in range(5)]
        other = memcore_reopen()
        assert sorted(self._ids(other)) == sorted(ids)
        assert errors_of(other.validate()) == []

    @requires(C.ADD, C.REINDEX)
    def test_reindex_keeps_entries(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Reindex returns diagnostics (no errors on a valid store) and loses no entry."""
        stored = [memcore_provider.add(memcore_make_entry(title=f"Indexed {n}")) for n in range(3)]
        diagnostics = memcore_provider.reindex()
        assert isinstance(diagnostics, list) and errors_of(diagnostics) == []
        other = memcore_reopen()
        for entry in stored:
            assert_entry_matches(other.get(entry.id), entry, self._fields(), "after reindex")


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


