"""``memcore <format> <operation>``: CLI commands built from the plugins' format operations.

See :mod:`memcore.format_ops`. Each operation's input model becomes the command's parameters:
a required field is a positional argument, an optional one an option (``--entry-id``), a
``bool`` a flag, a ``list[str]`` a repeatable option. ``--json`` prints the operation's result
object; otherwise one line says what was done.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any

import click

from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, store_options
from memcore.format_ops import FormatOperation, operations

__all__ = ["register_format_commands"]

_TYPES: dict[Any, Any] = {int: click.INT, float: click.FLOAT, str: click.STRING}


def _base(annotation: Any) -> Any:
    """``X`` of ``X | None``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _params(op: FormatOperation) -> list[click.Parameter]:
    params: list[click.Parameter] = []
    for name, field in op.input_model.model_fields.items():
        base = _base(field.annotation)
        flag = "--" + name.replace("_", "-")
        help_text = field.description or ""
        if base is bool:
            params.append(click.Option([flag, name], is_flag=True, default=bool(field.default), help=help_text))
        elif typing.get_origin(base) is list:
            # a repeatable option also takes its singular (--tag beside --tags), as the core commands spell it
            singular = name[:-1] if name.endswith("s") and name[:-1] not in op.input_model.model_fields else ""
            flags = [flag, "--" + singular.replace("_", "-")] if singular else [flag]
            params.append(click.Option([*flags, name], multiple=True, help=help_text + " (repeatable)"))
        elif field.is_required():
            params.append(click.Argument([name], type=_TYPES.get(base, click.STRING)))
        else:
            params.append(
                click.Option([flag, name], type=_TYPES.get(base, click.STRING), default=field.default, help=help_text)
            )
    return params


def _say(op: FormatOperation, data: dict[str, Any]) -> int:
    """Print one line per result (never as rich markup); return the exit code."""
    if "entry" in data:
        entry = data["entry"]
        click.echo(f"{op.name}: {entry.get('id')}\t{entry.get('title') or ''}")
    elif "path" in data:
        click.echo(f"{op.name}: {data['path']}")
    elif "diagnostics" in data:
        for diag in data["diagnostics"]:
            where = ":".join(str(diag[k]) for k in ("path", "line") if diag.get(k) is not None)
            click.echo(f"{where}: {diag['severity']}: {diag['code']}: {diag['message']}")
        click.echo(f"{op.name}: {len(data['diagnostics'])} diagnostic(s), {data['errors']} error(s)")
    else:
        for row in data.get("rows", []):
            click.echo("\t".join(f"{k}={v}" for k, v in row.items()))
    return 1 if data.get("failed") else 0


def _command(op: FormatOperation) -> click.Command:
    fields = list(op.input_model.model_fields)

    def run(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool, **kwargs: Any) -> None:
        args = op.input_model.model_validate({k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()})
        with open_from_cli(store, options, scope) as provider:
            if provider.format_name not in op.formats:
                raise click.UsageError(
                    f"`memcore {op.formats[0]} {op.command_name}` needs a {' or '.join(op.formats)} store, "
                    f"got {provider.format_name}"
                )
            data = op.run(provider, args)
        if as_json:
            dump_json(data)
            sys.exit(1 if data.get("failed") else 0)
        sys.exit(_say(op, data))

    callback = store_options(json_option(handle_errors(run)))
    command = click.command(op.command_name, help=op.description)(callback)
    command.params.extend(_params(op))
    assert {p.name for p in command.params} >= set(fields)
    return command


def register_format_commands(cli: click.Group) -> None:
    """Add a command for every installed format operation to its format's group.

    A group the plugin registered (``memcore whitebox``) receives the commands; one is created
    for a format without (``memcore rightmemory``). A command the plugin added itself under an
    operation's name is kept (it may print more, as ``memcore whitebox promote`` does).
    """
    for op in operations():
        group = cli.commands.get(op.formats[0])
        if group is None:
            group = click.Group(op.formats[0], help=f"{op.formats[0]} format operations.")
            cli.add_command(group)
        if not isinstance(group, click.Group) or op.command_name in group.commands:
            continue
        group.add_command(_command(op))
