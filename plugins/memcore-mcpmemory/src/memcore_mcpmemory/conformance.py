"""The memory.jsonl knobs for the memcore conformance suite (imported only by the suite).

Declared in the ``memcore_conformance`` entry-point group, so
``pytest --pyargs memcore_conformance.suite --memcore-provider=mcpmemory`` runs the suite with
these settings; the plugin's own tests subclass :class:`McpMemoryConformance`.

- The store is one file, ``tmp_path/store/memory.jsonl``, created empty (0 bytes, as the
  reference server writes an empty graph).
- The format has no timestamps (spec §6) and ``add`` stamps none: a stamp would put memcore's
  own key on every record an agent adds, and the reference server would drop it on its next
  save anyway. So ``created_at`` and ``updated_at`` are out of ``roundtrip_fields`` (the suite
  requires an add to set them); given ones are kept in the record's ``memcore`` key and read
  back exactly (tests/test_mcpmemory_write.py). Every other field round-trips, natively or in
  that key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore_conformance import ProviderConformance
from memcore_mcpmemory.provider import McpMemoryProvider

__all__ = ["McpMemoryConformance"]


class McpMemoryConformance(ProviderConformance):
    """Conformance knobs and fixture overrides for :class:`McpMemoryProvider`."""

    provider_cls: ClassVar[type[Any] | None] = McpMemoryProvider
    roundtrip_fields: ClassVar[frozenset[str]] = ProviderConformance.roundtrip_fields - {"created_at", "updated_at"}
    entry_file_names: ClassVar[bool] = False  # one file: no entry has a file name of its own

    @pytest.fixture
    def memcore_location(self, tmp_path: Path, memcore_provider_options: dict[str, Any]) -> str:
        """``tmp_path/store/memory.jsonl``, created empty by ``init_store``."""
        location = str(tmp_path / "store" / "memory.jsonl")
        McpMemoryProvider.init_store(location, **memcore_provider_options)
        return location
