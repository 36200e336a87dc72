"""The basic-memory knobs for the memcore conformance suite (entry point in ``memcore_conformance``).

Entries come back by ``created`` then path; reading adds what the body's grammar derives
(observations, ``links_to`` relations), which :meth:`BasicMemoryConformance.normalize_expected` computes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from memcore.models import MemoryEntry, Relation, lf_body
from memcore_basicmemory._parse import parse_body
from memcore_basicmemory.mapping import NAMESPACE
from memcore_basicmemory.provider import BasicMemoryProvider
from memcore_conformance import ProviderConformance

__all__ = ["BasicMemoryConformance"]


class BasicMemoryConformance(ProviderConformance):
    """Conformance knobs for :class:`BasicMemoryProvider`."""

    provider_cls: ClassVar[type[Any] | None] = BasicMemoryProvider
    insertion_ordered: ClassVar[bool] = False

    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """Return ``entry`` with LF line breaks and what the body's grammar adds on read."""
        entry = lf_body(entry)
        observations, relations = parse_body(entry.body)
        own = dict(entry.extra.get(NAMESPACE, {}))
        if observations:
            own["observations"] = [o.as_dict() for o in observations]
        if any(r.context for r in relations):
            own["relations"] = [r.as_dict() for r in relations]
        extra = dict(entry.extra)
        if own:
            extra[NAMESPACE] = own
        have = {(r.type, r.target) for r in entry.relations}
        found = dict.fromkeys(Relation(type=r.type, target=r.target, resolved=False) for r in relations)
        derived = [r for r in found if (r.type, r.target) not in have]
        return entry.model_copy(update={"extra": extra, "relations": [*entry.relations, *derived]})
