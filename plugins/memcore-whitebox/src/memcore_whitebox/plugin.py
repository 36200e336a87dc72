"""memcore hook implementations of the WhiteBox plugin (entry point ``whitebox`` in group ``memcore``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memcore.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["memcore_register_commands", "memcore_register_format_operations", "memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the WhiteBox provider class."""
    from memcore_whitebox.provider import WhiteBoxProvider

    return [WhiteBoxProvider]


@hookimpl
def memcore_register_commands(cli: click.Group) -> None:
    """Add the ``memcore whitebox`` command group (``promote``)."""
    from memcore_whitebox.cli import whitebox

    cli.add_command(whitebox)


@hookimpl
def memcore_register_format_operations() -> list[Any]:
    """Return whitebox's format operations (memcore_whitebox.operations)."""
    from memcore_whitebox.operations import OPERATIONS

    return list(OPERATIONS)
