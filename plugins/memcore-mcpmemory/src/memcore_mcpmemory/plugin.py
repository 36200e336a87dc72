"""memcore hook implementations of the ``mcpmemory`` plugin (entry point ``mcpmemory`` in group ``memcore``)."""

from __future__ import annotations

from typing import Any

from memcore.hookspecs import hookimpl

__all__ = ["memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the memory.jsonl provider class."""
    from memcore_mcpmemory.provider import McpMemoryProvider

    return [McpMemoryProvider]
