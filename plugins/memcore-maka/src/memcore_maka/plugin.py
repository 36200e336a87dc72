"""memcore hook implementations of the ``maka`` plugin (entry point ``maka`` in group ``memcore``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memcore.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["memcore_register_commands", "memcore_register_format_operations", "memcore_register_providers"]


@hookimpl
def memcore_register_providers() -> list[type[Any]]:
    """Return the Maka provider class."""
    from memcore_maka.provider import MakaProvider

    return [MakaProvider]


@hookimpl
def memcore_register_commands(cli: click.Group) -> None:
    """Add the ``memcore maka`` group (pending / approve / reject / render / state)."""
    from memcore_maka.cli import maka_group

    cli.add_command(maka_group)


@hookimpl
def memcore_register_format_operations() -> list[Any]:
    """Return maka's format operations (memcore_maka.operations)."""
    from memcore_maka.operations import OPERATIONS

    return list(OPERATIONS)
