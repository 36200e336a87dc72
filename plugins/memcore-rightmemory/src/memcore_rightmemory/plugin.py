"""pluggy hook implementations registering the RightMemory provider with memcore."""

from __future__ import annotations

from typing import Any

from memcore import hookimpl

__all__ = ["memcore_register_format_operations", "memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the RightMemory provider class (format name ``rightmemory``)."""
    from memcore_rightmemory.provider import RightMemoryProvider

    return [RightMemoryProvider]


@hookimpl
def memcore_register_format_operations() -> list[Any]:
    """Return rightmemory's format operations (memcore_rightmemory.operations)."""
    from memcore_rightmemory.operations import OPERATIONS

    return list(OPERATIONS)
