"""The shared conformance suite, run against the memory.jsonl provider (knobs in memcore_mcpmemory.conformance)."""

from __future__ import annotations

from memcore_mcpmemory.conformance import McpMemoryConformance


class TestMcpMemoryConformance(McpMemoryConformance):
    pass
