"""``FileDisciplineTests``: untouched means untouched, checked on the raw files.

Reading (open, iterate, get, search, validate, close) changes no file; a write of one entry adds
at most one file and changes or removes at most the one holding that entry, plus the derived
``index_files``. Every other file keeps its bytes, inode and mtime: rewriting a file with the
same bytes is still a rewrite.
"""

from __future__ import annotations

from typing import Any

from memcore.models import MemoryEntry, Query
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import changed_files

__all__ = ["FileDisciplineTests"]


class FileDisciplineTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: which files a read or a write touches."""

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
