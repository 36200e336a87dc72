"""Box memory's format operations (``memcore box …``, MCP ``box_…``): companions and indexes."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memcore.format_ops import (
    DiagnosticsOutcome,
    EntryOutcome,
    FormatOperation,
    OperationInput,
    diagnostics_outcome,
    entry_outcome,
)
from memcore.models import MemoryEntry

__all__ = ["OPERATIONS"]

_FORMATS = ("box", "box+cloud")


class _CompanionInput(OperationInput):
    binary: str = Field(description="Workspace-relative path of the binary the memory describes.")
    body: str = Field(description="What the binary holds (Markdown).")
    title: str | None = Field(default=None, description="Title (default: `Companion — <filename>`).")
    tags: list[str] = Field(default_factory=list, description="Tags (default: companion, <extension>).")
    reviewed_by: str | None = Field(default=None, description="Who reviewed the binary (default: the source).")
    source: str | None = Field(default=None, description="Who writes the memory.")


class _NoInput(OperationInput):
    pass


def _add_companion(provider: Any, args: _CompanionInput) -> dict[str, Any]:
    entry = MemoryEntry(**args.model_dump(include={"body", "title", "tags", "source"}, exclude_none=True))
    return entry_outcome(provider.add_companion(args.binary, entry, reviewed_by=args.reviewed_by))


def _reindex(provider: Any, args: _NoInput) -> dict[str, Any]:
    return diagnostics_outcome(provider.reindex())


OPERATIONS = [
    FormatOperation(
        _FORMATS,
        "add_companion",
        "Write the companion memory of a binary in the workspace (its hash, size and mime type "
        "recorded in companion_for). Returns the memory.",
        _CompanionInput,
        EntryOutcome,
        _add_companion,
    ),
    FormatOperation(
        _FORMATS,
        "reindex",
        "Rebuild the workspace's _index.json files from the memory files. Returns what it found.",
        _NoInput,
        DiagnosticsOutcome,
        _reindex,
    ),
]
