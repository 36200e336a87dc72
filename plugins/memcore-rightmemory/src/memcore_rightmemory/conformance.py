"""The conformance-suite knobs for RightMemory (entry point group ``memcore_conformance``).

Used by ``pytest --pyargs memcore_conformance.suite --memcore-provider=rightmemory`` and by this
distribution's own tests. Needs ``memcore-conformance`` installed (extra ``test``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memcore.models import MemoryEntry, lf_body
from memcore_conformance import ProviderConformance
from memcore_rightmemory.provider import RightMemoryProvider

__all__ = ["RightMemoryConformance"]


class RightMemoryConformance(ProviderConformance):
    """Knobs: document order, titles stripped, a real edge in the every-field test.

    - ``stamps_times = False``: items have no timestamps; add invents none (a plain add
      writes no memcore comment).
    - ``insertion_ordered = False``: entries come in document order (a node is placed before
      its parent's child headings), which is stable but not always add order.
    - every corpus case round-trips: body lines that would be headings or nodes are escaped in
      the file (``\\# H1 line``) and unescaped on read.
    - :meth:`normalize_expected`: a title is one heading or node line, so its surrounding
      whitespace is not kept.
    - ``field_values``: the every-field test uses a ``dep`` edge (a real graph edge written into
      the heading line) instead of a ``related`` relation (which would only live in the memcore
      comment).
    - :meth:`write_colliding_entries`: ids are explicit, but a hand-edited graph can repeat
      one (``{#x}`` twice in MEMORY.md, and across MEMORY.md, PURSUITS.md and a detail file).
    """

    provider_cls = RightMemoryProvider
    # Items live in MEMORY.md/PURSUITS.md; detail files are MEMORY_<id>.md with ASCII ids (ID_RE),
    # so no file name has an NFD spelling.
    entry_file_names: ClassVar[bool] = False
    insertion_ordered = False
    stamps_times = False
    field_values: ClassVar[dict[str, Any]] = {"relation_type": "dep"}

    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """Return ``entry`` with its title stripped and its body's CRs as LF (how RightMemory stores them)."""
        entry.title = entry.title.strip()
        return lf_body(entry)

    def write_colliding_entries(self, location: str) -> list[str] | None:
        """Write a graph whose anchors repeat ids, in one file and across files; return the bodies.

        ``twice`` is used by two headings of MEMORY.md; ``everywhere`` by a MEMORY.md heading, a
        PURSUITS.md heading and a heading of the F# detail file ``MEMORY_runbook.md``;
        ``runbook`` and ``alone`` are used once.
        """
        bodies = [f"Body {n} of a hand-edited heading." for n in range(1, 7)]
        root = Path(location)
        (root / "MEMORY.md").write_text(
            "# Memory\n\n"
            f"## First {{#twice}}\n\n{bodies[0]}\n\n"
            f"## Second {{#twice}}\n\n{bodies[1]}\n\n"
            f"## Runbook {{F#runbook}}\n\n{bodies[2]}\n\n"
            f"## In memory {{#everywhere}}\n\n{bodies[4]}\n",
            encoding="utf-8",
        )
        (root / "MEMORY_runbook.md").write_text(f"### In detail {{#everywhere}}\n\n{bodies[3]}\n", encoding="utf-8")
        (root / "PURSUITS.md").write_text(
            f"# Pursuits\n\n## In pursuits {{#everywhere}}\n\n{bodies[5]}\n\n## Alone {{#alone}}\n\nAlone.\n",
            encoding="utf-8",
        )
        return [*bodies, "Alone."]
