"""memcore hook implementations of the basic-memory plugin (entry point ``basicmemory`` in group ``memcore``)."""

from __future__ import annotations

from typing import Any

from memcore.hookspecs import hookimpl

__all__ = ["memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the basic-memory provider class."""
    from memcore_basicmemory.provider import BasicMemoryProvider

    return [BasicMemoryProvider]
