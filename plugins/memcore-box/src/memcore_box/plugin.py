"""pluggy hook implementations registering the Box-memory provider."""

from __future__ import annotations

from typing import Any

from memcore.hookspecs import hookimpl

__all__ = ["memcore_register_format_operations", "memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the Box-memory provider classes (format ``box``: a local folder)."""
    from memcore_box.cloud_provider import BoxCloudProvider  # box+cloud (issue 6)
    from memcore_box.provider import BoxMemoryProvider

    return [BoxMemoryProvider, BoxCloudProvider]


@hookimpl
def memcore_register_format_operations() -> list[Any]:
    """Return box's format operations (memcore_box.operations)."""
    from memcore_box.operations import OPERATIONS

    return list(OPERATIONS)
