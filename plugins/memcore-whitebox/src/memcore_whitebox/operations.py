"""WhiteBox's format operations (``memcore whitebox …``, MCP ``whitebox_…``): promotion and disputes."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memcore.format_ops import (
    EntryOutcome,
    FormatOperation,
    OperationInput,
    RowsOutcome,
    as_of_date,
    entry_outcome,
)

__all__ = ["OPERATIONS"]


class _PromoteInput(OperationInput):
    dry_run: bool = Field(default=False, description="Report candidates; write nothing.")
    threshold: int = Field(
        default=3, ge=1, description="Matching observations of confidence medium or higher needed (spec rule)."
    )
    as_of: str | None = Field(default=None, description="Reference date for recency, YYYY-MM-DD (default: today).")


class _DisputeInput(OperationInput):
    fact_id: str = Field(description="Id of the stable fact disputed.")
    body: str = Field(description="What contradicts it.")
    source: str | None = Field(default=None, description="Where the contradiction comes from.")
    confidence: float | None = Field(default=None, ge=0, le=1, description="Confidence, 0-1.")
    tags: list[str] = Field(default_factory=list, description="More tags (`conflict` is always added).")


class _ProposeEditInput(OperationInput):
    target: str = Field(description="Vault-relative path of the stable file to change.")
    content: str = Field(description="The proposed new content.")
    rationale: str = Field(description="Why the change is proposed.")
    source: str = Field(default="memcore", description="Who proposes it.")


def _promote(provider: Any, args: _PromoteInput) -> dict[str, Any]:
    from memcore_whitebox.promotion import run_promotion

    rows = run_promotion(provider, dry_run=args.dry_run, threshold=args.threshold, as_of=as_of_date(args.as_of))
    return {"rows": rows, "failed": sum(1 for row in rows if row["action"] == "failed")}


def _dispute(provider: Any, args: _DisputeInput) -> dict[str, Any]:
    entry = provider.dispute(args.fact_id, args.body, source=args.source, confidence=args.confidence, tags=args.tags)
    return entry_outcome(entry)


def _propose_stable_edit(provider: Any, args: _ProposeEditInput) -> dict[str, Any]:
    entry = provider.propose_stable_edit(
        args.target, source=args.source, rationale=args.rationale, content=args.content
    )
    return entry_outcome(entry)


OPERATIONS = [
    FormatOperation(
        ("whitebox",),
        "promote",
        "Find observations ready for promotion and write proposals for them (or facts, where "
        "scopes.md / promotion.md authorises auto-promotion). Returns one row per tag group.",
        _PromoteInput,
        RowsOutcome,
        _promote,
    ),
    FormatOperation(
        ("whitebox",),
        "dispute",
        "Dispute a stable fact the spec's way: append an observation tagged `conflict` with a "
        "`disputes` relation to the fact. Returns the observation.",
        _DisputeInput,
        EntryOutcome,
        _dispute,
    ),
    FormatOperation(
        ("whitebox",),
        "propose_stable_edit",
        "Write proposed/<timestamp>-<slug>.md proposing a change of a stable file, for the user "
        "to review (proposeStableEdit). Returns the proposal.",
        _ProposeEditInput,
        EntryOutcome,
        _propose_stable_edit,
    ),
]
