"""``memcore index``: build, rebuild and inspect a store's derived search index."""

from __future__ import annotations

import dataclasses

import click

from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, store_options
from memcore.index import IndexStatus, SearchIndex

__all__ = ["register"]


def _report(status: IndexStatus, as_json: bool) -> None:
    if as_json:
        dump_json(dataclasses.asdict(status))
        return
    click.echo(f"index: {status.path}")
    click.echo(f"files: {status.files}  entries: {status.entries}  re-read: {status.reread}  removed: {status.removed}")
    if status.rebuilt:
        click.echo(f"rebuilt: {status.rebuilt}")


@click.group("index")
def index_group() -> None:
    """Manage the derived SQLite FTS5 search index (kept outside the store).

    Once built, `memcore search` and every provider's search use it, refreshing it first
    from the files that changed. Deleting it is always safe.
    """


@index_group.command("build")
@store_options
@json_option
@handle_errors
def build(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Build the index, or refresh it from the files that changed."""
    with open_from_cli(store, options, scope) as provider, SearchIndex(provider) as index:
        assert index.last_status is not None
        _report(index.last_status, as_json)


@index_group.command("rebuild")
@store_options
@json_option
@handle_errors
def rebuild(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Drop the index and build it again from every file."""
    with open_from_cli(store, options, scope) as provider:
        index = SearchIndex(provider)
        try:
            _report(index.rebuild(), as_json)
        finally:
            index.close()


@index_group.command("status")
@store_options
@json_option
@handle_errors
def status(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Show where the index is and what it holds, without refreshing it."""
    with open_from_cli(store, options, scope) as provider:
        index = SearchIndex(provider)
        if not index.path.exists():
            if as_json:
                dump_json({"path": str(index.path), "exists": False})
            else:
                click.echo(f"no index yet ({index.path}); build it with `memcore index build`")
            return
        try:
            _report(index.status(), as_json)
        finally:
            index.close()


def register(cli: click.Group) -> None:
    """Add the ``index`` group to the ``memcore`` CLI."""
    cli.add_command(index_group)
