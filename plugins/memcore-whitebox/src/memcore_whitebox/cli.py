"""``memcore whitebox …`` commands (registered through ``memcore_register_commands``)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, store_options
from memcore_whitebox.promotion import run_promotion
from memcore_whitebox.provider import WhiteBoxProvider

__all__ = ["whitebox"]


@click.group("whitebox")
def whitebox() -> None:
    """WhiteBox vault commands (promotion)."""


@whitebox.command()
@store_options
@click.option("--dry-run", is_flag=True, help="Report candidates; write nothing.")
@click.option(
    "--threshold",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Matching observations of confidence medium or higher needed (spec rule).",
)
@click.option("--as-of", default=None, metavar="YYYY-MM-DD", help="Reference date for recency (default: today).")
@json_option
@handle_errors
def promote(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    dry_run: bool,
    threshold: int,
    as_of: str | None,
    as_json: bool,
) -> None:
    """Find observations ready for promotion and write proposals for them.

    Writes proposed/<timestamp>-<slug>.md files (never facts) unless scopes.md or
    promotion.md authorises auto-promotion for the active scope (`auto-promote: <scope>`).
    The observations stay in place. A group that cannot be written (a tag that makes an
    unsafe path, a target outside the scope) is skipped and reported; the others are still
    written. Exit 0, or 1 when a group failed.
    """
    when = None
    if as_of:
        try:
            when = datetime.fromisoformat(as_of).replace(tzinfo=UTC)
        except ValueError as exc:
            raise click.UsageError(f"--as-of {as_of!r} is not a YYYY-MM-DD date") from exc
    with open_from_cli(store, options, scope) as provider:
        if not isinstance(provider, WhiteBoxProvider):
            raise click.UsageError(f"{provider.format_name} store: `whitebox promote` needs a whitebox: store")
        rows = run_promotion(provider, dry_run=dry_run, threshold=threshold, as_of=when)
    failed = [row for row in rows if row["action"] == "failed"]
    if as_json:
        dump_json(rows)
        sys.exit(1 if failed else 0)
    table = Table("tags", "eligible", "score", "sources", "reference", "action", "path")
    for row in rows:
        table.add_row(
            Text(", ".join(row["tags"])),
            str(row["eligible"]),
            f"{row['score']:.2f}",
            str(row["distinct_sources"]),
            "promote" if row["reference_promote"] else "no",
            row["action"],
            Text(row["path"] or "-"),
        )
    Console(highlight=False, soft_wrap=True).print(table)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for row in failed:
        err.print(f"whitebox promote: group [{', '.join(row['tags'])}] skipped: {row['error']}", markup=False)
    sys.exit(1 if failed else 0)
