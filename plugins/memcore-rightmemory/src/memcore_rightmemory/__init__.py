"""memcore provider for RightMemory: one graph of headings and nodes in MEMORY.md and PURSUITS.md.

Spec: ../shared/specs/rightmemory-schema.md. See docs/formats/rightmemory.md.
"""

from __future__ import annotations

from memcore_rightmemory.provider import GraphInvariantError, RightMemoryProvider

__all__ = ["GraphInvariantError", "RightMemoryProvider"]
