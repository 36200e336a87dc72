"""The Box-memory knobs for the memcore conformance suite (imported only by the suite).

Declared in the ``memcore_conformance`` entry-point group, so
``pytest --pyargs memcore_conformance.suite --memcore-provider=box`` runs the suite with these
settings; the plugin's own tests subclass :class:`BoxConformance`.

- Entries come back in the format's own order: ``created_at``, then the ULID id.
- Every write rewrites the folder's ``_index.json`` and the workspace rollup (the schema:
  "Update the folder's _index.json on every write"); a delete also records a tombstone in
  ``_box-memory.json``. These are derived files any write may rewrite.
"""

from __future__ import annotations

from typing import Any, ClassVar

from memcore.models import MemoryEntry, lf_body
from memcore_box.provider import BoxMemoryProvider
from memcore_conformance import ProviderConformance

__all__ = ["BoxConformance"]


class BoxConformance(ProviderConformance):
    """Conformance knobs for :class:`BoxMemoryProvider` on a local folder."""

    provider_cls: ClassVar[type[Any] | None] = BoxMemoryProvider
    insertion_ordered: ClassVar[bool] = False
    index_files: ClassVar[tuple[str, ...]] = ("_index.json", "**/_index.json", "_box-memory.json")

    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """Return ``entry`` with its body's CRs as LF (the files keep their own line breaks)."""
        return lf_body(entry)
