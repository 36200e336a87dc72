"""The public building blocks of ``memcore`` commands, for core and plugin CLIs alike.

A plugin that adds commands (``memcore whitebox …``, ``memcore maka …``) builds them from these:
:func:`store_options` (the ``STORE`` argument and ``--format``/``-o`` options),
:func:`open_from_cli`, :func:`json_option` and :func:`dump_json` (``--json`` output for
scripts), :func:`handle_errors` (memcore's errors as one ``memcore: error: …`` line and exit
status 1, never a traceback) and :func:`parse_options` (``-o name=value`` pairs).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
from pydantic import BaseModel, ValidationError

from memcore.config import open_store, resolve_store
from memcore.errors import ConfigError, MemcoreError, QuerySyntaxError, UnknownFormatError
from memcore.provider import MemoryProvider
from memcore.registry import get_registry

__all__ = ["dump_json", "handle_errors", "json_option", "open_from_cli", "store_options"]

F = TypeVar("F", bound=Callable[..., Any])

#: Errors that mean the command line (or configuration) was wrong: exit code 2.
USAGE_ERRORS = (ConfigError, UnknownFormatError, QuerySyntaxError)


def json_option(func: F) -> F:
    """Add ``--json`` (machine-readable output on stdout)."""
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(func)


def store_options(func: F) -> F:
    """Add ``--store``, ``--scope`` and ``-o KEY=VALUE`` to a command."""
    func = click.option(
        "-o",
        "--option",
        "options",
        multiple=True,
        metavar="KEY=VALUE",
        help="Provider option, repeatable (e.g. -o as_user=true).",
    )(func)
    func = click.option("--scope", default=None, help="Active scope (formats with scopes).")(func)
    func = click.option(
        "--store",
        envvar="MEMCORE_STORE",
        default=None,
        metavar="URL",
        help="Store URL <format>:<location>, e.g. whitebox:./vault. Default: $MEMCORE_STORE, then memcore.toml.",
    )(func)
    return func


def _coerce(value: str) -> Any:
    lowered = value.lower()
    if lowered in {"true", "yes", "on"}:
        return True
    if lowered in {"false", "no", "off"}:
        return False
    try:
        return int(value)
    except ValueError:
        return value


def parse_options(options: tuple[str, ...], scope: str | None = None) -> dict[str, Any]:
    """Turn ``KEY=VALUE`` strings into provider options (``true``/``false``/ints coerced).

    Raises:
        click.UsageError: An option without ``=``.
    """
    out: dict[str, Any] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.UsageError(f"option {item!r} must be KEY=VALUE")
        out[key.strip()] = _coerce(value)
    if scope is not None:
        out["scope"] = scope
    return out


@contextmanager
def open_from_cli(
    store: str | None, options: tuple[str, ...] = (), scope: str | None = None, **extra: Any
) -> Iterator[MemoryProvider]:
    """Open the store the CLI was pointed at, closing it afterwards."""
    provider = open_store(store, **parse_options(options, scope), **extra)
    try:
        yield provider
    finally:
        provider.close()


def dump_json(data: Any) -> None:
    """Print ``data`` (pydantic models allowed, nested) as indented JSON on stdout."""

    def default(obj: Any) -> Any:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        if isinstance(obj, (set, frozenset)):
            return sorted(obj)
        return str(obj)

    click.echo(json.dumps(data, default=default, ensure_ascii=False, indent=2))


def handle_errors(func: F) -> F:
    """Turn expected errors into one clear line on stderr and the documented exit code.

    Exit 2 for usage and configuration errors (and values that do not make a valid entry), 1 for
    other memcore errors and file-system errors; tracebacks only with ``MEMCORE_DEBUG=1``.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (MemcoreError, ValidationError, OSError) as exc:
            if os.environ.get("MEMCORE_DEBUG"):
                raise
            if isinstance(exc, ValidationError):
                # Values given on the command line did not make a valid entry or query.
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in exc.errors()
                )
                click.echo(f"memcore: error: invalid {exc.title}: {problems}", err=True)
                sys.exit(2)
            if isinstance(exc, OSError):
                where = f"{exc.filename}: " if exc.filename else ""
                click.echo(f"memcore: error: {where}{exc.strerror or exc}", err=True)
                sys.exit(1)
            click.echo(f"memcore: error: {exc}", err=True)
            sys.exit(2 if isinstance(exc, USAGE_ERRORS) else 1)

    return wrapper  # type: ignore[return-value]


def resolve_for_cli(store: str | None) -> tuple[str, str]:
    """Return ``(format name, location)`` for ``--store`` without opening it."""
    spec = resolve_store(store, registry=get_registry())
    return spec.format_name, spec.location
