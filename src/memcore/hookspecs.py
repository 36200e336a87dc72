"""Hook specifications: what a memcore plugin may implement.

A plugin is any module or object registered on memcore's :class:`pluggy.PluginManager`
(project name ``"memcore"``), usually found through the ``memcore`` entry-point group. Mark
implementations with :data:`hookimpl`::

    from memcore import hookimpl

    @hookimpl
    def memcore_register_providers():
        return [MyProvider]

Every hook name starts with ``memcore_``. docs/hooks.md documents each one; a test fails when a
hook here is missing there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("memcore")
hookimpl = pluggy.HookimplMarker("memcore")


@hookspec
def memcore_register_providers() -> list[type[Any]]:
    """Return the provider classes this plugin ships.

    Called once, when the registry is first built (the first ``memcore.open()``, CLI command
    or registry lookup). Each class implements :class:`memcore.provider.MemoryProvider` and has
    a unique ``format_name``; two plugins claiming one name fail with
    :class:`memcore.errors.DuplicateFormatError` naming both.

    Returns:
        A list of provider classes (not instances).
    """
    raise NotImplementedError  # pragma: no cover - a hook specification has no body


@hookspec
def memcore_register_converters() -> list[Any]:
    """Return direct converters this plugin ships, preferred over the generic conversion.

    Called once, when :mod:`memcore.migrate` first looks for a converter. Each converter has
    ``source_format`` and ``target_format`` attributes and a ``convert(source, target, report)``
    method (see :class:`memcore.migrate.Converter`).

    Returns:
        A list of converter objects.
    """
    raise NotImplementedError  # pragma: no cover - a hook specification has no body


@hookspec
def memcore_register_format_operations() -> list[Any]:
    """Return the format operations this plugin's formats offer beyond the common contract.

    Called when the CLI lists or looks up plugin commands, and when ``memcore serve`` starts.
    Each item is a :class:`memcore.format_ops.FormatOperation` (formats, name, description,
    input and output pydantic models, ``run(provider, args)``); core builds from it the command
    ``memcore <format> <name>`` and the MCP tool ``<format>_<name>`` (offered with
    ``memcore serve --review-tools``). Import the operations inside the hook (lazy start-up).

    Returns:
        A list of :class:`~memcore.format_ops.FormatOperation`.
    """
    raise NotImplementedError  # pragma: no cover - a hook specification has no body


@hookspec
def memcore_register_commands(cli: click.Group) -> None:
    """Add commands to the ``memcore`` CLI.

    Called once, with the root :class:`click.Group`, the first time the CLI looks up a command
    that is not one of core's or lists every command (``memcore --version`` and core's own
    commands never call it). Add commands or groups with ``cli.add_command(...)``; use a group
    named after your format for format-specific commands (``memcore whitebox promote``).

    Args:
        cli: The root ``memcore`` command group.
    """
