from __future__ import annotations

from memcore.models import MemoryEntry
from memcore_conformance import ProviderConformance
from memcore_rightmemory.provider import RightMemoryProvider


class TestRightMemoryConformance(ProviderConformance):
    provider_cls = RightMemoryProvider
    # Items are yielded in document order (nodes before child headings), not add order.
    insertion_ordered = False
    # Body lines that are themselves graph syntax (`# H1 line`, `## … {#fake-id}`) would
    # become headings: add refuses them with InvalidEntryError instead of mangling them.
    rejected_corpus = frozenset({"heading-lines"})

    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        # A title is one heading/node line: surrounding whitespace is not kept.
        entry.title = entry.title.strip()
        return entry
