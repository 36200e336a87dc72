"""Commands that change or walk existing entries.

``update``, ``edit``, ``insert``, ``delete``, ``archive``, ``supersede``, ``rename``, ``move``,
``relate``, ``unrelate``, ``graph``, ``recent``.

Each goes through the store's provider (:mod:`memcore.ops` for the ones the contract does not
have itself), so a format's rules hold: a refused operation exits 1 with the provider's message,
which names the rule (``whitebox: observations are append-only; …``). With ``--json`` a command
prints the entry as stored (``delete``: ``{"deleted": id}``) and an error as
``{"error": {"code", "message", "hint"}}`` on stderr (:func:`memcore.cli.helpers.error_payload`).
Wherever a command takes a text (``--body``, ``--text``, ``--new``), ``-`` reads it from stdin.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import click

from memcore import ops
from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, read_text_arg, store_options
from memcore.models import Kind, MemoryEntry, Relation, Status

__all__ = ["register"]

_kind_choice = click.Choice([k.value for k in Kind])
_status_choice = click.Choice([s.value for s in Status])


def register(cli: click.Group) -> None:
    """Add this module's commands to the ``memcore`` command group."""
    for command in (
        update,
        edit,
        insert,
        delete,
        archive,
        supersede,
        rename,
        move,
        relate,
        unrelate,
        graph,
        recent,
    ):
        cli.add_command(command)


def _done(verb: str, entry: MemoryEntry, as_json: bool) -> None:
    if as_json:
        dump_json(entry)
    else:
        click.echo(f"{verb} {entry.id}")


def _relation(item: str, option: str = "--relation") -> Relation:
    rtype, sep, target = item.partition(":")
    if not sep or not rtype or not target:
        raise click.UsageError(f"{option} {item!r} must be TYPE:TARGET")
    return Relation(type=rtype, target=target)


def _field_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The entry fields ``update`` and ``supersede`` take; each is left alone unless given."""
    for decorator in reversed(
        (
            click.option("--title", default=None, help="New title."),
            click.option("--body", default=None, help="New body; - reads stdin."),
            click.option("--kind", type=_kind_choice, default=None, help="New kind."),
            click.option("--status", type=_status_choice, default=None, help="New status."),
            click.option("--tag", "tags", multiple=True, help="Tag (repeatable); replaces all tags."),
            click.option("--source", default=None, help="Agent or origin."),
            click.option("--confidence", type=click.FloatRange(0, 1), default=None, help="0.0-1.0."),
            click.option(
                "--relation",
                "relations",
                multiple=True,
                metavar="TYPE:TARGET",
                help="Typed edge (repeatable); replaces all relations.",
            ),
        )
    ):
        func = decorator(func)
    return func


def _changes(
    title: str | None,
    body: str | None,
    kind: str | None,
    status: str | None,
    tags: tuple[str, ...],
    source: str | None,
    confidence: float | None,
    relations: tuple[str, ...],
) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title
    if body is not None:
        changes["body"] = read_text_arg(body)
    if kind is not None:
        changes["kind"] = Kind(kind)
    if status is not None:
        changes["status"] = Status(status)
    if tags:
        changes["tags"] = list(tags)
    if source is not None:
        changes["source"] = source
    if confidence is not None:
        changes["confidence"] = confidence
    if relations:
        changes["relations"] = [_relation(r) for r in relations]
    return changes


@click.command()
@store_options
@click.argument("entry_id")
@_field_options
@click.option("--expected-version", default=None, help="Refuse the write if the entry's version changed since.")
@json_option
@handle_errors
def update(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    entry_id: str,
    expected_version: str | None,
    as_json: bool,
    **fields: Any,
) -> None:
    """Change fields of entry ENTRY_ID; fields not given are kept.

    The format decides how: WhiteBox files a proposal for a stable file unless opened with
    -o as_user=true, and refuses observations (append-only).
    """
    changes = _changes(**fields)
    if not changes:
        raise click.UsageError("nothing to change: give at least one field (--title, --body, --tag, …)")
    with open_from_cli(store, options, scope) as provider:
        current = provider.get(entry_id)
        merged = MemoryEntry.model_validate({**current.model_dump(), **changes})
        stored = ops.save(provider, merged, expected_version)
    if stored.id != current.id and stored.kind is Kind.PROPOSAL and not as_json:
        click.echo(
            f"proposed {stored.id}: a proposal to change {current.id}, which is left as it was "
            "(review and apply it by hand, or open the store with -o as_user=true to edit in place)"
        )
        return
    _done("updated", stored, as_json)


@click.command()
@store_options
@click.argument("entry_id")
@click.option("--old", required=True, help="The exact text to replace; it must occur once in the body.")
@click.option("--new", default="", help="The text to put in its place (default: remove it); - reads stdin.")
@click.option("--expected-version", default=None, help="Refuse the write if the entry's version changed since.")
@json_option
@handle_errors
def edit(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    entry_id: str,
    old: str,
    new: str,
    expected_version: str | None,
    as_json: bool,
) -> None:
    """Replace one exact string in the body of ENTRY_ID (like str_replace).

    Refused, with nothing written, when --old occurs 0 or several times: the error says how
    often it occurs.
    """
    new = read_text_arg(new, what="--new")
    with open_from_cli(store, options, scope) as provider:
        stored = ops.edit(provider, entry_id, old, new, expected_version=expected_version)
    _done("edited", stored, as_json)


@click.command()
@store_options
@click.argument("entry_id")
@click.option("--text", required=True, help="The lines to insert; - reads stdin.")
@click.option(
    "--line",
    type=click.IntRange(min=0),
    default=None,
    help="Insert before this 0-based line of the body (default: at the end).",
)
@click.option("--expected-version", default=None, help="Refuse the write if the entry's version changed since.")
@json_option
@handle_errors
def insert(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    entry_id: str,
    text: str,
    line: int | None,
    expected_version: str | None,
    as_json: bool,
) -> None:
    """Insert lines into the body of ENTRY_ID (at the end, or before --line)."""
    text = read_text_arg(text, what="--text")
    with open_from_cli(store, options, scope) as provider:
        stored = ops.insert(provider, entry_id, text, line=line, expected_version=expected_version)
    _done("edited", stored, as_json)


@click.command()
@store_options
@click.argument("entry_id")
@json_option
@handle_errors
def delete(store: str | None, scope: str | None, options: tuple[str, ...], entry_id: str, as_json: bool) -> None:
    """Remove entry ENTRY_ID (formats without delete refuse; see `memcore formats`)."""
    with open_from_cli(store, options, scope) as provider:
        provider.delete(entry_id)
    if as_json:
        dump_json({"deleted": entry_id})
    else:
        click.echo(f"deleted {entry_id}")


@click.command()
@store_options
@click.argument("entry_id")
@json_option
@handle_errors
def archive(store: str | None, scope: str | None, options: tuple[str, ...], entry_id: str, as_json: bool) -> None:
    """Mark entry ENTRY_ID archived (kept, no longer active)."""
    with open_from_cli(store, options, scope) as provider:
        stored = provider.archive(entry_id)
    _done("archived", stored, as_json)


@click.command()
@store_options
@click.argument("old_id")
@_field_options
@json_option
@handle_errors
def supersede(
    store: str | None, scope: str | None, options: tuple[str, ...], old_id: str, as_json: bool, **fields: Any
) -> None:
    """Add a new entry that replaces OLD_ID; the old one is kept, marked superseded.

    The new entry starts as a copy of the old one's kind, title, tags, source and scope; the
    fields given replace them (give at least --body).
    """
    changes = _changes(**fields)
    if "body" not in changes:
        raise click.UsageError("supersede needs the new entry's --body (- reads stdin)")
    with open_from_cli(store, options, scope) as provider:
        old = provider.get(old_id)
        base = {"kind": old.kind, "title": old.title, "tags": old.tags, "source": old.source, "scope": old.scope}
        stored = provider.supersede(old_id, MemoryEntry(**{**base, **changes}))
    if as_json:
        dump_json(stored)
    else:
        click.echo(f"added {stored.id}, superseding {old_id}")


@click.command()
@store_options
@click.argument("entry_id")
@click.argument("title")
@json_option
@handle_errors
def rename(
    store: str | None, scope: str | None, options: tuple[str, ...], entry_id: str, title: str, as_json: bool
) -> None:
    """Give entry ENTRY_ID the new TITLE.

    Where the format derives ids from titles the id changes too: the new id is
    printed.
    """
    with open_from_cli(store, options, scope) as provider:
        stored = ops.rename(provider, entry_id, title)
    _done("renamed", stored, as_json)


@click.command()
@store_options
@click.argument("entry_id")
@click.option("--parent", default=None, help="Id of the entry to move it under.")
@click.option("--top", is_flag=True, help="Move it to the top level (no parent).")
@json_option
@handle_errors
def move(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    entry_id: str,
    parent: str | None,
    top: bool,
    as_json: bool,
) -> None:
    """Move entry ENTRY_ID under another entry (--parent ID) or to the top level (--top).

    A format whose containment is its files' structure refuses it when it cannot change that
    structure in place (RightMemory headings), naming the rule.
    """
    if (parent is None) == (not top):
        raise click.UsageError("give exactly one of --parent ID and --top")
    with open_from_cli(store, options, scope) as provider:
        stored = ops.move(provider, entry_id, parent)
    _done("moved", stored, as_json)


def _edge_command(name: str, change: Callable[..., MemoryEntry], doc: str) -> click.Command:
    """Make ``relate`` or ``unrelate``: ENTRY_ID TYPE:TARGET through ``change`` (an :mod:`memcore.ops` function)."""

    @click.command(name, help=doc)
    @store_options
    @click.argument("entry_id")
    @click.argument("relation", metavar="TYPE:TARGET")
    @json_option
    @handle_errors
    def command(
        store: str | None, scope: str | None, options: tuple[str, ...], entry_id: str, relation: str, as_json: bool
    ) -> None:
        rel = _relation(relation, "relation")
        with open_from_cli(store, options, scope) as provider:
            stored = change(provider, entry_id, rel.type, rel.target)
        _done(f"{name}d", stored, as_json)

    return command


relate = _edge_command(
    "relate",
    ops.relate,
    "Add the typed edge TYPE:TARGET to entry ENTRY_ID (the target must exist; the type is the "
    "format's: RightMemory takes its own edge types, dep, rel, …).",
)
unrelate = _edge_command("unrelate", ops.unrelate, "Remove the typed edge TYPE:TARGET from entry ENTRY_ID.")


@click.command()
@store_options
@click.argument("entry_id", required=False)
@click.option("--depth", type=click.IntRange(0, ops.MAX_DEPTH), default=1, show_default=True, help="Levels to walk.")
@json_option
@handle_errors
def graph(
    store: str | None, scope: str | None, options: tuple[str, ...], entry_id: str | None, depth: int, as_json: bool
) -> None:
    """Show the entries around ENTRY_ID to --depth levels, and their edges (all without an id).

    Edges are relations and parent links, followed both ways. JSON: {entries: [{id, kind,
    title, depth}], edges: [{source, type, target}]}.
    """
    with open_from_cli(store, options, scope) as provider:
        found = ops.graph(provider, entry_id, depth=depth)
    nodes: list[dict[str, Any]] = [
        {"id": e.id, "kind": e.kind.value, "title": e.title, "depth": found.depth.get(e.id or "", 0)}
        for e in found.entries
    ]
    edges = [{"source": s, "type": t, "target": g} for s, t, g in found.edges]
    if as_json:
        dump_json({"entries": nodes, "edges": edges})
        return
    for node in nodes:
        click.echo(f"{'  ' * node['depth']}{node['id']}  ({node['kind']}) {node['title']}")
    for edge in edges:
        click.echo(f"{edge['source']} -{edge['type']}-> {edge['target']}")


@click.command()
@store_options
@click.option(
    "--since",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"]),
    default=None,
    help="Only entries changed at or after this time (UTC unless it carries an offset).",
)
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="At most N entries.")
@json_option
@handle_errors
def recent(
    store: str | None, scope: str | None, options: tuple[str, ...], since: datetime | None, limit: int, as_json: bool
) -> None:
    """List the entries changed most recently (updated, else created), newest first."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    with open_from_cli(store, options, scope) as provider:
        found = ops.recent(provider, since, limit=limit)
    if as_json:
        dump_json(found)
        return
    for entry in found:
        moment = entry.updated_at or entry.created_at
        click.echo(f"{moment.isoformat() if moment else '-'}  {entry.id}  {entry.title}")
