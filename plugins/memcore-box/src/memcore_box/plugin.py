"""pluggy hook implementations registering the Box-memory provider."""

from __future__ import annotations

from memcore.hookspecs import hookimpl

__all__ = ["memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type]:
    """Return the Box-memory provider classes (none until the provider lands)."""
    return []
