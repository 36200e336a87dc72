"""Core commands that live in their own modules (migrate, serve, context, index).

Each module under :mod:`memcore.cli` that defines ``register(cli)`` is listed here; a module
that is not there yet is simply skipped, so features land independently.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["register"]

_MODULES = ("memcore.cli.migrate", "memcore.cli.serve", "memcore.cli.index", "memcore.cli.entries")


def register(cli: click.Group) -> None:
    """Add the commands of every core command module that exists to ``cli``."""
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(cli)
