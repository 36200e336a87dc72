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
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

import click

from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    EditMatchError,
    EntryNotFoundError,
    ImmutableEntryError,
    InvalidEntryError,
    MemcoreError,
    ParseError,
    QuerySyntaxError,
    ReadOnlyStoreError,
    StoreBusyError,
    UnknownFormatError,
    UnsafePathError,
    UnsupportedOperationError,
)

if TYPE_CHECKING:
    from pydantic import ValidationError

    from memcore.provider import MemoryProvider

__all__ = [
    "dump_json",
    "error_payload",
    "handle_errors",
    "json_option",
    "open_from_cli",
    "read_stdin",
    "read_text_arg",
    "run_cli",
    "store_options",
]

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
    from memcore.config import open_store

    provider = open_store(store, **parse_options(options, scope), **extra)
    try:
        yield provider
    finally:
        provider.close()


def dump_json(data: Any) -> None:
    """Print ``data`` (pydantic models allowed, nested) as indented JSON on stdout."""
    # No model exists unless pydantic was imported: JSON data alone needs no pydantic.
    pydantic = sys.modules.get("pydantic")

    def default(obj: Any) -> Any:
        if pydantic is not None and isinstance(obj, pydantic.BaseModel):
            return obj.model_dump(mode="json")
        if isinstance(obj, (set, frozenset)):
            return sorted(obj)
        return str(obj)

    click.echo(json.dumps(data, default=default, ensure_ascii=False, indent=2))


#: ``--json`` error codes, most specific class first (see :func:`error_payload`).
_ERROR_CODES: tuple[tuple[type[BaseException], str, str], ...] = (
    (
        ReadOnlyStoreError,
        "read_only",
        "open the store without read_only (-o read_only=true, or read_only = true in memcore.toml), "
        "or lift the gate the message names",
    ),
    (ImmutableEntryError, "immutable", "this entry may not change; the message names the format's rule"),
    (
        UnsupportedOperationError,
        "unsupported",
        "the format forbids this operation; `memcore formats` lists what each format supports",
    ),
    (AmbiguousIdError, "ambiguous_id", "make the ids distinct (the message names each place)"),
    (ConflictError, "conflict", "read the entry again (memcore show) and retry"),
    (EntryNotFoundError, "not_found", "list the ids with `memcore ls`"),
    (StoreBusyError, "busy", "another process holds the store's lock; retry when it is done"),
    (QuerySyntaxError, "query_syntax", 'write the query as docs/search.md says (terms, OR, NOT, "phrases", prefix*)'),
    (ParseError, "parse_error", "fix the file at the place the message names; memcore will not rewrite it"),
    (UnknownFormatError, "unknown_format", "`memcore formats` lists the installed formats"),
    (ConfigError, "config", "check --store, -o options, MEMCORE_STORE and memcore.toml"),
    (EditMatchError, "edit_mismatch", "give text that occurs exactly once in the body (`memcore show` prints it)"),
    (InvalidEntryError, "invalid_entry", "change the value the message names"),
    (UnsafePathError, "unsafe_path", "choose an id, slug or title that stays inside the store"),
    (MemcoreError, "error", ""),
)


def _is_validation_error(exc: BaseException) -> TypeGuard[ValidationError]:
    # pydantic is not imported at start-up; an error can only be its ValidationError once it is.
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(exc, pydantic.ValidationError)


def _is_expected(exc: BaseException) -> bool:
    return isinstance(exc, (MemcoreError, OSError, click.UsageError)) or _is_validation_error(exc)


def error_payload(exc: BaseException) -> dict[str, Any]:
    """Return ``{"error": {"code", "message", "hint"}}`` for an error a command stops on.

    ``code`` is a stable snake_case name of the error's kind: ``read_only``, ``immutable``,
    ``unsupported``, ``ambiguous_id``, ``conflict``, ``not_found``, ``busy``, ``parse_error``,
    ``unknown_format``, ``config``, ``edit_mismatch`` (the text :func:`memcore.ops.edit` replaces
    occurs 0 or 2+ times), ``invalid_entry``, ``unsafe_path``, ``error`` (another memcore
    error), ``invalid_value`` (values that make no valid entry or query), ``usage`` (a wrong
    command line), ``os_error`` (the file system). ``message`` is the line the command prints
    without ``--json`` (without the ``memcore: error:`` prefix); ``hint`` says what to do next
    (may be empty).

    Args:
        exc: The error.

    Returns:
        The JSON-compatible payload.
    """
    if _is_validation_error(exc):
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in exc.errors())
        return {
            "error": {
                "code": "invalid_value",
                "message": f"invalid {exc.title}: {problems}",
                "hint": "change the value the message names",
            }
        }
    if isinstance(exc, click.UsageError):
        return {"error": {"code": "usage", "message": exc.format_message(), "hint": "see the command's --help"}}
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return {"error": {"code": "os_error", "message": f"{where}{exc.strerror or exc}", "hint": ""}}
    for cls, code, hint in _ERROR_CODES:
        if isinstance(exc, cls):
            return {"error": {"code": code, "message": str(exc), "hint": hint}}
    return {"error": {"code": "error", "message": str(exc), "hint": ""}}  # pragma: no cover - MemcoreError matches


def _exit_code(exc: BaseException) -> int:
    if _is_validation_error(exc) or isinstance(exc, (click.UsageError, *USAGE_ERRORS)):
        return 2
    return 1


def handle_errors(func: F) -> F:
    """Turn expected errors into one clear report and the documented exit code.

    Exit 2 for usage and configuration errors (and values that do not make a valid entry), 1 for
    other memcore errors and file-system errors; tracebacks only with ``MEMCORE_DEBUG=1``. A
    reader that closes the pipe early (``memcore ls | head``) ends the command quietly, exit 1.
    Without ``--json`` the report is one ``memcore: error: …`` line on stderr. With ``--json``
    (a command whose ``as_json`` argument is true) it is :func:`error_payload` as JSON on
    **stderr**, so that stdout holds only a result (nothing at all when the command failed: a
    script reads stdout as the result and the exit code, and stderr as the error); a usage error
    the command body raises (``click.UsageError``) is reported the same way.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            # the reader went away (`memcore ls | head`): no error line, stdout to /dev/null so that
            # the interpreter's final flush does not complain either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except Exception as exc:
            if not _is_expected(exc) or os.environ.get("MEMCORE_DEBUG"):
                raise
            if kwargs.get("as_json"):
                click.echo(json.dumps(error_payload(exc), ensure_ascii=False, indent=2), err=True)
                sys.exit(_exit_code(exc))
            if isinstance(exc, click.UsageError):
                raise
            click.echo(f"memcore: error: {error_payload(exc)['error']['message']}", err=True)
            sys.exit(_exit_code(exc))

    return wrapper  # type: ignore[return-value]


def run_cli(group: click.Group, argv: list[str] | None) -> Any:
    """Run ``group`` as the ``memcore`` program; with ``--json`` its usage errors are JSON too.

    Without ``--json`` this is ``group.main(argv)``. With it, the command line is parsed without
    click's standalone mode, so that a usage error click finds itself (a missing argument, a bad
    option value) is printed as :func:`error_payload` on stderr, exit 2, like the errors
    :func:`handle_errors` reports.

    Args:
        group: The command group.
        argv: The arguments (default: ``sys.argv[1:]``).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if "--json" not in args:
        return group.main(args=args, prog_name="memcore")
    try:
        return group.main(args=args, prog_name="memcore", standalone_mode=False)
    except click.UsageError as exc:
        click.echo(json.dumps(error_payload(exc), ensure_ascii=False, indent=2), err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(1)


def read_text_arg(value: str, *, what: str = "--body") -> str:
    """Return ``value``, or all of stdin when it is ``-`` (the CLI's convention for "stdin").

    Args:
        value: The option's value.
        what: The option's name, for the error.

    Raises:
        click.UsageError: ``-`` was given but stdin is a terminal (nothing was piped in).
    """
    if value != "-":
        return value
    if sys.stdin is None or sys.stdin.isatty():
        raise click.UsageError(f"{what} - reads stdin, but nothing is piped in")
    return read_stdin(what)


def read_stdin(what: str = "--body") -> str:
    """Return all of stdin, decoded as UTF-8 whatever the locale says.

    Args:
        what: The option stdin stands for, for the error.

    Raises:
        click.UsageError: Stdin is not UTF-8; the message gives the first bad byte and its offset
            (nothing is written).
    """
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text-only stdin (an embedding host): already decoded
        return sys.stdin.read()
    data: bytes = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(
            f"{what} -: stdin is not UTF-8 (byte 0x{data[exc.start]:02X} at offset {exc.start}); "
            "re-encode it as UTF-8 (e.g. iconv -t UTF-8); nothing was written"
        ) from None


def resolve_for_cli(store: str | None) -> tuple[str, str]:
    """Return ``(format name, location)`` for ``--store`` without opening it."""
    from memcore.config import resolve_store
    from memcore.registry import get_registry

    spec = resolve_store(store, registry=get_registry())
    return spec.format_name, spec.location
