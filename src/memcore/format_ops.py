"""Format operations: what one format can do beyond the common contract, declared once.

A plugin returns :class:`FormatOperation` objects from the ``memcore_register_format_operations``
hook (WhiteBox ``promote``/``dispute``/``propose_stable_edit``, Maka ``approve``/``reject``/
``propose``, RightMemory ``move_to_detail``/``inline_detail``, Box ``add_companion``/``reindex``).
From each declaration core builds:

- a CLI command in the format's group, ``memcore <format> <name-with-dashes>``, one option per
  field of the operation's input model (a command the plugin registers itself under the same
  name is kept instead: ``memcore whitebox promote`` prints its own table);
- an MCP tool ``<format>_<name>`` with the input model as its input schema and the output model
  as its output schema, offered only by ``memcore serve --review-tools`` (these are the user's
  review decisions), never with ``--read-only`` when the operation writes.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memcore.models import Diagnostic, MemoryEntry

__all__ = [
    "DiagnosticsOutcome",
    "EntryOutcome",
    "FormatOperation",
    "OperationInput",
    "PathOutcome",
    "RowsOutcome",
    "as_of_date",
    "diagnostics_outcome",
    "entry_data",
    "entry_outcome",
    "operations",
    "operations_for",
]


class OperationInput(BaseModel):
    """Base of an operation's input model: unknown arguments are refused."""

    model_config = ConfigDict(extra="forbid")


class EntryOutcome(BaseModel):
    """An operation's result: one entry as stored."""

    entry: dict[str, Any] = Field(description="The entry as stored (MemoryEntry fields, empty ones left out).")


class PathOutcome(BaseModel):
    """An operation's result: the file it wrote."""

    path: str = Field(description="The file written, relative to the store.")


class DiagnosticsOutcome(BaseModel):
    """An operation's result: what it found."""

    diagnostics: list[dict[str, Any]] = Field(description="Diagnostics (path, line, code, severity, message).")
    errors: int = Field(description="How many are errors.")


class RowsOutcome(BaseModel):
    """An operation's result: one row per item it considered."""

    rows: list[dict[str, Any]] = Field(description="One object per item considered.")
    failed: int = Field(default=0, description="How many rows failed (the command then exits 1).")


def entry_data(entry: MemoryEntry) -> dict[str, Any]:
    """Return an entry as tools hand it out: JSON values, empty fields (but title and body) left out."""
    data = entry.model_dump(mode="json", exclude_none=True)
    if not entry.date_only:
        data.pop("date_only", None)
    return {k: v for k, v in data.items() if v not in ([], {}) or k in ("title", "body")}


def entry_outcome(entry: MemoryEntry) -> dict[str, Any]:
    """Return ``{"entry": …}`` for :class:`EntryOutcome` (see :func:`entry_data`)."""
    return {"entry": entry_data(entry)}


def diagnostics_outcome(found: list[Diagnostic]) -> dict[str, Any]:
    """Return ``{"diagnostics": […], "errors": n}`` for :class:`DiagnosticsOutcome`."""
    rows = [d.model_dump(mode="json", exclude_none=True) for d in found]
    return {"diagnostics": rows, "errors": sum(1 for d in found if d.severity.value == "error")}


@dataclass(frozen=True)
class FormatOperation:
    """One operation of one format, from which the CLI command and the MCP tool are built.

    Attributes:
        formats: The ``format_name`` values it applies to (``("box", "box+cloud")``); the
            first is the CLI group and the MCP tool prefix.
        name: Operation name (``move_to_detail``); the CLI command uses dashes.
        description: What it does, for users and models (first sentence: the CLI help line).
        input_model: Pydantic model of its arguments (fields: ``str``, ``int``, ``float``,
            ``bool``, ``list[str]``, each optional or not).
        output_model: Pydantic model of the object ``run`` returns (the MCP output schema).
        run: ``run(provider, args) -> dict`` doing it on an open store of one of ``formats``.
        writes: Whether it changes the store (refused on a read-only store, not offered by
            ``memcore serve --read-only``).
    """

    formats: tuple[str, ...]
    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    run: Callable[[Any, Any], dict[str, Any]]
    writes: bool = True

    @property
    def tool_name(self) -> str:
        """The MCP tool name: ``<format>_<name>`` (``rightmemory_move_to_detail``)."""
        return f"{self.formats[0]}_{self.name}"

    @property
    def command_name(self) -> str:
        """The CLI command name in the format's group: ``move-to-detail``."""
        return self.name.replace("_", "-")


def operations() -> tuple[FormatOperation, ...]:
    """Return every installed plugin's format operations, in plugin order."""
    from memcore.plugins import get_plugin_manager

    found: list[FormatOperation] = []
    for batch in get_plugin_manager().hook.memcore_register_format_operations():
        found.extend(batch)
    return tuple(found)


def operations_for(format_name: str) -> list[FormatOperation]:
    """Return the format operations that apply to stores of ``format_name``."""
    return [op for op in operations() if format_name in op.formats]


def as_of_date(text: str | None) -> _dt.datetime | None:
    """Parse a ``YYYY-MM-DD`` argument as midnight UTC (``None`` stays ``None``).

    Raises:
        ValueError: ``text`` is not a date.
    """
    if not text:
        return None
    return _dt.datetime.fromisoformat(text).replace(tzinfo=_dt.UTC)
