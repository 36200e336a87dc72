"""The shared conformance suite, run on the WhiteBox provider (knobs: memcore_whitebox.conformance)."""

from __future__ import annotations

from memcore_whitebox.conformance import WhiteBoxConformance


class TestWhiteBoxConformance(WhiteBoxConformance):
    pass
