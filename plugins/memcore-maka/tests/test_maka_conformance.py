"""The shared conformance suite, run against the Maka provider (knobs in memcore_maka.conformance)."""

from __future__ import annotations

from memcore_maka.conformance import MakaConformance


class TestMakaConformance(MakaConformance):
    pass
