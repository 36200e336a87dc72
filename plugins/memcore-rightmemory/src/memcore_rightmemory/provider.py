"""The RightMemory provider: a graph of headings and nodes in MEMORY.md, PURSUITS.md and detail files.

Spec: ../shared/specs/rightmemory-schema.md; reference behaviour:
../shared/specs/reference-notes/rightmemory.md; docs/formats/rightmemory.md describes the
mapping, the write rules and every diagnostic code.

Reading: every addressable heading and node is a :class:`~memcore.models.MemoryEntry` whose id
is its graph id, ``parent`` the nearest addressable ancestor heading (across F# detail files),
``relations`` its edges (:mod:`memcore_rightmemory.codec`). Writing is surgical: only the line
range of the item touched changes, every other byte of every file stays as it was
(:mod:`memcore_rightmemory._render`); a write that would add a validation error is refused with
that diagnostic (:class:`GraphInvariantError`). Every write runs in core's write session
(:meth:`~memcore.provider.BaseProvider.session`: the lock, read-only refusal, the conflict
check, the write order); this provider keeps only its graph between writes, fed by that session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    UnsafePathError,
    UnsupportedOperationError,
)
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Relation, lf_body
from memcore.provider import BaseProvider, Capability, StoreSnapshot, unchanged_by
from memcore.storage import LocalStorage, WriteSession, temp_file_diagnostics
from memcore_rightmemory import _render as render
from memcore_rightmemory._bulk import BulkAdd
from memcore_rightmemory._graph import Graph, ItemRef, ParseCache, backing_name
from memcore_rightmemory._init import EMPTY_MEMORY, EMPTY_PURSUITS, init_root, root_files_like
from memcore_rightmemory._move import move_item
from memcore_rightmemory._parse import Doc, Heading, make_markdown, walk_release
from memcore_rightmemory._render import DEFAULT_MEMORY_HEADING, DEFAULT_PURSUIT_HEADING
from memcore_rightmemory._state import Fast, GraphKeeper, regular, trim_cache
from memcore_rightmemory.codec import (
    COMPUTED_KEYS,
    FORMAT,
    correction_entries,
    entry_of,
    new_id,
    require_unicode_fast,
    verify,
    want,
)
from memcore_rightmemory.mapping import AGENT_CORRECTION_FILES, RELATION_TYPES
from memcore_rightmemory.reference import RightMemoryReference
from memcore_rightmemory.validate import (
    GraphInvariantError,
    UnusableRootError,
    check_new_edge,
    check_roots,
    same_parents,
    unread_in,
    unread_text,
)

__all__ = [
    "COMPUTED_KEYS",
    "DEFAULT_MEMORY_HEADING",
    "DEFAULT_PURSUIT_HEADING",
    "GraphInvariantError",
    "RightMemoryProvider",
    "UnusableRootError",
]

#: Bytes of parsed files a provider keeps between reads outside a batch (~15,000 nodes); beyond, reads parse again.
READ_CACHE_BYTES = 2 * 1024 * 1024
_SNIFF_ANCHOR = re.compile(rb"\{(?:F|M|S|MF|MQ)?#[A-Za-z0-9_.-]+\}")


class RightMemoryProvider(BulkAdd, RightMemoryReference, BaseProvider):
    """memcore provider for a RightMemory root (the folder holding MEMORY.md and PURSUITS.md).

    Args:
        location: The store root, or its MEMORY.md.
        **options: ``read_only`` (bool): refuse every write.

    Capabilities: ADD, UPDATE, DELETE, SUPERSEDE, ARCHIVE, GRAPH, CONCURRENT, BATCH (core's
    :meth:`~memcore.provider.BaseProvider.batch`: reads in the block see its writes, each
    touched file is written once at the end; every write outside one runs as a session of one).
    ``delete`` takes ``drop_edges=True`` to remove the edges (and Focus references) pointing at
    the item. Extra write operations: :meth:`add_edge`, :meth:`remove_edge`,
    :meth:`move_to_detail`, :meth:`inline_detail`.
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
    write_operations: ClassVar[frozenset[str]] = BaseProvider.write_operations | {
        "add_edge",
        "remove_edge",
        "move_to_detail",
        "inline_detail",
        "move",
    }

    #: no options but the core ones (``read_only``); anything else is a ConfigError
    option_names: ClassVar[frozenset[str] | None] = frozenset()
    relation_types: ClassVar[dict[str, str]] = RELATION_TYPES

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        path = Path(location)
        if path.name == "MEMORY.md" and not path.is_dir():
            path = path.parent
        super().__init__(path, **options)
        self.root = path
        self._md = make_markdown()
        self._graphs = GraphKeeper(path, self._md)
        #: parsed files, shared by reads and writes (``(file, family) -> (bytes, doc)``)
        self._cache: ParseCache = self._graphs.cache
        #: plain-section chains found by earlier adds: see :func:`memcore_rightmemory._render.plain_chain`
        self._chains: render.Chains = {}

    def make_storage(self) -> LocalStorage:
        """The root folder (the lock is taken on it, as before memcore's write session)."""
        return LocalStorage(self.root, label=FORMAT)

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
            if not (path / "MEMORY.md").is_file():
                return False
            data, _version = LocalStorage(path, label=FORMAT).read("MEMORY.md")
            return _SNIFF_ANCHOR.search(data, 0, 256 * 1024) is not None
        except (OSError, UnsafePathError):
            return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create MEMORY.md (``# Memory``) and PURSUITS.md (``# Pursuits`` + empty ``## Focus``).

        Existing files are left alone. The result validates with zero diagnostics.

        Raises:
            OSError: The folder cannot be created or written.
        """
        init_root(cls(location), {"MEMORY.md": EMPTY_MEMORY, "PURSUITS.md": EMPTY_PURSUITS})

    @classmethod
    def init_store_like(cls, location: str, source: Any, **options: Any) -> list[str]:
        """Create a root whose files start as ``source``'s do (:func:`~memcore_rightmemory._init.root_files_like`)."""
        return init_root(cls(location), *root_files_like(Path(os.fspath(source.location))))

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
        self._graphs.memo = self._reference_memo = None
        super().close()

    # -- reading ----------------------------------------------------------------------
    def _read(self, rel: str) -> bytes | None:
        """Return a graph file's bytes (through the storage), or ``None`` when it is not a regular file."""
        if not regular(self.root, rel):
            return None
        try:
            return self.storage.read(rel)[0]
        except (OSError, UnsafePathError):
            return None

    def graph(self) -> Graph:
        """Parse and validate the store as it is on disk now (in a :meth:`batch`: as the batch left it).

        Files whose bytes did not change since the last call are not re-parsed, up to
        :data:`READ_CACHE_BYTES` of files (what this keeps between calls is bounded; the whole
        graph is kept only by :meth:`read_all` and the reference reading, while unchanged).
        """
        session = self.active_session()
        if session is not None:
            return self._graphs.graph(session, fresh=True)
        graph = Graph.load(self.root, self._read_handed, self._md, self._cache)
        trim_cache(self._cache, READ_CACHE_BYTES)
        return graph

    def validate(self) -> list[Diagnostic]:
        """Return every diagnostic the validator finds (reference rules + corrections files).

        Never raises for bad files: unreadable files are reported as ``rm.unreadable``.
        """
        graph = self.graph()
        return [*graph.on_disk([*graph.diags, *unread_text(graph)]), *temp_file_diagnostics(self.root, "rm")]

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

        Equal to ``StoreSnapshot(list(self.iter_entries()), self.validate())``, from one load of the graph
        (kept for the next reads while its files are unchanged: ``RightMemoryReference._keep_read``).
        """
        graph = self.graph()
        unread: dict[str, list[Diagnostic]] = {}

        def note(rel: str) -> None:  # while the file's lines are split for its entries
            if rel not in unread:
                unread[rel] = unread_in(rel, graph.docs[rel])

        entries = list(self._all_entries(graph, before_release=note))
        for rel in graph.docs:
            note(rel)  # files without items
        self._keep_read(graph)
        return StoreSnapshot(
            entries,
            [
                *graph.on_disk([*graph.diags, *(d for rel in sorted(graph.docs) for d in unread[rel])]),
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
        live: dict[str, Callable[[], None]] = {}
        current: str | None = None

        def release(rel: str) -> None:
            drop = live.pop(rel)
            if before_release is not None:
                before_release(rel)
            drop()  # the lines this walk split

        try:
            for ref in graph.ordered():
                if only is not None and ref.rel != only:
                    continue
                if ref.rel != current:
                    current = ref.rel
                    keep = graph.attach_chain(ref.rel)
                    for rel in [rel for rel in live if rel not in keep]:
                        release(rel)
                    live[ref.rel] = walk_release(graph.docs[ref.rel].source)
                yield entry_of(graph, ref)
        finally:
            for rel in list(live):
                release(rel)
        if only is None or only in AGENT_CORRECTION_FILES.values():
            for entry in correction_entries(graph):
                if only is None or self.file_of(entry) == only:
                    yield entry

    # memcore.provider.FileBackedProvider: lets memcore.index refresh file by file.
    def source_files(self) -> list[str]:
        """Return every graph file (MEMORY.md, PURSUITS.md, F# detail files), root-relative."""
        return sorted(self._read_graph().docs)

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
            return entry_of(graph, ref)
        for entry in correction_entries(graph):
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
        graph = self.graph()
        ref = self._item(graph, item_id)
        if ref is None:
            raise EntryNotFoundError(f"{FORMAT}: no item {item_id!r} in {self.root}")
        line = graph.file_line(ref.rel, ref.line)
        assert line is not None
        return ref.rel, line

    def _item(self, graph: Graph, item_id: str) -> ItemRef | None:
        """Return the one graph item with ``item_id``, or ``None`` when there is none.

        Raises:
            AmbiguousIdError: The id names two or more items; nothing is read or written.
        """
        if item_id in graph.shared_ids and len(refs := graph.occurrences(item_id)) > 1:
            places = tuple(f"{self.root / ref.rel}:{graph.file_line(ref.rel, ref.line)}" for ref in refs)
            raise AmbiguousIdError(
                f"{FORMAT}: id {item_id!r} names {len(refs)} items ({', '.join(places)}); memcore acts on "
                "none of them: give each its own id (edit the `{#…}` anchor of all but one, and the "
                "edges that mean it), then retry",
                entry_id=item_id,
                places=places,
            )
        return graph.items.get(item_id)

    # -- the write session (core's), and the graph this provider keeps in it ---------------
    def _session_started(self, session: WriteSession) -> None:
        """A session began (core swept temp files of interrupted writes): no graph loaded yet."""
        self._graphs.start()

    def _session_ending(self, session: WriteSession) -> None:
        """Stage the files the writes changed in place, and flush."""
        self._graphs.finish(session)

    def _session_ended(self, session: WriteSession, ok: bool) -> None:
        """Keep the session's graph for the next write when its files were saved."""
        self._graphs.end(session)

    def _write_graph(self) -> Graph:
        """Return the session's graph for a write, refusing a store whose root files are unusable.

        Raises:
            UnusableRootError: See :func:`~memcore_rightmemory.validate.check_roots`.
        """
        session = self.active_session()
        assert session is not None, "writes run inside a session"
        graph = self._graphs.graph(session)
        check_roots(graph, self.root)
        return graph

    def _exists(self, rel: str) -> bool:
        """Whether ``rel`` exists (on disk, or created by the open session)."""
        session = self.active_session()
        return self._graphs.exists(session, rel) if session is not None else os.path.lexists(self.root / rel)

    def _commit(
        self,
        graph: Graph,
        change: render.Change,
        check: Callable[[Graph], None] | None = None,
        *,
        fast: Fast | None = None,
    ) -> Graph:
        """Check ``change`` and stage it in the session (see ``GraphKeeper.commit``)."""
        session = self.active_session()
        assert session is not None, "writes run inside a session"
        return self._graphs.commit(session, graph, change, check, fast=fast)

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

        RightMemory items have no timestamps: none is stamped (a time the entry carries is kept
        in the memcore comment, like every field RightMemory cannot hold), so a plain add of
        a title and body writes exactly what RightMemory's own writer would.

        Returns:
            The entry as stored (id and version set).

        Raises:
            UnusableRootError: MEMORY.md or PURSUITS.md is missing, irregular, not UTF-8 or
                another format's file (see :func:`~memcore_rightmemory.validate.check_roots`);
                nothing is written.
            GraphInvariantError: The write would break an invariant (duplicate id, dangling
                edge, heading too deep…); nothing is written.
            InvalidEntryError: The parent is not a heading, or the text would not read back.
            UnsupportedOperationError: An ``M#``/``S#`` heading was asked for.
        """
        self.require(Capability.ADD, "add")
        require_unicode_fast(entry)
        entry = lf_body(entry)
        with self.session("add"):
            graph = self._write_graph()
            family = "pursuit" if entry.kind == Kind.PURSUIT else "memory"
            if entry.parent is not None and entry.parent in graph.items:
                family = graph.items[entry.parent].family
            item_hint, marker = want(entry)
            marker = marker if marker not in (None, "node") else None
            if marker in ("M#", "S#"):
                raise UnsupportedOperationError(
                    f"{FORMAT}: adding {marker} headings (which need a backing evidence/skill file) is not supported"
                )
            as_heading = item_hint == "heading" or marker is not None or family == "pursuit" or entry.body != ""
            if item_hint == "node" and entry.body:
                raise InvalidEntryError(f"{FORMAT}: a node has no body; add it as a heading instead")
            marker = marker or ("#" if as_heading else "node")
            ident: str = new_id(graph, entry)
            # A shallow copy (the caller's entry is only read): add never changes the entry's
            # lists or dicts, and model_copy(update=) skips re-running the entry's validators
            # (the values set are already valid).
            entry = entry.model_copy(update={"id": ident})
            core, meta = render.body_lines(entry, family, marker, ident, self._md)
            parent = self._item(graph, entry.parent) if entry.parent is not None else None
            rel, index, level, create = render.target(graph, entry, family, as_heading, parent, self._chains, self.root)
            change = render.Change.empty()
            if as_heading:
                if marker == "F#":
                    name = backing_name(family, "F#", ident)
                    assert name is not None
                    if self._exists(name):
                        raise InvalidEntryError(f"{FORMAT}: `{name}` exists already; refusing to claim it")
                    change.created[name] = b""
                new = render.heading_lines(entry, ident, marker, level, core, meta)
                render.heading_insert(graph, rel, index, create, new, change)
            else:
                render.node_insert(graph, rel, index, create, render.node_line(entry, ident, meta), change)
            return self._commit_item(graph, change, ident, entry, update=False)

    def _commit_item(
        self, graph: Graph, change: render.Change, ident: str, entry: MemoryEntry, *, update: bool
    ) -> MemoryEntry:
        """Commit the change of one item and return it as read back (checked against ``entry``)."""
        verified: list[MemoryEntry] = []
        self._commit(graph, change, check=lambda g: verified.append(verify(g, ident, entry)), fast=Fast(ident, update))
        return verified[-1]

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite an item's own lines: title, edges, heading body and the memcore comment.

        Only the item's line range changes (the heading line, its comment and its own body;
        or the node line and its comment). No ``updated_at`` is stamped (RightMemory has no
        timestamps; the entry's own is kept). An update that changes nothing
        (:func:`~memcore.provider.unchanged_by`) writes no byte and returns the item as stored.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use the id (each named by file:line); nothing
                is written.
            UnusableRootError: A root file is unusable (see :func:`~memcore_rightmemory.validate.check_roots`).
            ConflictError: ``expected_version`` is not the item's current version.
            GraphInvariantError: The new edges or text would break an invariant.
            InvalidEntryError: A node given a body, a changed parent, or text that would not
                read back.
            UnsupportedOperationError: The entry is an Agent Corrections entry (read-only).
        """
        self.require(Capability.UPDATE, "update")
        require_unicode_fast(entry)
        entry = lf_body(entry)
        if entry.id is None:
            raise EntryNotFoundError(f"{FORMAT}: update needs an entry id")
        ident: str = entry.id
        with self.session("update"):
            graph = self._write_graph()
            ref = self._graph_item(graph, ident)
            current = entry_of(graph, ref)
            if expected_version is not None and expected_version != current.version:
                raise ConflictError(
                    f"{FORMAT}: `{entry.id}` changed since it was read (version {expected_version} is stale); "
                    "re-read it and retry"
                )
            if unchanged_by(current, entry):
                return current
            if entry.parent != current.parent:
                raise InvalidEntryError(
                    f"{FORMAT}: update keeps `{entry.id}` under {current.parent!r}; move it to {entry.parent!r} "
                    "with move() (memcore move)"
                )
            change = render.Change.empty()
            render.rewrite_item(graph, ref, entry, change, self._md)
            return self._commit_item(graph, change, ident, entry, update=True)

    def _graph_item(self, graph: Graph, ident: str) -> ItemRef:
        """Return the graph item a write acts on.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use the id.
            UnsupportedOperationError: It is an Agent Corrections entry (read-only).
        """
        ref = self._item(graph, ident)
        if ref is None:
            if any(e.id == ident for e in correction_entries(graph)):
                raise UnsupportedOperationError(f"{FORMAT}: Agent Corrections entries are read-only here")
            raise EntryNotFoundError(f"{FORMAT}: no item {ident!r} in {self.root}")
        return ref

    def delete(self, entry_id: str, *, drop_edges: bool = False) -> None:
        """Remove an item: a node's line, or a heading's whole block if it holds no items.

        Args:
            entry_id: The item's id.
            drop_edges: Also remove every edge (and Focus reference) pointing at the item.

        Raises:
            EntryNotFoundError: No such item.
            AmbiguousIdError: Two or more items use the id (each named by file:line); nothing
                is written.
            UnusableRootError: A root file is unusable (see :func:`~memcore_rightmemory.validate.check_roots`).
            ConflictError: Edges or Focus references still point at the item (and
                ``drop_edges`` is false), or the heading still contains items or headings;
                the message lists them.
            UnsupportedOperationError: An Agent Corrections entry (read-only).
        """
        self.require(Capability.DELETE, "delete")
        with self.session("delete"):
            graph = self._write_graph()
            ref = self._graph_item(graph, entry_id)
            referrers = [r for r in graph.referrers(entry_id) if r != entry_id]
            if referrers and not drop_edges:
                raise ConflictError(
                    f"{FORMAT}: `{entry_id}` is still referenced by {', '.join(referrers)}; remove those edges "
                    "first or pass drop_edges=True"
                )
            change = render.Change.empty()
            if ref.is_heading:
                heading = graph.docs[ref.rel].headings[ref.index]
                children = [
                    r.id for r in graph.every_ref() if r is not ref and (ref.rel, ref.index) in graph.ancestors(r)
                ]
                if children or heading.first_child is not None:
                    raise ConflictError(
                        f"{FORMAT}: heading `{entry_id}` still contains "
                        f"{', '.join(children) if children else 'child headings'}; delete or move them first"
                    )
                if heading.marker == "F#":
                    detail = render.detail_of(graph, ref.rel, ref.index)
                    if detail is not None:
                        change.deleted.add(detail)
            render.remove_item(graph, ref, change)
            if referrers:
                render.drop_edges_to(graph, entry_id, change)
            self._commit(graph, change)

    def archive(self, entry_id: str) -> MemoryEntry:
        """Mark an item archived (its memcore comment), one write; see :meth:`update`."""
        with self.session("archive"):
            return super().archive(entry_id)

    def supersede(self, old_id: str, new: MemoryEntry) -> MemoryEntry:
        """Add ``new`` with a ``supersedes`` edge and mark ``old_id`` superseded, in one write.

        Raises:
            EntryNotFoundError: ``old_id`` does not exist (nothing written).
        """
        with self.session("supersede"):
            return super().supersede(old_id, new)

    # -- graph operations ------------------------------------------------------------------
    def add_edge(self, item_id: str, edge_type: str, target: str) -> MemoryEntry:
        """Add the edge ``edge_type:target`` to an item (refused if it breaks an invariant)."""
        entry = self.get(item_id)
        check_new_edge(entry, edge_type, target)
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

    move = move_item  # under another heading, keeping id, edges and children: see memcore_rightmemory._move

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
        with self.session("move_to_detail"):
            graph = self._write_graph()
            ref, heading, doc = self._heading_ref(graph, heading_id, "#")
            name = backing_name(ref.family, "F#", heading_id)
            assert name is not None
            if self._exists(name):
                raise InvalidEntryError(f"{FORMAT}: `{name}` exists already; refusing to claim it")
            change = render.Change.empty()
            render.move_out(doc, ref, heading, name, change)
            self._commit(graph, change, check=same_parents(graph))
            return name

    def inline_detail(self, heading_id: str) -> None:
        """Turn an ``{F#id}`` heading back into ``{#id}``, inlining its detail file.

        The detail file's content moves to the end of the heading's block and the detail file
        is removed.

        Raises:
            InvalidEntryError: Not an F# heading with a readable detail file.
            GraphInvariantError: The result would break an invariant (e.g. a ``####`` F#).
        """
        with self.session("inline_detail"):
            graph = self._write_graph()
            ref, heading, doc = self._heading_ref(graph, heading_id, "F#")
            detail = render.detail_of(graph, ref.rel, ref.index)
            if detail is None:
                raise InvalidEntryError(f"{FORMAT}: F# heading `{heading_id}` has no readable detail file")
            change = render.Change.empty()
            render.move_in(doc, ref, heading, graph.docs[detail], change)
            self._commit(graph, change, check=same_parents(graph))

    def _heading_ref(self, graph: Graph, heading_id: str, marker: str) -> tuple[ItemRef, Heading, Doc]:
        ref = self._item(graph, heading_id)
        if ref is None:
            raise EntryNotFoundError(f"{FORMAT}: no item {heading_id!r} in {self.root}")
        if not ref.is_heading or ref.marker != marker:
            raise InvalidEntryError(f"{FORMAT}: `{heading_id}` is not a {{{marker}…}} heading")
        doc = graph.docs[ref.rel]
        return ref, doc.headings[ref.index], doc
