"""Generate docs/cli.md from the ``memcore`` command itself (plugin commands included).

Run ``python -m memcore.cli._docgen > docs/cli.md``; a test fails when the file is stale.
"""

from __future__ import annotations

import click

__all__ = ["render_cli_reference"]


def _walk(command: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    out = [(path, command)]
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            out.extend(_walk(command.commands[name], [*path, name]))
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
    for path, command in _walk(cli, ["memcore"]):
        name = " ".join(path)
        ctx = click.Context(
            command, info_name=name, terminal_width=100, max_content_width=100, **command.context_settings
        )
        lines += [f"## `{name}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(render_cli_reference(), end="")
