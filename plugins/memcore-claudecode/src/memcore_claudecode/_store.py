"""The memory folder read once: its entry files, ``MEMORY.md``, the ``@imports`` followed inside it.

The same code reads the disk and a write session's staged view. Imports are followed from every
instruction and rule file, up to :data:`~memcore_claudecode.mapping.IMPORT_HOPS` hops; one that is
absolute, goes through the home folder, leaves the store or passes a symbolic link is refused and
reported, and its target is never read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore_claudecode._parse import (
    Doc,
    ImportRef,
    Index,
    import_tokens,
    parse_doc,
    parse_index,
    problem,
    resolve_token,
)
from memcore_claudecode.codec import Context, decode
from memcore_claudecode.mapping import IMPORT_HOPS, INDEX_FILE

__all__ = ["Snapshot"]

_ROLE_RANK = {"instructions": 0, "local": 1, "rule": 2}
_REFUSALS = {
    "home": "goes through the home folder (~/), outside the store",
    "absolute": "is an absolute path, outside the store",
    "outside": "leaves the store",
    "symlink": "passes through a symbolic link",
}


class Snapshot:
    """Every entry file of the store, parsed; entries decoded on demand.

    Built from ``read(path)`` (the bytes, ``None`` when absent), ``is_link(path)``, ``roles`` (path ->
    role of every file that is an entry by its name, :func:`~memcore_claudecode._parse.role_of`;
    store-relative, NFC), ``stat(path)`` (a key that changes whenever the file does; ``None``:
    unknown) and ``cache`` (``(path, frontmatter) -> (stat key, Doc)``: earlier parses, reused while
    the key holds; a provider keeps one across sessions; updated in place). It holds ``docs`` (path
    -> parsed file of every entry, imported files included), ``roles``, ``unreadable`` (files that
    are not text: no entry, reported, never written), ``import_problems`` (imports refused, missing
    or too deep), ``index`` (``MEMORY.md``) and ``taken`` (lower-cased paths of every memory file:
    a new file name must not be one).
    """

    def __init__(
        self,
        read: Callable[[str], bytes | None],
        is_link: Callable[[str], bool],
        roles: dict[str, str],
        stat: Callable[[str], object | None] = lambda path: None,
        cache: dict[tuple[str, bool], tuple[object, Doc]] | None = None,
    ) -> None:
        self.read, self.is_link, self.stat = read, is_link, stat
        self.cache = {} if cache is None else cache
        self.docs: dict[str, Doc] = {}
        self.roles: dict[str, str] = {}
        self.unreadable: list[Doc] = []
        self.import_problems: list[Diagnostic] = []
        self.index: Index = parse_index(read(INDEX_FILE))
        self._entries: dict[str, tuple[MemoryEntry, list[Diagnostic]]] = {}
        self._names: dict[str, str] | None = None
        self._order: list[str] | None = None
        self._imported: list[str] = []
        self.taken: set[str] = set()
        for path, role in sorted(roles.items()):
            doc = self._load(path, True)
            if doc is not None:
                self._put(doc, role)
        self._follow()

    # -- building ---------------------------------------------------------------------
    def _load(self, path: str, frontmatter: bool) -> Doc | None:
        """Parse a file (``None``: absent), reusing an earlier snapshot's parse while its ``stat`` is the same."""
        key = self.stat(path)
        hit = self.cache.get((path, frontmatter))
        if key is not None and hit is not None and hit[0] == key:
            return hit[1]
        data = self.read(path)
        if data is None:
            return None
        doc = parse_doc(path, data, frontmatter=frontmatter)
        self.cache[(path, frontmatter)] = (key, doc)
        return doc

    def _put(self, doc: Doc, role: str) -> None:
        self.taken.add(doc.path.lower())
        if doc.file is None:
            self.unreadable.append(doc)  # not text: no entry, reported, never written
            return
        self.docs[doc.path] = doc
        self.roles[doc.path] = role

    def imports_of(self, path: str, text: str) -> list[ImportRef]:
        """Return the ``@imports`` of ``text`` (the file ``path``), each resolved inside the store."""
        refs: list[ImportRef] = []
        for line, token in import_tokens(text):
            target, refusal = resolve_token(path, token)
            if target is not None and refusal is None:
                parts = target.split("/")
                if any(self.is_link("/".join(parts[: i + 1])) for i in range(len(parts))):
                    refusal = "symlink"
                elif target not in self.docs and self.read(target) is None:
                    refusal = "missing"
            refs.append(ImportRef(line, token, target, refusal))
        return refs

    def _follow(self) -> None:
        """Read the markdown files the instruction and rule files import, hop by hop."""
        self.import_problems = []
        queue = [(path, 0) for path in sorted(self.docs) if self.roles[path] != "topic"]
        seen = {path for path, _ in queue}
        while queue:
            path, depth = queue.pop(0)
            for ref in self.imports_of(path, self.docs[path].body):
                self._report(path, ref)
                target = ref.target
                if ref.problem is not None or target is None or target in seen or not target.endswith(".md"):
                    continue
                seen.add(target)
                if depth + 1 > IMPORT_HOPS:
                    self._report(path, ref, deep=True)
                    continue
                doc = None if target in self.docs else self._load(target, False)
                if doc is not None:
                    self._put(doc, "import")
                    self._imported.append(target)
                    queue.append((target, depth + 1))

    def _report(self, path: str, ref: ImportRef, *, deep: bool = False) -> None:
        if deep:
            code, why = "import-depth", f"is more than {IMPORT_HOPS} hops from an instruction file: not followed"
        elif ref.problem == "missing":
            code, why = "import-missing", "does not exist"
        elif ref.problem is not None:
            code, why = "import-refused", f"{_REFUSALS[ref.problem]}: refused, never read"
            why += " (imports stay inside the store)"
        else:
            return
        why = f"imports {ref.token}, which {why}"
        self.import_problems.append(problem(path, code, why, ref.line, Severity.WARNING, entry_id=path))

    # -- changes ------------------------------------------------------------------------
    def changed(self, path: str, data: bytes | None, role: str | None = None) -> None:
        """Record a write (``data``) or a deletion (``None``) of an entry file."""
        role = role or self.roles.get(path, "topic")
        old_role = self.roles.get(path)
        self.docs.pop(path, None)
        self.roles.pop(path, None)
        self.taken.discard(path.lower())
        self.index_changed()
        if data is not None:
            self._put(parse_doc(path, data, frontmatter=role != "import"), role)
        if self._names is not None and data is None:
            self._names = None
        elif self._names is not None and role == "topic":
            self._add_names(path)
        if role != "topic" or old_role not in (None, "topic"):
            self._follow()

    def index_changed(self) -> None:
        """Forget decoded entries and the order (after a change of a file or of ``MEMORY.md``)."""
        self._entries.clear()
        self._order = None

    def import_targets(self) -> set[str]:
        """Return every path an instruction, rule or import file imports (followed or not)."""
        importers = [path for path, role in self.roles.items() if role != "topic"]
        refs = [ref for path in importers for ref in self.imports_of(path, self.docs[path].body)]
        return {ref.target for ref in refs if ref.target is not None}

    # -- reading ----------------------------------------------------------------------
    def _add_names(self, path: str) -> None:
        assert self._names is not None
        doc = self.docs.get(path)
        if doc is None:
            return
        self._names.setdefault(path.removesuffix(".md"), path)
        name = (doc.meta or {}).get("name")
        if isinstance(name, str) and name:
            self._names.setdefault(name, path)

    def context(self, extra_id: str | None = None) -> Context:
        """Return what decoding one file needs of the rest of the store (``extra_id``: a file about to be written)."""
        if self._names is None:
            self._names = {}
            for path in self.order():
                if self.roles[path] == "topic":
                    self._add_names(path)
        ids = set(self.docs) | ({extra_id} if extra_id else set())
        return Context(ids=ids, names=self._names, index=self.index.links, imports=self.imports_of)

    def order(self) -> list[str]:
        """Return the entry paths in store order.

        Instruction and rule files first (broadest first: shallower folders, then ``CLAUDE.md``
        before ``CLAUDE.local.md`` before rules), then topics in ``MEMORY.md`` order and the
        unlisted ones by name, then imported files in the order they were reached.
        """
        if self._order is None:
            others = [p for p in self.docs if self.roles[p] in _ROLE_RANK]
            others.sort(key=lambda p: (p.count("/"), posixpath.dirname(p), _ROLE_RANK[self.roles[p]], p))
            by_line = sorted(self.index.links.items(), key=lambda item: item[1].number)
            topics = [target for target, _ in by_line if self.roles.get(target) == "topic"]
            topics += sorted(p for p in self.docs if self.roles[p] == "topic" and p not in self.index.links)
            imported = [p for p in self._imported if self.roles.get(p) == "import"]
            self._order = [*others, *topics, *imported]
        return self._order

    def decoded(self, path: str) -> tuple[MemoryEntry, list[Diagnostic]]:
        """Return the entry of ``path`` and what decoding it found (cached until a change)."""
        found = self._entries.get(path)
        if found is None:
            found = self._entries[path] = decode(self.docs[path], self.roles[path], self.context())
        return found

    def entry(self, path: str) -> MemoryEntry:
        """Return a copy of the entry of ``path`` (``KeyError``: not an entry)."""
        return self.decoded(path)[0].model_copy(deep=True)

    def entries(self) -> list[MemoryEntry]:
        """Return every entry, in store order."""
        return [self.entry(path) for path in self.order()]
