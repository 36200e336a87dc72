"""``memcore serve`` (the store as an MCP server) and ``memcore context`` (the prompt block).

Both honour the store's gates through its provider; see :mod:`memcore.mcp_server` and
:mod:`memcore.context`, and docs/mcp.md.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, parse_options, store_options
from memcore.config import resolve_store
from memcore.context import DEFAULT_BUDGET, MIN_BUDGET, agent_read_denied, build_context
from memcore.errors import ConfigError
from memcore.provider import MemoryProvider
from memcore.registry import get_registry

__all__ = ["register"]

_MARKER_START = "[memory truncated:"


def register(cli: click.Group) -> None:
    """Add ``serve`` and ``context`` to the ``memcore`` command group."""
    cli.add_command(serve)
    cli.add_command(context)


@click.command()
@store_options
@click.option(
    "--read-only",
    is_flag=True,
    help="Offer no write tool, and open the store with -o read_only=true (no write at all).",
)
@click.option(
    "--propose",
    is_flag=True,
    help="remember files a proposal for the user to review (formats with a review queue: Maka).",
)
@click.option(
    "--review-tools",
    is_flag=True,
    help="Also offer the format's review operations as tools (<format>_<operation>: WhiteBox promote/dispute, "
    "Maka approve/reject, …): the user's decisions, so off unless asked for.",
)
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address (--http).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="HTTP port (--http).")
@click.option("--path", "http_path", default="/mcp", show_default=True, help="HTTP endpoint path (--http).")
@click.option("--watch", is_flag=True, help="Keep the search index current while files change (as `memcore watch`).")
@handle_errors
def serve(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    read_only: bool,
    propose: bool,
    review_tools: bool,
    use_http: bool,
    host: str,
    port: int,
    http_path: str,
    watch: bool,
) -> None:
    """Serve a store to MCP clients (stdio by default; --http for streamable HTTP).

    Tools: remember, recall, get, list, update, edit, insert, rename, move, relate, unrelate,
    supersede, archive, delete, graph, recent, validate (only those the format allows; none that
    write with --read-only; none when agents may not read the store); with --review-tools also
    the format's own operations (whitebox_promote, maka_approve, rightmemory_move_to_detail, …).
    Prompts: recall, remember, continue, review. Resources: memcore://context and memcore://entries/<id>. Every request
    goes through the store's provider with --scope and -o options, so the format's rules and
    gates hold; what they refuse is printed at start-up on stderr, naming the option that
    changes it (see docs/mcp.md).
    """
    try:
        import anyio

        from memcore import mcp_server
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"`memcore serve` needs the MCP SDK ({exc.name} is missing): from a memcore checkout "
            "`pip install -e '.[mcp]'`; once published on PyPI `pip install 'memcore-unified[mcp]'`"
        ) from exc

    spec = resolve_store(store, registry=get_registry())
    provider_cls = get_registry().get(spec.format_name)
    provider_options: dict[str, Any] = {**spec.options, **parse_options(options, scope)}
    if read_only:
        # Also open the store read-only where the provider has the option, so that not even a
        # read writes (Maka archives expired entries in the file as it reads them).
        provider_options["read_only"] = True

    def opener() -> MemoryProvider:
        provider: MemoryProvider = provider_cls(spec.location, **provider_options)
        return provider.open()

    if watch:
        from memcore.index import start_watch_thread

        start_watch_thread(opener)  # a daemon thread: it ends with the server
    toolbox = mcp_server.MemoryToolbox(
        opener, read_only=read_only, scope=scope, propose=propose, review_tools=review_tools
    )
    for note in toolbox.gate_notes():  # what the gates refuse, and the option that changes it
        click.echo(f"memcore: note: {note}", err=True)
    server = mcp_server.create_server(toolbox)
    if use_http:
        click.echo(f"memcore: serving {spec.url} at http://{host}:{port}{http_path}", err=True)
        try:
            anyio.run(lambda: mcp_server.serve_http(server, host=host, port=port, path=http_path))
        except KeyboardInterrupt:
            pass
        return
    anyio.run(mcp_server.serve_stdio, server)
    # The client closed stdin. Every request has finished its writes and released its locks,
    # so skip the interpreter's teardown (about half a second of finalising the SDK's objects):
    # MCP clients wait for the process to exit before they restart or move on.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@click.command()
@store_options
@click.option("-q", "--query", default=None, help="Rank memories by relevance to this text.")
@click.option(
    "--budget",
    type=click.IntRange(min=MIN_BUDGET),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Maximum length of the block, in characters.",
)
@json_option
@handle_errors
def context(
    store: str | None, scope: str | None, options: tuple[str, ...], query: str | None, budget: int, as_json: bool
) -> None:
    """Print the memory block for a system prompt: active entries, most relevant first.

    Empty (with a note on stderr) when the store does not let agents read it, e.g. Maka with
    agent read off. JSON: {store, query, budget, chars, truncated, denied, context}.
    """
    with open_from_cli(store, options, scope) as provider:
        denied = agent_read_denied(provider)
        block = build_context(provider, query=query, budget=budget)
        url = f"{provider.format_name}:{provider.location}"
    if as_json:
        dump_json(
            {
                "store": url,
                "query": query,
                "budget": budget,
                "chars": len(block),
                "truncated": _MARKER_START in block.rsplit("\n", 1)[-1],
                "denied": denied,
                "context": block,
            }
        )
        return
    if denied:
        click.echo(f"memcore: note: {denied}", err=True)
    click.echo(block, nl=not block.endswith("\n") and bool(block))
