"""RightMemory's format operations (``memcore rightmemory …``, MCP ``rightmemory_…``): F# detail files."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memcore.format_ops import EntryOutcome, FormatOperation, OperationInput, PathOutcome, entry_outcome

__all__ = ["OPERATIONS"]


class _HeadingInput(OperationInput):
    heading_id: str = Field(description="Id of the heading (`{#id}` / `{F#id}`).")


def _move_to_detail(provider: Any, args: _HeadingInput) -> dict[str, Any]:
    return {"path": provider.move_to_detail(args.heading_id)}


def _inline_detail(provider: Any, args: _HeadingInput) -> dict[str, Any]:
    provider.inline_detail(args.heading_id)
    return entry_outcome(provider.get(args.heading_id))


OPERATIONS = [
    FormatOperation(
        ("rightmemory",),
        "move_to_detail",
        "Turn a {#id} heading into {F#id}: its child nodes and headings move into its detail file "
        "(MEMORY_<id>.md / PURSUIT_<id>.md); the heading and its own body stay. Returns the file.",
        _HeadingInput,
        PathOutcome,
        _move_to_detail,
    ),
    FormatOperation(
        ("rightmemory",),
        "inline_detail",
        "Turn an {F#id} heading back into {#id}: its detail file's content moves under the heading "
        "and the file is removed. Returns the heading.",
        _HeadingInput,
        EntryOutcome,
        _inline_detail,
    ),
]
