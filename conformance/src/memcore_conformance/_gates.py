"""``GateTests``: gates apply to where a path leads (issue 17, item 3).

For providers with :attr:`~memcore.provider.Capability.SCOPES` (or other gates): a symlink
placed where the store would read an entry, resolving into a gated place (``sensitive/``,
another scope's folder) or outside the store, is never served by ``get``,
``iter_entries`` (with or without ``Query(ids=...)``) or ``search``, and ``validate`` reports it
with an error naming the link. Skipped by capability, and where the provider's conformance
class does not say how to plant such a link (:meth:`GateTests.plant_gated_links`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memcore.errors import EntryNotFoundError
from memcore.models import Query, Severity
from memcore.provider import Capability

__all__ = ["GateTests"]

#: Text the planted targets hold; none of it may ever be served.
GATED_MARKER = "GATED-MARKER-5e21: must never leave the store"


class GateTests:
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: links past a gate are shut."""

    def plant_gated_links(self, root: Path, marker: str) -> list[str] | None:
        """Plant links past the store's gates and return the ids they would be read under.

        Override in a provider with gates: write ``marker`` into files the gates hide (and one
        outside ``root``), and symlinks to them where entries are read from. Default ``None``:
        the test is skipped (a provider with gates should override it).

        Args:
            root: The store folder (already initialised, provider not yet opened).
            marker: Text to put in every gated target.
        """
        return None

    @pytest.mark.memcore_requires(Capability.SCOPES)
    def test_a_link_past_a_gate_is_never_served_and_validate_reports_it(
        self, memcore_store_root: Path, memcore_reopen: Any
    ) -> None:
        """A symlink into a gated place or out of the store: not served; a validate error."""
        ids = self.plant_gated_links(memcore_store_root, GATED_MARKER)
        if not ids:
            pytest.skip("the provider's conformance class does not plant gated links (plant_gated_links)")
        store = memcore_reopen()
        served = [e.body for e in store.iter_entries()]
        served += [e.body for e in store.iter_entries(Query(ids=ids))]
        served += [e.body for e in store.search(GATED_MARKER.split(":")[0])]
        for entry_id in ids:
            with pytest.raises(EntryNotFoundError):
                store.get(entry_id)
        assert not [b for b in served if GATED_MARKER in b], "a link past a gate served its target"
        errors = {str(d.path) for d in store.validate() if d.severity is Severity.ERROR}
        unreported = [i for i in ids if not any(i.split("#", 1)[0] in p for p in errors)]
        assert not unreported, f"validate reports no error for the gated links {unreported}"
