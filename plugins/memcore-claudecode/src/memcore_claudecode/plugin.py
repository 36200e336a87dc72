"""memcore hook implementations of the ``claudecode`` plugin (entry point ``claudecode`` in group ``memcore``)."""

from __future__ import annotations

from typing import Any

from memcore.hookspecs import hookimpl

__all__ = ["memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the Claude Code memory provider class."""
    from memcore_claudecode.provider import ClaudeCodeProvider

    return [ClaudeCodeProvider]
