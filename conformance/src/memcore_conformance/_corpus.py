"""``CorpusTests``: the adversarial corpus and generated entries round-trip, or are refused whole.

Each case of :data:`memcore_conformance.corpus.CORPUS_CASES` is stored and read back intact
through a reopened store, alone and beside every other case, unless the provider lists it in
``rejected_corpus``: then ``add`` raises :class:`~memcore.errors.InvalidEntryError` and writes
nothing. Hypothesis adds generated entries (>= 200 in the ``memcore-ci`` profile) the same way.
"""

from __future__ import annotations

from typing import Any

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import MemoryEntry
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import entry_overrides, errors_of
from memcore_conformance.corpus import CORPUS_CASES

__all__ = ["CorpusTests"]


class CorpusTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: corpus cases and generated entries."""

    # == adversarial corpus and generated entries =====================================
    @requires(C.ADD)
    @pytest.mark.parametrize("case", CORPUS_CASES)
    def test_corpus_roundtrip(
        self,
        case: str,
        memcore_provider: Any,
        memcore_corpus: dict[str, MemoryEntry],
        memcore_reopen: Any,
        memcore_raw_files: Any,
    ) -> None:
        """Each corpus case round-trips through a reopened store, or is refused whole if declared so."""
        if case not in memcore_corpus:
            pytest.fail(f"memcore_corpus lacks case {case!r}: list it in rejected_corpus instead of removing it")
        given = memcore_corpus[case]
        if case in self.rejected_corpus:
            before = memcore_raw_files()
            with pytest.raises(InvalidEntryError):
                memcore_provider.add(given)
            assert memcore_raw_files() == before, f"refused corpus case {case!r} changed files"
            assert self._ids(memcore_reopen()) == []
            return
        stored = memcore_provider.add(given)
        other = memcore_reopen()
        self._check_roundtrip(given, stored, other.get(stored.id), f"corpus case {case!r}")
        assert errors_of(other.validate()) == []

    @requires(C.ADD)
    def test_corpus_in_one_store(
        self, memcore_provider: Any, memcore_corpus: dict[str, MemoryEntry], memcore_reopen: Any
    ) -> None:
        """Every storable corpus case, added to one store, reads back intact beside the others."""
        stored: dict[str, tuple[MemoryEntry, MemoryEntry]] = {}
        for case, given in memcore_corpus.items():
            if case not in self.rejected_corpus:
                stored[case] = (given, memcore_provider.add(given))
        other = memcore_reopen()
        ids = self._ids(other)
        assert sorted(ids) == sorted(str(st.id) for _, st in stored.values())
        if self.insertion_ordered:
            assert ids == [st.id for _, st in stored.values()], "corpus entries came back in another order"
        for case, (given, st) in stored.items():
            self._check_roundtrip(given, st, other.get(st.id), f"corpus case {case!r} among the others")
        assert errors_of(other.validate()) == []

    @requires(C.ADD)
    def test_generated_entries_roundtrip(
        self,
        request: pytest.FixtureRequest,
        memcore_provider: Any,
        memcore_provider_cls: type[Any],
        memcore_make_entry: Any,
        memcore_reopen: Any,
    ) -> None:
        """Hypothesis: generated entries (>= 200 in the memcore-ci profile) round-trip through a reopen.

        Every example adds a new entry to this test's store (ids are unique), reopens the store
        and compares. Bodies and titles are never blank here (the corpus covers blank ones).
        """
        from hypothesis import given, settings

        from memcore_conformance._checks import register_hypothesis_profiles
        from memcore_conformance.plugin import option

        register_hypothesis_profiles()
        profile = option(request.config, "memcore_hypothesis_profile") or "memcore-ci"
        strategy = entry_overrides(memcore_provider_cls.format_name, self.roundtrip_fields)
        seen: list[str] = []

        @settings(settings.get_profile(profile))
        @given(overrides=strategy)
        def roundtrip(overrides: dict[str, Any]) -> None:
            entry = memcore_make_entry(**overrides)
            stored = memcore_provider.add(entry)
            other = memcore_reopen()
            try:
                got = other.get(stored.id)
            finally:
                other.close()
            self._check_roundtrip(entry, stored, got, f"generated entry {overrides!r}")
            seen.append(stored.id)

        roundtrip()
        assert len(set(seen)) == len(seen), "add returned the same id twice"
        wanted = settings.get_profile(profile).max_examples
        assert len(seen) >= wanted, f"only {len(seen)} of {wanted} generated entries were tried"
        assert errors_of(memcore_reopen().validate()) == []
