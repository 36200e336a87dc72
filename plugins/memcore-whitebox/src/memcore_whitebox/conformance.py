"""The WhiteBox knobs for the memcore conformance suite (imported only by the suite).

Declared in the ``memcore_conformance`` entry-point group, so
``pytest --pyargs memcore_conformance.suite --memcore-provider=whitebox`` runs the suite with
these settings; the plugin's own tests subclass :class:`WhiteBoxConformance`.

- Entries the suite makes are **stable facts**: the kind WhiteBox can add *and* update.
- The store is opened with ``as_user=True``: an agent's update of a stable fact is a proposal
  by the spec's rule, and the suite's update tests are about in-place edits.
- Observations are the append-only entries (the suite's default observation factory).
- Entries come in vault path order, not insertion order.
- Gated links: ``projects/`` links into ``sensitive/`` and out of the vault.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore.models import Kind, MemoryEntry, lf_body
from memcore_conformance import ProviderConformance
from memcore_whitebox.provider import WhiteBoxProvider

__all__ = ["WhiteBoxConformance"]


class WhiteBoxConformance(ProviderConformance):
    """Conformance knobs and fixture overrides for :class:`WhiteBoxProvider`."""

    provider_cls: ClassVar[type[Any] | None] = WhiteBoxProvider
    provider_options: ClassVar[dict[str, Any]] = {"as_user": True}
    insertion_ordered: ClassVar[bool] = False
    # stable files have no timestamps in WhiteBox 1.0: add invents none (observations carry their date)
    stamps_times: ClassVar[bool] = False

    def plant_gated_links(self, root: Path, marker: str) -> list[str] | None:
        """Link ``projects/gated.md`` into ``sensitive/`` and ``projects/away.md`` out of the vault."""
        for folder in ("projects", "sensitive"):
            (root / folder).mkdir(exist_ok=True)
        (root / "sensitive" / "gated.md").write_text(f"# Gated\n\n{marker}\n", encoding="utf-8")
        outside = root.parent / f"{root.name}-outside.md"
        outside.write_text(f"# Away\n\n{marker}\n", encoding="utf-8")
        os.symlink("../sensitive/gated.md", root / "projects" / "gated.md")
        os.symlink(str(outside), root / "projects" / "away.md")
        return ["projects/gated.md", "projects/away.md"]

    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """Return ``entry`` with its body's CRs as LF (the files keep their own line breaks)."""
        return lf_body(entry)

    @pytest.fixture
    def memcore_make_entry(self) -> Callable[..., MemoryEntry]:
        """Stable facts (``kind=fact``), numbered titles, tag ``conformance``."""
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
