"""Core commands that live in their own modules (migrate, serve, context, index).

Each module under :mod:`memcore.cli` that defines ``register(cli)`` is listed in
:data:`COMMANDS` under every command name its ``register`` adds; a module that is not there yet
is simply skipped, so features land independently. A module is imported only when one of its
commands is looked up (or when every command is listed), so its imports cost nothing to the
other commands; a test checks that the table names exactly what each ``register`` adds.
"""

from __future__ import annotations

import importlib
import weakref

import click

__all__ = ["COMMANDS", "register"]

#: Command name -> the module whose ``register(cli)`` adds it.
COMMANDS: dict[str, str] = {
    "migrate": "memcore.cli.migrate",
    "serve": "memcore.cli.serve",
    "context": "memcore.cli.serve",
    "index": "memcore.cli.index",
    "watch": "memcore.cli.index",
    **{
        name: "memcore.cli.entries"
        for name in (
            "update",
            "edit",
            "insert",
            "delete",
            "archive",
            "supersede",
            "rename",
            "move",
            "relate",
            "unrelate",
            "graph",
            "recent",
        )
    },
}

#: The modules already registered on each group, so that each registers once per group.
_done: weakref.WeakKeyDictionary[click.Group, set[str]] = weakref.WeakKeyDictionary()


def register(cli: click.Group, command: str | None = None) -> None:
    """Add core commands from their modules to ``cli``.

    Args:
        cli: The group to add them to (the root ``memcore`` group).
        command: Only the module that adds this command (``None``: every module).
    """
    names = [COMMANDS[command]] if command is not None else list(dict.fromkeys(COMMANDS.values()))
    done = _done.setdefault(cli, set())
    for name in names:
        if name in done:
            continue
        done.add(name)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(cli)
