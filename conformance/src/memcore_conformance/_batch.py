"""``BatchTests``: ``batch()`` groups writes without changing what they do.

For providers declaring :attr:`~memcore.provider.Capability.BATCH`: every write made inside
``with store.batch():`` is there once the block ends, as the write returned it; reads inside the
block see the block's writes; a second thread's batch waits until the first has ended (a batch is
owned by one thread and holds the store lock); ``plan_ids`` predicts the ids a batch of adds gets;
``add_many`` (optional) returns every entry as a read gives it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from memcore.errors import EntryNotFoundError
from memcore.models import MemoryEntry, Query
from memcore.provider import BulkAdding, plan_ids
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import assert_entry_matches, errors_of

__all__ = ["BatchTests"]

#: Seconds the second thread is given to (wrongly) enter its batch while the first is open.
_WAIT_S = 0.5


class BatchTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: writes grouped in ``batch()``."""

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
    def test_add_many_returns_each_entry_as_a_read_gives_it(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """add_many() (optional) adds every entry in order, each returned as get() reads it, after a reopen too."""
        bulk: Any = memcore_provider
        if not isinstance(bulk, BulkAdding):
            pytest.skip(f"{memcore_provider.format_name} has no add_many (optional: migrations then add one by one)")
        memcore_provider.add(memcore_make_entry(title="Already there"))
        entries = [memcore_make_entry(title=f"Many {n % 3}", body=f"Added in one call {n}.") for n in range(6)]
        results = bulk.add_many(entries)
        assert len(results) == len(entries), f"add_many handled {len(results)} of {len(entries)} entries: {results}"
        stored = [r for r in results if isinstance(r, MemoryEntry)]
        assert len(stored) == len(entries), f"add_many refused an entry add takes: {results}"
        assert len({e.id for e in stored}) == len(stored), "add_many gave two entries one id"
        other = memcore_reopen()
        for n, entry in enumerate(stored):
            assert_entry_matches(memcore_provider.get(entry.id), entry, self._fields(), f"add_many entry {n}, get")
            assert_entry_matches(other.get(entry.id), entry, self._fields(), f"add_many entry {n}, after reopen")
        assert errors_of(other.validate()) == []

    @requires(C.ADD, C.BATCH)
    def test_batch_writes_are_read_inside_the_block_and_on_disk_after(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """Inside batch(), get/iter_entries see the block's add (update, delete); a reopen after it sees them all."""
        p = memcore_provider
        caps = p.capabilities
        seed = p.add(memcore_make_entry(title="Before the batch", body="Written before the batch.\n"))
        doomed = p.add(memcore_make_entry(title="Deleted in the batch")) if C.DELETE in caps else None
        edited = None
        with p.batch():
            added = p.add(memcore_make_entry(title="Added in the batch", body="Written in the batch.\n"))
            assert_entry_matches(p.get(added.id), added, self._fields(), "get inside the batch")
            assert added.id in self._ids(p), "iter_entries inside the batch does not yield the batch's add"
            assert self._ids(p, Query(ids=[added.id])) == [added.id]
            if C.UPDATE in caps:
                current = p.get(seed.id)
                edited = p.update(
                    current.model_copy(update={"title": "Edited in the batch"}), expected_version=current.version
                )
                assert p.get(seed.id).title == edited.title, "get inside the batch does not see the batch's update"
            if doomed is not None:
                p.delete(doomed.id)
                with pytest.raises(EntryNotFoundError):
                    p.get(doomed.id)
                assert doomed.id not in self._ids(p), "iter_entries inside the batch yields an entry it deleted"
        other = memcore_reopen()
        expected = {seed.id, added.id}
        assert set(self._ids(other)) == expected, "after the batch a reopened store does not hold what it wrote"
        assert_entry_matches(other.get(added.id), added, self._fields(), "added in batch(), read after reopen")
        if edited is not None:
            assert_entry_matches(other.get(seed.id), edited, self._fields(), "updated in batch(), read after reopen")
        assert errors_of(other.validate()) == []

    @requires(C.ADD, C.BATCH)
    @pytest.mark.parametrize("instance", ["shared-instance", "own-instance"])
    def test_a_second_threads_batch_waits_for_the_first(
        self, instance: str, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """While one thread is in batch(), another thread's batch (same or own instance) writes nothing; none is lost.

        A batch belongs to the thread that opened it: a second thread neither joins it nor
        writes past it. Its ``add`` inside its own ``batch()`` returns only once the first
        batch has ended (whether it waits at ``batch()`` or at its first write is the
        provider's choice), and afterwards every write of both threads is in the store.
        """
        first = memcore_provider
        if instance == "own-instance" and C.REMOTE in first.capabilities:
            pytest.skip(
                "a remote store has no lock between instances (each stands for another process): "
                "conditional writes catch their races, the shared-instance case still runs"
            )
        second = first if instance == "shared-instance" else memcore_reopen()
        mine = [memcore_make_entry(title=f"First thread {n}") for n in range(2)]
        theirs = memcore_make_entry(title="Second thread")
        wrote = threading.Event()
        errors: list[BaseException] = []
        got: list[str] = []

        def other_batch() -> None:
            try:
                with second.batch():
                    got.append(str(second.add(theirs).id))
                    wrote.set()
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)
                wrote.set()

        thread = threading.Thread(target=other_batch, daemon=True)
        try:
            with first.batch():
                stored = [first.add(mine[0])]
                thread.start()
                waited = not wrote.wait(_WAIT_S)
                stored.append(first.add(mine[1]))
            assert waited, (
                f"{instance}: a second thread's add in its own batch() returned while the first "
                f"thread's batch was open (errors: {errors!r})"
            )
        finally:
            thread.join(timeout=60)
        assert not thread.is_alive(), f"{instance}: the second thread's batch never ended after the first did"
        assert errors == [], f"{instance}: the second thread's batch failed: {errors!r}"
        ids = set(self._ids(memcore_reopen()))
        written = {str(e.id) for e in stored} | set(got)
        assert len(written) == 3 and written <= ids, f"{instance}: writes lost: {sorted(written - ids)}"
