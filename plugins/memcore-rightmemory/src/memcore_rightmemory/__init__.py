"""memcore provider for RightMemory: one graph of headings and nodes in MEMORY.md and PURSUITS.md.

Spec: ../shared/specs/rightmemory-schema.md. See docs/formats/rightmemory.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore_rightmemory.provider import GraphInvariantError, RightMemoryProvider

__all__ = ["GraphInvariantError", "RightMemoryProvider"]

# Each name is imported on first use: loading the plugin entry point (``.plugin``) imports this
# package, which must not import the provider (see memcore._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "GraphInvariantError": "memcore_rightmemory.provider",
        "RightMemoryProvider": "memcore_rightmemory.provider",
    },
)
