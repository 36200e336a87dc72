"""``ReadOnlyTests``: a store opened ``read_only=True`` refuses every write and changes no byte.

zarr's ``test_read_only_store_raises``, for memcore (issue 18: "``read_only`` in core … every
write refused with ``ReadOnlyStoreError`` before any I/O"). The store is seeded through the
writable ``memcore_provider`` and closed; then it is opened again through
``memcore_reopen_read_only`` (the same location and options, plus ``read_only=True``). There:

- each write the provider declares — ``add``, ``update``, ``delete``, ``archive``,
  ``supersede``, and an ``add`` inside ``batch()`` — raises
  :class:`~memcore.errors.ReadOnlyStoreError` (one test per operation, so a report names the
  write that got through);
- no file of the store is added, removed, changed or rewritten (every file's bytes, inode and
  mtime are compared from before the read-only open to after its close), and the store reads
  as it did;
- reading works as usual: the read-only store yields the same entries, gets, searches and
  validates like a writable one.

Operations whose capability is not declared are skipped here (they must raise
``UnsupportedOperationError`` anyway: ``test_undeclared_operations_raise_unsupported``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memcore.errors import ReadOnlyStoreError
from memcore.models import MemoryEntry, Query
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import changed_files, errors_of

__all__ = ["ReadOnlyTests"]

_NOTHING_CHANGED: dict[str, list[str]] = {"added": [], "removed": [], "changed": [], "rewritten": []}

#: The write operations tried on a read-only store, each with the capabilities it needs.
READ_ONLY_WRITES = (
    pytest.param("add", marks=requires(C.ADD), id="add"),
    pytest.param("update", marks=requires(C.ADD, C.UPDATE), id="update"),
    pytest.param("delete", marks=requires(C.ADD, C.DELETE), id="delete"),
    pytest.param("archive", marks=requires(C.ADD, C.ARCHIVE), id="archive"),
    pytest.param("supersede", marks=requires(C.ADD, C.SUPERSEDE), id="supersede"),
    pytest.param("batch-add", marks=requires(C.ADD, C.BATCH), id="batch-add"),
)


def _write(operation: str, store: Any, target: MemoryEntry, make_entry: Any) -> Callable[[], object]:
    """The call that performs ``operation`` on ``store`` (``target`` is an entry it holds)."""
    entry_id = str(target.id)

    def batch_add() -> None:
        with store.batch():
            store.add(make_entry(title="Added in a read-only batch", body="read-only batch body\n"))

    calls: dict[str, Callable[[], object]] = {
        "add": lambda: store.add(make_entry(title="Added to a read-only store", body="read-only body\n")),
        "update": lambda: store.update(
            target.model_copy(update={"title": "Updated in a read-only store"}), expected_version=target.version
        ),
        "delete": lambda: store.delete(entry_id),
        "archive": lambda: store.archive(entry_id),
        "supersede": lambda: store.supersede(entry_id, make_entry(title="Superseding in a read-only store")),
        "batch-add": batch_add,
    }
    return calls[operation]


class ReadOnlyTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: ``read_only=True`` refuses writes."""

    def _seed_for_read_only(self, provider: Any, make_entry: Any) -> list[MemoryEntry]:
        seeded = [
            provider.add(make_entry(title=f"Read-only seed {n}", body=f"read-only-seed-{n}\n", tags=[f"ro{n}"]))
            for n in range(3)
        ]
        provider.close()
        return seeded

    @pytest.mark.parametrize("operation", READ_ONLY_WRITES)
    def test_read_only_store_refuses_each_write(
        self,
        operation: str,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_reopen: Any,
        memcore_reopen_read_only: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
    ) -> None:
        """Each declared write on a store opened read_only=True raises ReadOnlyStoreError and changes no byte."""
        seeded = self._seed_for_read_only(memcore_provider, memcore_make_entry)
        before, ident = memcore_raw_files(), memcore_file_identity()
        store = memcore_reopen_read_only()
        listed = [e.model_dump() for e in store.iter_entries()]
        target = store.get(seeded[0].id)
        with pytest.raises(ReadOnlyStoreError):
            _write(operation, store, target, memcore_make_entry)()
        assert [e.model_dump() for e in store.iter_entries()] == listed, (
            f"a refused {operation} changed what the read-only store reads"
        )
        store.close()
        diff = changed_files(before, memcore_raw_files(), ident, memcore_file_identity())
        assert diff == _NOTHING_CHANGED, f"{operation} on a read-only store changed files"
        assert [e.model_dump() for e in memcore_reopen().iter_entries()] == listed

    @requires(C.ADD)
    def test_read_only_store_reads_as_usual(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_reopen: Any,
        memcore_reopen_read_only: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
    ) -> None:
        """A read-only store yields, gets, searches and validates as a writable one; it writes nothing."""
        seeded = self._seed_for_read_only(memcore_provider, memcore_make_entry)
        writable = memcore_reopen()
        expected = [e.model_dump() for e in writable.iter_entries()]
        writable.close()
        before, ident = memcore_raw_files(), memcore_file_identity()
        store = memcore_reopen_read_only()
        assert [e.model_dump() for e in store.iter_entries()] == expected
        by_id = {e["id"]: e for e in expected}
        assert store.get(seeded[1].id).model_dump() == by_id[seeded[1].id]
        assert [e.id for e in store.search(Query(tags_any=["ro2"]))] == [seeded[2].id]
        assert [e.id for e in store.iter_entries(Query(ids=[seeded[0].id]))] == [seeded[0].id]
        assert errors_of(store.validate()) == []
        store.close()
        diff = changed_files(before, memcore_raw_files(), ident, memcore_file_identity())
        assert diff == _NOTHING_CHANGED, "reading a read-only store changed files"
