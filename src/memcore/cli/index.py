"""``memcore index`` (build, rebuild, status), ``memcore reindex`` and ``memcore watch``.

One family for every index a store has: the derived SQLite search index memcore keeps outside
the store, and the format's own derived files inside it (Box-memory's ``_index.json``), which
``provider.reindex()`` rebuilds. Every command says what it did to each, including "none".
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import click

from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, store_options
from memcore.contract import Capability, MemoryProvider
from memcore.index import IndexStatus, SearchIndex, watch_index
from memcore.models import Severity

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
    """Rebuild every index: the format's own derived files, then the search index.

    Says for each what was done ("none" for a format without derived files). Exit 1 when the
    format's rebuild reports an error. JSON: the search index's status plus "format_indexes".
    """
    with open_from_cli(store, options, scope) as provider:
        rebuild_all(provider, as_json)


def rebuild_all(provider: MemoryProvider, as_json: bool) -> None:
    """Rebuild the format's derived files and the search index of ``provider``; report both.

    What ``memcore index rebuild`` and ``memcore reindex`` run. The format's part: rebuilt
    when the provider declares ``Capability.REINDEX`` (its diagnostics listed), "none"
    otherwise; refused (read-only store) is said, not hidden. The search index: rebuilt from
    every file, or "none" for a remote store. A store that refuses (read-only for the format's
    files, incognito for the search index) raises its error.
    """
    fmt: dict[str, Any] = {"format": provider.format_name, "rebuilt": False, "diagnostics": [], "note": None}
    if Capability.REINDEX in provider.capabilities:
        fmt["diagnostics"] = provider.reindex()  # a read-only store refuses: an error, exit 1
        fmt["rebuilt"] = True
    else:
        fmt["note"] = f"{provider.format_name} keeps no derived files in the store: nothing to rebuild"
    search: dict[str, Any]
    if Capability.REMOTE in provider.capabilities:
        search = {"rebuilt": None, "note": "a remote store is searched through its provider; no local index"}
    else:
        index = SearchIndex(provider)  # incognito refuses: an error, exit 1
        try:
            search = dataclasses.asdict(index.rebuild())
        finally:
            index.close()
    errors = any(d.severity is Severity.ERROR for d in fmt["diagnostics"])
    if as_json:
        dump_json({**search, "format_indexes": fmt})
    else:
        for diag in fmt["diagnostics"]:
            click.echo(str(diag))
        if fmt["rebuilt"]:
            click.echo(f"format indexes: rebuilt ({len(fmt['diagnostics'])} diagnostic(s))")
        else:
            click.echo(f"format indexes: none rebuilt ({fmt['note']})")
        if "path" in search:
            _report(IndexStatus(**search), False)
        else:
            click.echo(f"search index: none ({search['note']})")
    sys.exit(1 if errors else 0)


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


@click.command("watch")
@store_options
@click.option(
    "--debounce",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Milliseconds to gather changes before one refresh.",
)
@handle_errors
def watch(store: str | None, scope: str | None, options: tuple[str, ...], debounce: int) -> None:
    """Keep the search index current while files change, until Ctrl-C.

    Builds the index if there is none, then refreshes it after each batch of changes made by
    anyone (an editor, git, another tool), printing one line per refresh that changed it. Every
    search, CLI or API, then answers from a current index.
    """
    with open_from_cli(store, options, scope) as provider:

        def report(status: IndexStatus) -> None:
            if status.reread or status.removed or status.rebuilt:
                click.echo(
                    f"refreshed: re-read {status.reread}, removed {status.removed}; "
                    f"{status.entries} entries in {status.files} files",
                )

        try:
            watch_index(provider, on_refresh=report, on_ready=_ready, debounce_ms=debounce)
        except KeyboardInterrupt:
            pass  # Ctrl-C: the index was committed after each refresh
        click.echo("memcore: watch stopped", err=True)


def _ready(status: IndexStatus) -> None:
    click.echo(f"watching {status.files} files ({status.entries} entries); index {status.path}; Ctrl-C stops")


def register(cli: click.Group) -> None:
    """Add the ``index`` group and ``watch`` to the ``memcore`` CLI."""
    cli.add_command(index_group)
    cli.add_command(watch)
