"""The shared conformance suite, run against the Maka provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore_conformance import ProviderConformance
from memcore_maka.provider import MakaProvider


class TestMakaConformance(ProviderConformance):
    provider_cls = MakaProvider
    # Maka drops sections whose content is empty, and a file is at most 128 KiB: these are
    # refused with InvalidEntryError / StoreLimitError (a subclass), never silently dropped.
    rejected_corpus: ClassVar[frozenset[str]] = frozenset({"empty-body", "whitespace-body", "large-body"})
    # Every save copies the previous file to MEMORY.md.bak (as Maka does): a derived file.
    index_files: ClassVar[tuple[str, ...]] = ("MEMORY.md.bak", "PENDING.md.bak")

    @pytest.fixture
    def memcore_location(self, tmp_path: Path, memcore_provider_options: dict[str, Any]) -> str:
        location = str(tmp_path / "store" / "MEMORY.md")
        MakaProvider.init_store(location, **memcore_provider_options)
        return location
