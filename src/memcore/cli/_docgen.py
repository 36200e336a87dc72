"""Generate docs/cli.md from the ``memcore`` command itself (plugin commands included).

Run ``python -m memcore.cli._docgen > docs/cli.md``; a test fails when the file is stale.
"""

from __future__ import annotations

import click

__all__ = ["render_cli_reference"]


def _walk(
    command: click.Command, path: list[str], parent: click.Context | None = None
) -> list[tuple[list[str], click.Context]]:
    # Each context has its parent's, as when the command runs, so subcommands inherit the root's
    # settings (``-h`` as well as ``--help``) and the page shows what the CLI really accepts.
    ctx = click.Context(
        command,
        info_name=path[-1],
        parent=parent,
        terminal_width=100,
        max_content_width=100,
        **command.context_settings,
    )
    out = [(path, ctx)]
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            out.extend(_walk(command.commands[name], [*path, name], ctx))
    return out


def render_cli_reference() -> str:
    """Return the CLI reference as markdown: one section per command with its help and options."""
    from memcore.cli import _load_plugin_commands, cli

    _load_plugin_commands()
    lines = [
        "# CLI reference",
        "",
        "Generated from the `memcore` command itself by `python -m memcore.cli._docgen`; "
        "a test fails when this page and the CLI disagree.",
        "",
    ]
    for path, ctx in _walk(cli, ["memcore"]):
        lines += [f"## `{' '.join(path)}`", "", "```text", ctx.command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(render_cli_reference(), end="")
