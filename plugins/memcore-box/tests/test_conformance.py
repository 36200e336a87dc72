"""The shared conformance suite on a local-folder Box-memory workspace."""

from __future__ import annotations

from memcore_box.provider import BoxMemoryProvider
from memcore_conformance import ProviderConformance


class TestBoxConformance(ProviderConformance):
    provider_cls = BoxMemoryProvider
    # The format's own order: created_at, then the ULID id (which sorts by creation time).
    insertion_ordered = False
    # Every write rewrites the folder index and the workspace rollup (schema: "Update the
    # folder's _index.json on every write"); a delete also records a tombstone in the config.
    index_files = ("_index.json", "**/_index.json", "_box-memory.json")
