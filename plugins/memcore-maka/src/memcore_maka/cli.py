"""The ``memcore maka`` command group: review PENDING.md proposals and render the prompt."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from memcore.cli.helpers import dump_json, handle_errors, json_option, open_from_cli, store_options
from memcore_maka.provider import MakaProvider

__all__ = ["maka_group"]


@contextmanager
def _open(store: str | None, options: tuple[str, ...], scope: str | None) -> Iterator[MakaProvider]:
    with open_from_cli(store, options, scope) as provider:
        if not isinstance(provider, MakaProvider):
            raise click.UsageError(f"`memcore maka` needs a maka store, got {type(provider).__name__}")
        yield provider


@click.group("maka")
def maka_group() -> None:
    """Maka memory: pending proposals (PENDING.md), prompt rendering, state."""


@maka_group.command("pending")
@store_options
@json_option
@handle_errors
def pending_cmd(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """List proposals waiting for review in PENDING.md."""
    with _open(store, options, scope) as provider:
        entries = provider.pending()
    if as_json:
        dump_json(entries)
        return
    for entry in entries:
        click.echo(f"{entry.id}\t{entry.status.value}\t{entry.title}")
    click.echo(f"{len(entries)} pending proposal(s)")


@maka_group.command("approve")
@store_options
@click.argument("proposal_id")
@click.option("--entry-id", default=None, help="Id of the new MEMORY.md entry (default: mem-<hash>).")
@json_option
@handle_errors
def approve_cmd(
    store: str | None,
    scope: str | None,
    options: tuple[str, ...],
    proposal_id: str,
    entry_id: str | None,
    as_json: bool,
) -> None:
    """Approve a proposal: it moves into MEMORY.md as an active entry."""
    with _open(store, options, scope) as provider:
        entry = provider.approve(proposal_id, entry_id=entry_id)
    if as_json:
        dump_json(entry)
    else:
        click.echo(f"approved {proposal_id} as {entry.id}")


@maka_group.command("reject")
@store_options
@click.argument("proposal_id")
@json_option
@handle_errors
def reject_cmd(store: str | None, scope: str | None, options: tuple[str, ...], proposal_id: str, as_json: bool) -> None:
    """Reject a proposal: it stays in PENDING.md marked rejected."""
    with _open(store, options, scope) as provider:
        entry = provider.reject(proposal_id)
    if as_json:
        dump_json(entry)
    else:
        click.echo(f"rejected {entry.id}")


@maka_group.command("render")
@store_options
@click.option("--session", "session_id", default=None, help="Current session id (session-scoped entries).")
@click.option("--budget", type=click.IntRange(min=1), default=12_000, show_default=True, help="UTF-16 units.")
@json_option
@handle_errors
def render_cmd(
    store: str | None, scope: str | None, options: tuple[str, ...], session_id: str | None, budget: int, as_json: bool
) -> None:
    """Print the prompt section a model would get (empty unless -o agent_read_enabled=true)."""
    with _open(store, options, scope) as provider:
        text = provider.render_prompt(session_id=session_id, budget=budget)
        state = provider.state
    if as_json:
        dump_json({"prompt": text, "status": state.status, "agent_read_enabled": state.agent_read_enabled})
    else:
        click.echo(text)


@maka_group.command("state")
@store_options
@json_option
@handle_errors
def state_cmd(store: str | None, scope: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Show Maka's state object (ok / disabled / safe_mode / incognito_blocked / error)."""
    with _open(store, options, scope) as provider:
        state = provider.state
    if as_json:
        dump_json(state.__dict__)
    else:
        for key, value in state.__dict__.items():
            click.echo(f"{key}: {value}")
