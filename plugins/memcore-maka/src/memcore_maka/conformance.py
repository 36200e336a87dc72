"""The Maka knobs for the memcore conformance suite (imported only by the suite).

Declared in the ``memcore_conformance`` entry-point group, so
``pytest --pyargs memcore_conformance.suite --memcore-provider=maka`` runs the suite with these
settings; the plugin's own tests subclass :class:`MakaConformance`.

- The store is one file: the location is ``tmp_path/store/MEMORY.md``.
- ``large-body`` (1 MiB) cannot be stored: a Maka file is at most 128 KiB; ``add`` refuses it
  with ``StoreLimitError`` (an ``InvalidEntryError``) and writes nothing. Empty and blank bodies
  are stored (Maka drops empty sections, so the title is written as visible content and the exact
  body kept in ``mcData``).
- ``MEMORY.md.bak`` / ``PENDING.md.bak`` are the previous versions every save keeps (as Maka
  does): derived files any write may rewrite.
- Ids are derived: a section without an id comment takes its title's slug, so
  :meth:`MakaConformance.write_colliding_entries` writes sections whose ids collide (the same
  title twice, emoji and punctuation titles that slug to ``memory-entry``, a repeated CJK title).
- Every field round-trips (fields Maka has no slot for travel in ``mcData``), so
  ``roundtrip_fields`` keeps the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore_conformance import ProviderConformance
from memcore_maka.provider import MakaProvider

__all__ = ["MakaConformance"]


class MakaConformance(ProviderConformance):
    """Conformance knobs and fixture overrides for :class:`MakaProvider`."""

    provider_cls: ClassVar[type[Any] | None] = MakaProvider
    rejected_corpus: ClassVar[frozenset[str]] = frozenset({"large-body"})
    index_files: ClassVar[tuple[str, ...]] = ("MEMORY.md.bak", "PENDING.md.bak")
    entry_file_names: ClassVar[bool] = False  # one file: no entry has a file name of its own

    @pytest.fixture
    def memcore_location(self, tmp_path: Path, memcore_provider_options: dict[str, Any]) -> str:
        """``tmp_path/store/MEMORY.md``, created by ``init_store`` (``# Maka Memory``)."""
        location = str(tmp_path / "store" / "MEMORY.md")
        MakaProvider.init_store(location, **memcore_provider_options)
        return location

    def write_colliding_entries(self, location: str) -> list[str] | None:
        """Write sections without id comments whose title slugs collide; return their bodies."""
        titles = ["Same title", "Same title", "\U0001f389", "!!!", "\u65e5\u672c\u8a9e", "\u65e5\u672c\u8a9e", "Unique"]
        bodies = [f"Body {n} of a section whose id is derived." for n in range(1, len(titles) + 1)]
        sections = "".join(f"## {title}\n{body}\n\n" for title, body in zip(titles, bodies, strict=True))
        Path(location).write_text(f"# Maka Memory\n\n{sections}", encoding="utf-8")
        return bodies
