"""``ConformanceBase``: the knobs and plumbing every behaviour mixin of the suite builds on.

The tests themselves live in one mixin module per behaviour (fsspec style), combined by
:class:`~memcore_conformance.ProviderConformance` (:mod:`memcore_conformance._conformance`). This
module holds only what they share: the knobs (class attributes, documented on
``ProviderConformance``), the :meth:`ConformanceBase.normalize_expected` hook, the autouse
fixture that skips a test whose ``memcore_requires`` capabilities the provider lacks, and the
round-trip comparison helpers.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from memcore.models import MemoryEntry, Query
from memcore.provider import Capability
from memcore_conformance._checks import CONTENT_FIELDS, assert_entry_matches, missing_capabilities

__all__ = ["C", "ConformanceBase", "missing_id", "requires", "slow"]

requires = pytest.mark.memcore_requires
slow = pytest.mark.slow

C = Capability


def missing_id(existing: str) -> str:
    """An id shaped like ``existing`` that is not in the store (last character changed)."""
    last = existing[-1]
    return existing[:-1] + ("0" if last != "0" else "1")


class ConformanceBase:
    """What every behaviour mixin shares: knobs, the ``normalize_expected`` hook, helpers.

    The knobs are documented on :class:`~memcore_conformance.ProviderConformance`.
    """

    provider_cls: ClassVar[type[Any] | None] = None
    provider_options: ClassVar[dict[str, Any]] = {}
    roundtrip_fields: ClassVar[frozenset[str]] = frozenset(CONTENT_FIELDS)
    stamps_times: ClassVar[bool] = True
    rejected_corpus: ClassVar[frozenset[str]] = frozenset()
    insertion_ordered: ClassVar[bool] = True
    index_files: ClassVar[tuple[str, ...]] = ()
    provider_import_path: ClassVar[str | None] = None
    concurrent_processes: ClassVar[int] = 16
    concurrent_adds: ClassVar[int] = 25
    crash_writes: ClassVar[int] = 100
    crash_kills: ClassVar[int] = 4
    field_values: ClassVar[dict[str, Any]] = {}

    # -- hooks a provider may override ------------------------------------------------
    def normalize_expected(self, entry: MemoryEntry) -> MemoryEntry:
        """Return ``entry`` as this format stores it; default: unchanged.

        Called on every entry the suite expects to read back (with ``id`` and timestamps the
        provider returned already filled in). Override to apply the format's documented,
        deterministic normalisations, e.g. confidence snapped to a label's number, times
        truncated to seconds, a title's surrounding whitespace stripped. Never use it to drop
        data the format can hold; list fields it cannot hold out of ``roundtrip_fields``.

        Args:
            entry: A copy the method may modify and return.
        """
        return entry

    # -- plumbing ---------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _memcore_capability_gate(self, request: pytest.FixtureRequest, memcore_provider_cls: type[Any]) -> None:
        """Skip a test whose ``memcore_requires`` capabilities the provider lacks."""
        missing = missing_capabilities(memcore_provider_cls, request.node.iter_markers("memcore_requires"))
        if missing:
            pytest.skip(f"{memcore_provider_cls.format_name}: provider lacks capability {', '.join(missing)}")

    def _fields(self, *drop: str) -> set[str]:
        return set(self.roundtrip_fields) - set(drop)

    def _expected(self, given: MemoryEntry, stored: MemoryEntry) -> MemoryEntry:
        """What reading ``stored.id`` back should give, from what was ``given`` to a write."""
        expected = given.model_copy(deep=True)
        expected.id = stored.id
        expected.version = None
        for name in ("created_at", "updated_at"):
            if getattr(expected, name) is None:
                setattr(expected, name, getattr(stored, name))
        return self.normalize_expected(expected)

    def _check_roundtrip(
        self, given: MemoryEntry, stored: MemoryEntry, reopened: MemoryEntry, context: str, *drop: str
    ) -> None:
        fields = self._fields(*drop)
        expected = self._expected(given, stored)
        assert_entry_matches(stored, expected, fields, f"{context}: what add/update returned")
        assert_entry_matches(reopened, expected, fields, f"{context}: read back after reopen")
        assert_entry_matches(reopened, stored, self._fields(), f"{context}: reopened differs from returned")

    def _import_path(self, provider_cls: type[Any]) -> str:
        return self.provider_import_path or f"{provider_cls.__module__}:{provider_cls.__qualname__}"

    @staticmethod
    def _ids(provider: Any, query: Query | None = None) -> list[str]:
        return [str(e.id) for e in provider.iter_entries(query)]
