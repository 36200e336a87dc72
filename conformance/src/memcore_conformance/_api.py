"""``ApiTests``: the operations through the API — round trip, get, update, delete, archive, supersede.

Each write is followed by a read on the same instance and on a reopened one: what ``add`` and
``update`` return is what the store holds (every ``roundtrip_fields`` field, after
``normalize_expected``); version tokens refuse stale updates; ids stay stable; ``iter_entries``
keeps one order; queries agree with :meth:`memcore.models.Query.matches`; an unknown id raises
:class:`~memcore.errors.EntryNotFoundError` and writes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memcore.errors import ConflictError, EntryNotFoundError, MemcoreError
from memcore.models import Query, Relation, Status
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._base import missing_id as _missing_id
from memcore_conformance._checks import assert_entry_matches, errors_of

__all__ = ["ApiTests"]


class ApiTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: add/get/query, update, delete, archive, supersede."""

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
            if name in self.roundtrip_fields and self.stamps_times:
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
