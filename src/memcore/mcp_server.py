"""``memcore serve``: any memcore store as a Model Context Protocol server.

Built on the official ``mcp`` Python SDK (2.x, low-level :class:`mcp.server.Server`), over stdio
or, with ``--http``, streamable HTTP bound to 127.0.0.1. docs/mcp.md shows how to register it in
an MCP client.

Tools (only those the store can do are listed; ``--read-only`` drops every write tool):

============  ===========================  ==========================================
tool          needs                        does
============  ===========================  ==========================================
remember      ``Capability.ADD``           ``provider.add``
recall        -                            ranked search with filters
get           -                            ``provider.get``
list          -                            ``provider.iter_entries`` (summaries, paged)
update        ``Capability.UPDATE``        ``provider.update`` (read, change, write)
supersede     ``Capability.SUPERSEDE``     ``provider.supersede``
archive       ``Capability.ARCHIVE``       ``provider.archive``
validate      -                            ``provider.validate``
============  ===========================  ==========================================

Resources: ``memcore://context`` (the :func:`memcore.context.build_context` block) and
``memcore://entries/<percent-encoded id>`` (one entry as Markdown), with the template
``memcore://entries/{id}``.

Gates. The server never reads or writes files itself: every request opens the store through its
provider (with the ``--scope`` and ``-o`` options given at start), so the provider's rules hold
(WhiteBox scopes and ``sensitive/``, append-only observations and proposals, Box-memory held
memories, Maka's 128 KiB safe mode…). Before anything else each request asks
:func:`memcore.context.agent_read_denied`; when the provider says agents may not read (Maka
with agent read off, incognito), every tool answers with that reason as a tool error and no
resource is listed or read. Every entry handed out passes :func:`memcore.context.agent_view`
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
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from memcore import __version__
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
from memcore.index import scan_hits
from memcore.models import Diagnostic, MemoryEntry, Query, utc_now
from memcore.provider import Capability, MemoryProvider

__all__ = [
    "CONTEXT_URI",
    "DEFAULT_SOURCE",
    "ENTRY_URI_PREFIX",
    "MemoryToolbox",
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
        capability: Capability the store needs for the tool to be listed, or ``None``.
        writes: Whether it changes the store (dropped by ``--read-only``).
    """

    name: str
    description: str
    input_model: type[BaseModel]
    capability: Capability | None = None
    writes: bool = False

    def input_schema(self) -> dict[str, Any]:
        """Return the tool's JSON Schema (``$ref``s inlined, ``additionalProperties: false``)."""
        return _inline_refs(self.input_model.model_json_schema())


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember",
        "Store a new memory. The store's own rules apply (e.g. WhiteBox may record a proposal "
        "instead of changing a stable fact). Returns the entry as stored, with its id.",
        RememberInput,
        Capability.ADD,
        writes=True,
    ),
    ToolSpec(
        "recall",
        "Search memories by words and filters; best matches first. Returns full entries.",
        RecallInput,
    ),
    ToolSpec("get", "Return one memory by id, in full.", GetInput),
    ToolSpec(
        "list",
        "List memories (id, kind, status, title, tags, updated_at) with filters and paging.",
        ListInput,
    ),
    ToolSpec(
        "update",
        "Change fields of an existing memory; give only the fields to change. Pass "
        "expected_version from get/recall to refuse overwriting a newer change.",
        UpdateInput,
        Capability.UPDATE,
        writes=True,
    ),
    ToolSpec(
        "supersede",
        "Add a new memory that replaces old_id; the old one is kept, marked superseded.",
        SupersedeInput,
        Capability.SUPERSEDE,
        writes=True,
    ),
    ToolSpec(
        "archive",
        "Mark a memory archived (kept, no longer active).",
        ArchiveInput,
        Capability.ARCHIVE,
        writes=True,
    ),
    ToolSpec("validate", "Check the store against its format's rules; returns diagnostics.", ValidateInput),
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


def _entry_data(entry: MemoryEntry) -> dict[str, Any]:
    data = entry.model_dump(mode="json", exclude_none=True)
    if not entry.date_only:
        data.pop("date_only", None)
    return {k: v for k, v in data.items() if v not in ([], {}) or k in ("title", "body")}


def _summary(entry: MemoryEntry) -> dict[str, Any]:
    moment = entry.updated_at or entry.created_at
    data: dict[str, Any] = {"id": entry.id, "kind": entry.kind.value, "status": entry.status.value}
    data["title"] = entry.title or (entry.body.strip().splitlines()[0][:80] if entry.body.strip() else "")
    if entry.tags:
        data["tags"] = entry.tags
    if moment is not None:
        data["updated_at"] = moment.isoformat().replace("+00:00", "Z")
    return data


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

    Raises:
        memcore.errors.MemcoreError: ``opener`` failed (it is called once here, to learn the
            format and its capabilities and to fail before serving).
        memcore.errors.ConfigError: ``propose`` on a store without a review queue.
    """

    def __init__(
        self, opener: Opener, *, read_only: bool = False, scope: str | None = None, propose: bool = False
    ) -> None:
        self.opener = opener
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
        finally:
            provider.close()

    # -- tools ------------------------------------------------------------------------------
    def tools(self) -> list[ToolSpec]:
        """Return the tools this store and mode allow, in a stable order."""
        return [
            spec
            for spec in TOOLS
            if not (spec.writes and self.read_only)
            and (spec.capability is None or spec.capability in self.capabilities)
        ]

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
            if known is not None and known.writes and self.read_only:
                why = "not available: the server runs with --read-only"
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
            handler: Callable[[MemoryProvider, Any], dict[str, Any]] = getattr(self, f"_tool_{name}")
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

_READ_ONLY_HINTS = {"recall", "get", "list", "validate"}


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
                description=spec.description,
                input_schema=spec.input_schema(),
                annotations=types.ToolAnnotations(
                    read_only_hint=read_only,
                    destructive_hint=False if read_only or spec.name == "remember" else None,
                    idempotent_hint=True if read_only else None,
                    open_world_hint=False,
                ),
            )
        )

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
            "most relevant memories at once."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
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
