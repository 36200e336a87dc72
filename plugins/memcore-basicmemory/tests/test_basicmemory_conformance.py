"""The shared conformance suite, run against the basic-memory provider (knobs in memcore_basicmemory.conformance)."""

from __future__ import annotations

from memcore_basicmemory.conformance import BasicMemoryConformance


class TestBasicMemoryConformance(BasicMemoryConformance):
    pass
