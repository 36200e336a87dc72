"""The shared conformance suite, run against the Claude Code provider (knobs in memcore_claudecode.conformance)."""

from __future__ import annotations

from memcore_claudecode.conformance import ClaudeCodeConformance


class TestClaudeCodeConformance(ClaudeCodeConformance):
    pass
