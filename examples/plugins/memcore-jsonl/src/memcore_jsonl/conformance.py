"""The JSON Lines knobs for the memcore conformance suite (entry point in ``memcore_conformance``).

The store is one file, ``tmp_path/store/memory.jsonl``; every other knob keeps the suite's default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore_conformance import ProviderConformance
from memcore_jsonl.provider import JsonlProvider

__all__ = ["JsonlConformance"]


class JsonlConformance(ProviderConformance):
    """Conformance knobs and fixture overrides for :class:`JsonlProvider`."""

    provider_cls: ClassVar[type[Any] | None] = JsonlProvider

    @pytest.fixture
    def memcore_location(self, tmp_path: Path, memcore_provider_options: dict[str, Any]) -> str:
        """``tmp_path/store/memory.jsonl``, created empty by ``init_store``."""
        location = str(tmp_path / "store" / "memory.jsonl")
        JsonlProvider.init_store(location, **memcore_provider_options)
        return location
