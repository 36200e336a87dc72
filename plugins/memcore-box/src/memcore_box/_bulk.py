"""Box-memory's bulk add (:class:`memcore.provider.BulkAdding`): many entries in one call, as one ``add`` each.

:meth:`BulkAdd.add_many` runs :meth:`~memcore_box.provider.BoxMemoryProvider.add`'s own steps
(:meth:`~memcore_box.provider.BoxMemoryProvider._add_new`) for each entry, in one write session,
with the work one ``add`` does twice or for nothing left out:

- the frontmatter is mapped to an entry once (:func:`checked_read`): the check that refuses a
  file ``validate`` would call an error and the entry returned come from one
  :func:`~memcore_box.codec.entry_from_meta` call when the frontmatter has no ``related``,
  ``supersedes`` or ``superseded_by`` key (the only ones whose reading depends on the indexes,
  which the add changes); with one of them the returned entry is mapped again after indexing,
  as ``add`` does;
- the new file's name is taken as free without reading it
  (:meth:`~memcore.storage.WriteSession.version_unread`): its write is conditional on no file
  being there, so a file that holds the name after all is refused by the write and the next
  suffix is tried, as when ``add``'s read finds it;
- the entry's working copy gets ``id``, ``created_at`` and ``updated_at`` assigned only when
  they change (each assignment validates the value again).

An entry with no relation and no ``extra["box"]`` key but ``slug`` (most migrated entries)
needs neither mapping, in ``add`` too: its frontmatter is built directly and the entry returned
from the values written, each check ``validate`` would make done on them
(:func:`memcore_box.codec.written_entry`, ``MEMCORE_BOX_WRITE_FAST=0`` turns it off).

The bytes, ids, returned entries and errors are those of one ``add`` each
(``plugins/memcore-box/tests/test_box_bulk_add.py``). ``MEMCORE_BOX_BULK=0`` turns this off:
one ``add`` each, in one session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memcore.models import MemoryEntry
from memcore.provider import add_in_turn, checked_for_write
from memcore.switches import switch_on
from memcore_box.codec import _working_copy
from memcore_box.validate import file_errors, refuse_errors

if TYPE_CHECKING:
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["RESOLVED_KEYS", "BulkAdd", "bulk_enabled", "checked_read", "with_version"]

#: Frontmatter keys whose reading asks the workspace (a wikilink's title, a superseded id).
RESOLVED_KEYS = frozenset({"related", "supersedes", "superseded_by"})


def bulk_enabled() -> bool:
    """Whether :meth:`BulkAdd.add_many` shares work between entries (default: yes; ``MEMCORE_BOX_BULK=0``: no)."""
    return switch_on("MEMCORE_BOX_BULK")


def checked_read(store: BoxMemoryProvider, path: str, meta: Mapping[str, Any], body: str) -> MemoryEntry | None:
    """Refuse ``meta`` + ``body`` as :func:`~memcore_box.validate.refuse_errors` does; return the entry it reads as.

    Returns:
        The entry the file reads as (``version`` unset), what ``add`` returns for it once
        indexed, when ``meta`` has no key in :data:`RESOLVED_KEYS`; else ``None`` (the caller
        maps it after indexing).

    Raises:
        InvalidEntryError: As ``refuse_errors``: the file would hold an error. Nothing is written.
    """
    entry, errors = file_errors(store, path, meta, body, None)
    if errors:
        refuse_errors(store, path, meta, body)  # raises, with add's message
    return None if RESOLVED_KEYS.intersection(meta) else entry


def with_version(entry: MemoryEntry, version: str | None) -> MemoryEntry:
    """Return ``entry`` with ``version`` set, as if it had been mapped with it (``version`` is among its set fields)."""
    entry.__dict__["version"] = version
    return entry


class BulkAdd:
    """``add_many`` for :class:`~memcore_box.provider.BoxMemoryProvider`."""

    def add_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
        """Add ``entries`` as consecutive :meth:`add` calls would, in one write session.

        The contract of :meth:`memcore.contract.BulkAdding.add_many`: the same stops (after a
        refusal, after an entry stored under another id than its own) and the same items returned.

        Raises:
            ReadOnlyStoreError: The store was opened read-only.
        """
        provider: BoxMemoryProvider = self  # type: ignore[assignment]
        out: list[MemoryEntry | Exception] = []
        fast = bulk_enabled()
        with provider.session("add") as session:

            def add(entry: MemoryEntry) -> MemoryEntry:  # add's own steps: its wrapper's checks, then add's
                sent = checked_for_write(provider, entry)
                return provider._add_new(_working_copy(sent), session, bulk=True)

            for entry in entries:
                if not add_in_turn(add if fast else provider.add, entry, out):
                    break
        return out
