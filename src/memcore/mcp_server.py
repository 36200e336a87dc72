"""``memcore serve``: any memcore store as a Model Context Protocol server.

Built on the official ``mcp`` Python SDK (2.x, low-level :class:`mcp.server.Server`), over stdio
or, with ``--http``, streamable HTTP bound to 127.0.0.1. docs/mcp.md shows how to register it in
an MCP client.

Tools (only those the store can do are listed; ``--read-only`` drops every write tool; none
at all when :func:`memcore.context.agent_read_denied` says agents may not read the store). Each
has an input schema and an output schema (its structured content), both from pydantic models:

============  ===========================  ==============================================
tool          needs                        does
============  ===========================  ==============================================
remember      ``Capability.ADD``           ``provider.add``
recall        -                            ranked search with filters
get           -                            ``provider.get``
list          -                            ``provider.iter_entries`` (summaries, paged)
update        ``Capability.UPDATE``        ``provider.update`` (read, change, write)
edit          ``Capability.UPDATE``        :func:`memcore.ops.edit` (str_replace in the body)
insert        ``Capability.UPDATE``        :func:`memcore.ops.insert`
rename        ``Capability.UPDATE``        :func:`memcore.ops.rename`
move          ``Capability.UPDATE``        :func:`memcore.ops.move` (new parent)
relate        ``Capability.UPDATE``        :func:`memcore.ops.relate`, several edges
unrelate      ``Capability.UPDATE``        :func:`memcore.ops.unrelate`, several edges
supersede     ``Capability.SUPERSEDE``     ``provider.supersede``
archive       ``Capability.ARCHIVE``       ``provider.archive``
delete        ``Capability.DELETE``        ``provider.delete``
graph         -                            :func:`memcore.ops.graph` (around an entry, or all)
recent        -                            :func:`memcore.ops.recent`
validate      -                            ``provider.validate``
============  ===========================  ==============================================

With ``review_tools`` (``memcore serve --review-tools``) also each format operation of the
store's format (:mod:`memcore.format_ops`), as ``<format>_<operation>``; without it the gate
notes name the option.

Prompts (:data:`PROMPTS`, offered when their tools are): ``recall``, ``remember``, ``continue``
(embeds the context block), ``review``.

Resources: ``memcore://context`` (the :func:`memcore.context.build_context` block) and
``memcore://entries/<percent-encoded id>`` (one entry as Markdown), with the template
``memcore://entries/{id}``.

Gates. The server never reads or writes files itself: every request opens the store through its
provider (with the ``--scope`` and ``-o`` options given at start), so the provider's rules hold
(WhiteBox scopes and ``sensitive/``, append-only observations and proposals, Box-memory held
memories, Maka's 128 KiB safe mode…). Before anything else each request asks
:func:`memcore.context.agent_read_denied`; when the provider says agents may not read (Maka
with agent read off, incognito), every tool answers with that reason as a tool error and no
resource is listed or read, and no tool or prompt is offered.
:meth:`MemoryToolbox.gate_notes` says what the gates refuse, naming the option that changes
each; ``memcore serve`` prints it at start-up and the server sends it in its instructions. Every
entry handed out passes :func:`memcore.context.agent_view`
(a provider may hide or redact single entries for agents); a hidden entry is "not found" to
every tool, writes included. Errors come back as tool results with ``isError`` set and the CLI's
message (``memcore: error: …``).
"""

from __future__ import annotations

import copy
import json
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from types import GenericAlias
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from memcore import __version__, ops
from memcore.context import (
    DEFAULT_BUDGET,
    agent_entries,
    agent_read_denied,
    agent_view,
    build_context,
    render_entry,
    score_entries,
)
from memcore.errors import ConfigError, EntryNotFoundError, MemcoreError, ReadOnlyStoreError
from memcore.format_ops import FormatOperation, operations_for
from memcore.format_ops import entry_data as _entry_data
from memcore.index import scan_hits
from memcore.models import Diagnostic, MemoryEntry, Query, utc_now
from memcore.provider import Capability, MemoryProvider

__all__ = [
    "CONTEXT_URI",
    "DEFAULT_SOURCE",
    "ENTRY_URI_PREFIX",
    "MemoryToolbox",
    "PROMPTS",
    "PromptSpec",
    "TOOLS",
    "ToolOutcome",
    "ToolSpec",
    "create_server",
    "entry_uri",
    "serve_http",
    "serve_stdio",
]

log = logging.getLogger("memcore.mcp")

#: URI of the context block resource.
CONTEXT_URI = "memcore://context"
#: Prefix of an entry resource; the entry id follows, percent-encoded (``/`` too).
ENTRY_URI_PREFIX = "memcore://entries/"
#: ``source`` written on entries added through the server when the client gives none.
DEFAULT_SOURCE = "memcore-mcp"
#: Entries per ``resources/list`` page.
RESOURCE_PAGE = 500

Opener = Callable[[], MemoryProvider]
"""Returns a freshly opened provider for one request; the toolbox closes it."""


def entry_uri(entry_id: str) -> str:
    """Return the resource URI of an entry (``memcore://entries/<percent-encoded id>``)."""
    return ENTRY_URI_PREFIX + quote(entry_id, safe="")


# -- tool input models, derived from memcore.models ----------------------------------------

_DESCRIPTIONS = {
    "kind": "What the memory is (fact, observation, decision, task, preference, note…).",
    "title": "One-line title.",
    "body": "The memory itself, Markdown.",
    "status": "Lifecycle state; usually leave the default.",
    "tags": "Tags in order, namespaces kept (e.g. 'project:memcore').",
    "confidence": "How sure the writer is, 0.0-1.0.",
    "source": f"Agent or origin writing the entry (default {DEFAULT_SOURCE!r}).",
    "relations": "Typed edges to other entries: [{type, target}].",
    "parent": "Id of the containing entry, for formats with containment.",
    "expires_at": "When the memory stops being valid (ISO 8601 with timezone).",
    "text": (
        "What to look for in title, body and tags: words (stemmed; case and accents ignored), "
        'OR, NOT, "exact phrase", prefix*, (groups); see docs/search.md.'
    ),
    "kinds": "Only these kinds.",
    "statuses": "Only these statuses.",
    "tags_any": "At least one of these tags.",
    "tags_all": "All of these tags.",
    "created_after": "Created at or after this time (ISO 8601).",
    "created_before": "Created strictly before this time (ISO 8601).",
}

#: Entry fields a client may write. ``id``, timestamps and ``version`` belong to the provider;
#: ``scope`` comes from the server's ``--scope``; ``extra`` (format internals) is not exposed.
_WRITABLE = ("kind", "title", "body", "status", "tags", "confidence", "source", "relations", "parent", "expires_at")
_FILTERS = ("kinds", "statuses", "tags_any", "tags_all", "parent", "created_after", "created_before")


def _field(model: type[BaseModel], name: str, *, optional: bool = False) -> tuple[Any, FieldInfo]:
    info = copy.copy(model.model_fields[name])
    info.description = _DESCRIPTIONS.get(name, info.description)
    annotation: Any = info.annotation
    if optional:
        info.default = None
        info.default_factory = None
        annotation = annotation | None
    return annotation, info


_CONFIG = ConfigDict(extra="forbid")


def _model(name: str, fields: dict[str, Any]) -> type[BaseModel]:
    model: type[BaseModel] = create_model(name, __config__=_CONFIG, **fields)
    return model


def _id_field(description: str) -> tuple[Any, Any]:
    return str, Field(min_length=1, description=description)


RememberInput = _model("RememberInput", {n: _field(MemoryEntry, n) for n in _WRITABLE})
GetInput = _model("GetInput", {"id": _id_field("The entry's id.")})
RecallInput = _model(
    "RecallInput",
    {
        "text": (str | None, Field(default=None, description=_DESCRIPTIONS["text"])),
        "match": (
            str,
            Field(
                default="any",
                pattern="^(any|all)$",
                description="'any': entries holding at least one of the words, best first; "
                "'all': entries holding every word (the store's own search).",
            ),
        ),
        **{n: _field(Query, n) for n in _FILTERS},
        "limit": (int, Field(default=20, ge=1, le=500, description="At most this many entries.")),
    },
)
ListInput = _model(
    "ListInput",
    {
        **{n: _field(Query, n) for n in _FILTERS},
        "limit": (int, Field(default=100, ge=1, le=1000, description="At most this many entries.")),
        "offset": (int, Field(default=0, ge=0, description="Skip this many entries (paging).")),
    },
)
UpdateInput = _model(
    "UpdateInput",
    {
        "id": _id_field("Id of the entry to change."),
        "expected_version": (
            str | None,
            Field(default=None, description="Version token from get/recall; refused if the entry changed since."),
        ),
        **{n: _field(MemoryEntry, n, optional=True) for n in _WRITABLE},
    },
)
SupersedeInput = _model(
    "SupersedeInput",
    {"old_id": _id_field("Id of the entry the new one replaces."), **{n: _field(MemoryEntry, n) for n in _WRITABLE}},
)
ArchiveInput = _model("ArchiveInput", {"id": _id_field("Id of the entry to archive.")})
ValidateInput = _model("ValidateInput", {})
DeleteInput = _model("DeleteInput", {"id": _id_field("Id of the entry to remove.")})
_EXPECTED = (
    str | None,
    Field(default=None, description="Version token from get/recall; refused if the entry changed since."),
)
EditInput = _model(
    "EditInput",
    {
        "id": _id_field("Id of the entry to change."),
        "old": (str, Field(min_length=1, description="The exact text to replace; it must occur once in the body.")),
        "new": (str, Field(default="", description="The text to put in its place (empty: remove it).")),
        "expected_version": _EXPECTED,
    },
)
InsertInput = _model(
    "InsertInput",
    {
        "id": _id_field("Id of the entry to change."),
        "text": (str, Field(min_length=1, description="The lines to insert.")),
        "line": (
            int | None,
            Field(default=None, ge=0, description="Insert before this 0-based line of the body (default: at the end)."),
        ),
        "expected_version": _EXPECTED,
    },
)
RenameInput = _model(
    "RenameInput",
    {"id": _id_field("Id of the entry to rename."), "title": (str, Field(min_length=1, description="The new title."))},
)
MoveInput = _model(
    "MoveInput",
    {
        "id": _id_field("Id of the entry to move."),
        "parent": (str | None, Field(description="Id of the entry to move it under; null: the top level.")),
    },
)


class RelationArg(BaseModel):
    """One typed edge to add or remove: ``source -type-> target``."""

    model_config = _CONFIG
    source: str = Field(min_length=1, description="Id of the entry the edge starts from.")
    type: str = Field(min_length=1, description="Relation type (related, depends_on, … or the format's own).")
    target: str = Field(min_length=1, description="Id of the entry it points at.")


_RELATIONS = (list[RelationArg], Field(min_length=1, max_length=100, description="The edges, applied in order."))
RelateInput = _model("RelateInput", {"relations": _RELATIONS})
UnrelateInput = _model("UnrelateInput", {"relations": _RELATIONS})
GraphInput = _model(
    "GraphInput",
    {
        "id": (
            str | None,
            Field(default=None, min_length=1, description="Start entry; omit it to read the whole graph."),
        ),
        "depth": (
            int,
            Field(default=1, ge=0, le=ops.MAX_DEPTH, description="Levels of edges to follow (both directions)."),
        ),
    },
)
RecentInput = _model(
    "RecentInput",
    {
        "since": (
            datetime | None,
            Field(default=None, description="Only entries changed at or after this time (ISO 8601 with timezone)."),
        ),
        "limit": (int, Field(default=20, ge=1, le=500, description="At most this many entries.")),
    },
)

# -- tool output models: the structured content each tool returns ---------------------------


def _optional(annotation: Any) -> Any:
    return annotation | None


#: An entry as tools return it: every :class:`MemoryEntry` field, each left out when empty.
_ENTRY_FIELDS: dict[str, Any] = {
    name: (_optional(info.annotation), Field(default=None, description=_DESCRIPTIONS.get(name, info.description)))
    for name, info in MemoryEntry.model_fields.items()
}
EntryOut = _model("EntryOut", _ENTRY_FIELDS)
_ENTRY_LIST: Any = GenericAlias(list, (EntryOut,))
#: A search hit: the entry and the passage that matched (docs/search.md).
HitOut = _model(
    "HitOut",
    {
        **_ENTRY_FIELDS,
        "snippet": (str | None, Field(default=None, description="The matching passage, hits in [brackets].")),
    },
)


class SummaryOut(BaseModel):
    """One line of a listing."""

    id: str | None
    kind: str
    status: str
    title: str
    tags: list[str] | None = None
    updated_at: str | None = None


class NodeOut(SummaryOut):
    """An entry of a graph read, with its distance from the start entry."""

    depth: int = Field(description="Edges between this entry and the start entry (0: the start).")


class EdgeOut(BaseModel):
    """A typed edge; ``parent`` edges are containment (child -> parent)."""

    source: str
    type: str
    target: str


class DiagnosticOut(BaseModel):
    """A finding of ``validate``."""

    path: str | None = None
    line: int | None = None
    column: int | None = None
    code: str
    severity: str
    message: str
    entry_id: str | None = None


EntryResult = _model(
    "EntryResult",
    {
        "entry": (EntryOut, Field(description="The entry as stored.")),
        "proposed": (bool | None, Field(default=None, description="True: filed as a proposal for review.")),
    },
)
EntriesResult = _model(
    "EntriesResult",
    {"entries": (_ENTRY_LIST, ...), "total": (int, Field(description="Matches before the limit."))},
)
RecallResult = _model(
    "RecallResult",
    {
        "entries": (GenericAlias(list, (HitOut,)), ...),
        "total": (int, Field(description="Matches before the limit.")),
        "note": (str | None, Field(default=None, description="Why nothing could match (e.g. no searchable term).")),
    },
)
ListResult = _model(
    "ListResult",
    {
        "entries": (list[SummaryOut], ...),
        "total": (int, ...),
        "next_offset": (int | None, Field(default=None, description="Offset of the next page, if any.")),
    },
)
DeleteResult = _model("DeleteResult", {"deleted": (str, Field(description="Id of the entry removed."))})
RelationsResult = _model(
    "RelationsResult", {"entries": (_ENTRY_LIST, Field(description="Each changed entry as stored, in order."))}
)
GraphResult = _model("GraphResult", {"entries": (list[NodeOut], ...), "edges": (list[EdgeOut], ...)})
ValidateResult = _model(
    "ValidateResult",
    {"diagnostics": (list[DiagnosticOut], ...), "errors": (int, Field(description="How many are errors."))},
)


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` with every local ``$ref`` replaced by its definition (no ``$defs``)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = walk(defs[ref.split("/")[-1]])
                rest = {k: walk(v) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result: dict[str, Any] = walk(schema)
    return result


@dataclass(frozen=True)
class ToolSpec:
    """One tool the server may offer.

    Attributes:
        name: Tool name.
        description: What it does, for the model.
        input_model: Pydantic model of its arguments; the JSON Schema is derived from it.
        output_model: Pydantic model of its structured result (the tool's output schema).
        capability: Capability the store needs for the tool to be listed, or ``None``.
        writes: Whether it changes the store (dropped by ``--read-only``).
    """

    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    capability: Capability | None = None
    writes: bool = False

    def input_schema(self) -> dict[str, Any]:
        """Return the tool's JSON Schema (``$ref``s inlined, ``additionalProperties: false``)."""
        return _inline_refs(self.input_model.model_json_schema())

    def output_schema(self) -> dict[str, Any]:
        """Return the JSON Schema of the tool's structured content (``$ref``s inlined)."""
        return _inline_refs(self.output_model.model_json_schema(mode="serialization"))


def _operation_tool(op: FormatOperation) -> ToolSpec:
    """Return the tool of a format operation (``<format>_<name>``, its models as schemas)."""
    suffix = " A review decision of the user's: do it only when the user asked for it."
    return ToolSpec(op.tool_name, op.description + suffix, op.input_model, op.output_model, writes=op.writes)


_WRITE_RULES = " The format's own rules apply (append-only or held entries refuse it, naming the rule)."

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember",
        "Store a new memory. The store's own rules apply (e.g. WhiteBox may record a proposal "
        "instead of changing a stable fact). Returns the entry as stored, with its id.",
        RememberInput,
        EntryResult,
        Capability.ADD,
        writes=True,
    ),
    ToolSpec(
        "recall",
        "Search memories by words and filters; best matches first. Returns full entries.",
        RecallInput,
        RecallResult,
    ),
    ToolSpec("get", "Return one memory by id, in full.", GetInput, EntryResult),
    ToolSpec(
        "list",
        "List memories (id, kind, status, title, tags, updated_at) with filters and paging.",
        ListInput,
        ListResult,
    ),
    ToolSpec(
        "update",
        "Change fields of an existing memory; give only the fields to change. Pass "
        "expected_version from get/recall to refuse overwriting a newer change." + _WRITE_RULES,
        UpdateInput,
        EntryResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "edit",
        "Replace one exact string in a memory's body (like str_replace): `old` must occur exactly "
        "once, else nothing is written and the error says how often it occurs." + _WRITE_RULES,
        EditInput,
        EntryResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "insert",
        "Insert lines into a memory's body, before a 0-based line or at the end." + _WRITE_RULES,
        InsertInput,
        EntryResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "rename",
        "Give a memory a new title (where the format derives ids from titles, use the returned id)." + _WRITE_RULES,
        RenameInput,
        EntryResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "move",
        "Move a memory under another one (its parent), or to the top level with parent null. A "
        "format whose containment is its file structure may refuse it, naming the rule.",
        MoveInput,
        EntryResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "relate",
        "Add typed edges between memories ({source, type, target}; both must exist); an edge "
        "already there is left as it is." + _WRITE_RULES,
        RelateInput,
        RelationsResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "unrelate",
        "Remove typed edges between memories ({source, type, target}).",
        UnrelateInput,
        RelationsResult,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "supersede",
        "Add a new memory that replaces old_id; the old one is kept, marked superseded.",
        SupersedeInput,
        EntryResult,
        Capability.SUPERSEDE,
        writes=True,
    ),
    ToolSpec(
        "archive",
        "Mark a memory archived (kept, no longer active).",
        ArchiveInput,
        EntryResult,
        Capability.ARCHIVE,
        writes=True,
    ),
    ToolSpec(
        "delete",
        "Remove a memory for good (prefer archive or supersede to keep its history).",
        DeleteInput,
        DeleteResult,
        Capability.DELETE,
        writes=True,
    ),
    ToolSpec(
        "graph",
        "Read the memories around one memory to a depth (edges and parent links followed both "
        "ways), or the whole graph without an id: entries (summaries with their depth) and edges.",
        GraphInput,
        GraphResult,
    ),
    ToolSpec(
        "recent",
        "List the memories changed most recently (updated, else created), newest first; `since` "
        "keeps those changed at or after a time.",
        RecentInput,
        ListResult,
    ),
    ToolSpec(
        "validate", "Check the store against its format's rules; returns diagnostics.", ValidateInput, ValidateResult
    ),
)


# -- the format-independent logic --------------------------------------------------------


@dataclass
class ToolOutcome:
    """The result of one tool call.

    Attributes:
        data: JSON-compatible result (an object), also sent as structured content.
        is_error: Whether the call failed; ``data`` is then ``{"error": message}``.
    """

    data: dict[str, Any]
    is_error: bool = False

    @property
    def text(self) -> str:
        """The text content sent to the client: the error message, or ``data`` as JSON."""
        if self.is_error:
            return str(self.data["error"])
        return json.dumps(self.data, ensure_ascii=False)


def _explain(exc: ValidationError) -> str:
    """Return a pydantic error as ``field: message; field: message`` (no docs links)."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _summary(entry: MemoryEntry) -> dict[str, Any]:
    moment = entry.updated_at or entry.created_at
    data: dict[str, Any] = {"id": entry.id, "kind": entry.kind.value, "status": entry.status.value}
    data["title"] = entry.title or (entry.body.strip().splitlines()[0][:80] if entry.body.strip() else "")
    if entry.tags:
        data["tags"] = entry.tags
    if moment is not None:
        data["updated_at"] = moment.isoformat().replace("+00:00", "Z")
    return data


@dataclass(frozen=True)
class PromptSpec:
    """One prompt the server offers (a common flow, as a user message to the model).

    Attributes:
        name: Prompt name.
        description: What it is for.
        arguments: ``{name: (description, required)}``.
        template: The message, a :meth:`str.format` template over the arguments.
        tools: The tools it relies on; it is offered only when all of them are.
    """

    name: str
    description: str
    arguments: dict[str, tuple[str, bool]]
    template: str
    tools: tuple[str, ...]


PROMPTS: tuple[PromptSpec, ...] = (
    PromptSpec(
        "recall",
        "Answer a question from memory: search first, then answer citing the entries used.",
        {"question": ("What to answer.", True)},
        "Before answering, search my memory with the `recall` tool for what bears on this question "
        "(try a few wordings; read an entry in full with `get`). Answer from what you find and name "
        "the ids of the entries you used; say so if memory has nothing on it.\n\nQuestion: {question}",
        ("recall", "get"),
    ),
    PromptSpec(
        "remember",
        "Store something durable, updating what is already there instead of duplicating it.",
        {"content": ("What to remember.", True)},
        "Keep this in memory. First `recall` whether memory already holds it: if an entry says the "
        "same, leave it; if one says something older or different, change it with `edit` or "
        "`update` (or `supersede` it). Otherwise store it with `remember`, with a short title, the "
        "right kind (fact, decision, preference, task, note…) and a few tags. Link it to related "
        "entries with `relate` where that helps.\n\nTo remember: {content}",
        ("recall", "remember"),
    ),
    PromptSpec(
        "continue",
        "Pick up earlier work on a topic: the memory block for it, then the graph around the key entries.",
        {"topic": ("The topic to continue (optional: the most recent memories).", False)},
        "We are continuing earlier work{topic_suffix}. Below is what memory holds, most relevant first. "
        "Use `graph` on the key entries to see what they connect to and `recent` for what changed "
        "lately, then summarise where things stand before going on.",
        ("graph", "recent"),
    ),
    PromptSpec(
        "review",
        "Tidy the store: what changed lately, what is stale or duplicated, what the format reports.",
        {"since": ("Look at changes since this time (ISO 8601; optional).", False)},
        "Review my memory. List what changed with `recent` (since {since_or_all}), run `validate`, "
        "and propose (do not apply without asking) which entries to archive, supersede, merge or "
        "relate, and why.",
        ("recent", "validate"),
    ),
)


def _write_notes(provider: MemoryProvider) -> list[str]:
    """Return what the provider's gates do to agent writes, each naming the option that changes it.

    Read from the optional contract attributes: ``as_user`` false (WhiteBox: edits of stable
    files become proposals), :attr:`Capability.APPEND_ONLY`, and an active ``scope``.
    """
    notes = []
    if getattr(provider, "as_user", None) is False:
        notes.append(
            f"{provider.format_name}: changes to a stable file are filed as a proposal for the user to "
            "review, not applied (start the server with -o as_user=true to change files in place)."
        )
    if Capability.APPEND_ONLY in provider.capabilities:
        notes.append(
            f"{provider.format_name}: some entries are append-only (e.g. observations) and refuse every "
            "change; add a new entry instead."
        )
    return notes


class MemoryToolbox:
    """What ``memcore serve`` does, independent of MCP: tools and resources over one store.

    Every call opens the store through ``opener`` (so the provider re-reads its files and its
    gates), checks :func:`agent_read_denied`, does one provider operation and closes the store.

    Args:
        opener: Returns an opened provider (e.g. ``lambda: memcore.open(url, scope=...)``).
        read_only: Drop every write tool.
        scope: Active scope given to the server (``--scope``); written into new entries.
        propose: ``remember`` files a proposal for the user to review instead of adding the
            entry, through the provider's ``propose(entry)`` (Maka: PENDING.md).
        review_tools: Also offer the format's own operations (:mod:`memcore.format_ops`) as
            tools ``<format>_<operation>``; they are the user's review decisions (WhiteBox
            promote/dispute, Maka approve/reject…), so they are off unless asked for.

    Raises:
        memcore.errors.MemcoreError: ``opener`` failed (it is called once here, to learn the
            format and its capabilities and to fail before serving).
        memcore.errors.ConfigError: ``propose`` on a store without a review queue.
    """

    def __init__(
        self,
        opener: Opener,
        *,
        read_only: bool = False,
        scope: str | None = None,
        propose: bool = False,
        review_tools: bool = False,
    ) -> None:
        self.opener = opener
        self.review_tools = review_tools
        self.read_only = read_only
        self.scope = scope
        self.propose = propose
        provider = opener()
        try:
            self.capabilities: frozenset[Capability] = frozenset(provider.capabilities)
            self.format_name: str = provider.format_name
            if propose and not callable(getattr(provider, "propose", None)):
                raise ConfigError(
                    f"{self.format_name}: this format has no review queue for proposals; "
                    "drop --propose (agent writes then follow the format's own rules)"
                )
            #: Why agents may not read this store (:func:`agent_read_denied`), or ``None``. The
            #: gate comes from the options the server was started with, so no tool is offered.
            self.denied: str | None = agent_read_denied(provider)
            self.write_notes: list[str] = _write_notes(provider)
            #: The format's own operations, as tools (offered with ``review_tools``).
            self.operations: dict[str, FormatOperation] = {op.tool_name: op for op in operations_for(self.format_name)}
        finally:
            provider.close()

    def gate_notes(self) -> list[str]:
        """Return what the store's gates refuse, each naming the option that changes it.

        Printed by ``memcore serve`` at start-up and sent as part of the server's instructions.
        """
        if self.denied is not None:
            return [f"no tool, prompt or resource is offered: {self.denied}"]
        notes = []
        if self.read_only:
            notes.append("write tools are not offered: the server runs with --read-only (start it without to write)")
        missing = [s.name for s in TOOLS if s.capability is not None and s.capability not in self.capabilities]
        if missing:
            lacks = sorted({s.capability.value for s in TOOLS if s.name in missing and s.capability is not None})
            notes.append(
                f"not offered, the {self.format_name} format cannot do them: {', '.join(missing)} "
                f"(it lacks the {', '.join(repr(c) for c in lacks)} capability)"
            )
        if not self.read_only:
            notes.extend(self.write_notes)
        if self.propose:
            notes.append(
                "remember files a proposal for the user to review (--propose); start without it to add entries"
            )
        if self.operations and not self.review_tools:
            notes.append(
                f"the {self.format_name} review tools are not offered: {', '.join(self.operations)} (the user's "
                "review decisions; start the server with --review-tools to offer them)"
            )
        return notes

    # -- tools ------------------------------------------------------------------------------
    def tools(self) -> list[ToolSpec]:
        """Return the tools this store and mode allow, in a stable order."""
        if self.denied is not None:
            return []
        offered = [
            spec
            for spec in TOOLS
            if not (spec.writes and self.read_only)
            and (spec.capability is None or spec.capability in self.capabilities)
        ]
        if self.review_tools:
            offered.extend(_operation_tool(op) for op in self.operations.values() if not (op.writes and self.read_only))
        return offered

    def description(self, spec: ToolSpec) -> str:
        """Return ``spec``'s description with what this store's gates do to writes."""
        if spec.writes and spec.name != "remember" and self.write_notes:
            return spec.description + " Here: " + " ".join(self.write_notes)
        return spec.description

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolOutcome:
        """Run tool ``name`` with ``arguments``; every failure becomes an error outcome.

        Returns:
            The outcome; ``is_error`` with the CLI's ``memcore: error: …`` message when the tool
            is unknown or not offered, the arguments are invalid, the gate is closed, or the
            provider refused.
        """
        spec = next((s for s in self.tools() if s.name == name), None)
        if spec is None:
            why = "unknown tool"
            known = next((s for s in TOOLS if s.name == name), None)
            if name in self.operations:
                known = _operation_tool(self.operations[name])
            if known is not None and self.denied is not None:
                why = f"not available: {self.denied}"
            elif known is not None and known.writes and self.read_only:
                why = "not available: the server runs with --read-only"
            elif known is not None and name in self.operations:
                why = "not available: a review tool; start the server with --review-tools to offer it"
            elif known is not None:
                why = f"not available: the {self.format_name} store lacks the {known.capability} capability"
            return ToolOutcome({"error": f"memcore: error: `{name}`: {why}"}, is_error=True)
        try:
            args = spec.input_model.model_validate(arguments or {})
        except ValidationError as exc:
            return ToolOutcome(
                {"error": f"memcore: error: invalid arguments for `{name}`: {_explain(exc)}"}, is_error=True
            )
        try:
            provider = self.opener()
        except MemcoreError as exc:
            return ToolOutcome({"error": f"memcore: error: {exc}"}, is_error=True)
        except Exception as exc:  # the store vanished, a permission changed…: keep serving
            log.exception("opening the store for %s failed", name)
            return ToolOutcome(
                {"error": f"memcore: internal error in `{name}`: {type(exc).__name__}: {exc}"}, is_error=True
            )
        try:
            denied = agent_read_denied(provider)
            if denied is not None:
                return ToolOutcome({"error": f"memcore: error: {denied}"}, is_error=True)
            handler: Callable[[MemoryProvider, Any], dict[str, Any]] = (
                self.operations[name].run if name in self.operations else getattr(self, f"_tool_{name}")
            )
            return ToolOutcome(handler(provider, args))
        except ValidationError as exc:
            return ToolOutcome({"error": f"memcore: error: invalid entry: {_explain(exc)}"}, is_error=True)
        except MemcoreError as exc:
            return ToolOutcome({"error": f"memcore: error: {exc}"}, is_error=True)
        except Exception as exc:  # a provider bug must not kill the server
            log.exception("tool %s failed", name)
            return ToolOutcome(
                {"error": f"memcore: internal error in `{name}`: {type(exc).__name__}: {exc}"}, is_error=True
            )
        finally:
            provider.close()

    def _new_entry(self, args: BaseModel) -> MemoryEntry:
        fields = args.model_dump(include=set(_WRITABLE), exclude_unset=True)
        if fields.get("source") is None:
            fields["source"] = DEFAULT_SOURCE
        return MemoryEntry(**fields, scope=self.scope)

    @staticmethod
    def _shown(provider: MemoryProvider, entry: MemoryEntry) -> dict[str, Any]:
        view = agent_view(provider, entry)
        return _entry_data(view) if view is not None else {"id": entry.id}

    @staticmethod
    def _visible(provider: MemoryProvider, entry_id: str) -> MemoryEntry:
        """Return the entry as stored, if an agent may see it (else: not found)."""
        entry = provider.get(entry_id)
        if agent_view(provider, entry) is None:
            raise EntryNotFoundError(f"{provider.format_name}: no entry {entry_id!r} in {provider.location}")
        return entry

    def _tool_remember(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        entry = self._new_entry(args)
        if self.propose:
            propose: Callable[[MemoryEntry], MemoryEntry] = getattr(provider, "propose")  # noqa: B009
            return {"entry": _entry_data(propose(entry)), "proposed": True}
        return {"entry": self._shown(provider, provider.add(entry))}

    def _filters(self, args: Any) -> dict[str, Any]:
        return {n: getattr(args, n) for n in _FILTERS}

    def _tool_recall(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        filters = self._filters(args)
        if not (args.text or "").strip():
            ranked = score_entries(agent_entries(provider, provider.search(Query(**filters))), None)
            return {"entries": [_entry_data(e) for _, e in ranked[: args.limit]], "total": len(ranked)}
        # The query syntax of docs/search.md; "all" asks the store's own search, "any" reads the
        # visible entries and makes side-by-side terms alternatives. Both rank by BM25 and
        # highlight with the index's tokenizer (memcore.index.scan_hits).
        query = Query(text=args.text, **filters)
        candidates: Iterable[MemoryEntry]
        if args.match == "all":
            candidates = provider.search(query)
        else:
            candidates = provider.iter_entries(Query(**filters))
        hits = scan_hits(
            agent_entries(provider, candidates), query, default_operator="OR" if args.match == "any" else "AND"
        )
        data: dict[str, Any] = {
            "entries": [{**_entry_data(h.entry), "snippet": h.snippet} for h in hits[: args.limit]],
            "total": len(hits),
        }
        if hits.note:
            data["note"] = hits.note
        return data

    def _tool_get(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        return {"entry": self._shown(provider, self._visible(provider, args.id))}

    def _tool_list(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        entries = agent_entries(provider, provider.iter_entries(Query(**self._filters(args))))
        page = entries[args.offset : args.offset + args.limit]
        data: dict[str, Any] = {"entries": [_summary(e) for e in page], "total": len(entries)}
        if args.offset + args.limit < len(entries):
            data["next_offset"] = args.offset + args.limit
        return data

    def _tool_update(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        current = self._visible(provider, args.id)
        changes = args.model_dump(include=set(_WRITABLE), exclude_unset=True)
        merged = {**current.model_dump(), **changes, "updated_at": utc_now()}
        entry = MemoryEntry.model_validate(merged)
        expected = args.expected_version if args.expected_version is not None else current.version
        return {"entry": self._shown(provider, provider.update(entry, expected_version=expected))}

    def _tool_supersede(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.old_id)
        return {"entry": self._shown(provider, provider.supersede(args.old_id, self._new_entry(args)))}

    def _tool_archive(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.id)
        return {"entry": self._shown(provider, provider.archive(args.id))}

    def _tool_delete(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.id)
        provider.delete(args.id)
        return {"deleted": args.id}

    def _tool_edit(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.id)
        stored = ops.edit(provider, args.id, args.old, args.new, expected_version=args.expected_version)
        return {"entry": self._shown(provider, stored)}

    def _tool_insert(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.id)
        stored = ops.insert(provider, args.id, args.text, line=args.line, expected_version=args.expected_version)
        return {"entry": self._shown(provider, stored)}

    def _tool_rename(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.id)
        return {"entry": self._shown(provider, ops.rename(provider, args.id, args.title))}

    def _tool_move(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        self._visible(provider, args.id)
        if args.parent is not None:
            self._visible(provider, args.parent)
        return {"entry": self._shown(provider, ops.move(provider, args.id, args.parent))}

    def _relations(self, provider: MemoryProvider, args: Any, change: Callable[..., MemoryEntry]) -> dict[str, Any]:
        for rel in args.relations:  # every end visible before anything is written
            self._visible(provider, rel.source)
            self._visible(provider, rel.target)
        changed = [change(provider, rel.source, rel.type, rel.target) for rel in args.relations]
        return {"entries": [self._shown(provider, e) for e in changed]}

    def _tool_relate(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        return self._relations(provider, args, ops.relate)

    def _tool_unrelate(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        return self._relations(provider, args, ops.unrelate)

    def _tool_graph(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        everything = list(provider.iter_entries())
        visible = agent_entries(provider, everything)
        hidden = {e.id for e in everything} - {e.id for e in visible}
        found = ops.graph(provider, args.id, depth=args.depth, entries=visible)
        nodes = [{**_summary(e), "depth": found.depth.get(e.id or "", 0)} for e in found.entries]
        edges = [{"source": a, "type": t, "target": b} for a, t, b in found.edges if b not in hidden]
        return {"entries": nodes, "edges": edges}

    def _tool_recent(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        found = ops.recent(provider, args.since, entries=agent_entries(provider, provider.iter_entries()))
        return {"entries": [_summary(e) for e in found[: args.limit]], "total": len(found)}

    # -- prompts ----------------------------------------------------------------------------
    def prompts(self) -> list[PromptSpec]:
        """Return the prompts whose tools this server offers (none when the gate is closed)."""
        offered = {s.name for s in self.tools()}
        return [p for p in PROMPTS if set(p.tools) <= offered]

    def get_prompt(self, name: str, arguments: dict[str, str] | None) -> tuple[str, str]:
        """Return ``(description, user message)`` of prompt ``name`` filled with ``arguments``.

        ``continue`` embeds the memory block (:func:`build_context`) for its topic.

        Raises:
            ValueError: Unknown prompt, or a required argument is missing.
            memcore.errors.MemcoreError: The store could not be read.
        """
        spec = next((p for p in self.prompts() if p.name == name), None)
        if spec is None:
            offered = ", ".join(p.name for p in self.prompts()) or "none"
            raise ValueError(f"unknown prompt {name!r}; offered: {offered}")
        args = dict(arguments or {})
        for arg_name, (_, required) in spec.arguments.items():
            if required and not args.get(arg_name, "").strip():
                raise ValueError(f"prompt {name!r} needs the argument {arg_name!r}")
            args.setdefault(arg_name, "")
        derived = {
            "topic_suffix": f" on {args['topic']}" if args.get("topic") else "",
            "since_or_all": args.get("since") or "the start",
        }
        text = spec.template.format(**args, **derived)
        if name == "continue":
            provider = self.opener()
            try:
                denied = agent_read_denied(provider)
                if denied is not None:
                    raise ReadOnlyStoreError(denied)
                text += "\n\n" + build_context(provider, query=args["topic"] or None, budget=DEFAULT_BUDGET)
            finally:
                provider.close()
        return spec.description, text

    def _tool_validate(self, provider: MemoryProvider, args: Any) -> dict[str, Any]:
        diagnostics: list[Diagnostic] = provider.validate()
        return {
            "diagnostics": [d.model_dump(mode="json", exclude_none=True) for d in diagnostics],
            "errors": sum(1 for d in diagnostics if d.severity.value == "error"),
        }

    # -- resources --------------------------------------------------------------------------
    def list_resources(self, offset: int = 0, limit: int = RESOURCE_PAGE) -> tuple[list[dict[str, str]], int | None]:
        """Return one page of resources and the next offset (``None`` on the last page).

        Each resource is ``{"uri", "name", "title", "mime_type"}``; the first page starts with
        the context block. Nothing at all when the gate is closed.

        Raises:
            memcore.errors.MemcoreError: The store could not be opened or read.
        """
        provider = self.opener()
        try:
            if agent_read_denied(provider) is not None:
                return [], None
            items: list[dict[str, str]] = []
            if offset == 0:
                items.append(
                    {"uri": CONTEXT_URI, "name": "context", "title": "Memory block", "mime_type": "text/markdown"}
                )
            entries = agent_entries(provider, provider.iter_entries())
        finally:
            provider.close()
        for entry in entries[offset : offset + limit]:
            if entry.id is None:
                continue
            summary = _summary(entry)
            items.append(
                {
                    "uri": entry_uri(entry.id),
                    "name": entry.id,
                    "title": summary["title"] or entry.id,
                    "mime_type": "text/markdown",
                }
            )
        return items, (offset + limit if offset + limit < len(entries) else None)

    def read_resource(self, uri: str) -> str:
        """Return the Markdown text of ``uri`` (the context block or one entry).

        Raises:
            memcore.errors.EntryNotFoundError: No such entry visible through the provider.
            memcore.errors.ReadOnlyStoreError: The gate is closed (the message says why).
            ValueError: Not a ``memcore://`` URI this server knows.
        """
        if uri != CONTEXT_URI and not uri.startswith(ENTRY_URI_PREFIX):
            raise ValueError(f"unknown resource {uri!r}; use {CONTEXT_URI} or {ENTRY_URI_PREFIX}<id>")
        provider = self.opener()
        try:
            denied = agent_read_denied(provider)
            if denied is not None:
                raise ReadOnlyStoreError(denied)
            if uri == CONTEXT_URI:
                return build_context(provider, budget=DEFAULT_BUDGET)
            entry_id = unquote(uri[len(ENTRY_URI_PREFIX) :])
            view = agent_view(provider, self._visible(provider, entry_id))
            assert view is not None  # _visible checked it
            return render_entry(view)
        finally:
            provider.close()


# -- the MCP server ------------------------------------------------------------------------

_READ_ONLY_HINTS = {"recall", "get", "list", "validate", "graph", "recent"}
#: Tools that only add (never change or remove what is there).
_ADDITIVE = {"remember", "relate", "insert"}


def create_server(toolbox: MemoryToolbox, *, name: str = "memcore") -> Server[Any]:
    """Return a low-level MCP :class:`~mcp.server.Server` exposing ``toolbox``.

    Args:
        toolbox: The store's tools and resources.
        name: Server name announced to clients.

    Returns:
        The server; run it with :func:`serve_stdio` or :func:`serve_http`.
    """
    tools: list[types.Tool] = []
    for spec in toolbox.tools():  # fixed for the server's life: build the schemas once
        read_only = spec.name in _READ_ONLY_HINTS
        tools.append(
            types.Tool(
                name=spec.name,
                description=toolbox.description(spec),
                input_schema=spec.input_schema(),
                output_schema=spec.output_schema(),
                annotations=types.ToolAnnotations(
                    read_only_hint=read_only,
                    destructive_hint=False if read_only or spec.name in _ADDITIVE else spec.name == "delete" or None,
                    idempotent_hint=True if read_only or spec.name in ("relate", "unrelate") else None,
                    open_world_hint=False,
                ),
            )
        )
    prompts = [
        types.Prompt(
            name=p.name,
            description=p.description,
            arguments=[
                types.PromptArgument(name=n, description=d, required=required)
                for n, (d, required) in p.arguments.items()
            ],
        )
        for p in toolbox.prompts()
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(tools))

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        outcome = toolbox.call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            structured_content=None if outcome.is_error else outcome.data,
            is_error=outcome.is_error,
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=list(prompts))

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            description, text = toolbox.get_prompt(params.name, params.arguments)
        except (MemcoreError, ValueError) as exc:
            raise MCPError(types.INVALID_PARAMS, f"memcore: error: {exc}") from exc
        return types.GetPromptResult(
            description=description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        offset = 0
        if params is not None and params.cursor:
            try:
                offset = max(0, int(params.cursor))
            except ValueError as exc:
                raise MCPError(types.INVALID_PARAMS, f"invalid cursor {params.cursor!r}") from exc
        try:
            items, following = toolbox.list_resources(offset)
        except MemcoreError as exc:
            raise MCPError(types.INTERNAL_ERROR, f"memcore: error: {exc}") from exc
        return types.ListResourcesResult(
            resources=[types.Resource(**item) for item in items],
            next_cursor=str(following) if following is not None else None,
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=ENTRY_URI_PREFIX + "{id}",
                    name="entry",
                    title="One memory by id (percent-encoded)",
                    mime_type="text/markdown",
                )
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            text = toolbox.read_resource(params.uri)
        except (MemcoreError, ValueError) as exc:
            raise MCPError(types.INVALID_PARAMS, f"memcore: error: {exc}") from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type="text/markdown", text=text)]
        )

    return Server(
        name,
        version=__version__,
        title="memcore",
        instructions=(
            f"Long-term memory kept in a {toolbox.format_name} store. Use `recall` before answering "
            "questions that may depend on what was learned earlier, and `remember` (when offered) "
            "to keep durable facts, decisions and preferences. Read `memcore://context` for the "
            "most relevant memories at once." + "".join(f"\nGate: {note}" for note in toolbox.gate_notes())
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client disconnects."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server[Any], *, host: str = "127.0.0.1", port: int = 8765, path: str = "/mcp") -> None:
    """Serve ``server`` over streamable HTTP at ``http://host:port/path`` until interrupted.

    Bound to loopback by default; the SDK then turns on DNS-rebinding protection (Host and
    Origin checked). There is no authentication: do not bind a public address.
    """
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"memcore: warning: serving on {host}:{port} without authentication; anyone who can "
            "reach it can read (and, without --read-only, write) this store",
            file=sys.stderr,
        )
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()
