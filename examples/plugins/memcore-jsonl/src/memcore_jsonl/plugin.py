"""memcore hook implementations of the ``jsonl`` plugin (entry point ``jsonl`` in group ``memcore``)."""

from __future__ import annotations

from typing import Any

from memcore import hookimpl

__all__ = ["memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the JSON Lines provider class."""
    from memcore_jsonl.provider import JsonlProvider

    return [JsonlProvider]
