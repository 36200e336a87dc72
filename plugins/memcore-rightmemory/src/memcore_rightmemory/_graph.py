"""Assemble the RightMemory graph from its two roots and their F# detail files, and validate it.

Spec: rightmemory-schema.md "Graph Roots And Membership", "Backing Forms", "Graph Invariants";
reference: reference-notes/rightmemory.md. Membership follows F# references from MEMORY.md and
PURSUITS.md (never file-name globs); item recording order, duplicate detection ("first seen"),
backing-file checks and the edge checks follow RightMemory's ``graph.py`` rule for rule.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from memcore.errors import ParseError
from memcore.models import Diagnostic, Severity
from memcore_rightmemory._corrections import validate_agent_corrections, validate_edit_feedback
from memcore_rightmemory._parse import Doc, Heading, Node, Source, fenced_lines, parse_doc
from memcore_rightmemory.mapping import AGENT_CORRECTION_FILES, EDGE_TYPES, EDIT_FEEDBACK_FILE

__all__ = ["ROOTS", "ROOT_CODES", "foreign_marker", "Graph", "ItemRef", "ParseCache", "backing_name"]

ROOTS: tuple[tuple[str, str], ...] = (("MEMORY.md", "memory"), ("PURSUITS.md", "pursuit"))
_EDGE_TYPES = frozenset(EDGE_TYPES)
#: Root-file diagnostics: while one is reported, the provider refuses every write.
ROOT_CODES = frozenset({"rm.missing-root", "rm.irregular-file", "rm.unreadable", "rm.foreign-root"})
_FOREIGN_COMMENT = re.compile(r"^\s*<!--\s*maka-memory:")
_FOREIGN_HEADERS = frozenset({"# Maka Memory", "# Maka Pending Memory"})


def foreign_marker(doc: Doc) -> int | None:
    """Return the 1-based line showing a root file is another format's file, or ``None``.

    A root is foreign when it holds no RightMemory item (no anchored heading, no node) and
    either its first non-blank line is Maka's ``# Maka Memory`` / ``# Maka Pending Memory``
    header or a line outside fenced code starts with Maka's ``<!-- maka-memory:`` comment.
    """
    if doc.order:
        return None
    first = next((n for n, line in enumerate(doc.source.lines, 1) if line.strip()), None)
    if first is not None and doc.source.lines[first - 1].strip() in _FOREIGN_HEADERS:
        return first
    for number, line, in_code in fenced_lines(doc.source.lines):
        if not in_code and _FOREIGN_COMMENT.match(line):
            return number
    return None


BlockKey = tuple[str, int]
"""``(file, heading index)``: a heading block."""

ParseCache = dict[tuple[str, str], tuple[bytes, Doc]]
"""``(file, family) -> (bytes, parsed doc)``: re-parse a file only when its bytes change."""


def backing_name(family: str, marker: str, item_id: str) -> str | None:
    """Return the backing file name of a typed heading, or ``None`` when it has none.

    F# -> ``MEMORY_<id>.md`` (Memory) / ``PURSUIT_<id>.md`` (Pursuit); M# -> ``MEMORY_<id>.md``;
    S# -> ``MEMORY_SKILL_<id>.md``; ``#``, MF#, MQ# -> none.
    """
    if marker == "F#":
        return f"{'MEMORY' if family == 'memory' else 'PURSUIT'}_{item_id}.md"
    if marker == "M#":
        return f"MEMORY_{item_id}.md"
    if marker == "S#":
        return f"MEMORY_SKILL_{item_id}.md"
    return None


@dataclass(slots=True)
class ItemRef:
    """Where one graph item lives.

    Attributes:
        id: Graph id.
        rel: File, relative to the root.
        is_heading: Heading (True) or node (False).
        index: Index into the file's ``headings`` or ``nodes``.
        line: 1-based line of the heading or node.
        family: ``"memory"`` or ``"pursuit"``.
        marker: Heading marker, or ``"node"``.
    """

    id: str
    rel: str
    is_heading: bool
    index: int
    line: int
    family: str
    marker: str


@dataclass
class Graph:
    """The local graph: parsed files, items by id, and every diagnostic found.

    Build with :meth:`load`. ``read(rel)`` returns a file's bytes or ``None`` when it is not a
    regular file inside the root (missing, symlink, folder…).
    """

    root: Path
    docs: dict[str, Doc] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    items: dict[str, ItemRef] = field(default_factory=dict)
    recorded: list[ItemRef] = field(default_factory=list)
    attach: dict[str, BlockKey] = field(default_factory=dict)
    backing: dict[str, tuple[str, str]] = field(default_factory=dict)
    backing_keys: dict[str, tuple[str, str, str, int]] = field(default_factory=dict)
    non_graph: list[str] = field(default_factory=list)
    focus: list[tuple[str, str, int]] = field(default_factory=list)
    diags: list[Diagnostic] = field(default_factory=list)
    extra_files: dict[str, list[str]] = field(default_factory=dict)
    shared_ids: set[str] = field(default_factory=set)
    """Ids recorded more than once (a hand-edited graph repeating ``{#x}``): see :meth:`places`."""

    # -- building -------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        root: Path,
        read: Callable[[str], bytes | None],
        md: MarkdownIt,
        cache: ParseCache | None = None,
    ) -> Graph:
        """Parse the graph under ``root`` and validate it.

        Args:
            root: The store root (folder holding MEMORY.md).
            read: ``rel -> bytes`` of a regular file inside the root, or ``None``.
            md: The markdown-it parser.
            cache: Parsed files from an earlier load, reused when a file's bytes are unchanged.
        """
        graph = cls(root=root)
        cache = {} if cache is None else cache
        for name, family in ROOTS:
            data = read(name)
            if data is None:
                exists = os.path.lexists(root / name)
                if exists:
                    graph.error(
                        "rm.irregular-file", name, None, f"graph file `{name}` must be a regular file inside the root"
                    )
                else:
                    graph.error("rm.missing-root", name, None, f"missing canonical RightMemory root `{name}`")
                continue
            if graph._load_doc(name, family, data, read, md, cache, ()):
                line = foreign_marker(graph.docs[name])
                if line is not None:
                    graph.error(
                        "rm.foreign-root",
                        name,
                        line,
                        f"`{name}` holds no RightMemory heading or node but is a Maka memory file",
                    )
        graph._validate_items()
        graph._validate_focus()
        graph._validate_corrections(read)
        return graph

    def file_line(self, rel: str | None, line: int | None) -> int | None:
        """Return the line of file ``rel`` on disk for the parsed (inline) line ``line``.

        The two differ in a file that keeps its memcore comments in its header
        (:mod:`memcore_rightmemory._header`).
        """
        doc = self.docs.get(rel) if rel is not None else None
        return line if doc is None else doc.source.file_line(line)

    def on_disk(self, diags: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Return ``diags`` with their lines as the files on disk number them (:meth:`file_line`)."""
        out = []
        for diag in diags:
            line = self.file_line(diag.path, diag.line)
            out.append(diag if line == diag.line else diag.model_copy(update={"line": line}))
        return out

    def error(
        self,
        code: str,
        rel: str | None,
        line: int | None,
        message: str,
        entry_id: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> None:
        """Record a diagnostic."""
        self.diags.append(
            Diagnostic(path=rel, line=line, code=code, severity=severity, message=message, entry_id=entry_id)
        )

    def _load_doc(
        self,
        rel: str,
        family: str,
        data: bytes,
        read: Callable[[str], bytes | None],
        md: MarkdownIt,
        cache: ParseCache,
        stack: tuple[str, ...],
    ) -> bool:
        if rel in self.docs or rel in self.unreadable:
            return rel in self.docs
        hit = cache.get((rel, family))
        if hit is not None and hit[0] == data:
            doc = hit[1]
        else:
            try:
                source = Source.from_bytes(rel, data)
            except ParseError as exc:
                self.unreadable[rel] = str(exc)
                self.error("rm.unreadable", rel, exc.line, f"not UTF-8 text; {exc}")
                return False
            doc = parse_doc(source, family, md)
            cache[(rel, family)] = (data, doc)
        self.docs[rel] = doc
        for code, line, message, entry_id in doc.diags:
            severity = Severity.WARNING if code == "rm.bad-meta" else Severity.ERROR
            self.error(code, rel, line, message, entry_id, severity)
        f_refs: list[tuple[int, str]] = []
        for kind, index in doc.order:
            if kind == "n":
                node = doc.nodes[index]
                self._record(ItemRef(node.id, rel, False, index, node.line, family, "node"))
                continue
            heading = doc.headings[index]
            assert heading.id is not None and heading.marker is not None
            ref = ItemRef(heading.id, rel, True, index, heading.line, family, heading.marker)
            self._record(ref)
            if heading.marker == "F#" and family == "pursuit" and heading.id.casefold() == "rules":
                continue
            name = backing_name(family, heading.marker, heading.id)
            if name is None:
                continue
            self.backing.setdefault(heading.id, (heading.marker, name))
            key = name.casefold()
            previous = self.backing_keys.get(key)
            if previous is not None and (previous[0] != heading.id or previous[1] != heading.marker):
                self.error(
                    "rm.shared-backing",
                    rel,
                    heading.line,
                    f"backing file `{name}` is claimed by {previous[1]} heading `{previous[0]}` at "
                    f"{previous[2]}:{previous[3]} and {heading.marker} heading `{heading.id}`",
                    heading.id,
                )
            else:
                self.backing_keys[key] = (heading.id, heading.marker, rel, heading.line)
            if read(name) is None:
                what = {"S#": "skill file", "M#": "Markdown backing file"}.get(heading.marker, "F# backing file")
                self.error(
                    "rm.missing-backing",
                    rel,
                    heading.line,
                    f"missing {what} `{name}` for heading `{heading.id}` "
                    "(or it is a symlink / not a regular file inside the root)",
                    heading.id,
                )
            elif heading.marker == "F#":
                f_refs.append((index, name))
            else:
                self.non_graph.append(name)
        next_stack = (*stack, rel)
        for owner, name in f_refs:
            owner_heading = doc.headings[owner]
            if name in next_stack:
                self.error(
                    "rm.cyclic-backing",
                    rel,
                    owner_heading.line,
                    f"cyclic F# backing path `{name}` for heading `{owner_heading.id}`",
                    owner_heading.id,
                )
                continue
            data_child = read(name)
            if data_child is None:  # pragma: no cover - checked above
                continue
            if self._load_doc(name, family, data_child, read, md, cache, next_stack):
                self._attach((rel, owner), name)
        return True

    def _record(self, ref: ItemRef) -> None:
        self.recorded.append(ref)
        previous = self.items.get(ref.id)
        if previous is not None:
            self.error(
                "rm.duplicate-id",
                ref.rel,
                ref.line,
                f"duplicate id `{ref.id}`; first seen at {previous.rel}:{self.file_line(previous.rel, previous.line)}",
                ref.id,
            )
            self.shared_ids.add(ref.id)
            return
        self.items[ref.id] = ref

    def _attach(self, owner: BlockKey, rel: str) -> None:
        doc = self.docs[rel]
        has_parts = bool(doc.headings or doc.nodes)
        current = self.attach.get(rel)
        if current is not None and current != owner:
            if has_parts:
                heading = self.heading(owner)
                self.error(
                    "rm.multi-attached",
                    owner[0],
                    heading.line,
                    f"graph file `{rel}` is attached by more than one F# heading",
                    heading.id,
                )
            return
        self.attach[rel] = owner

    # -- navigation -----------------------------------------------------------------
    def heading(self, key: BlockKey) -> Heading:
        """Return the heading block at ``key``."""
        return self.docs[key[0]].headings[key[1]]

    def node(self, ref: ItemRef) -> Node:
        """Return the node an :class:`ItemRef` points at."""
        return self.docs[ref.rel].nodes[ref.index]

    def block_parent(self, rel: str, physical: int | None) -> BlockKey | None:
        """Return the logical parent block of something whose physical parent is ``physical``."""
        if physical is not None:
            return (rel, physical)
        return self.attach.get(rel)

    def parent_key(self, ref: ItemRef) -> BlockKey | None:
        """Return the logical parent heading block of an item (crossing F# boundaries)."""
        doc = self.docs[ref.rel]
        physical = doc.headings[ref.index].parent if ref.is_heading else doc.nodes[ref.index].parent
        return self.block_parent(ref.rel, physical)

    def ancestors(self, ref: ItemRef) -> Iterator[BlockKey]:
        """Yield the item's logical ancestor heading blocks, nearest first."""
        key = self.parent_key(ref)
        seen: set[BlockKey] = set()
        while key is not None and key not in seen:
            seen.add(key)
            yield key
            key = self.block_parent(key[0], self.heading(key).parent)

    def parent_id(self, ref: ItemRef) -> str | None:
        """Return the id of the nearest addressable ancestor heading, or ``None``."""
        for key in self.ancestors(ref):
            ident = self.heading(key).id
            if ident is not None:
                owner = self.items.get(ident)
                if owner is not None and owner.is_heading and (owner.rel, owner.index) == key:
                    return ident
        return None

    def edges_of(self, ref: ItemRef) -> tuple[list[tuple[str, str]], list[str]]:
        """Return an item's edges and malformed edge pieces."""
        doc = self.docs[ref.rel]
        if ref.is_heading:
            heading = doc.headings[ref.index]
            return heading.edges, heading.malformed
        node = doc.nodes[ref.index]
        return node.edges, node.malformed

    def attach_chain(self, rel: str) -> set[str]:
        """Return ``rel`` and the files whose F# headings attach it, up to its root file."""
        chain = {rel}
        owner = self.attach.get(rel)
        while owner is not None and owner[0] not in chain:
            chain.add(owner[0])
            owner = self.attach.get(owner[0])
        return chain

    def referrers(self, target: str) -> list[str]:
        """Return ids of items with an edge to ``target`` (and ``focus:<file>:<line>`` refs)."""
        out = [ref.id for ref in self.every_ref() if any(t == target for _, t in self.edges_of(ref)[0])]
        out += [f"focus:{rel}:{line}" for ident, rel, line in self.focus if ident == target]
        return out

    def ordered(self) -> Iterator[ItemRef]:
        """Yield items in reading order: each root, F# detail content right after its heading."""
        done: set[str] = set()

        def walk(rel: str) -> Iterator[ItemRef]:
            if rel in done or rel not in self.docs:
                return
            done.add(rel)
            doc = self.docs[rel]
            owners = {owner[1]: child for child, owner in self.attach.items() if owner[0] == rel}
            for kind, index in doc.order:
                line = doc.headings[index].line if kind == "h" else doc.nodes[index].line
                ident = doc.headings[index].id if kind == "h" else doc.nodes[index].id
                assert ident is not None
                ref = self.items.get(ident)
                if ref is not None and ref.rel == rel and ref.line == line:
                    yield ref
                elif ident in self.shared_ids:
                    # a second (third…) item under an id already taken: yielded too, so that
                    # nothing read is dropped; ``items`` keeps the first one seen
                    marker = doc.headings[index].marker if kind == "h" else "node"
                    assert marker is not None
                    yield ItemRef(ident, rel, kind == "h", index, line, doc.family, marker)
                if kind == "h" and index in owners:
                    yield from walk(owners[index])

        for name, _family in ROOTS:
            yield from walk(name)

    def occurrences(self, ident: str) -> list[ItemRef]:
        """Return every item recorded under ``ident``, in reading order (one, none, or several)."""
        if ident not in self.shared_ids:
            ref = self.items.get(ident)
            return [] if ref is None else [ref]
        return [ref for ref in self.ordered() if ref.id == ident]

    def every_ref(self) -> Iterator[ItemRef]:
        """Yield every item: those of :attr:`items`, then any later item repeating an id."""
        yield from self.items.values()
        if self.shared_ids:
            yield from (ref for ref in self.ordered() if ref.id in self.shared_ids and self.items[ref.id] is not ref)

    # -- validation -----------------------------------------------------------------
    def _validate_items(self) -> None:
        for ref in self.items.values():
            for code, message in self.item_problems(ref):
                self.error(code, ref.rel, ref.line, message, ref.id)

    def item_problems(self, ref: ItemRef) -> list[tuple[str, str]]:
        """Return ``(code, message)`` of every edge error of one item (the item-level rules).

        Malformed, duplicate, self, unknown-type, dangling and containment-only ``rel:``
        edges, in the order :meth:`load` reports them. The write path checks a changed item
        with this instead of validating the whole graph again.
        """
        out: list[tuple[str, str]] = []
        edges, malformed = self.edges_of(ref)
        for piece in malformed:
            out.append(("rm.malformed-edge", f"malformed edge `{piece}` on `{ref.id}`"))
        seen: set[tuple[str, str]] = set()
        for edge_type, target in edges:
            text = f"{edge_type}:{target}"
            if (edge_type, target) in seen:
                out.append(("rm.duplicate-edge", f"duplicate edge `{text}` on `{ref.id}`"))
                continue
            seen.add((edge_type, target))
            if target == ref.id:
                out.append(("rm.self-edge", f"self-edge `{text}` on `{ref.id}`"))
            elif edge_type not in _EDGE_TYPES:
                out.append(
                    (
                        "rm.unknown-edge-type",
                        f"unknown edge type `{edge_type}` on `{ref.id}`; use one of {', '.join(EDGE_TYPES)}",
                    )
                )
            elif target not in self.items:
                out.append(("rm.dangling-edge", f"dangling edge `{text}` on `{ref.id}`"))
            elif edge_type == "rel" and any(self.heading(k).id == target for k in self.ancestors(ref)):
                out.append(
                    (
                        "rm.containment-edge",
                        f"containment-only `rel:` edge from `{ref.id}` to ancestor heading `{target}`; "
                        "remove the edge because heading nesting already expresses it",
                    )
                )
        return out

    def _validate_focus(self) -> None:
        for rel, doc in self.docs.items():
            for ident, line in doc.focus:
                self.focus.append((ident, rel, line))
        seen: set[str] = set()
        for ident, rel, line in self.focus:
            if ident in seen:
                self.error("rm.focus-duplicate", rel, line, f"duplicate Focus reference `{ident}`", ident)
                continue
            seen.add(ident)
            ref = self.items.get(ident)
            if ref is None:
                self.error("rm.focus-dangling", rel, line, f"dangling Focus reference `{ident}`", ident)
            elif not ref.is_heading or ref.family != "pursuit":
                self.error(
                    "rm.focus-not-pursuit", rel, line, f"Focus reference `{ident}` must target a Pursuit heading", ident
                )

    def _validate_corrections(self, read: Callable[[str], bytes | None]) -> None:
        for name in AGENT_CORRECTION_FILES.values():
            lines = self._extra_lines(name, read)
            if lines is not None:
                for code, line, message in validate_agent_corrections(lines, name):
                    self.error(code, name, line, message)
        lines = self._extra_lines(EDIT_FEEDBACK_FILE, read)
        if lines is not None:
            for code, line, message in validate_edit_feedback(lines):
                self.error(code, EDIT_FEEDBACK_FILE, line, message)

    def _extra_lines(self, name: str, read: Callable[[str], bytes | None]) -> list[str] | None:
        data = read(name)
        if data is None:
            return None
        try:
            lines = Source.from_bytes(name, data).lines
        except ParseError as exc:
            self.error("rm.unreadable", name, exc.line, f"not UTF-8 text; {exc}")
            return None
        self.extra_files[name] = lines
        return lines
