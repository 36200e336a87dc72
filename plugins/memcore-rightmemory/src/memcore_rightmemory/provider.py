"""The RightMemory provider: a graph of headings and nodes in MEMORY.md, PURSUITS.md and detail files.

Spec: ../shared/specs/rightmemory-schema.md; reference behaviour:
../shared/specs/reference-notes/rightmemory.md; docs/formats/rightmemory.md describes the
mapping, the write rules and every diagnostic code.

Reading: every addressable heading and node is a :class:`~memcore.models.MemoryEntry` whose id
is its graph id, ``parent`` the nearest addressable ancestor heading (across F# detail files),
``relations`` its edges. Writing is surgical: only the line range of the item touched changes,
every other byte of every file stays as it was; a write that would add a validation error is
refused with that diagnostic (:class:`GraphInvariantError`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    UnsupportedOperationError,
)
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Relation, Severity, lf_body, require_unicode, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.storage import TempSweeper, atomic_write, file_lock, safe_join, temp_file_diagnostics
from memcore_rightmemory import _incremental
from memcore_rightmemory._corrections import agent_correction_entries
from memcore_rightmemory._graph import ROOT_CODES, ROOTS, Graph, ItemRef, ParseCache, backing_name
from memcore_rightmemory._meta import apply_meta, body_close_ok, dump_meta, kept_meta, meta_for
from memcore_rightmemory._parse import (
    META_RE,
    PURSUIT_FIELD_RE,
    Doc,
    Heading,
    Node,
    Source,
    fenced_lines,
    make_markdown,
    parse_doc,
)
from memcore_rightmemory.mapping import (
    AGENT_CORRECTION_FILES,
    EDGE_TYPES,
    ITEM_ID_RE,
    RELATION_TYPES,
    UNCERTAIN_CONFIDENCE,
    UNCERTAIN_PREFIX,
    kind_for,
)

__all__ = [
    "COMPUTED_KEYS",
    "DEFAULT_MEMORY_HEADING",
    "DEFAULT_PURSUIT_HEADING",
    "GraphInvariantError",
    "RightMemoryProvider",
    "UnusableRootError",
]

FORMAT = "rightmemory"
#: Plain ``#`` heading in MEMORY.md that receives entries added without a parent.
DEFAULT_MEMORY_HEADING = "Memory"
#: Plain ``#`` heading in PURSUITS.md that receives Pursuit entries added without a parent.
DEFAULT_PURSUIT_HEADING = "Pursuits"
_EDGE_TYPES = frozenset(EDGE_TYPES)
#: Bytes of files whose parse a provider keeps between reads (outside a batch): about 15,000
#: nodes. A bigger store is parsed again, beyond that, on each read.
READ_CACHE_BYTES = 2 * 1024 * 1024
_SLUG_RE = re.compile(r"[^a-z0-9_.-]+")
_LINE_NO_RE = re.compile(r":\d+")
_ANCHOR_IN_LINE = re.compile(r"\{(F#|M#|S#|MF#|MQ#|#)([A-Za-z0-9_.-]+)\}")
_NODE_LINE_RE = re.compile(r"^\s*-\s+`")
_HEADING_LINE = re.compile(r"^#+\s+")
_TITLE_SYNTAX = re.compile(r"\{[A-Za-z]*#|(?:\u2192|->)\s*\[")
_EMPTY_MEMORY = "# Memory\n"
#: The reference template's text under an empty ``## Focus`` (format text, in no entry).
_FOCUS_PLACEHOLDER = "No Pursuit is focused yet."
_EMPTY_PURSUITS = f"# Pursuits\n\n## Focus\n\n{_FOCUS_PLACEHOLDER}\n"
#: A body line that may open a block only its end closes: a code fence or an HTML block start.
_BLOCK_OPENER = re.compile(r"^ {0,3}(?:```|~~~|<)")
#: The opening fence of fenced code (its run of backticks or tildes).
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: Lines that end an HTML block of CommonMark types 2-5 and 1 (comment, processing instruction,
#: declaration, CDATA, ``<pre>``/``<script>``/``<style>``/``<textarea>``).
_HTML_CLOSERS = ("-->", "?>", ">", "]]>", "</pre>", "</script>", "</style>", "</textarea>")
_SNIFF_ANCHOR = re.compile(rb"\{(?:F|M|S|MF|MQ)?#[A-Za-z0-9_.-]+\}")
#: Keys of ``extra["rightmemory"]`` computed on read (never stored in the memcore comment).
COMPUTED_KEYS = ("item", "marker", "module", "file", "backing", "depth", "sections", "fields", "uncertain")


class GraphInvariantError(InvalidEntryError):
    """A write was refused because it would break a RightMemory graph invariant.

    Attributes:
        diagnostics: The diagnostics the write would have caused (code, file, line).
    """

    def __init__(self, message: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__(message + "".join(f"\n  {d}" for d in diagnostics))
        self.diagnostics = diagnostics


class UnusableRootError(InvalidEntryError):
    """A write was refused because the store's root files are not a usable RightMemory graph.

    Raised (before anything is planned or written) while ``validate()`` reports one of the
    root diagnostics ``rm.missing-root``, ``rm.irregular-file``, ``rm.unreadable`` or
    ``rm.foreign-root`` for MEMORY.md or PURSUITS.md. The message names the file and the fix.

    Attributes:
        diagnostics: The root diagnostics found (code, file relative to the root, line).
    """

    def __init__(self, message: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__(message + "".join(f"\n  {d}" for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass
class _Change:
    """Edits to one store: line-range splices per file, new files, deleted files."""

    edits: dict[str, list[tuple[int, int, list[str]]]]
    created: dict[str, bytes]
    deleted: set[str]

    @classmethod
    def empty(cls) -> _Change:
        return cls({}, {}, set())

    def splice(self, rel: str, start: int, end: int, lines: list[str]) -> None:
        self.edits.setdefault(rel, []).append((start, end, lines))


@dataclass
class _Session:
    """The in-memory store of a :meth:`RightMemoryProvider.batch` (one thread, lock held).

    Attributes:
        thread: The thread that opened the batch.
        graph: The graph as the writes so far left it (``None``: not loaded yet).
        stale: ``graph.diags`` (and the derived ``recorded``/``backing`` tables) may be out of
            date after fast-path writes; :meth:`RightMemoryProvider._session_graph` reloads.
        files: New bytes per file (``None``: to delete), for files rewritten as a whole.
        dirty: Files whose parsed doc was changed in place (bytes made from it when needed).
        created: Files the batch creates (written before the others).
        reparse: Files whose doc must be parsed again from its text (a fast write rolled back).
        seen: Every file the graph was built from, as it was read (``None``: absent).
        disk: Every file as the batch first read it from disk (``None``: absent); checked
            before the batch is saved.
        writes: Writes applied in memory (named by the conflict error).
    """

    thread: int
    graph: Graph | None = None
    stale: bool = False
    seen: dict[str, bytes | None] = field(default_factory=dict)
    files: dict[str, bytes | None] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    reparse: set[str] = field(default_factory=set)
    disk: dict[str, bytes | None] = field(default_factory=dict)
    writes: int = 0


@dataclass
class _Memo:
    """The graph a batch left, and the bytes of every file it was built from.

    The next write reuses it when every one of those files still has exactly those bytes
    (one read and compare per file instead of validating the whole graph again).
    """

    graph: Graph
    files: dict[str, bytes | None]
    stale: bool


@dataclass(frozen=True)
class _Fast:
    """What a one-item write changes: ``item`` (its id), added (``update=False``) or rewritten."""

    item: str
    update: bool


def _points_at(graph: Graph, ident: str, rel: str, is_heading: bool, index: int) -> bool:
    ref = graph.items.get(ident)
    return ref is not None and ref.rel == rel and ref.is_heading == is_heading and ref.index == index


def _reindex(graph: Graph, rel: str, doc: Doc, patch: _incremental.Patch, dh: int, dn: int) -> None:
    """Bring ``graph``'s item refs, F# attachments and Focus list in line with a patched doc."""
    delta = patch.delta
    # items after the window first, while the window's refs still hold their old indices
    if dh or delta:
        for index in range(patch.hi0 + len(patch.headings), len(doc.headings)):
            heading = doc.headings[index]
            if heading.id is None:
                continue
            ref = graph.items.get(heading.id)
            if ref is not None and ref.rel == rel and ref.is_heading and ref.index == index - dh:
                ref.index, ref.line = index, heading.line
    if dn or delta:
        for index in range(patch.ni0 + len(patch.nodes), len(doc.nodes)):
            node = doc.nodes[index]
            ref = graph.items.get(node.id)
            if ref is not None and ref.rel == rel and not ref.is_heading and ref.index == index - dn:
                ref.index, ref.line = index, node.line
    family = doc.family
    for offset, heading in enumerate(patch.headings):
        if heading.id is None:
            continue
        index = patch.hi0 + offset
        ref = graph.items.get(heading.id)
        if ref is None:
            assert heading.marker is not None
            ref = ItemRef(heading.id, rel, True, index, heading.line, family, heading.marker)
            graph.items[heading.id] = ref
            graph.recorded.append(ref)
        ref.index, ref.line = index, heading.line
    for offset, node in enumerate(patch.nodes):
        index = patch.ni0 + offset
        ref = graph.items.get(node.id)
        if ref is None:
            ref = ItemRef(node.id, rel, False, index, node.line, family, "node")
            graph.items[node.id] = ref
            graph.recorded.append(ref)
        ref.index, ref.line = index, node.line
    if graph.attach:
        new_of = {old: new for new, old in patch.old_of.items()}
        for child, (owner_rel, index) in list(graph.attach.items()):
            if owner_rel != rel or index < patch.hi0:
                continue
            if index >= patch.hi1:
                graph.attach[child] = (rel, index + dh)
            else:
                graph.attach[child] = (rel, new_of[index])
    if doc.focus or any(r == rel for _, r, _ in graph.focus):
        graph.focus = [(ident, name, line) for name, d in graph.docs.items() for ident, line in d.focus]


def _is_plain_chain(doc: Doc, index: int, titles: list[str]) -> bool:
    """Whether heading ``index`` ends the plain-heading chain ``# titles[0]`` > ``## titles[1]`` (and so on)."""
    at: int | None = index
    for depth in range(len(titles), 0, -1):
        if at is None:
            return False
        heading = doc.headings[at]
        if heading.depth != depth or heading.id is not None or heading.title != titles[depth - 1]:
            return False
        at = heading.parent
    return at is None


def _nodes_between(doc: Doc, first: int, last: int, parent: int | None) -> list[Node]:
    """Return the last direct nodes of ``parent`` on lines ``first..last``, from its last top-level one.

    The nodes whose parent heading is ``parent``, from the last one written at column 0 (``-``)
    to the end (all of them when none is): what :meth:`RightMemoryProvider._place` needs to put
    a node after them; empty when ``parent`` has no node there. Found by bisect and a walk back
    from the end that stops at that top-level node, so adding nodes one after another under one
    heading costs O(1) each instead of a pass over all its nodes.
    """
    lo = bisect_left(doc.nodes, first, key=lambda n: n.line)
    hi = bisect_right(doc.nodes, last, key=lambda n: n.line)
    tail: list[Node] = []
    for i in range(hi - 1, lo - 1, -1):
        node = doc.nodes[i]
        if node.parent != parent:
            continue
        tail.append(node)
        if node.prefix.startswith("-"):
            break
    tail.reverse()
    return tail


def _last_top(nodes: list[Node]) -> int:
    """Index of the last top-level node (``-`` at column 0); list items before it end before it."""
    for i in range(len(nodes) - 1, -1, -1):
        if nodes[i].prefix.startswith("-"):
            return i
    return 0


def _slug(text: str) -> str:
    slug = _SLUG_RE.sub("-", text.casefold()).strip("-._")
    return slug[:60].strip("-._")


def _blank(line: str) -> bool:
    return not line.strip()


def _edge_text(edges: list[tuple[str, str]]) -> str:
    return ", ".join(f"{t}:{x}" for t, x in edges)


def _json_copy(value: Any) -> Any:
    """Return a copy of JSON data (new dicts and lists, the same strings and numbers)."""
    kind = type(value)
    if kind is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    return value


def _with_extra(entry: MemoryEntry, extra: dict[str, Any]) -> MemoryEntry:
    """Set ``entry.extra`` to data that validation would keep as it is, without validating it.

    Only for ``extra`` built by :meth:`RightMemoryProvider._entry`: the item's computed keys
    (strings read from UTF-8 text, ints, lists and dicts of them) and a copy of a comment's
    ``extra`` that :func:`~memcore_rightmemory._meta.meta_values` checked exactly as the
    entry's own validator does (JSON types from ``json.loads``, serialisable, UTF-8). For such
    data pydantic's validation returns an equal copy; it is the costliest part of building an
    entry (about 20 of 28 us). The tests compare these entries with fully validated ones.
    """
    entry.__dict__["extra"] = extra
    entry.__pydantic_fields_set__.add("extra")
    return entry


def _require_unicode(entry: MemoryEntry) -> None:
    """``require_unicode(entry.model_dump())`` without the dump when every string encodes.

    Every string of the dump (id, title, body, source, scope, parent, version, tags, relation
    types and targets, ``extra`` keys and values) is encoded as UTF-8 where it is; only when
    one fails (or ``extra`` does not serialise) is the entry dumped and walked, so that the
    error names the field exactly as before.

    Raises:
        InvalidEntryError: A string holds a lone surrogate; nothing is written.
    """
    try:
        for text in (entry.id, entry.title, entry.body, entry.source, entry.scope, entry.parent, entry.version):
            if text is not None:
                text.encode("utf-8")
        for tag in entry.tags:
            tag.encode("utf-8")
        for relation in entry.relations:
            relation.type.encode("utf-8")
            relation.target.encode("utf-8")
        if entry.extra:
            json.dumps(entry.extra, ensure_ascii=False).encode("utf-8")
        return
    except (ValueError, TypeError, AttributeError, RecursionError):  # UnicodeEncodeError is a ValueError
        pass
    require_unicode(entry.model_dump(), "entry", prefix=FORMAT)


class RightMemoryProvider(BaseProvider):
    """memcore provider for a RightMemory root (the folder holding MEMORY.md and PURSUITS.md).

    Args:
        location: The store root, or its MEMORY.md.
        **options: ``read_only`` (bool): refuse every write.

    Capabilities: ADD, UPDATE, DELETE, SUPERSEDE, ARCHIVE, GRAPH, CONCURRENT, BATCH (see
    :meth:`batch`; every write outside one runs as a batch of one). ``delete`` takes
    ``drop_edges=True`` to remove the edges (and Focus references) pointing at the item.
    Extra operations: :meth:`add_edge`, :meth:`remove_edge`, :meth:`move_to_detail`,
    :meth:`inline_detail`.
    """

    format_name: ClassVar[str] = FORMAT
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.DELETE,
            Capability.SUPERSEDE,
            Capability.ARCHIVE,
            Capability.GRAPH,
            Capability.CONCURRENT,
            Capability.BATCH,
        }
    )

    #: no options but ``read_only``; anything else is a ConfigError
    option_names: ClassVar[frozenset[str] | None] = frozenset()
    relation_types: ClassVar[dict[str, str]] = RELATION_TYPES

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        path = Path(location)
        if path.name == "MEMORY.md" and not path.is_dir():
            path = path.parent
        super().__init__(path, **options)
        self.root = path
        #: removes temp files of interrupted writes on the first write holding the lock
        self._temps = TempSweeper(path)
        self._md = make_markdown()
        self._cache: ParseCache = {}
        self._session: _Session | None = None
        self._memo: _Memo | None = None
        #: ``(file, plain titles) -> (heading, its index when last found)``: see :meth:`_plain_chain`
        self._chains: dict[tuple[str, tuple[str, ...]], tuple[Heading, int]] = {}

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is a RightMemory root.

        True for a folder holding PURSUITS.md, or a MEMORY.md with at least one ``{#id}``-style
        anchor (``{F#id}``, ``{M#id}``…) in its first 256 KiB. Never raises.
        """
        try:
            path = Path(path)
            if path.name == "MEMORY.md" and path.is_file():
                path = path.parent
            if not path.is_dir():
                return False
            if (path / "PURSUITS.md").is_file():
                return True
            memory = path / "MEMORY.md"
            if not memory.is_file():
                return False
            with memory.open("rb") as handle:
                return _SNIFF_ANCHOR.search(handle.read(256 * 1024)) is not None
        except OSError:
            return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create MEMORY.md (``# Memory``) and PURSUITS.md (``# Pursuits`` + empty ``## Focus``).

        Existing files are left alone. The result validates with zero diagnostics.

        Raises:
            OSError: The folder cannot be created or written.
        """
        root = Path(location)
        root.mkdir(parents=True, exist_ok=True)
        with file_lock(root):
            for name, text in (("MEMORY.md", _EMPTY_MEMORY), ("PURSUITS.md", _EMPTY_PURSUITS)):
                target = safe_join(root, name)
                if not target.exists():
                    atomic_write(target, text.encode("utf-8"))

    def open(self) -> RightMemoryProvider:
        """Check that the root is a folder holding MEMORY.md and return ``self``.

        Only existence is checked (a symlinked or unreadable MEMORY.md opens, reads as empty
        and is reported by :meth:`validate`; writes refuse it). :meth:`validate` itself needs
        no :meth:`open` and never raises.

        Raises:
            ConfigError: The location is not a folder, or the folder has no MEMORY.md; the
                message names the path and ``memcore init --store rightmemory:<dir>``.
        """
        init = f"`memcore init --store {FORMAT}:{self.root}`"
        if not self.root.is_dir():
            raise ConfigError(
                f"{FORMAT}: {self.root} is not a folder; point at the folder holding MEMORY.md, "
                f"or create a store there with {init}"
            )
        memory = self.root / "MEMORY.md"
        if not os.path.lexists(memory):
            raise ConfigError(
                f"{FORMAT}: {memory} does not exist, so {self.root} is not a RightMemory store; "
                f"create one with {init} (existing files are left alone)"
            )
        super().open()
        return self

    def close(self) -> None:
        """Forget parsed files; nothing is written."""
        self._cache.clear()
        self._chains.clear()
        self._memo = None
        super().close()

    # -- reading ----------------------------------------------------------------------
    def _read(self, rel: str) -> bytes | None:
        path = self.root / rel
        try:
            if path.is_symlink() or not path.is_file():
                return None
            path.resolve(strict=True).relative_to(self.root.resolve())
            return path.read_bytes()
        except (OSError, ValueError):
            return None

    def graph(self) -> Graph:
        """Parse and validate the store as it is on disk now (in a :meth:`batch`: as the batch left it).

        Files whose bytes did not change since the last call are not re-parsed, up to
        :data:`READ_CACHE_BYTES` of files: outside a batch, what a read keeps parsed between
        calls is bounded, so that an open provider never holds a big store's whole graph.
        """
        session = self._active()
        if session is not None:
            return self._session_graph(session, fresh=True)
        graph = Graph.load(self.root, self._read, self._md, self._cache)
        _trim_cache(self._cache, READ_CACHE_BYTES)
        return graph

    def validate(self) -> list[Diagnostic]:
        """Return every diagnostic the validator finds (reference rules + corrections files).

        Never raises for bad files: unreadable files are reported as ``rm.unreadable``.
        """
        graph = self.graph()
        return [*graph.diags, *unread_text(graph), *temp_file_diagnostics(self.root, "rm")]

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield entries matching ``query`` in reading order.

        Graph items first (F# detail content right after its heading), then the Agent
        Corrections entries (read-only, kind ``correction``).
        """
        graph = self.graph()
        entries: Iterator[MemoryEntry] = self._all_entries(graph)
        yield from (query.apply(entries) if query is not None else entries)

    def read_all(self) -> StoreSnapshot:
        """Return every entry and every diagnostic from one parse of the store.

        Equal to ``StoreSnapshot(list(self.iter_entries()), self.validate())``: the graph is
        loaded (and validated) once, and the entries are built from that same load.
        """
        graph = self.graph()
        unread: dict[str, list[Diagnostic]] = {}

        def note(rel: str) -> None:  # while the file's lines are split for its entries
            if rel not in unread:
                unread[rel] = _unread_in(rel, graph.docs[rel])

        entries = list(self._all_entries(graph, before_release=note))
        for rel in graph.docs:
            note(rel)  # files without items
        return StoreSnapshot(
            entries,
            [
                *graph.diags,
                *(d for rel in sorted(graph.docs) for d in unread[rel]),
                *temp_file_diagnostics(self.root, "rm"),
            ],
        )

    def _all_entries(
        self, graph: Graph, only: str | None = None, before_release: Callable[[str], None] | None = None
    ) -> Iterator[MemoryEntry]:
        """Yield the graph items (reading order), then the Agent Corrections entries.

        ``only``: yield just the entries read from that root-relative file. A file's split
        lines are released as soon as the walk leaves it for good (it stays split while a
        file it attaches is being read), so that a big store never has every file's lines
        in memory at once. ``before_release(file)`` is called just before (the lines are
        still split then: :meth:`read_all` finds unread text without splitting them again).
        """
        live: dict[str, Source] = {}
        current: str | None = None

        def release(rel: str) -> None:
            source = live.pop(rel)
            if before_release is not None:
                before_release(rel)
            source.release()

        try:
            for ref in graph.ordered():
                if only is not None and ref.rel != only:
                    continue
                if ref.rel != current:
                    current = ref.rel
                    keep = _attach_chain(graph, ref.rel)
                    for rel in [rel for rel in live if rel not in keep]:
                        release(rel)
                    live[ref.rel] = graph.docs[ref.rel].source
                yield self._entry(graph, ref)
        finally:
            for rel in list(live):
                release(rel)
        if only is None or only in AGENT_CORRECTION_FILES.values():
            for entry in self._correction_entries(graph):
                if only is None or self.file_of(entry) == only:
                    yield entry

    # memcore.provider.FileBackedProvider: lets memcore.index refresh file by file.
    def source_files(self) -> list[str]:
        """Return every graph file (MEMORY.md, PURSUITS.md, F# detail files), root-relative."""
        return sorted(self.graph().docs)

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the entries whose heading or node line is in ``path`` (root-relative).

        The graph is loaded whole (parents, edge targets and duplicates cross files), but only
        this file's entries are built.
        """
        yield from self._all_entries(self.graph(), only=path)

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the root-relative file ``entry`` was read from."""
        return str(entry.extra.get(FORMAT, {}).get("file", "MEMORY.md"))

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the item with ``entry_id``.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use this id (a hand-edited graph repeating
                ``{#id}``, in one file or across files); each is named by file:line.
        """
        graph = self.graph()
        ref = self._item(graph, entry_id)
        if ref is not None:
            return self._entry(graph, ref)
        for entry in self._correction_entries(graph):
            if entry.id == entry_id:
                return entry
        raise EntryNotFoundError(f"{FORMAT}: no item {entry_id!r} in {self.root}")

    def locate(self, item_id: str) -> tuple[str, int]:
        """Return ``(file relative to the root, 1-based line)`` of a graph item's heading or node line.

        Lines move whenever text above them changes, so they are not part of an entry's
        ``extra`` (which must survive unrelated writes); ask here when you need one.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use this id.
        """
        ref = self._item(self.graph(), item_id)
        if ref is None:
            raise EntryNotFoundError(f"{FORMAT}: no item {item_id!r} in {self.root}")
        return ref.rel, ref.line

    def _item(self, graph: Graph, item_id: str) -> ItemRef | None:
        """Return the one graph item with ``item_id``, or ``None`` when there is none.

        Raises:
            AmbiguousIdError: The id names two or more items; nothing is read or written.
        """
        if item_id in graph.shared_ids:
            refs = graph.occurrences(item_id)
            if len(refs) > 1:
                places = tuple(f"{self.root / ref.rel}:{ref.line}" for ref in refs)
                raise AmbiguousIdError(
                    f"{FORMAT}: id {item_id!r} names {len(refs)} items ({', '.join(places)}); memcore acts on "
                    "none of them: give each its own id (edit the `{#…}` anchor of all but one, and the "
                    "edges that mean it), then retry",
                    entry_id=item_id,
                    places=places,
                )
        return graph.items.get(item_id)

    def _lead(self, doc: Doc, heading: Heading) -> tuple[int, int, list[str]]:
        """Return (first, last, body lines) of a heading's own body, without the meta line."""
        first, last = heading.line + 1, heading.lead_end
        lines = [doc.source.lines[n - 1] for n in range(first, last + 1) if n != heading.meta_line]
        while lines and _blank(lines[0]):
            lines.pop(0)
        while lines and _blank(lines[-1]):
            lines.pop()
        return first, last, lines

    def _entry(self, graph: Graph, ref: ItemRef) -> MemoryEntry:
        doc = graph.docs[ref.rel]
        lines = doc.source.lines
        info: dict[str, Any] = {
            "item": "heading" if ref.is_heading else "node",
            "marker": ref.marker,
            "module": ref.family,
            "file": ref.rel,
        }
        meta: dict[str, Any] | None
        checked: dict[str, Any] | None
        if ref.is_heading:
            heading = doc.headings[ref.index]
            _first, last, body_lines = self._lead(doc, heading)
            title, meta, checked = heading.title, heading.meta, heading.fields
            close = meta.get("body_close") if meta else None
            if isinstance(close, int) and body_close_ok(close) and close <= len(body_lines):
                body_lines = body_lines[:-close]  # lines memcore added to close a fence or HTML block
            body_lines = unescape_body(body_lines, ref.family)
            body = read_body(body_lines, meta)
            edges = heading.edges
            own = lines[heading.line - 1 : last]
            while own and _blank(own[-1]):
                own.pop()
            info["depth"] = heading.depth
            name = backing_name(ref.family, ref.marker, ref.id)
            if name is not None:
                info["backing"] = name
            if ref.family == "pursuit":
                fields = _pursuit_fields(body_lines)
                if fields:
                    info["fields"] = fields
            uncertain = body.startswith(UNCERTAIN_PREFIX)
        else:
            node = doc.nodes[ref.index]
            title, body, meta, edges, checked = node.title, "", node.meta, node.edges, node.fields
            own = lines[node.line - 1 : (node.meta_line or node.line)]
            uncertain = title.startswith(UNCERTAIN_PREFIX)
        sections = [graph.heading(k).title for k in graph.ancestors(ref) if graph.heading(k).id is None]
        if sections:
            info["sections"] = sections[::-1]
        if uncertain:
            info["uncertain"] = True
        values: dict[str, Any] = {
            "id": ref.id,
            "kind": kind_for(ref.family, ref.marker),
            "title": title,
            "body": body,
            "confidence": UNCERTAIN_CONFIDENCE if uncertain else None,
            "relations": [Relation(type=t, target=x, resolved=x in graph.items) for t, x in edges],
            "parent": graph.parent_id(ref),
        }
        version = hashlib.sha256("\n".join([ref.rel, *own]).encode("utf-8")).hexdigest()[:32]
        if not meta:
            # One validation: every assignment to a built entry validates the whole entry again.
            return _with_extra(MemoryEntry(**values, version=version), {FORMAT: info})
        if checked is not None:
            # The parser found the comment's values plainly valid (meta_values): the same entry
            # as apply_meta gives, with one validation instead of two (the comment's values
            # override the item's own).
            checked = dict(checked)
            extra = _json_copy(checked.pop("extra", {}))
            if "relations" in checked:
                values["relations"] = [*values["relations"], *checked.pop("relations")]
            values.update(checked)
            stored = extra.get(FORMAT)
            own_keys = stored if isinstance(stored, dict) else {}
            return _with_extra(MemoryEntry(**values, version=version), {**extra, FORMAT: {**own_keys, **info}})
        entry = MemoryEntry(**values)
        apply_meta(entry, meta)
        stored = entry.extra.get(FORMAT)
        entry.extra[FORMAT] = {**(stored if isinstance(stored, dict) else {}), **info}
        entry.version = version
        return entry

    def _correction_entries(self, graph: Graph) -> Iterator[MemoryEntry]:
        for collection, name in AGENT_CORRECTION_FILES.items():
            lines = graph.extra_files.get(name)
            if lines is None:
                continue
            owner_id = name[len("MEMORY_") : -len(".md")]
            owner = graph.items.get(owner_id)
            for title, start, end in agent_correction_entries(lines):
                body = lines[start:end]
                while body and _blank(body[0]):
                    body.pop(0)
                while body and _blank(body[-1]):
                    body.pop()
                own = "\n".join(lines[start - 1 : end])
                yield MemoryEntry(
                    id=f"{owner_id}#{start}",
                    kind=Kind.CORRECTION,
                    title=title,
                    body="\n".join(body),
                    parent=owner_id if owner is not None else None,
                    extra={FORMAT: {"item": "correction", "collection": collection, "file": name, "line": start}},
                    version=hashlib.sha256(f"{name}\n{own}".encode()).hexdigest()[:32],
                )

    # -- writing: plumbing -------------------------------------------------------------
    def _writable(self, op: str) -> None:
        if self.options.get("read_only"):
            from memcore.errors import ReadOnlyStoreError

            raise ReadOnlyStoreError(f"{FORMAT}: store {self.root} was opened read-only; `{op}` refused")

    # -- writing: batch ---------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes: keep the graph and the touched files in memory, write each file once.

        For the whole block the store lock is held (other processes wait). Each write
        (:meth:`add`, :meth:`update`, :meth:`delete`, archive, supersede, the graph
        operations) is checked as it would be alone and applied to the in-memory files;
        reads in the block (:meth:`get`, :meth:`iter_entries`, :meth:`validate`) see those
        writes. When the outermost block ends every touched file is written once
        (``atomic_write``; new files first, removals last), also when the block raises: what
        was applied (every write that returned) is written, then the exception propagates.
        The files are the same bytes as the same writes made one by one. A nested ``batch()``
        is a plain block; the batch belongs to the thread that opened it. Read-only: the
        block runs without the lock (writes raise as usual).

        Every single write outside a batch runs as a batch of one.

        Yields:
            None.

        Raises:
            OSError: Writing a file at the end of the block failed.
        """
        if self._active() is not None or self.options.get("read_only"):
            yield
            return
        with file_lock(self.root):
            self._temps.sweep()
            session = _Session(thread=threading.get_ident())
            self._session = session
            try:
                yield
            finally:
                self._session = None
                self._flush(session)

    def archive(self, entry_id: str) -> MemoryEntry:
        """Mark an item archived (its memcore comment), one write; see :meth:`update`."""
        with self.batch():
            return super().archive(entry_id)

    def supersede(self, old_id: str, new: MemoryEntry) -> MemoryEntry:
        """Add ``new`` with a ``supersedes`` edge and mark ``old_id`` superseded, in one write.

        Raises:
            EntryNotFoundError: ``old_id`` does not exist (nothing written).
        """
        with self.batch():
            return super().supersede(old_id, new)

    def _active(self) -> _Session | None:
        session = self._session
        if session is not None and session.thread == threading.get_ident():
            return session
        return None

    def _materialize(self, session: _Session, rel: str) -> bytes:
        """Turn a doc changed in place back into bytes (and remember them)."""
        assert session.graph is not None
        doc = session.graph.docs[rel]
        data = doc.source.data
        session.files[rel] = data
        session.dirty.discard(rel)
        if rel not in session.reparse:
            self._cache[(rel, doc.family)] = (data, doc)
        return data

    def _session_read(self, session: _Session, rel: str) -> bytes | None:
        data: bytes | None
        if rel in session.dirty:
            data = self._materialize(session, rel)
        elif rel in session.files:
            data = session.files[rel]
        else:
            data = self._read(rel)
            session.disk.setdefault(rel, data)
        session.seen[rel] = data
        return data

    def _session_graph(self, session: _Session, *, fresh: bool = False) -> Graph:
        """Return the batch's graph; ``fresh``: with diagnostics that are up to date.

        The first call of a batch reuses the graph the previous batch left when every file it
        was built from is unchanged on disk (byte for byte); otherwise it loads the graph
        (files whose bytes are cached are not parsed again).
        """
        if session.graph is None:
            memo, self._memo = self._memo, None
            if memo is not None and all(self._read(rel) == data for rel, data in memo.files.items()):
                session.graph, session.stale, session.seen = memo.graph, memo.stale, dict(memo.files)
                for rel, data in memo.files.items():
                    session.disk.setdefault(rel, data)
        if session.graph is None or (fresh and session.stale):
            for rel in list(session.dirty):
                self._materialize(session, rel)
            for rel in session.reparse:
                for key in [key for key in self._cache if key[0] == rel]:
                    del self._cache[key]
            session.graph = Graph.load(self.root, lambda rel: self._session_read(session, rel), self._md, self._cache)
            session.stale = False
            session.reparse.clear()
        return session.graph

    def _flush(self, session: _Session) -> None:
        """Write what the batch changed: created files, then rewrites, then removals."""
        if session.graph is not None:
            for rel in list(session.dirty):
                self._materialize(session, rel)
        outputs = session.files
        self._check_unchanged(session)
        for rel in sorted(outputs, key=lambda rel: rel not in session.created):
            data = outputs[rel]
            if data is not None:
                atomic_write(safe_join(self.root, rel), data)
        for rel, data in outputs.items():
            if data is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(safe_join(self.root, rel))
        if session.graph is not None:
            # the parse cache keeps only bytes, like a read (the edited line lists go)
            for rel, doc in session.graph.docs.items():
                data = outputs.get(rel)
                if isinstance(doc.source, _incremental.LiveSource) and data is not None:
                    doc.source = Source.from_bytes(rel, data)
            if not session.reparse:
                self._memo = _Memo(session.graph, {**session.seen, **outputs}, session.stale)

    def _check_unchanged(self, session: _Session) -> None:
        """Refuse to save a batch when a file it writes changed on disk since the batch read it.

        The batch holds memcore's lock, but a tool that does not take it, or a second provider
        on the same store in the same thread (the lock is re-entrant per thread), may have
        written meanwhile; saving the batch's copy would silently drop that text.

        Raises:
            ConflictError: A file to write or remove differs from what the batch read (a file
                the batch creates must still be absent); nothing at all is written.
        """
        changed = [
            rel
            for rel in sorted(session.files)
            if self._read(rel) != session.disk.get(rel)
            or (rel not in session.disk and os.path.lexists(self.root / rel))
        ]
        if changed:
            count = session.writes
            raise ConflictError(
                f"{FORMAT}: {', '.join(str(self.root / rel) for rel in changed)} changed on disk during the "
                f"batch (another writer); the batch's {count} write{'s' if count != 1 else ''} were not saved "
                "and the files were left as they are now; re-run the batch"
            )

    def _exists(self, rel: str) -> bool:
        """Whether ``rel`` exists (on disk, or created by the running batch)."""
        session = self._active()
        if session is not None and rel in session.files:
            return session.files[rel] is not None or os.path.lexists(safe_join(self.root, rel))
        return os.path.lexists(safe_join(self.root, rel))

    def _stored(self, item_id: str) -> MemoryEntry:
        """Return an item as the running batch's graph has it (what a reopen will read)."""
        session = self._active()
        assert session is not None and session.graph is not None
        return self._entry(session.graph, session.graph.items[item_id])

    def _write_graph(self) -> Graph:
        """Return the batch's graph for a write, refusing a store whose root files are unusable.

        Raises:
            UnusableRootError: See :meth:`_check_roots`.
        """
        session = self._active()
        assert session is not None, "writes run inside batch()"
        graph = self._session_graph(session)
        self._check_roots(graph)
        return graph

    def _check_roots(self, graph: Graph) -> None:
        """Refuse to write while MEMORY.md or PURSUITS.md has a root diagnostic.

        The rule (docs/formats/rightmemory.md "Writing"): any error among ``ROOT_CODES`` on a
        root file (missing, not a regular file inside the root, not UTF-8, or another format's
        file holding no RightMemory item) blocks every write, even one that would not touch
        that file, because RightMemory's own validator rejects such a store as a whole.

        Raises:
            UnusableRootError: Naming the file and the fix; nothing has been written.
        """
        roots = {name for name, _family in ROOTS}
        found = [d for d in graph.diags if d.severity == Severity.ERROR and d.code in ROOT_CODES and d.path in roots]
        if not found:
            return
        order = ("rm.foreign-root", "rm.irregular-file", "rm.unreadable", "rm.missing-root")
        found.sort(key=lambda d: order.index(d.code))
        first = found[0]
        path = self.root / str(first.path)
        init = f"`memcore init --store {FORMAT}:{self.root}`"
        if first.code == "rm.foreign-root":
            fix = (
                f"{path} is a Maka memory file, not a RightMemory graph; open it with "
                f"`--store maka:{path}`, or keep RightMemory in another folder "
                f"(`memcore init --store {FORMAT}:<dir>`)"
            )
        elif first.code == "rm.irregular-file":
            fix = f"{path} is a symlink or not a regular file inside the root; replace it with the file itself"
        elif first.code == "rm.unreadable":
            fix = f"{path} is not UTF-8 text; re-save it as UTF-8"
        else:
            fix = f"{path} is missing; create it with {init} (existing files are left alone)"
        raise UnusableRootError(f"{FORMAT}: write refused, nothing written: {fix}; `memcore validate` lists:", found)

    def _commit(
        self,
        graph: Graph,
        change: _Change,
        check: Callable[[Graph], None] | None = None,
        *,
        fast: _Fast | None = None,
    ) -> Graph:
        """Validate ``change`` against ``graph`` and apply it to the batch; return the new graph.

        With ``fast`` (an add or update of one item, one line range of one file), only the
        changed part of the file is parsed again and only the changed item is checked
        (:meth:`_fast_commit`); anything that path cannot decide with certainty, and every
        other change, re-parses the touched files and compares the diagnostics of the whole
        graph before and after. The files are written when the batch ends.

        Raises:
            GraphInvariantError: The change would add diagnostics (errors).
            InvalidEntryError: ``check`` refused the result.
        """
        session = self._active()
        assert session is not None, "writes run inside batch()"
        if fast is not None and self._fast_commit(session, graph, change, fast, check):
            assert session.graph is not None
            session.writes += 1
            return session.graph
        graph = self._session_graph(session, fresh=True)
        self._check_roots(graph)
        # New files first, then rewrites, then removals: a reader between two of these atomic
        # steps, or a crash, leaves at worst an unreferenced file, never a dangling F# heading.
        outputs: dict[str, bytes | None] = dict(change.created)
        for rel, edits in change.edits.items():
            if rel in graph.unreadable or rel not in graph.docs:
                raise InvalidEntryError(f"{FORMAT}: refusing to rewrite `{rel}`: it could not be parsed")
            outputs[rel] = graph.docs[rel].source.splice(edits)
        for rel in change.deleted:
            outputs[rel] = None

        def read(rel: str) -> bytes | None:
            if rel in outputs:
                return outputs[rel]
            return self._session_read(session, rel)

        new = Graph.load(self.root, read, self._md, self._cache)
        introduced = _introduced(graph.diags, new.diags)
        if introduced:
            raise GraphInvariantError(f"{FORMAT}: write refused; it would break the graph:", introduced)
        if check is not None:
            check(new)
        for rel, data in outputs.items():
            session.files[rel] = data
            if rel in change.created:
                session.created.add(rel)
        session.graph = new
        session.writes += 1
        return new

    def _fast_commit(
        self,
        session: _Session,
        graph: Graph,
        change: _Change,
        fast: _Fast,
        check: Callable[[Graph], None] | None,
    ) -> bool:
        """Apply a one-range change by re-parsing only the window around it; False: not done.

        Checked: the window reads back as before plus the new or changed item, with no error
        diagnostic it did not have (:func:`_incremental.plan`); the new id is not taken; the
        item's edges add no error (:meth:`Graph.item_problems`: dangling, self, duplicate,
        unknown type, containment); ``check`` accepts the result. When any of these fails,
        nothing is changed (or the change is rolled back) and False tells the caller to take
        the whole-file path, which reports the precise error.
        """
        if change.created or change.deleted or len(change.edits) != 1:
            return False
        ((rel, edits),) = change.edits.items()
        doc = graph.docs.get(rel)
        if len(edits) != 1 or doc is None or rel in graph.unreadable:
            return False
        start, end, lines = edits[0]
        patch = _incremental.plan(doc, start, end, lines, self._md, keep=start if fast.update else None)
        if patch is None or patch.introduced:
            return False
        if fast.update:
            if patch.new_ids:
                return False
        elif patch.new_ids != [fast.item] or fast.item in graph.items:
            return False
        for i in range(patch.hi0, patch.hi1):
            ident = doc.headings[i].id
            if ident is not None and not _points_at(graph, ident, rel, True, i):
                return False
        for i in range(patch.ni0, patch.ni1):
            if not _points_at(graph, doc.nodes[i].id, rel, False, i):
                return False
        old_problems = Counter(graph.item_problems(graph.items[fast.item])) if fast.update else None
        source = _incremental.live(doc)
        raw, text = source.raw, source.lines
        saved = (raw[start - 2] if start >= 2 else None, raw[start - 1 : end], text[start - 1 : end])
        self._cache.pop((rel, doc.family), None)
        session.files.pop(rel, None)
        session.dirty.add(rel)
        session.stale = True

        def undo() -> None:
            # put the text back; the next read of the batch's graph parses the file again
            count = len(lines)
            raw[start - 1 : start - 1 + count] = saved[1]
            text[start - 1 : start - 1 + count] = saved[2]
            if saved[0] is not None:
                raw[start - 2] = saved[0]
            session.reparse.add(rel)

        try:
            dh, dn = _incremental.apply(doc, patch)
            _reindex(graph, rel, doc, patch, dh, dn)
            problems = graph.item_problems(graph.items[fast.item])
            added = (Counter(problems) - old_problems) if old_problems is not None and problems else problems
            if added:
                raise InvalidEntryError(f"{FORMAT}: edge errors {sorted(added)}")
            if check is not None:
                check(graph)
        except InvalidEntryError:
            undo()  # the whole-file path decides and reports the precise error
            return False
        except BaseException:
            undo()  # never write the text of a write that did not return
            raise
        return True

    # -- writing: layout ----------------------------------------------------------------
    def _plain_chain(self, doc: Doc, titles: list[str]) -> int | None:
        """Return the index of the plain-heading chain ``# titles[0]`` > ``## titles[1]``…, if any.

        The first such chain in the file. The heading found last time for the same titles is
        looked for first, from its old index on (headings inserted before it only move it
        down): adds in a batch that go under the same plain heading cost O(1) each instead of
        a scan of every heading before it. Writes never add a plain heading before an existing
        chain of the same titles (a plain heading is only created when there is none), and a
        file parsed again has new heading objects, so the remembered one is then not found.
        """
        key = (doc.source.rel, tuple(titles))
        hit = self._chains.get(key)
        if hit is not None:
            heading, start = hit
            headings = doc.headings
            found = next((i for i in range(start, len(headings)) if headings[i] is heading), None)
            if found is not None and _is_plain_chain(doc, found, titles):
                self._chains[key] = (heading, found)
                return found
            del self._chains[key]
        index = self._scan_plain_chain(doc, titles)
        if index is not None:
            self._chains[key] = (doc.headings[index], index)
        return index

    @staticmethod
    def _scan_plain_chain(doc: Doc, titles: list[str]) -> int | None:
        parent: int | None = None
        found: int | None = None
        for depth, title in enumerate(titles, start=1):
            found = next(
                (
                    i
                    for i, h in enumerate(doc.headings)
                    if h.depth == depth and h.id is None and h.title == title and h.parent == parent
                ),
                None,
            )
            if found is None:
                return None
            parent = found
        return found

    def _target(
        self, graph: Graph, entry: MemoryEntry, family: str, as_heading: bool
    ) -> tuple[str, int | None, int, list[str]]:
        """Decide where a new item goes.

        Returns:
            ``(file, heading index whose block receives it or None for the file's top level,
            depth of a new heading, plain container heading lines to create first)``.

        Raises:
            InvalidEntryError: The parent is not a heading, or an F# parent has no detail file.
        """
        info = entry.extra.get(FORMAT)
        hint_depth = info.get("depth") if isinstance(info, dict) else None
        sections = info.get("sections") if isinstance(info, dict) else None
        if entry.parent is not None:
            ref = self._item(graph, entry.parent)
            if ref is None:
                raise InvalidEntryError(f"{FORMAT}: parent {entry.parent!r} is not a heading in {self.root}")
            if not ref.is_heading:
                raise InvalidEntryError(f"{FORMAT}: parent {entry.parent!r} is a node; only headings contain items")
            heading = graph.docs[ref.rel].headings[ref.index]
            if heading.marker != "F#":
                return ref.rel, ref.index, heading.depth + 1, []
            detail = self._detail_of(graph, ref.rel, ref.index)
            if detail is None:
                raise InvalidEntryError(
                    f"{FORMAT}: F# heading `{heading.id}` has no readable detail file to hold `{entry.id}`"
                )
            depth = hint_depth if isinstance(hint_depth, int) and 1 <= hint_depth <= 6 else heading.depth + 1
            existing = [h.depth for h in graph.docs[detail].headings]
            return detail, None, min([depth, *existing]), []
        rel = "MEMORY.md" if family == "memory" else "PURSUITS.md"
        doc = graph.docs.get(rel)
        if doc is None:
            raise InvalidEntryError(f"{FORMAT}: `{rel}` is missing or unreadable in {self.root}")
        if isinstance(sections, list) and sections and all(isinstance(t, str) and t.strip() for t in sections):
            titles = [str(t).strip() for t in sections]
            index = self._plain_chain(doc, titles)
            if index is not None:
                return rel, index, len(titles) + 1, []
            if len(titles) == 1:
                return rel, None, 2, [f"# {titles[0]}"]
        if as_heading and family == "memory":
            return rel, None, 1, []
        title = DEFAULT_MEMORY_HEADING if family == "memory" else DEFAULT_PURSUIT_HEADING
        index = self._plain_chain(doc, [title])
        if index is not None:
            return rel, index, 2, []
        return rel, None, 2, [f"# {title}"]

    def _detail_of(self, graph: Graph, rel: str, index: int) -> str | None:
        for child, owner in graph.attach.items():
            if owner == (rel, index):
                return child
        return None

    def _node_insert(
        self, graph: Graph, rel: str, index: int | None, create: list[str], new: list[str], change: _Change
    ) -> None:
        """Plan inserting node lines ``new`` as the last direct node of a heading (or of a file's top)."""
        if create:
            self._append(graph, rel, [*create, "", *new], change)
            return
        doc = graph.docs[rel]
        if index is None:
            first_heading = doc.headings[0].line if doc.headings else len(doc.source.lines) + 1
            direct = _nodes_between(doc, 1, first_heading - 1, None)
            self._place(doc, 1, first_heading - 1, direct, new, change)
            return
        heading = doc.headings[index]
        region_end = heading.first_child - 1 if heading.first_child is not None else heading.end
        direct = _nodes_between(doc, heading.line + 1, region_end, index)
        self._place(doc, heading.line + 1, region_end, direct, new, change)

    def _place(self, doc: Doc, first: int, last: int, direct: list[Node], new: list[str], change: _Change) -> None:
        lines = doc.source.lines
        if direct:
            after = max(max(n.meta_line or n.line, n.end) for n in direct[_last_top(direct) :])
        else:
            after = last
            while after >= first and _blank(lines[after - 1]):
                after -= 1
            after = max(after, first - 1)
        block = list(new)
        prev = lines[after - 1] if after >= 1 else ""
        if after >= 1 and not _blank(prev) and not direct:
            block.insert(0, "")
        nxt = lines[after] if after < len(lines) else None
        if nxt is not None and not _blank(nxt) and not _NODE_LINE_RE.match(nxt):
            block.append("")
        change.splice(doc.source.rel, after + 1, after, block)

    def _append(self, graph: Graph, rel: str, new: list[str], change: _Change) -> None:
        lines = graph.docs[rel].source.lines
        last = len(lines)
        while last >= 1 and _blank(lines[last - 1]):
            last -= 1
        block = ([""] if last >= 1 else []) + new
        change.splice(rel, last + 1, last, block)

    def _heading_insert(
        self, graph: Graph, rel: str, index: int | None, create: list[str], new: list[str], change: _Change
    ) -> None:
        """Plan inserting heading lines ``new`` at the end of a heading's block (or of the file)."""
        if create or index is None:
            self._append(graph, rel, [*create, "", *new] if create else new, change)
            return
        heading = graph.docs[rel].headings[index]
        lines = graph.docs[rel].source.lines
        after = heading.end
        while after > heading.line and _blank(lines[after - 1]):
            after -= 1
        block = ["", *new]
        if after < len(lines) and not _blank(lines[after]):
            block.append("")
        change.splice(rel, after + 1, after, block)

    # -- writing: entries -> lines ----------------------------------------------------------
    def _split_relations(self, entry: MemoryEntry) -> tuple[list[tuple[str, str]], list[Relation]]:
        """Return (the edges written on the item's line, the relations kept in its comment).

        An edge is a resolved relation of one of the fifteen edge types to an item id. The
        schema allows "no duplicate edges on one item" ("Graph Invariants"), so a relation equal
        to an earlier edge (same type and target) is written once: the entry reads back with
        that relation once, and a conversion's read-back compare reports the ``relations``
        change. Relations that are not edges are all kept, duplicates included.
        """
        edges: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        other: list[Relation] = []
        for rel in entry.relations:
            if rel.type in _EDGE_TYPES and rel.resolved and ITEM_ID_RE.match(rel.target):
                edge = (rel.type, rel.target)
                if edge not in seen:
                    seen.add(edge)
                    edges.append(edge)
            else:
                other.append(rel)
        return edges, other

    def _meta_line(
        self,
        entry: MemoryEntry,
        family: str,
        marker: str,
        title: str,
        pad: list[str] | None,
        keep: dict[str, Any] | None = None,
        *,
        close: int = 0,
    ) -> str | None:
        """Return the memcore comment for ``entry``; ``keep``: old keys not understood, written back.

        ``close``: closing lines written after the body (``body_close``, see :meth:`_closers`).
        """
        _edges, other = self._split_relations(entry)
        uncertain = (entry.body.lstrip() if marker != "node" else title).startswith(UNCERTAIN_PREFIX)
        meta = meta_for(
            entry,
            derived_kind=kind_for(family, marker),
            derived_confidence=UNCERTAIN_CONFIDENCE if uncertain else None,
            other_relations=other,
            fmt=FORMAT,
            computed=COMPUTED_KEYS,
        )
        if pad is not None:
            meta["body_pad"] = pad
        if close:
            meta["body_close"] = close
        for key, value in (keep or {}).items():
            meta.setdefault(key, value)
        return dump_meta(meta) if meta else None

    def _new_id(self, graph: Graph, entry: MemoryEntry) -> str:
        if entry.id is not None:
            if not ITEM_ID_RE.match(entry.id):
                raise InvalidEntryError(
                    f"{FORMAT}: id {entry.id!r} is not a RightMemory id; use only letters, numbers, "
                    "dot, underscore or dash"
                )
            return entry.id
        base = _slug(entry.title) or _slug(entry.body.split("\n", 1)[0])[:40] or entry.kind.value
        candidate, n = base, 2
        while candidate in graph.items or candidate.casefold() == "rules":
            candidate, n = f"{base}-{n}", n + 1
        return candidate

    @staticmethod
    def _check_text(title: str, body: str, family: str) -> None:
        """Refuse text that RightMemory's own line-based parser would read as graph syntax.

        memcore's parser ignores graph syntax inside code and HTML; the reference parser only
        skips fenced code. What memcore writes must read the same in both, so a title may not
        hold an anchor (``{#x}``, ``{F#x}``…) or an edge list (``→ [``), and a body line outside
        fenced code is escaped (:func:`escape_body`) so that it is neither.
        """
        if "\n" in title or "\r" in title:
            raise InvalidEntryError(f"{FORMAT}: a title must be one line, got {title!r}")
        if _TITLE_SYNTAX.search(title):
            raise InvalidEntryError(
                f"{FORMAT}: title {title!r} holds an anchor `{{X#id}}` or an edge list `→ [`, which "
                "RightMemory's parser would read as graph syntax"
            )
        if "<!-- memcore:" in body:
            raise InvalidEntryError(f"{FORMAT}: a body may not contain a `<!-- memcore:` comment")
        bad = _reference_graph_line(escape_body(body.split("\n"), family), family)
        if bad is not None:  # pragma: no cover - escape_body leaves none; kept as a safety net
            raise InvalidEntryError(f"{FORMAT}: body line {bad!r} would be a heading or node for RightMemory's parser")

    def _closers(self, lines: list[str], family: str, item_id: str) -> list[str]:
        """Return the lines that close a code fence or HTML block ``lines`` leave open (often none).

        A heading body that ends inside a fenced code block or an HTML block (``<pre>``,
        ``<!--``, ``<?``, ``<!X``, ``<![CDATA[`` …) would swallow every item written after it
        in the file (the next add would not read back, and RightMemory's own parser, which
        skips fenced code, would lose it). Such a body is written with closing lines after it
        (the fence, ``-->``, ``?>``, ``>``, ``]]>``, ``</pre>`` …) and ``body_close`` in its
        memcore comment, so that the reader drops them and the body reads back as given.
        Checked by parsing the body between two headings with both parsers' views: markdown-it
        and the reference's fence tracker. Only bodies with a line that could open such a
        block (```` ``` ````, ``~~~`` or ``<`` after up to three spaces) are parsed.

        Raises:
            InvalidEntryError: No closing lines close it for both parsers (nothing written).
        """
        if not any(_BLOCK_OPENER.match(line) for line in lines) or self._closed(lines, family):
            return []
        fence: str | None = None
        for _number, line, in_code in fenced_lines(lines):
            opener = _FENCE_OPEN.match(line)
            if in_code and opener is not None and fence is None:
                fence = opener.group(1)
            elif not in_code:
                fence = None
        tries: list[list[str]] = [[fence]] if fence is not None else []
        tries += [[closer] for closer in _HTML_CLOSERS]
        if fence is not None:
            tries += [[fence, closer] for closer in _HTML_CLOSERS]
        for closers in tries:
            if self._closed([*lines, *closers], family):
                return closers
        raise InvalidEntryError(
            f"{FORMAT}: the body of `{item_id}` leaves a code fence or an HTML block open at its end (which would "
            "swallow every item written after it in the file) and no closing line closes it for both RightMemory's "
            "and memcore's parsers; close it in the body"
        )

    def _closed(self, lines: list[str], family: str) -> bool:
        """Whether a heading written after body ``lines`` is a heading for both parsers."""
        if [in_code for _number, _line, in_code in fenced_lines([*lines, "# after"])][-1]:
            return False  # RightMemory's fence tracker: still in code
        probe = ["# memcore-probe {#memcore-probe-a}", "", *lines, "", "# memcore-probe {#memcore-probe-b}"]
        doc = parse_doc(Source.from_lines("probe.md", probe), family, self._md)
        return any(h.id == "memcore-probe-b" and h.line == len(probe) for h in doc.headings)

    def _want(self, entry: MemoryEntry) -> tuple[str | None, str | None]:
        """Return (item hint, marker hint) from ``entry.extra["rightmemory"]``."""
        info = entry.extra.get(FORMAT) or {}
        item = info.get("item") if isinstance(info, dict) else None
        marker = info.get("marker") if isinstance(info, dict) else None
        return (item if isinstance(item, str) else None), (marker if isinstance(marker, str) else None)

    def _verify(self, new: Graph, item_id: str, expect: MemoryEntry) -> MemoryEntry:
        ref = new.items.get(item_id)
        if ref is None:
            raise InvalidEntryError(f"{FORMAT}: `{item_id}` would not read back as an item; text contains graph syntax")
        got = self._entry(new, ref)
        problems = []
        if got.title != expect.title.strip():
            problems.append(f"title {got.title!r} != {expect.title.strip()!r}")
        if got.body != expect.body:
            problems.append("body")
        if got.parent != expect.parent:
            problems.append(f"parent {got.parent!r} != {expect.parent!r}")
        edges, other = self._split_relations(expect)
        if [(r.type, r.target) for r in got.relations] != [*edges, *((r.type, r.target) for r in other)]:
            problems.append("relations")
        if problems:
            raise InvalidEntryError(
                f"{FORMAT}: `{item_id}` would not read back as written ({', '.join(problems)}); "
                "the title or body probably contains heading, node or edge syntax"
            )
        return got

    # -- writing: operations ------------------------------------------------------------------
    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Add ``entry`` as a node or heading under ``entry.parent``.

        A heading is written when ``extra["rightmemory"]["item"] == "heading"``, a marker
        (``F#``, ``MF#``, ``MQ#``) is asked for, the entry is a Pursuit, or ``body`` is not
        empty; otherwise a node ``- `id` title → [edges]``. Without a parent, Memory entries go
        under the plain ``# Memory`` heading of MEMORY.md and Pursuits under ``# Pursuits`` of
        PURSUITS.md (created at the end of the file when missing). A new heading is one level
        below its parent; under an F# heading the item goes into the detail file. The id is
        ``entry.id`` or derived from the title (``[A-Za-z0-9_.-]+``, made unique).

        Returns:
            The entry as stored (id, timestamps, version set).

        Raises:
            UnusableRootError: MEMORY.md or PURSUITS.md is missing, irregular, not UTF-8 or
                another format's file (see :meth:`_check_roots`); nothing is written.
            GraphInvariantError: The write would break an invariant (duplicate id, dangling
                edge, heading too deep…); nothing is written.
            InvalidEntryError: The parent is not a heading, or the text would not read back.
            UnsupportedOperationError: An ``M#``/``S#`` heading was asked for.
        """
        self.require(Capability.ADD, "add")
        self._writable("add")
        _require_unicode(entry)
        entry = lf_body(entry)
        stamps: dict[str, Any] = {}
        if entry.created_at is None:
            stamps["created_at"] = utc_now()
        if entry.updated_at is None:
            stamps["updated_at"] = stamps.get("created_at", entry.created_at)
        with self.batch():
            graph = self._write_graph()
            family = "pursuit" if entry.kind == Kind.PURSUIT else "memory"
            if entry.parent is not None and entry.parent in graph.items:
                family = graph.items[entry.parent].family
            item_hint, marker = self._want(entry)
            marker = marker if marker not in (None, "node") else None
            if marker in ("M#", "S#"):
                raise UnsupportedOperationError(
                    f"{FORMAT}: adding {marker} headings (which need a backing evidence/skill file) is not supported"
                )
            as_heading = item_hint == "heading" or marker is not None or family == "pursuit" or entry.body != ""
            if item_hint == "node" and entry.body:
                raise InvalidEntryError(f"{FORMAT}: a node has no body; add it as a heading instead")
            marker = marker or ("#" if as_heading else "node")
            ident: str = self._new_id(graph, entry)
            # A shallow copy (the caller's entry is only read): add never changes the entry's
            # lists or dicts, and model_copy(update=) skips re-running the entry's validators
            # (the values set are already valid).
            entry = entry.model_copy(update={**stamps, "id": ident})
            title = entry.title.strip()
            self._check_text(title, entry.body, family)
            core, pad = split_body(entry.body)
            core = escape_body(core, family)
            closers = self._closers(core, family, ident) if as_heading else []
            core += closers
            rel, index, level, create = self._target(graph, entry, family, as_heading)
            edges, _other = self._split_relations(entry)
            meta = self._meta_line(entry, family, marker, title, pad if as_heading else None, close=len(closers))
            change = _Change.empty()
            if as_heading:
                head = "#" * level + " " + (f"{title} " if title else "") + f"{{{marker}{ident}}}"
                if edges:
                    head += f" \u2192 [{_edge_text(edges)}]"
                new = [head] + ([meta] if meta else [])
                if core:
                    new += ["", *core]
                if marker == "F#":
                    name = backing_name(family, "F#", ident)
                    assert name is not None
                    if self._exists(name):
                        raise InvalidEntryError(f"{FORMAT}: `{name}` exists already; refusing to claim it")
                    change.created[name] = b""
                self._heading_insert(graph, rel, index, create, new, change)
            else:
                text = f"- `{ident}` " + (f"{title} " if title else "") + f"\u2192 [{_edge_text(edges)}]"
                new = [text] + ([f"  {meta}"] if meta else [])
                self._node_insert(graph, rel, index, create, new, change)
            verified: list[MemoryEntry] = []
            self._commit(
                graph, change, check=lambda g: verified.append(self._verify(g, ident, entry)), fast=_Fast(ident, False)
            )
            return verified[-1]

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite an item's own lines: title, edges, heading body and the memcore comment.

        Only the item's line range changes (the heading line, its comment and its own body;
        or the node line and its comment). ``updated_at`` is set to now.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use the id (each named by file:line); nothing
                is written.
            UnusableRootError: A root file is unusable (see :meth:`_check_roots`).
            ConflictError: ``expected_version`` is not the item's current version.
            GraphInvariantError: The new edges or text would break an invariant.
            InvalidEntryError: A node given a body, a changed parent, or text that would not
                read back.
            UnsupportedOperationError: The entry is an Agent Corrections entry (read-only).
        """
        self.require(Capability.UPDATE, "update")
        self._writable("update")
        _require_unicode(entry)
        entry = lf_body(entry)
        if entry.id is None:
            raise EntryNotFoundError(f"{FORMAT}: update needs an entry id")
        ident: str = entry.id
        entry = entry.model_copy(update={"updated_at": utc_now()})  # shallow: see add
        with self.batch():
            graph = self._write_graph()
            ref = self._item(graph, ident)
            if ref is None:
                if any(e.id == ident for e in self._correction_entries(graph)):
                    raise UnsupportedOperationError(f"{FORMAT}: Agent Corrections entries are read-only here")
                raise EntryNotFoundError(f"{FORMAT}: no item {entry.id!r} in {self.root}")
            current = self._entry(graph, ref)
            if expected_version is not None and expected_version != current.version:
                raise ConflictError(
                    f"{FORMAT}: `{entry.id}` changed since it was read (version {expected_version} is stale); "
                    "re-read it and retry"
                )
            if entry.parent != current.parent:
                raise InvalidEntryError(
                    f"{FORMAT}: moving `{entry.id}` from parent {current.parent!r} to {entry.parent!r} is "
                    "not supported by update; delete and add it instead"
                )
            change = _Change.empty()
            self._rewrite_item(graph, ref, entry, change)
            verified: list[MemoryEntry] = []
            self._commit(
                graph, change, check=lambda g: verified.append(self._verify(g, ident, entry)), fast=_Fast(ident, True)
            )
            return verified[-1]

    def _rewrite_item(self, graph: Graph, ref: ItemRef, entry: MemoryEntry, change: _Change) -> None:
        doc = graph.docs[ref.rel]
        lines = doc.source.lines
        block: Heading | Node = doc.headings[ref.index] if ref.is_heading else doc.nodes[ref.index]
        if block.meta_line is not None and block.meta is None:
            raise InvalidEntryError(
                f"{FORMAT}: `{ref.id}` has a memcore comment that is not JSON ({ref.rel}:{block.meta_line}); "
                "fix or remove that line first (refusing to overwrite text it cannot read)"
            )
        title = entry.title.strip()
        self._check_text(title, entry.body, ref.family)
        core, pad = split_body(entry.body)
        core = escape_body(core, ref.family)
        closers = self._closers(core, ref.family, ref.id) if ref.is_heading else []
        core += closers
        edges, _other = self._split_relations(entry)
        keep = kept_meta(block.meta)
        meta = self._meta_line(
            entry, ref.family, ref.marker, title, pad if ref.is_heading else None, keep, close=len(closers)
        )
        if ref.is_heading:
            heading = doc.headings[ref.index]
            line = lines[heading.line - 1]
            line = _replace_edges(line, heading.edge_span, heading.edges, edges, heading=True)
            if title != heading.title:
                a, b = heading.title_span
                line = line[:a] + title + (" " if a == b and title else "") + line[b:]
            first, last, old_body = self._lead(doc, heading)
            new = [line] + ([meta] if meta else [])
            if old_body == core:
                new += [lines[n - 1] for n in range(first, last + 1) if n != heading.meta_line]
            else:
                new += ["", *core] if core else []
                if last < len(lines):
                    new.append("")
            change.splice(ref.rel, heading.line, last, new)
        else:
            if entry.body:
                raise InvalidEntryError(f"{FORMAT}: node `{ref.id}` has no body; put the text in the title")
            node = doc.nodes[ref.index]
            line = lines[node.line - 1]
            line = _replace_edges(line, node.edge_span, node.edges, edges, heading=False)
            if title != node.title:
                a, b = node.title_span
                if a == b:
                    # Empty description: the span sits before the arrow's whitespace.
                    line = line[:a] + (" " + title if title else "") + line[b:]
                else:
                    line = line[:a] + title + line[b:]
            new = [line] + ([" " * len(node.prefix) + meta] if meta else [])
            change.splice(ref.rel, node.line, node.meta_line or node.line, new)

    def delete(self, entry_id: str, *, drop_edges: bool = False) -> None:
        """Remove an item: a node's line, or a heading's whole block if it holds no items.

        Args:
            entry_id: The item's id.
            drop_edges: Also remove every edge (and Focus reference) pointing at the item.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use the id (each named by file:line); nothing
                is written.
            UnusableRootError: A root file is unusable (see :meth:`_check_roots`).
            ConflictError: Edges or Focus references still point at the item (and
                ``drop_edges`` is false), or the heading still contains items or headings;
                the message lists them.
            UnsupportedOperationError: An Agent Corrections entry (read-only).
        """
        self.require(Capability.DELETE, "delete")
        self._writable("delete")
        with self.batch():
            graph = self._write_graph()
            ref = self._item(graph, entry_id)
            if ref is None:
                if any(e.id == entry_id for e in self._correction_entries(graph)):
                    raise UnsupportedOperationError(f"{FORMAT}: Agent Corrections entries are read-only here")
                raise EntryNotFoundError(f"{FORMAT}: no item {entry_id!r} in {self.root}")
            referrers = [r for r in graph.referrers(entry_id) if r != entry_id]
            if referrers and not drop_edges:
                raise ConflictError(
                    f"{FORMAT}: `{entry_id}` is still referenced by {', '.join(referrers)}; remove those edges "
                    "first or pass drop_edges=True"
                )
            change = _Change.empty()
            doc = graph.docs[ref.rel]
            if ref.is_heading:
                heading = doc.headings[ref.index]
                children = [
                    r.id for r in graph.every_ref() if r is not ref and (ref.rel, ref.index) in graph.ancestors(r)
                ]
                if children or heading.first_child is not None:
                    raise ConflictError(
                        f"{FORMAT}: heading `{entry_id}` still contains "
                        f"{', '.join(children) if children else 'child headings'}; delete or move them first"
                    )
                start, end = heading.line, heading.end
                lines = doc.source.lines
                while end > start and _blank(lines[end - 1]) and start > 1 and _blank(lines[start - 2]):
                    end -= 1
                change.splice(ref.rel, start, end, [])
                if heading.marker == "F#":
                    detail = self._detail_of(graph, ref.rel, ref.index)
                    if detail is not None:
                        change.deleted.add(detail)
            else:
                node = doc.nodes[ref.index]
                _remove_lines(change, doc.source.lines, ref.rel, node.line, node.meta_line or node.line)
            if referrers:
                self._drop_edges_to(graph, entry_id, change)
            self._commit(graph, change)

    def _drop_edges_to(self, graph: Graph, target: str, change: _Change) -> None:
        for ref in graph.every_ref():
            edges, _ = graph.edges_of(ref)
            if ref.id == target or not any(t == target for _, t in edges):
                continue
            kept = [e for e in edges if e[1] != target]
            doc = graph.docs[ref.rel]
            if ref.is_heading:
                heading = doc.headings[ref.index]
                line = _replace_edges(doc.source.lines[heading.line - 1], heading.edge_span, edges, kept, heading=True)
                change.splice(ref.rel, heading.line, heading.line, [line])
            else:
                node = doc.nodes[ref.index]
                line = _replace_edges(doc.source.lines[node.line - 1], node.edge_span, edges, kept, heading=False)
                change.splice(ref.rel, node.line, node.line, [line])
        for ident, rel, line_no in graph.focus:
            if ident == target:
                _remove_lines(change, graph.docs[rel].source.lines, rel, line_no, line_no)

    # -- graph operations ------------------------------------------------------------------
    def add_edge(self, item_id: str, edge_type: str, target: str) -> MemoryEntry:
        """Add the edge ``edge_type:target`` to an item (refused if it breaks an invariant)."""
        entry = self.get(item_id)
        if edge_type not in _EDGE_TYPES:
            raise GraphInvariantError(
                f"{FORMAT}: write refused; it would break the graph:",
                [Diagnostic(code="rm.unknown-edge-type", message=f"unknown edge type `{edge_type}`", entry_id=item_id)],
            )
        if any(r.type == edge_type and r.target == target and r.resolved for r in entry.relations):
            # update() writes a repeated edge once; asked for explicitly, it is refused
            raise GraphInvariantError(
                f"{FORMAT}: write refused; it would break the graph:",
                [
                    Diagnostic(
                        code="rm.duplicate-edge",
                        message=f"duplicate edge `{edge_type}:{target}` on `{item_id}`",
                        entry_id=item_id,
                    )
                ],
            )
        entry.relations = [*entry.relations, Relation(type=edge_type, target=target)]
        return self.update(entry, expected_version=entry.version)

    def remove_edge(self, item_id: str, edge_type: str, target: str) -> MemoryEntry:
        """Remove the edge ``edge_type:target`` from an item.

        Raises:
            EntryNotFoundError: The item or the edge does not exist.
        """
        entry = self.get(item_id)
        kept = [r for r in entry.relations if not (r.type == edge_type and r.target == target)]
        if len(kept) == len(entry.relations):
            raise EntryNotFoundError(f"{FORMAT}: `{item_id}` has no edge {edge_type}:{target}")
        entry.relations = kept
        return self.update(entry, expected_version=entry.version)

    def move_to_detail(self, heading_id: str) -> str:
        """Turn a ``{#id}`` heading into ``{F#id}``, moving its children into its detail file.

        Child headings and nodes move to ``MEMORY_<id>.md`` / ``PURSUIT_<id>.md``; the heading
        line and its own body stay.

        Returns:
            The detail file's name.

        Raises:
            InvalidEntryError: Not a ``#`` heading, nothing to move, or the detail file exists.
            GraphInvariantError: The move would break an invariant (nothing is written).
        """
        self._writable("move_to_detail")
        with self.batch():
            graph = self._write_graph()
            ref, heading, doc = self._heading_ref(graph, heading_id, "#")
            name = backing_name(ref.family, "F#", heading_id)
            assert name is not None
            if self._exists(name):
                raise InvalidEntryError(f"{FORMAT}: `{name}` exists already; refusing to claim it")
            lines = doc.source.lines
            start = heading.lead_end + 1
            while start <= heading.end and _blank(lines[start - 1]):
                start += 1
            end = heading.end
            while end >= start and _blank(lines[end - 1]):
                end -= 1
            if start > end:
                raise InvalidEntryError(f"{FORMAT}: heading `{heading_id}` has no child content to move")
            moved = lines[start - 1 : end]
            cut = start
            while cut - 1 > heading.line and _blank(lines[cut - 2]):
                cut -= 1
            change = _Change.empty()
            change.splice(ref.rel, heading.line, heading.line, [_set_marker(lines[heading.line - 1], heading_id, "F#")])
            change.splice(ref.rel, cut, end, [])
            nl = doc.source.newline
            change.created[name] = (nl.join(moved) + nl).encode("utf-8")
            self._commit(graph, change, check=_same_parents(graph))
            return name

    def inline_detail(self, heading_id: str) -> None:
        """Turn an ``{F#id}`` heading back into ``{#id}``, inlining its detail file.

        The detail file's content moves to the end of the heading's block and the detail file
        is removed.

        Raises:
            InvalidEntryError: Not an F# heading with a readable detail file.
            GraphInvariantError: The result would break an invariant (e.g. a ``####`` F#).
        """
        self._writable("inline_detail")
        with self.batch():
            graph = self._write_graph()
            ref, heading, doc = self._heading_ref(graph, heading_id, "F#")
            detail = self._detail_of(graph, ref.rel, ref.index)
            if detail is None:
                raise InvalidEntryError(f"{FORMAT}: F# heading `{heading_id}` has no readable detail file")
            content = list(graph.docs[detail].source.lines)
            while content and _blank(content[0]):
                content.pop(0)
            while content and _blank(content[-1]):
                content.pop()
            change = _Change.empty()
            change.splice(
                ref.rel, heading.line, heading.line, [_set_marker(doc.source.lines[heading.line - 1], heading_id, "#")]
            )
            lines = doc.source.lines
            after = heading.end
            while after > heading.line and _blank(lines[after - 1]):
                after -= 1
            trailing = [""] if content and after < len(lines) and not _blank(lines[after]) else []
            block = (["", *content] if content else []) + trailing
            if block:
                change.splice(ref.rel, after + 1, after, block)
            change.deleted.add(detail)
            self._commit(graph, change, check=_same_parents(graph))

    def _heading_ref(self, graph: Graph, heading_id: str, marker: str) -> tuple[ItemRef, Heading, Doc]:
        ref = self._item(graph, heading_id)
        if ref is None:
            raise EntryNotFoundError(f"{FORMAT}: no item {heading_id!r} in {self.root}")
        if not ref.is_heading or ref.marker != marker:
            raise InvalidEntryError(f"{FORMAT}: `{heading_id}` is not a {{{marker}…}} heading")
        doc = graph.docs[ref.rel]
        return ref, doc.headings[ref.index], doc


#: Marks the reference installer puts in its starter-template text (``<!-- rightmemory:example:start -->``).
_TEMPLATE_MARK = "<!-- rightmemory:"
_THEMATIC_BREAK = re.compile(r"^(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")


def _format_text(text: str) -> bool:
    """Whether a stripped line is format markup, not content: a thematic break, a template mark."""
    return (
        text == _FOCUS_PLACEHOLDER
        or _THEMATIC_BREAK.match(text) is not None
        or (text.startswith(_TEMPLATE_MARK) and text.endswith("-->"))
    )


def unread_text(graph: Graph) -> list[Diagnostic]:
    """Return an ``rm.unread-text`` warning for each run of lines no entry reads.

    An entry carries its heading line and, for an anchored heading, the lead up to its first
    node or child heading (its body); a node carries its one line and its memcore comment.
    Anything else that is not blank, a memcore comment, a Focus reference or format markup
    (a thematic break, the reference's ``No Pursuit is focused yet.`` and starter-template
    notes marked ``<!-- rightmemory:...-->``) is in no entry
    and no conversion carries it: continuation lines and nested plain bullets of a node's
    list item, paragraphs after a node list, text under a plain heading or before the first
    heading of a file. One warning per run of such lines (blank or read lines end a run), at
    its first line (1-based), path root-relative like the other diagnostics.
    """
    out: list[Diagnostic] = []
    for rel in sorted(graph.docs):
        out.extend(_unread_in(rel, graph.docs[rel]))
    return out


def _unread_in(rel: str, doc: Doc) -> list[Diagnostic]:
    """Return :func:`unread_text`'s warnings for one file (its lines released after, if split here)."""
    out: list[Diagnostic] = []
    covered: set[int] = {line for _ident, line in doc.focus}
    for heading in doc.headings:
        covered.add(heading.line)
        if heading.id is not None:
            covered.update(range(heading.line + 1, heading.lead_end + 1))
    for node in doc.nodes:
        covered.add(node.line)
        if node.meta_line is not None:
            covered.add(node.meta_line)
    source = doc.source
    unsplit = type(source) is Source and getattr(source, "_lines", None) is None
    runs: list[list[tuple[int, str]]] = []
    inside = False
    for number, line, in_code in fenced_lines(source.lines):
        text = line.strip()
        if in_code and inside and number not in covered:
            runs[-1].append((number, text))  # a code block is one passage, blank lines and all
            continue
        if number in covered or not text or META_RE.match(line) or _format_text(text):
            inside = False
            continue
        if not inside:
            runs.append([])
        runs[-1].append((number, text))
        inside = True
    for run in runs:
        if any(_TEMPLATE_MARK in text for _number, text in run):
            continue  # the reference installer's starter-template note
        number, text = run[0]
        out.append(
            Diagnostic(
                path=rel,
                line=number,
                code="rm.unread-text",
                severity=Severity.WARNING,
                message=f"text {text[:40]!r} is not part of any entry (not a heading's body nor a "
                "node line): conversions do not carry it",
            )
        )
    if unsplit:
        source.release()
    return out


def _trim_cache(cache: ParseCache, budget: int) -> None:
    """Drop parsed files from ``cache`` beyond the first ``budget`` bytes of files (roots first)."""
    total = 0
    for key in list(cache):
        total += len(cache[key][0])
        if total > budget:
            del cache[key]


def _attach_chain(graph: Graph, rel: str) -> set[str]:
    """Return ``rel`` and the files whose F# headings attach it, up to its root file."""
    chain = {rel}
    owner = graph.attach.get(rel)
    while owner is not None and owner[0] not in chain:
        chain.add(owner[0])
        owner = graph.attach.get(owner[0])
    return chain


def split_body(body: str) -> tuple[list[str], list[str] | None]:
    """Split a body into the lines written under a heading and the padding kept in the comment.

    The lines are the body without leading and trailing blank (whitespace-only) lines. A body
    reads back as those lines joined with ``\\n`` plus one final ``\\n``; when the body given
    differs from that (no final newline, several, leading blank lines, whitespace only), the
    exact text before and after the lines is kept as ``body_pad: [before, after]``.

    Returns:
        (lines, pad or None).
    """
    lines = body.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    core = lines[start:end]
    text = "\n".join(core)
    offset = sum(len(line) + 1 for line in lines[:start]) if core else len(body)
    before, after = body[:offset], body[offset + len(text) :]
    if before == "" and after == ("\n" if core else ""):
        return core, None
    return core, [before, after]


def read_body(lines: list[str], meta: dict[str, Any] | None) -> str:
    """Return a heading's body from its lines and the ``body_pad`` of its comment (if any)."""
    text = "\n".join(lines)
    pad = meta.get("body_pad") if meta else None
    if isinstance(pad, list) and len(pad) == 2 and all(isinstance(x, str) for x in pad):
        return str(pad[0]) + text + str(pad[1])
    return text + "\n" if lines else ""


_ESCAPED_HEADING = re.compile(r"^\\*#+\s")
_ESCAPED_NODE = re.compile(r"^(\s*-\s+)\\*`")


def _body_walk(lines: list[str], family: str, escape: bool) -> list[str]:
    in_next = False
    out: list[str] = []
    for _, line, in_code in fenced_lines(lines):
        if in_code:
            out.append(line)
            continue
        if family == "pursuit":
            field_match = PURSUIT_FIELD_RE.match(line)
            if field_match:
                in_next = field_match.group(1).casefold() == "next"
                out.append(line)
                continue
        if _ESCAPED_HEADING.match(line):
            if escape:
                line = "\\" + line
            elif line.startswith("\\"):
                line = line[1:]
        elif not in_next and (node := _ESCAPED_NODE.match(line)):
            cut = node.end(1)
            if escape:
                line = line[:cut] + "\\" + line[cut:]
            elif line[cut] == "\\":
                line = line[:cut] + line[cut + 1 :]
        out.append(line)
    return out


def escape_body(lines: list[str], family: str) -> list[str]:
    """Escape body lines RightMemory's parser would take as headings or nodes.

    Outside fenced code, a line starting with ``#…`` + space gets a leading backslash
    (``\\# Identity``), and a bullet starting with a code span gets a backslash before the
    backtick (``- \\`x` …``), except ``**Next:**`` actions in Pursuit bodies. Lines that already
    start that way with backslashes get one more, so :func:`unescape_body` restores any body
    exactly. Markdown renders the escaped lines as the literal text.
    """
    return _body_walk(lines, family, escape=True)


def unescape_body(lines: list[str], family: str) -> list[str]:
    """Undo :func:`escape_body` (one backslash off each escaped line)."""
    return _body_walk(lines, family, escape=False)


def _reference_graph_line(lines: list[str], family: str) -> str | None:
    """Return the first line RightMemory's line-based parser would take as a heading or node."""
    in_next = False
    for _, line, in_code in fenced_lines(lines):
        if in_code:
            continue
        if _HEADING_LINE.match(line):
            return line
        if family == "pursuit":
            field_match = PURSUIT_FIELD_RE.match(line)
            if field_match:
                in_next = field_match.group(1).casefold() == "next"
                continue
            if in_next and _NODE_LINE_RE.match(line):
                continue
        if _NODE_LINE_RE.match(line):
            return line
    return None


def _remove_lines(change: _Change, lines: list[str], rel: str, start: int, end: int) -> None:
    """Plan removing lines ``start..end``, and one blank line when blanks would then double up."""
    before_blank = start == 1 or _blank(lines[start - 2])
    if before_blank and end < len(lines) and _blank(lines[end]):
        end += 1
    change.splice(rel, start, end, [])


def _set_marker(line: str, ident: str, marker: str) -> str:
    def swap(match: re.Match[str]) -> str:
        return f"{{{marker}{ident}}}" if match.group(2) == ident else match.group(0)

    return _ANCHOR_IN_LINE.sub(swap, line, count=1)


def _replace_edges(
    line: str,
    span: tuple[int, int] | None,
    old: list[tuple[str, str]],
    new: list[tuple[str, str]],
    *,
    heading: bool,
) -> str:
    if old == new:
        return line
    text = _edge_text(new)
    if span is None:
        if not new:
            return line
        stripped = line.rstrip()
        return stripped + f" \u2192 [{text}]" + line[len(stripped) :]
    return line[: span[0]] + text + line[span[1] :]


def _same_parents(before: Graph) -> Callable[[Graph], None]:
    expected = {ident: before.parent_id(ref) for ident, ref in before.items.items()}

    def check(after: Graph) -> None:
        got = {ident: after.parent_id(ref) for ident, ref in after.items.items()}
        if got != expected:
            moved = sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))
            raise InvalidEntryError(f"{FORMAT}: the move would change the items or parents of {', '.join(moved)}")

    return check


def _introduced(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """Return error diagnostics in ``after`` that ``before`` did not have (line shifts ignored)."""

    def key(d: Diagnostic) -> tuple[str, str | None, str | None, str]:
        return (d.code, d.path, d.entry_id, _LINE_NO_RE.sub("", d.message))

    old = Counter(key(d) for d in before if d.severity == Severity.ERROR)
    out = []
    for diag in after:
        if diag.severity != Severity.ERROR:
            continue
        k = key(diag)
        if old[k] > 0:
            old[k] -= 1
        else:
            out.append(diag)
    return out


def _pursuit_fields(lines: list[str]) -> dict[str, Any]:
    """Return a Pursuit heading's ``**State:**``/``**Next:**``/``**Done when:**``/``**Status:**``."""
    fields: dict[str, Any] = {}
    current: str | None = None
    for line in lines:
        match = PURSUIT_FIELD_RE.match(line)
        if match:
            current = match.group(1).casefold().replace(" ", "_")
            rest = line[match.end() :].strip()
            fields[current] = [] if current == "next" else rest
            if current == "next" and rest:
                fields[current] = [{"action": None, "text": rest}]
            continue
        if current is None:
            continue
        if _blank(line):
            if current != "next":
                current = None
            continue
        if current == "next":
            action = re.match(r"^\s*-\s+`([^`]+)`\s*(.*)$", line)
            if action:
                fields["next"].append({"action": action.group(1), "text": action.group(2).strip()})
            else:
                current = None
        else:
            fields[current] = (str(fields[current]) + " " + line.strip()).strip()
    return fields
