"""The shared conformance suite, run on the WhiteBox provider.

Entries the suite makes are stable facts (the kind WhiteBox can add *and* update); the store is
opened with ``as_user=True`` because an agent's update of a stable fact is a proposal by the
spec's rule, and the suite's update tests are about in-place edits. Observations are the
append-only entries.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry
from memcore_conformance import ProviderConformance
from memcore_whitebox.provider import WhiteBoxProvider


class TestWhiteBoxConformance(ProviderConformance):
    provider_cls = WhiteBoxProvider
    provider_options = {"as_user": True}
    insertion_ordered = False  # entries come in vault path order

    @pytest.fixture
    def memcore_location(self, tmp_path: Path) -> str:
        # The spec's minimal vault has identity.md and working-style.md, which are entries; the
        # suite needs a store with none, so the template stable files are left out.
        location = str(tmp_path / "store")
        WhiteBoxProvider.init_store(location, stable_files=False)
        return location

    @pytest.fixture
    def memcore_make_entry(self) -> Any:
        counter = itertools.count(1)

        def make(**overrides: Any) -> MemoryEntry:
            n = next(counter)
            data: dict[str, Any] = {
                "kind": Kind.FACT,
                "title": f"Conformance entry {n}",
                "body": f"Body of conformance entry {n}.\n",
                "tags": ["conformance"],
            }
            data.update(overrides)
            return MemoryEntry(**data)

        return make
