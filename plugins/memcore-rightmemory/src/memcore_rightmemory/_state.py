"""The graph a RightMemory provider keeps between writes, fed by core's write session.

Parsing and validating a big graph for every write would make each write O(store). So the
provider keeps, as its own state: the parse cache (file bytes -> parsed doc), the graph of the
open session (:class:`_Work`), and the graph the last session left (:class:`_Memo`, reused
while every file it was built from keeps its version). All file I/O goes through the
:class:`~memcore.storage.WriteSession` the provider's write runs in: files are read once with
``session.read`` (or told to it with ``session.seen`` when they come from the memo), changes
are staged with ``session.write`` / ``session.delete`` and saved by its flush, which refuses a
file changed on disk since (``ConflictError``). A one-item write re-parses only the changed
window (:mod:`memcore_rightmemory._incremental`) and stages the file's bytes once, at the end.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from memcore.errors import InvalidEntryError, UnsafePathError
from memcore.storage import WriteSession
from memcore.switches import switch_on
from memcore_rightmemory import _incremental
from memcore_rightmemory._graph import Graph, ParseCache
from memcore_rightmemory._render import Change
from memcore_rightmemory.codec import FORMAT
from memcore_rightmemory.validate import GraphInvariantError, check_roots, introduced


def fast_commit_enabled() -> bool:
    """Whether one-item writes take :meth:`GraphKeeper._fast_commit` (read at each write).

    ``MEMCORE_RIGHTMEMORY_FAST_COMMIT=0`` turns it off, so a benchmark can show both paths.
    """
    return switch_on("MEMCORE_RIGHTMEMORY_FAST_COMMIT")


__all__ = ["Fast", "GraphKeeper", "regular", "trim_cache"]


def trim_cache(cache: ParseCache, budget: int) -> None:
    """Drop parsed files from ``cache`` beyond the first ``budget`` bytes of files (roots first)."""
    total = 0
    for key in list(cache):
        total += len(cache[key][0])
        if total > budget:
            del cache[key]


def regular(root: Path, rel: str) -> bool:
    """Whether ``rel`` is a regular file (not a symlink, folder or device) in ``root``."""
    try:
        return stat.S_ISREG(os.lstat(root / rel).st_mode)
    except OSError:
        return False


@dataclass
class _Work:
    """The graph of the open write session (provider state; the core session holds the files).

    Attributes:
        graph: The graph as the writes so far left it (``None``: not loaded yet).
        stale: ``graph.diags`` (and the derived ``recorded``/``backing`` tables) may be out of
            date after fast-path writes; :meth:`GraphKeeper.graph` reloads.
        files: Every file the graph was built from or a write staged (``None``: absent).
        dirty: Files whose parsed doc was changed in place (staged as bytes when needed).
        reparse: Files whose doc must be parsed again from its text (a fast write rolled back).
        flushed: The session's files were saved (the graph may be kept for the next session).
    """

    graph: Graph | None = None
    stale: bool = False
    files: dict[str, bytes | None] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    reparse: set[str] = field(default_factory=set)
    flushed: bool = False


@dataclass
class _Memo:
    """The graph a session left, and the bytes and versions of every file it was built from.

    The next session reuses it when every one of those files still has that version (a stat,
    or a hash of a small file, instead of parsing and validating the whole graph again).
    """

    graph: Graph
    files: dict[str, bytes | None]
    versions: dict[str, str | None]
    stale: bool


@dataclass(frozen=True)
class Fast:
    """What a one-range write changes: ``item`` (its id), added (``update=False``) or rewritten.

    ``more``: the ids of further new items the same range adds after ``item``, in order (a
    bulk add; only with ``update=False``).
    """

    item: str
    update: bool
    more: tuple[str, ...] = ()


class GraphKeeper:
    """The parse cache and the session graphs of one provider (see the module docstring).

    Args:
        root: The store root.
        md: The markdown-it parser.
    """

    def __init__(self, root: Path, md: MarkdownIt) -> None:
        self.root = root
        self.md = md
        self.cache: ParseCache = {}
        self.work: _Work | None = None
        self.memo: _Memo | None = None

    def start(self) -> None:
        """A session began: start with no graph (the first write loads or reuses one)."""
        self.work = _Work()

    def finish(self, session: WriteSession) -> None:
        """Stage the docs changed in place, then flush (a conflict names each changed file and the writes lost)."""
        work = self.work
        assert work is not None
        if work.graph is not None:
            for rel in list(work.dirty):
                self.materialize(session, rel)
        session.flush()
        work.flushed = True

    def end(self, session: WriteSession) -> None:
        """Keep the graph for the next session when the files were saved (the parse cache keeps bytes)."""
        work, self.work = self.work, None
        if work is None or work.graph is None or not work.flushed:
            return
        for doc in work.graph.docs.values():
            if isinstance(doc.source, _incremental.LiveSource):
                doc.source = doc.source.settled()
        if not work.reparse:
            versions = {rel: session.version(rel) for rel in work.files}
            self.memo = _Memo(work.graph, work.files, versions, work.stale)

    def version_now(self, session: WriteSession, rel: str) -> str | None:
        """Return the version ``rel`` has on disk now (``None``: absent or not a regular file)."""
        if not regular(self.root, rel):
            return None
        try:
            return session.storage.stat(rel).version
        except (OSError, UnsafePathError):
            return None

    def materialize(self, session: WriteSession, rel: str) -> bytes:
        """Stage a doc changed in place as bytes (and remember them)."""
        work = self.work
        assert work is not None and work.graph is not None
        doc = work.graph.docs[rel]
        data = doc.source.data
        session.write(rel, data)
        work.files[rel] = data
        work.dirty.discard(rel)
        if rel not in work.reparse:
            self.cache[(rel, doc.family)] = (data, doc)
        return data

    def read(self, session: WriteSession, rel: str) -> bytes | None:
        """Return a file as the session sees it (read once, its version kept for the flush's check)."""
        work = self.work
        assert work is not None
        data: bytes | None = None
        if rel in work.dirty:
            data = self.materialize(session, rel)
        elif rel in session.staged or regular(self.root, rel):
            try:
                data = session.read(rel)
            except (OSError, UnsafePathError):
                session.seen(rel, None, None)
        else:
            session.seen(rel, None, None)  # a symlink or device is never read: the graph reports it
        work.files[rel] = data
        return data

    def graph(self, session: WriteSession, *, fresh: bool = False) -> Graph:
        """Return the session's graph; ``fresh``: with diagnostics that are up to date.

        The first call of a session reuses the graph the previous one left when every file it
        was built from still has the version it had (the session is told those files and
        versions, so its flush refuses to replace one changed since); otherwise it loads the
        graph (files whose bytes are cached are not parsed again).
        """
        work = self.work
        assert work is not None
        if work.graph is None:
            memo, self.memo = self.memo, None
            if memo is not None and all(self.version_now(session, rel) == v for rel, v in memo.versions.items()):
                for rel, data in memo.files.items():
                    session.seen(rel, data, memo.versions[rel])
                work.graph, work.stale, work.files = memo.graph, memo.stale, dict(memo.files)
        if work.graph is None or (fresh and work.stale):
            for rel in list(work.dirty):
                self.materialize(session, rel)
            for rel in work.reparse:
                for key in [key for key in self.cache if key[0] == rel]:
                    del self.cache[key]
            work.graph = Graph.load(self.root, lambda rel: self.read(session, rel), self.md, self.cache)
            work.stale = False
            work.reparse.clear()
        return work.graph

    def exists(self, session: WriteSession, rel: str) -> bool:
        """Whether ``rel`` exists (on disk, or created by the open session)."""
        if rel in session.staged:
            return session.staged[rel] is not None or os.path.lexists(self.root / rel)
        return os.path.lexists(self.root / rel)

    def commit(
        self,
        session: WriteSession,
        graph: Graph,
        change: Change,
        check: Callable[[Graph], None] | None = None,
        *,
        fast: Fast | None = None,
    ) -> Graph:
        """Validate ``change`` against ``graph`` and stage it in the session; return the new graph.

        With ``fast`` (an add or update of one item, one line range of one file), only the
        changed part of the file is parsed again and only the changed item is checked
        (:meth:`_fast_commit`; ``MEMCORE_RIGHTMEMORY_FAST_COMMIT=0`` turns it off, for
        ``benchmarks/bench_rightmemory.py`` to show both); anything that path cannot decide with
        certainty, and every other change, re-parses the touched files and compares the
        diagnostics of the whole graph before and after. The session writes the files when it
        ends.

        Raises:
            GraphInvariantError: The change would add diagnostics (errors).
            InvalidEntryError: ``check`` refused the result.
        """
        work = self.work
        assert work is not None, "writes run inside a session"
        if fast is not None and fast_commit_enabled() and self._fast_commit(graph, change, fast, check):
            assert work.graph is not None
            session.count()
            return work.graph
        graph = self.graph(session, fresh=True)
        check_roots(graph, self.root)
        outputs: dict[str, bytes | None] = dict(change.created)
        for rel, edits in change.edits.items():
            if rel in graph.unreadable or rel not in graph.docs:
                raise InvalidEntryError(f"{FORMAT}: refusing to rewrite `{rel}`: it could not be parsed")
            outputs[rel] = graph.docs[rel].source.splice(edits)
        for rel in change.deleted:
            outputs[rel] = None

        def read(rel: str) -> bytes | None:
            return outputs[rel] if rel in outputs else self.read(session, rel)

        new = Graph.load(self.root, read, self.md, self.cache)
        added = introduced(graph.diags, new.diags)
        if added:
            raise GraphInvariantError(f"{FORMAT}: write refused; it would break the graph:", new.on_disk(added))
        if check is not None:
            check(new)
        for rel, data in outputs.items():  # the session writes new files first, deletes last
            if data is None:
                session.delete(rel)
            else:
                session.write(rel, data)
            work.files[rel] = data
        work.graph = new
        session.count()
        return new

    def _fast_commit(self, graph: Graph, change: Change, fast: Fast, check: Callable[[Graph], None] | None) -> bool:
        """Apply a one-range change by re-parsing only the window around it; False: not done.

        Checked: the window reads back as before plus the new or changed item, with no error
        diagnostic it did not have (:func:`_incremental.plan`); the new id is not taken; the
        item's edges add no error (:meth:`Graph.item_problems`: dangling, self, duplicate,
        unknown type, containment); ``check`` accepts the result. When any of these fails,
        nothing is changed (or the change is rolled back) and False tells the caller to take
        the whole-file path, which reports the precise error.
        """
        work = self.work
        assert work is not None
        if change.created or change.deleted or len(change.edits) != 1:
            return False
        ((rel, edits),) = change.edits.items()
        doc = graph.docs.get(rel)
        if len(edits) != 1 or doc is None or rel in graph.unreadable:
            return False
        start, end, lines = edits[0]
        patch = _incremental.plan(doc, start, end, lines, self.md, keep=start if fast.update else None)
        if patch is None or patch.introduced:
            return False
        new_items = [] if fast.update else [fast.item, *fast.more]
        if patch.new_ids != new_items or any(item in graph.items for item in new_items):
            return False
        if not _incremental.window_is_current(graph, rel, doc, patch):
            return False
        old_problems = Counter(graph.item_problems(graph.items[fast.item])) if fast.update else None
        source = _incremental.live(doc)
        raw, text = source.raw, source.lines
        saved = (raw[start - 2] if start >= 2 else None, raw[start - 1 : end], text[start - 1 : end])
        self.cache.pop((rel, doc.family), None)
        work.dirty.add(rel)
        work.stale = True

        def undo() -> None:
            # put the text back; the next read of the session's graph parses the file again
            count = len(lines)
            raw[start - 1 : start - 1 + count] = saved[1]
            text[start - 1 : start - 1 + count] = saved[2]
            if saved[0] is not None:
                raw[start - 2] = saved[0]
            work.reparse.add(rel)

        try:
            dh, dn = _incremental.apply(doc, patch)
            _incremental.reindex(graph, rel, doc, patch, dh, dn)
            problems = graph.item_problems(graph.items[fast.item])
            for item in fast.more:
                problems += graph.item_problems(graph.items[item])
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
