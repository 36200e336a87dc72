"""RightMemory's bulk add (:class:`memcore.provider.BulkAdding`): many entries in one write session."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcore.errors import MemcoreError
from memcore.models import MemoryEntry

if TYPE_CHECKING:
    from memcore_rightmemory.provider import RightMemoryProvider


class BulkAdd:
    """``add_many`` for :class:`~memcore_rightmemory.provider.RightMemoryProvider`."""

    def add_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
        """Add ``entries`` in order, as consecutive :meth:`add` calls would, in one write session.

        Stops after the first entry refused (its error is the last item; nothing of it was
        written) and after the first entry stored under another id than the one it was given.

        Returns:
            The entry as stored (what ``add`` returns) or the error ``add`` raised, per entry
            handled, in order.

        Raises:
            ReadOnlyStoreError: The store was opened read-only.
        """
        provider: RightMemoryProvider = self  # type: ignore[assignment]
        out: list[MemoryEntry | Exception] = []
        with provider.session("add"):
            for entry in entries:
                try:
                    stored = provider.add(entry)
                except (MemcoreError, ValueError, OSError) as exc:
                    out.append(exc)
                    break
                out.append(stored)
                if entry.id is not None and stored.id != entry.id:
                    break
        return out
