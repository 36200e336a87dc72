"""``NoChangeUpdateTests``: updating an entry with itself writes no byte.

Issue 19's rule for every format: a file memcore writes is what that format's own writer would
write, so an update that changes nothing must leave every file of the store as it was: no
``updated_at`` stamped, no index rewritten, no proposal filed. The store is seeded through the
API (plain entries, tags, a source, a confidence, a body holding a code fence, a supersede
pair where the provider supersedes), closed, and every file hashed; then, reopened, every entry
is updated with itself as read (``update(entry, expected_version=entry.version)``). Every file
keeps its bytes, inode and mtime (index files too: ``index_files`` are not excluded here), and
each update returns the entry as stored with its version unchanged.

An entry the format cannot update at all (append-only, ``held``) raises as it must; that write
is refused, and the file check proves it wrote nothing either.
"""

from __future__ import annotations

from typing import Any

from memcore.errors import ImmutableEntryError, UnsupportedOperationError
from memcore.models import MemoryEntry
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import changed_files

__all__ = ["NoChangeUpdateTests"]

_NOTHING: dict[str, list[str]] = {"added": [], "removed": [], "changed": [], "rewritten": []}


class NoChangeUpdateTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: a no-change update writes nothing."""

    def _seed_varied(self, provider: Any, make_entry: Any) -> list[MemoryEntry]:
        """Add entries exercising the fields most formats map natively; return them as stored."""
        stored = [
            provider.add(make_entry(title="Plain entry", body="A plain body.\n", tags=[])),
            provider.add(make_entry(title="Tagged entry", body="Tagged.\n", tags=["alpha", "beta"])),
            provider.add(make_entry(title="Sourced entry", body="From a source.\n", source="conformance-suite")),
            provider.add(make_entry(title="Confident entry", body="Sure of it.\n", confidence=0.8)),
            provider.add(make_entry(title="Fenced entry", body="Before.\n\n```python\nx = 1\n```\n\nAfter.\n")),
        ]
        if C.SUPERSEDE in provider.capabilities:
            old = provider.add(make_entry(title="Older entry", body="Old.\n"))
            stored.append(old)
            stored.append(provider.supersede(old.id, make_entry(title="Newer entry", body="New.\n")))
        return stored

    @requires(C.ADD, C.UPDATE)
    def test_update_with_itself_writes_no_byte(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_reopen: Any,
        memcore_raw_files: Any,
        memcore_file_identity: Any,
    ) -> None:
        """Every entry updated with itself as read: every file (indexes too) keeps bytes, inode and mtime."""
        self._seed_varied(memcore_provider, memcore_make_entry)
        memcore_provider.close()
        before, ident = memcore_raw_files(), memcore_file_identity()
        provider = memcore_reopen()
        entries = list(provider.iter_entries())
        assert entries, "the seeded store reads no entries"
        refused = 0
        for entry in entries:
            try:
                returned = provider.update(entry, expected_version=entry.version)
            except (UnsupportedOperationError, ImmutableEntryError):
                refused += 1  # the format cannot update this entry at all: nothing may be written
                continue
            assert returned.version == entry.version, f"a no-change update of {entry.id} gave a new version"
            assert returned.content_dict() == entry.content_dict(), f"a no-change update of {entry.id} changed it"
        provider.close()
        assert refused < len(entries), "no entry of the seeded store could be updated"
        diff = changed_files(before, memcore_raw_files(), ident, memcore_file_identity())
        assert diff == _NOTHING, f"updating every entry with itself wrote files: {diff}"
