"""The shared conformance suite, run against the JSON Lines provider (knobs in memcore_jsonl.conformance)."""

from __future__ import annotations

from memcore_jsonl.conformance import JsonlConformance


class TestJsonlConformance(JsonlConformance):
    pass
