"""The Claude Code knobs for the memcore conformance suite (imported only by the suite).

Declared in the ``memcore_conformance`` entry-point group, so ``pytest --pyargs memcore_conformance.suite
--memcore-provider=claudecode`` runs the suite with these settings; the plugin's own tests subclass
:class:`ClaudeCodeConformance`. The store is a folder, ``tmp_path/store``, each entry a topic file beside
``MEMORY.md``, the derived index Claude Code keeps in step with the topics: any write may rewrite it
(``index_files``). Ids are file paths, never derived from content: no two entries can share one. A body's
CR and CRLF line breaks become the file's own (``normalize_expected``: ``lf_body``). Every field
round-trips (what Claude Code has no slot for travels in the ``memcore:`` frontmatter key), so
``roundtrip_fields`` keeps the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore.models import MemoryEntry, lf_body
from memcore_claudecode.provider import ClaudeCodeProvider
from memcore_conformance import ProviderConformance

__all__ = ["ClaudeCodeConformance"]


class ClaudeCodeConformance(ProviderConformance):
    """Conformance knobs and fixture overrides for :class:`ClaudeCodeProvider`."""

    provider_cls: ClassVar[type[Any] | None] = ClaudeCodeProvider
    index_files: ClassVar[tuple[str, ...]] = ("MEMORY.md",)

    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """A body's CR and CRLF line breaks read back as LF (the file keeps one line ending)."""
        return lf_body(entry)

    @pytest.fixture
    def memcore_location(self, tmp_path: Path, memcore_provider_options: dict[str, Any]) -> str:
        """``tmp_path/store``, created empty by ``init_store``."""
        location = str(tmp_path / "store")
        ClaudeCodeProvider.init_store(location, **memcore_provider_options)
        return location
