"""The shared conformance suite on a local-folder Box-memory workspace."""

from __future__ import annotations

from memcore_box.conformance import BoxConformance


class TestBoxConformance(BoxConformance):
    pass
