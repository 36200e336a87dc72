"""Maka's format operations (``memcore maka …``, MCP ``maka_…``): the PENDING.md review queue."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from memcore.format_ops import EntryOutcome, FormatOperation, OperationInput, entry_data, entry_outcome
from memcore.models import Kind, MemoryEntry

__all__ = ["OPERATIONS"]


class _ProposeInput(OperationInput):
    body: str = Field(description="The memory's text.")
    title: str | None = Field(default=None, description="A short title.")
    kind: Kind | None = Field(default=None, description="fact, preference, decision, …")
    tags: list[str] = Field(default_factory=list, description="Tags.")
    source: str | None = Field(default=None, description="Who proposes it.")


class _ApproveInput(OperationInput):
    proposal_id: str = Field(description="Id of the pending proposal.")
    entry_id: str | None = Field(default=None, description="Id of the new MEMORY.md entry (default: mem-<hash>).")


class _RejectInput(OperationInput):
    proposal_id: str = Field(description="Id of the pending proposal.")


class _NoInput(OperationInput):
    pass


class _PendingOutcome(BaseModel):
    """The proposals waiting for review."""

    entries: list[dict[str, Any]] = Field(description="Each pending proposal (MemoryEntry fields).")


def _pending(provider: Any, args: _NoInput) -> dict[str, Any]:
    return {"entries": [entry_data(entry) for entry in provider.pending()]}


def _propose(provider: Any, args: _ProposeInput) -> dict[str, Any]:
    fields = args.model_dump(exclude_none=True)
    return entry_outcome(provider.propose(MemoryEntry(**fields)))


def _approve(provider: Any, args: _ApproveInput) -> dict[str, Any]:
    return entry_outcome(provider.approve(args.proposal_id, entry_id=args.entry_id))


def _reject(provider: Any, args: _RejectInput) -> dict[str, Any]:
    return entry_outcome(provider.reject(args.proposal_id))


OPERATIONS = [
    FormatOperation(
        ("maka",),
        "pending",
        "List the proposals waiting for review in PENDING.md.",
        _NoInput,
        _PendingOutcome,
        _pending,
        writes=False,
    ),
    FormatOperation(
        ("maka",),
        "propose",
        "File a memory in PENDING.md as a proposal waiting for the user's review. Returns the proposal.",
        _ProposeInput,
        EntryOutcome,
        _propose,
    ),
    FormatOperation(
        ("maka",),
        "approve",
        "Approve a pending proposal: it moves into MEMORY.md as an active entry. Returns the entry.",
        _ApproveInput,
        EntryOutcome,
        _approve,
    ),
    FormatOperation(
        ("maka",),
        "reject",
        "Reject a pending proposal: it stays in PENDING.md marked rejected. Returns the proposal.",
        _RejectInput,
        EntryOutcome,
        _reject,
    ),
]
