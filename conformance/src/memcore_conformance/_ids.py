"""Ids a provider derives from content: two entries read under one id are never confused.

A provider that derives ids from what an entry says (Maka: a section without an id comment takes
its title's slug) can read two entries under one id: the same title twice, titles that slug to
nothing (emoji or punctuation only), a repeated non-Latin title. The suite holds such a provider
to two rules:

- ``get``, ``update`` and ``delete`` of an id that names two or more entries raise
  :class:`~memcore.errors.AmbiguousIdError` naming every place (``exc.places``, ``file:line``)
  and change no byte; an id that names one entry works as usual;
- a migration out of the store carries every entry as itself: an entry is written to the target
  with its own body, or reported ``failed`` (the run is then not ``ok``: exit 1); no body is
  written twice and none is dropped silently.

The same rules hold for a format whose ids are explicit but can be repeated by hand
(RightMemory: the same ``{#x}`` anchor on two headings, or in two files).

The knob is :meth:`IdCollisionTests.write_colliding_entries`; a provider that can never read two
entries under one id leaves it returning ``None`` and the tests skip.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import AmbiguousIdError
from memcore.models import MemoryEntry
from memcore.provider import Capability

__all__ = ["IdCollisionTests"]


class IdCollisionTests:
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: entries whose derived ids collide."""

    def write_colliding_entries(self, location: str) -> list[str] | None:
        """Write, as raw files, entries whose derived ids collide; return their bodies.

        Called on a fresh, empty store. Override in a provider that derives ids from content:
        write entries the format would read under one id (same title twice, titles that derive
        to nothing, repeated non-Latin titles…), each with a distinct one-line body, and return
        those bodies in file order. A provider whose explicit ids can be repeated by hand
        overrides it too, writing the repeated ids. Default: ``None`` (no two entries can share
        an id: the tests skip).

        Args:
            location: The store's location (``memcore_location``).
        """
        return None

    def _colliding(self, location: str) -> list[str]:
        bodies = self.write_colliding_entries(location)
        if bodies is None:
            pytest.skip("the provider does not derive ids from content (write_colliding_entries is not set)")
        assert len(set(bodies)) == len(bodies) >= 2, "write_colliding_entries must return distinct bodies"
        return bodies

    @staticmethod
    def _owner(entries: list[MemoryEntry], body: str) -> list[MemoryEntry]:
        return [e for e in entries if e.body.strip() == body]

    def test_ambiguous_id_is_refused_naming_every_place(
        self, memcore_location: str, memcore_reopen: Any, memcore_raw_files: Any
    ) -> None:
        """get/update/delete of an id two entries share raise AmbiguousIdError naming both places; no byte changes."""
        bodies = self._colliding(memcore_location)
        provider = memcore_reopen()
        entries = list(provider.iter_entries())
        for body in bodies:
            assert len(self._owner(entries, body)) == 1, f"entry {body!r} was not read exactly once: {entries}"
        counts = Counter(e.id for e in entries)
        before = memcore_raw_files()
        caps = provider.capabilities
        for entry in entries:
            assert entry.id is not None
            if counts[entry.id] == 1:
                assert provider.get(entry.id).body.strip() == entry.body.strip()
                continue
            with pytest.raises(AmbiguousIdError) as caught:
                provider.get(entry.id)
            assert caught.value.entry_id == entry.id
            assert len(caught.value.places) == counts[entry.id], caught.value.places
            for place in caught.value.places:
                assert place in str(caught.value), f"the message does not name {place}: {caught.value}"
            if Capability.UPDATE in caps:
                changed = entry.model_copy(update={"body": "rewritten by the conformance suite\n"})
                with pytest.raises(AmbiguousIdError):
                    provider.update(changed)
            if Capability.DELETE in caps:
                with pytest.raises(AmbiguousIdError):
                    provider.delete(entry.id)
        assert memcore_raw_files() == before, "a refused write on an ambiguous id changed the store's files"

    def test_colliding_ids_migrate_each_entry_or_fail(
        self, memcore_location: str, memcore_reopen: Any, tmp_path: Path
    ) -> None:
        """A migration writes each entry with its own body once, or reports it failed (run not ok)."""
        from memcore.migrate import convert
        from memcore_conformance.reference import ReferenceProvider

        bodies = self._colliding(memcore_location)
        source = memcore_reopen()
        target_location = str(tmp_path / "migrated")
        ReferenceProvider.init_store(target_location)
        with ReferenceProvider(target_location) as target:
            report = convert(source, target)
            stored = {e.id: e for e in target.iter_entries()}
        assert len(report.entries) == len(bodies), report.entries
        written = [r for r in report.entries if r.action == "written"]
        failed = [r for r in report.entries if r.action == "failed"]
        assert len(written) + len(failed) == len(bodies), report.entries
        target_bodies = Counter(e.body.strip() for e in stored.values())
        assert all(n == 1 for n in target_bodies.values()), f"a body was written twice: {target_bodies}"
        assert set(target_bodies) <= set(bodies)
        assert len(stored) == len(written), "the target holds other entries than those reported written"
        for rep in written:
            assert rep.target_id in stored
        ids = Counter(r.source_id for r in report.entries)
        for rep in failed:
            assert ids[rep.source_id] > 1, f"{rep.source_id!r} failed for another reason: {rep.error}"
        if failed:
            assert not report.ok, "entries failed but the run reports ok (exit 0)"
        for rep in written:
            assert ids[rep.source_id] == 1, f"{rep.source_id!r} names two entries but one was written"
