from __future__ import annotations

from memcore_rightmemory.conformance import RightMemoryConformance


class TestRightMemoryConformance(RightMemoryConformance):
    pass
