"""The ``memcore`` command.

Every command takes ``--json``. Exit codes: 0 ok, 1 the store has errors (or an operation
failed), 2 usage or configuration error. Plugins add commands through the
``memcore_register_commands`` hook.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

import click

from memcore import __version__
from memcore._vocabulary import Kind, Severity, Status
from memcore.cli.helpers import (
    dump_json,
    error_payload,
    handle_errors,
    json_option,
    open_from_cli,
    parse_options,
    read_stdin,
    read_text_arg,
    resolve_for_cli,
    run_cli,
    store_options,
)
from memcore.errors import PluginLoadError

if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.console import Console
    from rich.text import Text

    from memcore.models import MemoryEntry, Query

__all__ = ["cli", "main"]


def _console(err: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=err, highlight=False, soft_wrap=True)


class _MemcoreGroup(click.Group):
    """The root group: core commands at once, the others only when asked for.

    The commands defined in this module are registered as the module loads. Those of the core
    command modules (:data:`memcore.cli._builtin_commands.COMMANDS`) are added when one of
    their names is looked up, and the plugins' (``memcore_register_commands``) when a name is
    neither, or when every command is listed (``memcore --help``, the docs). So ``memcore
    --version`` and ``memcore search`` import neither the plugins' command modules nor the
    MCP SDK or the migration code.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from memcore.cli import _builtin_commands

        if cmd_name not in self.commands:
            if cmd_name in _builtin_commands.COMMANDS:
                _builtin_commands.register(self, cmd_name)
            else:
                _load_plugin_commands()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load_plugin_commands()
        return super().list_commands(ctx)


@click.group(cls=_MemcoreGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memcore")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors (as MEMCORE_DEBUG=1).")
def cli(debug: bool) -> None:
    """memcore: read, write, check and migrate AI-agent memory kept in files.

    Point a command at a store with --store <format>:<location> (e.g. whitebox:./vault,
    box:./workspace, rightmemory:./rm, maka:./MEMORY.md), or set MEMCORE_STORE, or write
    `store = "..."` in a memcore.toml.

    With --json, errors are JSON too, on stderr (stdout stays empty): {"error": {"code", "message", "hint"}}, with
    the same exit codes (1 failed, 2 usage or configuration). `-` means stdin (or stdout)
    wherever a command takes a text or a file: --body -, --report -.
    """
    if debug:
        os.environ["MEMCORE_DEBUG"] = "1"


@cli.command()
@json_option
@handle_errors
def formats(as_json: bool) -> None:
    """List installed formats with their distribution, version and capabilities."""
    from rich.table import Table
    from rich.text import Text

    from memcore.plugins import plugin_infos
    from memcore.registry import get_registry

    reg = get_registry()
    infos = {i.name: i for i in plugin_infos(reg.pm)}
    rows: list[dict[str, Any]] = []
    for name, provider_cls in reg.items():
        info = infos.get(reg.owner(name))
        rows.append(
            {
                "format": name,
                "provider": f"{provider_cls.__module__}.{provider_cls.__qualname__}",
                "distribution": info.distribution if info else getattr(provider_cls, "distribution", None),
                "version": info.version if info else None,
                "capabilities": sorted(c.value for c in provider_cls.capabilities),
            }
        )
    if as_json:
        dump_json(rows)
        return
    from rich.table import Column

    # names whole (they are what pip takes); the capabilities wrap
    table = Table(Column("format", no_wrap=True), Column("distribution", no_wrap=True), "version", "capabilities")
    for row in rows:
        table.add_row(
            Text(row["format"]), Text(row["distribution"] or "-"), row["version"] or "-", ", ".join(row["capabilities"])
        )
    _console().print(table)


@cli.command()
@json_option
@handle_errors
def plugins(as_json: bool) -> None:
    """List loaded plugins with their versions and the hooks each implements."""
    from rich.table import Table
    from rich.text import Text

    from memcore.plugins import plugin_infos
    from memcore.registry import get_registry

    infos = plugin_infos(get_registry().pm)
    if as_json:
        dump_json([info.__dict__ for info in infos])
        return
    table = Table("plugin", "distribution", "version", "hooks")
    for info in infos:
        table.add_row(Text(info.name), Text(info.distribution or "-"), info.version or "-", ", ".join(info.hooks))
    _console().print(table)


@cli.command()
@store_options
@json_option
@handle_errors
def init(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Create a new, empty store at --store."""
    from memcore.registry import get_registry

    fmt, location = resolve_for_cli(store)
    get_registry().get(fmt).init_store(location, **parse_options(options, scope))
    if as_json:
        dump_json({"created": f"{fmt}:{location}"})
    else:
        click.echo(f"created {fmt}:{location}")


def _snippet_text(snippet: str) -> Text:
    """A snippet as rich text: its hits keep their brackets and are bold (never read as markup)."""
    from rich.text import Text

    text = Text()
    for i, part in enumerate(re.split(r"(\[[^\]]*\])", snippet)):
        text.append(part, style="bold" if i % 2 else "")
    return text


def _print_entries(entries: list[MemoryEntry], snippets: list[str] | None = None) -> None:
    _print_rows([(e.id, e.kind.value, e.status.value, e.title, e.body, e.tags) for e in entries], snippets)


def _print_rows(
    rows: list[tuple[str | None, str, str, str, str, list[str]]], snippets: list[str] | None = None
) -> None:
    """Print entries as the table: rows of ``(id, kind, status, title, body, tags)``.

    Ids are never shortened (they are what ``memcore show`` takes). When the terminal is too
    narrow for the whole ids beside readable columns, each entry is printed as a block instead:
    its id on a line of its own, then its kind, status, title, tags and match, indented.
    """
    from rich.text import Text

    console = _console()
    shown_titles = [
        title or body.strip().splitlines()[0][:60] if (title or body.strip()) else "" for *_, title, body, _ in rows
    ]
    widest_id = max((len(row[0] or "") for row in rows), default=2)
    widest = {
        "kind": max((len(row[1]) for row in rows), default=4),
        "status": max((len(row[2]) for row in rows), default=6),
    }
    # id, kind, status whole; at least 16 columns of title and 8 of tags (and 16 of match); borders
    needed = widest_id + widest["kind"] + widest["status"] + 16 + 8 + (16 if snippets is not None else 0)
    needed += 3 * (5 + (snippets is not None)) + 1
    if rows and console.width < needed:
        for i, (entry_id, kind, status, _, _, tags) in enumerate(rows):
            line = Text(f"  {kind} · {status}")
            if shown_titles[i]:
                line.append(" · " + shown_titles[i])
            if tags:
                line.append(" · tags: " + ", ".join(tags))
            console.print(Text(entry_id or ""), no_wrap=True, crop=False, overflow="ignore")
            console.print(line)
            if snippets is not None:
                console.print(Text("  ") + _snippet_text(snippets[i]))
        return
    from rich.table import Table

    table = Table()
    table.add_column("id", no_wrap=True, min_width=widest_id)
    table.add_column("kind", no_wrap=True, min_width=widest["kind"])
    table.add_column("status", no_wrap=True, min_width=widest["status"])
    for name in ("title", "tags", *(["match"] if snippets is not None else [])):
        table.add_column(name)
    for i, (entry_id, kind, status, _, _, tags) in enumerate(rows):
        shown = [_snippet_text(snippets[i])] if snippets is not None else []
        table.add_row(entry_id or "", kind, status, Text(shown_titles[i]), Text(", ".join(tags)), *shown)
    console.print(table)


def _query(
    kind: tuple[str, ...], status: tuple[str, ...], tag: tuple[str, ...], limit: int | None, text: str | None = None
) -> Query:
    from memcore.models import Query

    return Query(
        text=text,
        kinds=[Kind(k) for k in kind] or None,
        statuses=[Status(s) for s in status] or None,
        tags_any=list(tag) or None,
        limit=limit,
    )


_kind_choice = click.Choice([k.value for k in Kind])
_status_choice = click.Choice([s.value for s in Status])


@cli.command("ls")
@store_options
@click.option("--kind", multiple=True, type=_kind_choice, help="Only this kind (repeatable).")
@click.option("--status", multiple=True, type=_status_choice, help="Only this status (repeatable).")
@click.option("--tag", multiple=True, help="Only entries with one of these tags (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most N entries.")
@json_option
@handle_errors
def ls_cmd(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    kind: tuple[str, ...],
    status: tuple[str, ...],
    tag: tuple[str, ...],
    limit: int | None,
    as_json: bool,
) -> None:
    """List entries (JSON: an array of entries)."""
    with open_from_cli(store, options, scope) as provider:
        entries = list(provider.iter_entries(_query(kind, status, tag, limit)))
    if as_json:
        dump_json(entries)
    else:
        _print_entries(entries)


@cli.command()
@store_options
@click.argument("entry_id")
@json_option
@handle_errors
def show(store: str | None, scope: str | None, options: tuple[str, ...], entry_id: str, as_json: bool) -> None:
    """Show one entry by id."""
    with open_from_cli(store, options, scope) as provider:
        entry = provider.get(entry_id)
    if as_json:
        dump_json(entry)
        return
    console = _console()
    from rich.markup import escape

    console.print(f"[bold]{escape(entry.title or entry.id or '')}[/bold]  ({entry.kind.value}, {entry.status.value})")
    for field in ("id", "tags", "confidence", "source", "created_at", "updated_at", "scope", "parent"):
        value = getattr(entry, field)
        if value not in (None, [], ""):
            shown = ", ".join(value) if field == "tags" else value
            console.print(f"{field}: {shown}", markup=False)
    for rel in entry.relations:
        console.print(f"-> {rel.type}:{rel.target}", markup=False)
    console.print()
    console.print(entry.body, markup=False)


@cli.command()
@store_options
@click.argument("text", required=False)
@click.option("--kind", multiple=True, type=_kind_choice, help="Only this kind (repeatable).")
@click.option("--status", multiple=True, type=_status_choice, help="Only this status (repeatable).")
@click.option("--tag", multiple=True, help="Only entries with one of these tags (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True, help="At most N results.")
@json_option
@handle_errors
def search(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    text: str | None,
    kind: tuple[str, ...],
    status: tuple[str, ...],
    tag: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """Search entries by words and filters, best first, with the matching fragment.

    TEXT is memcore's query syntax (docs/search.md): words AND by default, OR, NOT (or -word),
    "exact phrase", prefix*, (groups); case and accents ignored, words stemmed. JSON: a list of
    entries, each with "score" and "snippet" (hits in [brackets]). Text with no searchable term
    (symbols, emoji) finds nothing, with a note on stderr.
    """
    from memcore.cli import _fast_search

    fast = None
    if _fast_search.enabled():
        fast = _fast_search.fast_search(
            store,
            parse_options(options, scope),
            text=text,
            kinds=list(kind) or None,
            statuses=list(status) or None,
            tags_any=list(tag) or None,
            limit=limit,
        )
    if fast is not None:
        if fast.note:
            click.echo(f"memcore: note: {fast.note}", err=True)
        if as_json:
            dump_json([{**entry, "score": score, "snippet": snippet} for entry, score, snippet in fast.hits])
            return
        rows = [(e["id"], e["kind"], e["status"], e["title"], e["body"], e["tags"]) for e, _, _ in fast.hits]
        _print_rows(rows, [snippet for _, _, snippet in fast.hits] if text and text.strip() else None)
        return
    from memcore.index import search_hits

    with open_from_cli(store, options, scope) as provider:
        hits = search_hits(provider, _query(kind, status, tag, limit, text))
    if hits.note:
        click.echo(f"memcore: note: {hits.note}", err=True)
    if as_json:
        dump_json([{**h.entry.model_dump(mode="json"), "score": h.score, "snippet": h.snippet} for h in hits])
        return
    _print_entries([h.entry for h in hits], [h.snippet for h in hits] if text and text.strip() else None)


@cli.command()
@store_options
@click.argument("text", required=False, default=None)
@click.option("--title", default="", help="One-line title.")
@click.option("--body", default=None, help="Body text; - reads stdin (default: stdin when piped, else empty).")
@click.option("--kind", type=_kind_choice, default=None, help="Kind (default: the format's own default).")
@click.option("--status", type=_status_choice, default=None, help="Status.")
@click.option("--tag", multiple=True, help="Tag (repeatable).")
@click.option("--source", default=None, help="Agent or origin that writes the entry.")
@click.option("--confidence", type=click.FloatRange(0, 1), default=None, help="0.0-1.0.")
@click.option("--relation", multiple=True, metavar="TYPE:TARGET", help="Typed edge (repeatable).")
@click.option("--extra", "extra_json", default=None, metavar="JSON", help="Namespaced extra fields as JSON.")
@json_option
@handle_errors
def add(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    text: str | None,
    title: str,
    body: str | None,
    kind: str | None,
    status: str | None,
    tag: tuple[str, ...],
    source: str | None,
    confidence: float | None,
    relation: tuple[str, ...],
    extra_json: str | None,
    as_json: bool,
) -> None:
    """Add one entry and print it (JSON: the created entry).

    TEXT, when given, is the body (as --body; - reads stdin): memcore add "Prefers tea."
    """
    from memcore.models import MemoryEntry, Relation

    if text is not None:
        if body is not None:
            raise click.UsageError("give the body once: as TEXT or as --body, not both")
        body = text
    if body is None:
        body = "" if sys.stdin is None or sys.stdin.isatty() else read_stdin()
    body = read_text_arg(body)
    relations = []
    for item in relation:
        rtype, sep, target = item.partition(":")
        if not sep or not rtype or not target:
            raise click.UsageError(f"--relation {item!r} must be TYPE:TARGET")
        relations.append(Relation(type=rtype, target=target))
    fields: dict[str, Any] = {
        "title": title,
        "body": body,
        "tags": list(tag),
        "source": source,
        "confidence": confidence,
        "relations": relations,
        "scope": scope,
    }
    if kind:
        fields["kind"] = Kind(kind)
    if status:
        fields["status"] = Status(status)
    if extra_json:
        try:
            fields["extra"] = json.loads(extra_json)
        except json.JSONDecodeError as exc:
            raise click.UsageError(f"--extra is not valid JSON: {exc}") from exc
    entry = MemoryEntry(**fields)
    with open_from_cli(store, options, scope) as provider:
        created = provider.add(entry)
    if as_json:
        dump_json(created)
    else:
        click.echo(f"added {created.id}")


@cli.command()
@store_options
@json_option
@handle_errors
def validate(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Check a store against its format's rules. Exit 1 when any error is found."""
    with open_from_cli(store, options, scope) as provider:
        diagnostics = provider.validate()
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    if as_json:
        dump_json(diagnostics)
    else:
        console = _console()
        for diag in diagnostics:
            console.print(str(diag), markup=False)
        warnings = sum(1 for d in diagnostics if d.severity is Severity.WARNING)
        console.print(f"{errors} error(s), {warnings} warning(s)", markup=False)
    sys.exit(1 if errors else 0)


@cli.command()
@store_options
@json_option
@handle_errors
def reindex(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Rebuild every index of a store (the same as `memcore index rebuild`)."""
    from memcore.cli.index import rebuild_all

    with open_from_cli(store, options, scope) as provider:
        rebuild_all(provider, as_json)


@cli.command()
@click.option("--model", type=click.Choice(["entry", "query", "diagnostic"]), default="entry", show_default=True)
@json_option
def schema(model: str, as_json: bool) -> None:
    """Print the JSON Schema of MemoryEntry (or Query, Diagnostic)."""
    from memcore.models import Diagnostic, MemoryEntry, Query

    models: dict[str, type[BaseModel]] = {"entry": MemoryEntry, "query": Query, "diagnostic": Diagnostic}
    cls = models[model]
    click.echo(json.dumps(cls.model_json_schema(), indent=2))


def _load_plugin_commands() -> None:
    """Register every command now: the core command modules', then the plugins'."""
    if getattr(cli, "_memcore_plugins_loaded", False):
        return
    cli._memcore_plugins_loaded = True  # type: ignore[attr-defined]
    from memcore.cli import _builtin_commands
    from memcore.plugins import get_plugin_manager

    _builtin_commands.register(cli)
    get_plugin_manager().hook.memcore_register_commands(cli=cli)
    from memcore.cli.format_ops import register_format_commands

    register_format_commands(cli)


def main(argv: list[str] | None = None) -> Any:
    """Run the ``memcore`` command (console-script entry point).

    A plugin that fails to load ends the command with exit status 2 and one line naming the plugin
    and its error; ``--debug`` (before the command name) or ``MEMCORE_DEBUG=1`` shows the traceback.
    Commands are registered as they are looked up (see :class:`_MemcoreGroup`), so start-up
    imports only what the command run needs.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    # The CLI uses no pydantic plugin; pydantic would otherwise scan every installed
    # distribution's entry points for one when the first model is built (docs/performance.md,
    # "Start-up"). Set PYDANTIC_DISABLE_PLUGINS yourself (even empty) to choose otherwise.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        return run_cli(cli, args)
    except PluginLoadError as exc:
        if os.environ.get("MEMCORE_DEBUG") or "--debug" in args[: args.index("--") if "--" in args else None]:
            raise
        if "--json" in args:
            click.echo(json.dumps(error_payload(exc), ensure_ascii=False, indent=2), err=True)
        else:
            click.echo(f"memcore: error: {exc}", err=True)
        sys.exit(2)
