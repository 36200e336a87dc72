"""A derived SQLite FTS5 search index of any store: never canonical, always rebuildable.

The index lives in a cache folder outside the store (``$MEMCORE_CACHE_DIR``, else
platformdirs' user cache folder: ``$XDG_CACHE_HOME/memcore`` or ``~/.cache/memcore`` on Linux,
``~/Library/Caches/memcore`` on macOS, ``%LOCALAPPDATA%\\memcore\\Cache`` on Windows), one
database per store URL and option set. For every source file it records the path, size, mtime
(ns) and sha256, so opening it re-reads only the files that changed, were added or were
removed, including edits made by hand or by other tools while memcore was not running.

Losing or corrupting the database costs a rebuild, never a wrong answer: an unreadable,
truncated or foreign database is deleted and rebuilt; a file whose fingerprint differs from the
recorded one is re-read.

Providers that implement :class:`memcore.provider.FileBackedProvider` (``source_files`` and
``iter_file_entries``) are refreshed file by file; any other provider is re-read whole when any
file under its location changed.

Gates (issue 10; tests/test_index_gates.py): entries are read only through the opened
provider, and the database is keyed by its options, so a WhiteBox index built with
``scope=work`` holds what that session may see and is never used by a session with another
scope or none (``sensitive/`` stays out unless the scope names it). scopes.md is not recorded
as a source file: a change to it changes which files the provider lists, and the next refresh
drops or reads those files. A provider whose store may not be read at all (``incognito`` is
``True``, as Maka's) is refused before any file is hashed or database created
(:func:`read_denied`). Time is a gate too: each entry row keeps its ``expires_at`` and when it
was indexed, and a file holding an entry that expired since is re-read once through the
provider, unchanged or not (Maka archives such an entry on load; the index must not keep
serving it as active).

Concurrency: WAL journal, a busy timeout and a bounded retry around each transaction; a refresh
runs in one ``BEGIN IMMEDIATE`` transaction, so two processes refreshing at once serialise and
neither drops the other's update.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from memcore._fresh import SETTLE_NS, STAMP_KEY, folder_stamp, plugin_stamp, stamp_dirs
from memcore._index_sql import (
    RANK_SQL,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    WHOLE_STORE,
    default_cache_dir,
    index_file_name,
    search_rows,
    utc_text,
)
from memcore.contract import Capability, FileBackedProvider, MemoryProvider
from memcore.errors import ReadOnlyStoreError, UnsupportedOperationError
from memcore.models import TRUSTED, MemoryEntry, Query, utc_now
from memcore.provider import option_flag
from memcore.query_syntax import ParsedQuery, parse_query
from memcore.ranking import Ranker, fast_rank_enabled, varints
from memcore.storage import make_private_dir, touch_private_file

__all__ = [
    "IndexStatus",
    "SearchHit",
    "SearchIndex",
    "SearchResults",
    "default_cache_dir",
    "index_path_for",
    "read_denied",
    "release",
    "search_hits",
    "search_if_indexed",
    "start_watch_thread",
    "watch_index",
]

_BUSY_TIMEOUT_MS = 30_000
_RETRIES = 20
T = TypeVar("T")


def index_path_for(provider: MemoryProvider, cache_dir: Path | None = None) -> Path:
    """Return the database path for ``provider``'s store (format, location and options)."""
    options = getattr(provider, "options", {}) or {}
    return (cache_dir or default_cache_dir()) / index_file_name(provider.format_name, provider.location, options)


@dataclass(frozen=True)
class SearchHit:
    """One search result.

    Attributes:
        entry: The entry as indexed.
        score: BM25 rank (lower is better, as SQLite reports it; 0.0 without a text query).
        snippet: The best matching fragment on one line, hits in ``[`` ``]``, or the title.
    """

    entry: MemoryEntry
    score: float
    snippet: str


class SearchResults(list[T]):
    """A list of results with a note for the user (``None`` when there is nothing to say).

    Attributes:
        note: Why the list is empty when the query had no searchable term (``"🚀"``), else
            ``None``. The CLI prints it on stderr, MCP ``recall`` returns it as ``note``.
    """

    note: str | None

    def __init__(self, items: Iterable[T] = (), note: str | None = None) -> None:
        super().__init__(items)
        self.note = note


@dataclass(frozen=True)
class IndexStatus:
    """What a refresh did and what the index holds.

    Attributes:
        path: The database file.
        files: Source files recorded.
        entries: Entries indexed.
        reread: Files re-read by the last refresh.
        removed: Files dropped by the last refresh.
        rebuilt: Whether the last refresh rebuilt from scratch (and why, when it did).
    """

    path: str
    files: int
    entries: int
    reread: int
    removed: int
    rebuilt: str | None


class SearchIndex:
    """The FTS5 index of one store.

    Args:
        provider: An opened provider of a file store; the index reads entries only through it,
            so its gates (scopes, read switches) apply to what is indexed and returned.
        cache_dir: Folder for the database (default: :func:`default_cache_dir`).
        path: Explicit database path (overrides ``cache_dir``).

    Raises:
        UnsupportedOperationError: The provider is remote (``Capability.REMOTE``).
        ReadOnlyStoreError: The provider says its store may not be read at all (an
            ``incognito`` attribute that is ``True``, as Maka's): raised here, before any
            store file is opened or hashed and before a database is created.

    Example::

        with memcore.open("whitebox:./vault") as store, SearchIndex(store) as index:
            for hit in index.search("deploy friday", limit=5):
                print(hit.entry.id, hit.snippet)
    """

    def __init__(self, provider: MemoryProvider, *, cache_dir: Path | None = None, path: Path | None = None) -> None:
        if Capability.REMOTE in provider.capabilities:
            raise UnsupportedOperationError(
                f"{provider.format_name}: the local search index covers file stores only; "
                "search a remote store through its provider"
            )
        denied = read_denied(provider)
        if denied is not None:
            raise ReadOnlyStoreError(denied)
        self.provider = provider
        self.path = path or index_path_for(provider, cache_dir)
        self._conn: sqlite3.Connection | None = None
        self.last_status: IndexStatus | None = None
        self._rebuild_reason: str | None = None
        self._lock = threading.RLock()
        self._changes: _ChangeWatch | None = None
        self._next_expiry: str | None = None
        self._db_id: tuple[int, int] | None = None
        self._ranker = Ranker()

    # -- connection -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        make_private_dir(self.path.parent)
        touch_private_file(self.path)  # 0600 before SQLite opens it: its -wal/-shm follow its mode
        conn = sqlite3.connect(
            self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA_SQL)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                conn.execute(RANK_SQL)
            elif row[0] != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema {row[0]} != {SCHEMA_VERSION}")
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
        except sqlite3.DatabaseError:
            conn.close()
            raise
        self._db_id = _file_id(self.path)
        return conn

    def _drop_database(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.path) + suffix)

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection; opening repairs an unreadable database by rebuilding it."""
        if self._conn is None:
            try:
                self._conn = self._connect()
            except sqlite3.DatabaseError:
                self._drop_database()
                self._conn = self._connect()
                self._rebuild_reason = "the index database was unreadable"
        return self._conn

    def close(self) -> None:
        """Close the database connection and stop watching the store's folders."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._changes is not None:
                self._changes.close()
                self._changes = None

    def database_replaced(self) -> bool:
        """Return whether the database file was deleted or replaced since this index opened it.

        One ``stat``: another process's ``memcore index rebuild`` (or a user deleting the cache)
        leaves this connection on a file no one else sees.
        """
        return self._conn is not None and _file_id(self.path) != self._db_id

    def refresh_if_changed(self) -> IndexStatus | None:
        """Refresh only when something under the store may have changed; return what it did.

        The freshness rule (docs/search.md): on Linux the store's folders are watched with
        inotify, and a search reads the kernel's queue of events before it runs; events are
        queued as each write returns, so an edit made before the call, by any process, is
        seen, and a store with no change costs no ``stat`` of its files. The first call, an
        event (or a lost event queue), an entry whose ``expires_at`` passed, or a platform or
        folder count without inotify, means a :meth:`refresh`, which re-checks every file.

        Returns:
            The refresh's status, or ``None`` when nothing changed.
        """
        with self._lock:
            if self._changes is None:
                self._changes = _ChangeWatch()
            due = self._next_expiry is not None and utc_text(utc_now()) >= self._next_expiry
            if self._changes.changed() or due or self.last_status is None:
                return self.refresh()
            return None

    def __enter__(self) -> SearchIndex:
        self.refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _retry(self, func: Callable[[], T]) -> T:
        delay = 0.01
        for attempt in range(_RETRIES):
            try:
                return func()
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == _RETRIES - 1:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- files --------------------------------------------------------------------------
    def _root(self) -> Path:
        location = Path(self.provider.location)
        return location.parent if location.is_file() else location

    def _source_files(self) -> tuple[list[str], bool]:
        """Return (store-relative files, whether entries can be re-read file by file)."""
        if isinstance(self.provider, FileBackedProvider):
            return sorted(self.provider.source_files()), True
        root = self._root()
        if not root.is_dir():
            return [], False
        files = []
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and not any(part.startswith(".") for part in rel.parts):
                files.append(rel.as_posix())
        return sorted(files), False

    @staticmethod
    def _fingerprint(root: str, rel: str) -> tuple[int, int] | None:
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def _sha256(self, rel: str) -> str:
        digest = hashlib.sha256()
        with open(self._root() / rel, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    # -- refresh ------------------------------------------------------------------------
    def refresh(self) -> IndexStatus:
        """Bring the index up to date with the files; returns what it did.

        Re-reads changed, added and removed files only (size or mtime changed and sha256
        differs), plus files holding an entry whose ``expires_at`` passed since it was
        indexed; rebuilds from scratch when the database was unreadable or the provider
        cannot be re-read file by file.
        """
        conn = self.conn
        reason, self._rebuild_reason = self._rebuild_reason, None
        started_ns = time.time_ns()  # before listing: a stamp settled before it covers the listing
        files, per_file = self._source_files()
        root = str(self._root())
        now: dict[str, tuple[int, int]] = {}
        for rel in files:
            fp = self._fingerprint(root, rel)
            if fp is not None:
                now[rel] = fp

        def work() -> IndexStatus:
            conn.execute("BEGIN IMMEDIATE")
            try:
                status = self._refresh_locked(conn, now, per_file, reason)
                self._write_stamp(conn, files, started_ns)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return status

        with self._lock:
            self.last_status = self._retry(work)
            row = conn.execute(
                "SELECT min(expires_at) FROM entries WHERE expires_at IS NOT NULL AND expires_at > indexed_at"
            ).fetchone()
            self._next_expiry = row[0] if row else None
            if self._changes is not None:
                self._changes.sync(self._watched_dirs(files))
        return self.last_status

    def _write_stamp(self, conn: sqlite3.Connection, files: list[str], started_ns: int) -> None:
        """Record the freshness stamp (:mod:`memcore._fresh`) of what this refresh saw, or drop it.

        Runs in the refresh's transaction, so a stamp is always the one of the rows beside it.
        None is kept when a change it covers may have come after ``started_ns`` (not settled),
        or when the provider is not the one the registry serves for its format from an
        installed plugin: only then does a process that never opens the provider (the CLI's
        indexed search) get the answer this provider would give.
        """
        stamp = None
        if _registry_serves(self.provider):
            dirs = stamp_dirs(str(self._root()), files, Path(self.provider.location).is_dir())
            digest, newest = folder_stamp(dirs)
            if newest < started_ns - SETTLE_NS:
                blob = {"format": self.provider.format_name, "dirs": dirs, "digest": digest, "plugins": plugin_stamp()}
                stamp = json.dumps(blob, ensure_ascii=False)
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (STAMP_KEY,)).fetchone()
        if stamp is None and row is not None:
            conn.execute("DELETE FROM meta WHERE key = ?", (STAMP_KEY,))
        elif stamp is not None and (row is None or row[0] != stamp):
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (STAMP_KEY, stamp))

    def _watched_dirs(self, files: list[str]) -> set[str]:
        """Return the folders whose events can change the index.

        The root, every source file's folder and, for a store that is a folder, every folder in
        it that is not hidden (new files land there).
        """
        root = self._root()
        dirs = {str(root)}
        dirs.update(os.path.dirname(os.path.join(root, rel)) for rel in files)
        if Path(self.provider.location).is_dir():
            for here, subdirs, _files in os.walk(root):
                subdirs[:] = [d for d in subdirs if not d.startswith(".")]
                dirs.update(os.path.join(here, d) for d in subdirs)
        return dirs

    def _refresh_locked(
        self, conn: sqlite3.Connection, now: dict[str, tuple[int, int]], per_file: bool, reason: str | None
    ) -> IndexStatus:
        rows = conn.execute("SELECT path, size, mtime_ns, sha256 FROM files")
        recorded = {row[0]: (row[1], row[2], row[3]) for row in rows}
        changed: list[str] = []
        hashes: dict[str, str] = {}
        for rel, (size, mtime) in now.items():
            old = recorded.get(rel)
            if old is not None and (old[0], old[1]) == (size, mtime):
                continue
            sha = self._sha256(rel)
            hashes[rel] = sha
            if old is None or old[2] != sha:
                changed.append(rel)
            else:
                conn.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime, rel))
        removed = [rel for rel in recorded if rel not in now]
        # A file is re-read, unchanged, once an entry in it expires after it was indexed: the
        # provider's view of that entry may have changed with time (Maka archives it on load).
        stamp = utc_text(utc_now())
        expired = [
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT file FROM entries WHERE expires_at IS NOT NULL AND expires_at <= ?"
                " AND expires_at > indexed_at",
                (stamp,),
            )
            if row[0] not in changed and (row[0] in now or row[0] == WHOLE_STORE)
        ]
        if not recorded and now and reason is None:
            reason = "no index yet"
        whole = reason is not None or (not per_file and bool(changed or removed or expired))
        if whole:
            conn.execute("DELETE FROM entries")
            conn.execute("DELETE FROM tags")
            conn.execute("DELETE FROM fts")
            conn.execute("DELETE FROM files")
            for rel in now:
                hashes.setdefault(rel, self._sha256(rel))
            self._insert_entries(conn, WHOLE_STORE if not per_file else None, self.provider.iter_entries(), stamp)
            for rel, (size, mtime) in now.items():
                conn.execute("INSERT INTO files VALUES (?, ?, ?, ?)", (rel, size, mtime, hashes[rel]))
            reread = len(now)
        else:
            for rel in expired:
                hashes.setdefault(rel, recorded[rel][2] if rel in recorded else self._sha256(rel))
            changed.extend(expired)
            for rel in [*changed, *removed]:
                self._delete_file_entries(conn, rel)
            for rel in removed:
                conn.execute("DELETE FROM files WHERE path = ?", (rel,))
            for rel in changed:
                assert isinstance(self.provider, FileBackedProvider)
                self._insert_entries(conn, rel, self.provider.iter_file_entries(rel), stamp)
                size, mtime = now[rel]
                conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rel, size, mtime, hashes[rel]))
            reread = len(changed)
        if whole or changed or removed:
            conn.execute(
                "INSERT INTO meta VALUES ('generation', '1')"
                " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
        count = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        if whole and not reason:
            reason = "files changed" if changed or removed else "entries expired"
        return IndexStatus(
            path=str(self.path),
            files=len(now),
            entries=count,
            reread=reread,
            removed=len(removed),
            rebuilt=reason if whole else None,
        )

    def _delete_file_entries(self, conn: sqlite3.Connection, rel: str) -> None:
        rows = [r[0] for r in conn.execute("SELECT rowid FROM entries WHERE file = ?", (rel,))]
        for rowid in rows:
            conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            conn.execute("DELETE FROM tags WHERE rowid = ?", (rowid,))
        conn.execute("DELETE FROM entries WHERE file = ?", (rel,))

    def _insert_entries(
        self, conn: sqlite3.Connection, rel: str | None, entries: Iterator[MemoryEntry], stamp: str
    ) -> None:
        _insert_rows(conn, entries, (lambda _e: rel) if rel is not None else self._file_of, stamp)

    def _file_of(self, entry: MemoryEntry) -> str:
        if isinstance(self.provider, FileBackedProvider):
            return self.provider.file_of(entry)
        return WHOLE_STORE

    # -- search -------------------------------------------------------------------------
    def search(
        self,
        query: Query | str,
        *,
        limit: int | None = None,
        default_operator: Literal["AND", "OR"] = "AND",
        snippets: bool = True,
    ) -> SearchResults[SearchHit]:
        """Search by BM25 with filters; returns hits best first, each with a highlighted snippet.

        Args:
            query: A :class:`Query` (``text`` in memcore's search syntax, docs/search.md; kinds,
                statuses, tags any/all, scope, parent, ids, created range) or a text query.
            limit: Maximum hits (default: ``query.limit``, else all).
            default_operator: How side-by-side terms combine (``"OR"``: MCP ``recall``'s
                ``match="any"``).
            snippets: ``False`` leaves each hit's ``snippet`` as the entry's title (no fragment
                is made: what ``store.search()`` returns has no snippet).

        Returns:
            Hits ordered by BM25 rank when there is text, else in store order; empty with a
            ``note`` when the text has no searchable term.

        Raises:
            QuerySyntaxError: The text does not follow the query syntax.
        """
        with self._lock:
            return _search_rows(
                self.conn, query, limit, default_operator, self._retry, snippets=snippets, ranker=self._ranker
            )

    def status(self) -> IndexStatus:
        """Return what the index holds now (no refresh)."""
        files = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        entries = self.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        return IndexStatus(path=str(self.path), files=files, entries=entries, reread=0, removed=0, rebuilt=None)

    def rebuild(self) -> IndexStatus:
        """Drop the database and index the whole store again."""
        self.close()
        self._drop_database()
        self._rebuild_reason = "rebuild requested"
        return self.refresh()


def _registry_serves(provider: MemoryProvider) -> bool:
    """Return whether the process-wide registry, already built, serves ``provider``'s format.

    With ``provider``'s own class, from a plugin an installed distribution's entry point loaded
    (never one registered by hand).
    """
    registry = sys.modules.get("memcore.registry")
    if registry is None or not registry._default_registry.cache_info().currsize:
        return False
    reg = registry._default_registry()
    name = provider.format_name
    if reg._providers.get(name) is not type(provider):
        return False
    info = reg._dists.get(reg._owner.get(name, ""))
    return info is not None and info.distribution is not None


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class _ChangeWatch:
    """Whether anything in a set of folders may have changed since the last look.

    Linux: one inotify descriptor, read without blocking. Elsewhere, or when a watch cannot be
    added (the user's inotify watch limit), every look answers "changed", so the caller
    re-checks every file: slower, never stale.
    """

    def __init__(self) -> None:
        self._inotify: Any = None
        self._watches: dict[str, int] = {}
        self._dirty = True
        if sys.platform.startswith("linux"):
            with contextlib.suppress(ImportError, OSError):
                from inotify_simple import INotify, flags

                self._inotify = INotify(nonblocking=True)
                # a store never closed still gives its descriptor back when the watch is collected
                self._release = weakref.finalize(self, _close_quietly, self._inotify)
                self._mask = (
                    flags.MODIFY
                    | flags.ATTRIB
                    | flags.CLOSE_WRITE
                    | flags.CREATE
                    | flags.DELETE
                    | flags.MOVED_FROM
                    | flags.MOVED_TO
                    | flags.DELETE_SELF
                    | flags.MOVE_SELF
                )

    def changed(self) -> bool:
        """Return whether an event arrived (or nothing is watched) since the last call."""
        if self._inotify is None:
            return True
        try:
            if self._inotify.read(timeout=0):
                self._dirty = True
        except OSError:
            self.close()
            return True
        dirty, self._dirty = self._dirty, False
        return dirty

    def sync(self, dirs: set[str]) -> None:
        """Watch exactly ``dirs``.

        A folder newly watched marks a change: a file may have landed in it before its watch
        existed.
        """
        if self._inotify is None:
            return
        for gone in set(self._watches) - dirs:
            with contextlib.suppress(OSError):
                self._inotify.rm_watch(self._watches.pop(gone))
        for folder in dirs - set(self._watches):
            try:
                self._watches[folder] = self._inotify.add_watch(folder, self._mask)
            except FileNotFoundError:
                continue
            except OSError:  # the watch limit: fall back to checking every file
                self.close()
                return
            self._dirty = True

    def close(self) -> None:
        """Stop watching; from now on every look answers "changed"."""
        if self._inotify is not None:
            self._release()
            self._inotify = None
            self._watches.clear()


def _close_quietly(inotify: Any) -> None:
    with contextlib.suppress(OSError):
        inotify.close()


def _insert_rows(
    conn: sqlite3.Connection, entries: Iterable[MemoryEntry], file_of: Callable[[MemoryEntry], str], stamp: str
) -> None:
    rowid = int(conn.execute("SELECT coalesce(max(rowid), 0) FROM entries").fetchone()[0])
    for seq, entry in enumerate(entries):
        rowid += 1
        conn.execute(
            "INSERT INTO fts (rowid, title, body, tags) VALUES (?, ?, ?, ?)",
            (rowid, entry.title, entry.body, " ".join(entry.tags)),
        )
        # BM25's document length: the row's tokens in every column, as FTS5 itself counts them
        size = conn.execute("SELECT sz FROM fts_docsize WHERE id = ?", (rowid,)).fetchone()
        conn.execute(
            "INSERT INTO entries (rowid, id, file, seq, kind, status, scope, created_at, data, expires_at,"
            " indexed_at, dlen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rowid,
                entry.id or "",
                file_of(entry),
                seq,
                entry.kind.value,
                entry.status.value,
                entry.scope,
                entry.created_at.isoformat() if entry.created_at else None,
                entry.model_dump_json(),
                utc_text(entry.expires_at) if entry.expires_at is not None else None,
                stamp,
                sum(varints(size[0])) if size is not None else 0,
            ),
        )
        conn.executemany("INSERT INTO tags VALUES (?, ?)", [(rowid, t) for t in dict.fromkeys(entry.tags)])


def _parsed_text(query: Query, default_operator: Literal["AND", "OR"]) -> ParsedQuery | None:
    """The query's text parsed, or ``None`` when it has none (blank text filters nothing)."""
    if query.text is None or not query.text.strip():
        return None
    return parse_query(query.text, default_operator=default_operator)


def _search_rows(
    conn: sqlite3.Connection,
    query: Query | str,
    limit: int | None,
    default_operator: Literal["AND", "OR"],
    retry: Callable[[Callable[[], list[Any]]], list[Any]],
    *,
    snippets: bool = True,
    ranker: Ranker | None = None,
) -> SearchResults[SearchHit]:
    """Run ``query`` on an index database (a store's, or a scan's in memory); see :meth:`SearchIndex.search`.

    ``ranker`` (a store index's own) answers a word or words joined by AND, without filters and
    with a limit, from its postings (:mod:`memcore.ranking`; the same hits in the same order as
    ``bm25()``); anything else, or ``MEMCORE_FAST_RANK=0``, is ranked by FTS5's ``bm25()``.
    """
    if isinstance(query, str):
        query = Query(text=query)
    limit = limit if limit is not None else query.limit
    parsed = _parsed_text(query, default_operator)
    if parsed is not None and parsed.fts is None:
        return SearchResults(note=parsed.note)
    # Filters SQL does not express exactly (created range, parent) run on each entry.
    rest = (
        Query(parent=query.parent, created_after=query.created_after, created_before=query.created_before)
        if query.parent is not None or query.created_after is not None or query.created_before is not None
        else None
    )
    text = parsed.fts if parsed is not None else None

    def top(conn: sqlite3.Connection, fts: str, k: int) -> list[tuple[int, str, float]] | None:
        assert ranker is not None
        # one read transaction: the generation, FTS5's totals, the postings and the entries
        # come from one snapshot of the database
        conn.execute("BEGIN")
        try:
            best = ranker.top(conn, fts, k)
            if best is None:
                return None
            score_of = dict(best)
            marks = ",".join("?" * len(score_of))
            found = conn.execute(
                f"SELECT rowid, data, file, seq FROM entries WHERE rowid IN ({marks})", list(score_of)
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        # equal scores in file order, as the SQL ranking orders them
        found.sort(key=lambda row: (score_of[row[0]], row[2], row[3]))
        return [(rowid, data, score_of[rowid]) for rowid, data, _f, _s in found[:k]]

    hits = search_rows(
        conn,
        text=text,
        kinds=[str(k) for k in query.kinds] if query.kinds is not None else None,
        statuses=[str(s) for s in query.statuses] if query.statuses is not None else None,
        ids=query.ids,
        scope=query.scope,
        tags_any=query.tags_any,
        tags_all=query.tags_all,
        limit=limit,
        decode=lambda data: MemoryEntry.model_validate_json(data, context=TRUSTED),
        title_of=lambda entry: entry.title,
        keep=rest.matches if rest is not None else None,
        retry=retry,
        snippets=snippets,
        top=top if ranker is not None and fast_rank_enabled() else None,  # used without filters only
    )
    return SearchResults(SearchHit(entry=entry, score=score, snippet=snippet) for entry, score, snippet in hits)


def scan_hits(
    entries: Iterable[MemoryEntry],
    query: Query | str,
    *,
    default_operator: Literal["AND", "OR"] = "AND",
    snippets: bool = True,
) -> SearchResults[SearchHit]:
    """Search ``entries`` without a store index, exactly as an index would answer.

    The entries go into an in-memory database of the index's own schema and tokenizer, and the
    same SQL runs on it, so stemming, folding, the query syntax, ranking and snippets agree with
    :meth:`SearchIndex.search` by construction.

    Args:
        entries: The store's entries, in its order.
        query: As for :meth:`SearchIndex.search`.
        default_operator: As for :meth:`SearchIndex.search`.
        snippets: As for :meth:`SearchIndex.search`.

    Returns:
        Hits best first (store order without text), with snippets; empty with a ``note`` when
        the text has no searchable term.

    Raises:
        QuerySyntaxError: The text does not follow the query syntax.
    """
    if isinstance(query, str):
        query = Query(text=query)
    parsed = _parsed_text(query, default_operator)  # bad syntax fails before any entry is read
    if parsed is not None and parsed.fts is None:
        return SearchResults(note=parsed.note)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.executescript(SCHEMA_SQL)
        conn.execute(RANK_SQL)
        _insert_rows(conn, entries, lambda _e: "", "")
        return _search_rows(conn, query, None, default_operator, lambda run: run(), snippets=snippets)
    finally:
        conn.close()


def read_denied(provider: MemoryProvider) -> str | None:
    """Return why nothing of ``provider``'s store may be read (so not indexed), or ``None``.

    The index hashes the store's files before it asks the provider for entries, so a provider
    whose store may not be read at all must be asked first. The contract is the ``incognito``
    attribute :func:`memcore.context.agent_read_denied` documents: ``True`` means no read of
    any kind, by a user or an agent (Maka's ``incognito_blocked``: "no read happens"). The
    agent-only switch (``agent_read_enabled``) is not checked: a user's own search is not an
    agent read.

    Returns:
        One sentence naming the format, the store and the switch, or ``None``.
    """
    if getattr(provider, "incognito", False) is True:
        return (
            f"{provider.format_name}: incognito is on for {provider.location}; the search index neither "
            "reads the store nor keeps a database for it (turn incognito off)"
        )
    return None


#: Milliseconds the watcher waits for a change before it yields (and so reports itself ready).
_WATCH_READY_MS = 300


def watch_index(
    provider: MemoryProvider,
    *,
    on_refresh: Callable[[IndexStatus], None] | None = None,
    on_ready: Callable[[IndexStatus], None] | None = None,
    stop_event: threading.Event | None = None,
    debounce_ms: int = 100,
) -> None:
    """Keep ``provider``'s search index current while its files change (``memcore watch``).

    Builds or refreshes the index, starts watching the store's files (the ``watchfiles``
    library: inotify, FSEvents, ReadDirectoryChangesW), refreshes once more so that no change
    made before ``on_ready`` is called can be missed, calls it, then refreshes the index after
    each batch of changes, calling ``on_refresh``. A single-file store's
    folder is watched without its subfolders.

    Args:
        provider: An open local store.
        on_refresh: Called with each refresh's status.
        on_ready: Called once, when the first refresh is done and changes are being watched.
        stop_event: Set it to return (``memcore serve --watch`` stops its thread so).
        debounce_ms: How long changes are gathered into one batch.

    Raises:
        KeyboardInterrupt: Ctrl-C (each refresh was committed whole before it).
        UnsupportedOperationError: A remote store.
        ReadOnlyStoreError: A store that may not be read at all (incognito).
    """
    import watchfiles

    index = SearchIndex(provider)
    try:
        root = index._root()
        index.refresh()  # the long part (a first build) before the watch starts
        ready = False
        # The first yield (changes, or none within rust_timeout) comes once the watcher is set
        # up: the refresh made then sees every change from before it, so "ready" is a promise.
        for changes in watchfiles.watch(
            root,
            stop_event=stop_event,
            debounce=debounce_ms,
            step=min(50, max(debounce_ms, 1)),
            recursive=Path(provider.location).is_dir(),
            yield_on_timeout=True,
            rust_timeout=_WATCH_READY_MS,
        ):
            if ready and not changes:
                continue
            status = index.refresh()
            if not ready:
                ready = True
                if on_ready is not None:
                    on_ready(status)
            elif on_refresh is not None:
                on_refresh(status)
    finally:
        index.close()


def start_watch_thread(open_provider: Callable[[], MemoryProvider]) -> threading.Event:
    """Run :func:`watch_index` in a daemon thread on a provider of its own; set the event to stop.

    ``memcore serve --watch`` uses it. A failure of the watcher (the store vanished) ends the
    thread with one line on stderr; the server keeps serving, each search refreshing itself.
    """
    stop = threading.Event()

    def run() -> None:
        try:
            with open_provider() as provider:
                watch_index(provider, stop_event=stop)
        except Exception as exc:  # noqa: BLE001 - reported; searches still refresh themselves
            print(f"memcore: watch stopped: {type(exc).__name__}: {exc}", file=sys.stderr)

    threading.Thread(target=run, name="memcore-watch", daemon=True).start()
    return stop


_CACHED = "_memcore_search_index"


def _cached_index(provider: MemoryProvider) -> SearchIndex | None:
    """The provider's open index (one connection per open provider), if its database exists.

    The index is kept on the provider until :func:`release` (``BaseProvider.close`` calls it);
    ``None`` when the store has no index database (or it was deleted since).
    """
    index: SearchIndex | None = provider.__dict__.get(_CACHED) if hasattr(provider, "__dict__") else None
    if index is not None:
        if not index.database_replaced():
            return index
        release(provider)
        if not index.path.exists():
            return None
        path = index.path
    else:
        path = index_path_for(provider)
        if not path.exists():
            return None
    index = SearchIndex(provider, path=path)
    with contextlib.suppress(AttributeError, TypeError):
        provider.__dict__[_CACHED] = index
    return index


def release(provider: MemoryProvider) -> None:
    """Close the index :func:`search_hits` keeps open for ``provider`` (none: nothing happens)."""
    index = provider.__dict__.pop(_CACHED, None) if hasattr(provider, "__dict__") else None
    if index is not None:
        index.close()


def search_hits(
    provider: MemoryProvider,
    query: Query | str,
    *,
    default_operator: Literal["AND", "OR"] = "AND",
    snippets: bool = True,
) -> SearchResults[SearchHit]:
    """Search an open store: through its index when one was built, else by a scan; with snippets.

    What ``memcore search``, ``store.search()`` and MCP ``recall`` share. The index, when the
    store has one (``memcore index build``) and the provider was not opened with
    ``index=false``, stays open on the provider (one connection per open provider) and is
    refreshed first when a file may have changed (:meth:`SearchIndex.refresh_if_changed`), so
    a hand edit is seen by the next search. Without an index (always, for a remote store) the
    provider's ``search_candidates(query)`` narrows the entries to read when it can (Box cloud:
    one metadata query), else every entry is read; the candidates are searched in memory with
    the same tokenizer and syntax (:func:`scan_hits`).

    Args:
        provider: An open store.
        query: A :class:`Query` or text in memcore's search syntax (docs/search.md).
        default_operator: ``"OR"`` makes side-by-side terms alternatives (``recall``'s
            ``match="any"``).
        snippets: ``False`` makes no fragment (each hit's ``snippet`` is the entry's title):
            for callers that return entries only, as ``store.search()`` does.

    Returns:
        Hits best first, with snippets; empty with a ``note`` when the text has no searchable
        term.

    Raises:
        QuerySyntaxError: The text does not follow the query syntax.
    """
    if isinstance(query, str):
        query = Query(text=query)
    index = None
    if (
        option_flag(getattr(provider, "options", {}).get("index", True))
        and Capability.REMOTE not in provider.capabilities
        and read_denied(provider) is None
    ):
        index = _cached_index(provider)
    if index is None:
        parsed = _parsed_text(query, default_operator)  # bad syntax fails before any entry is read
        if parsed is not None and parsed.fts is None:
            return SearchResults(note=parsed.note)
        ask = getattr(provider, "search_candidates", None)
        candidates: Iterable[MemoryEntry] | None = ask(query.model_copy(update={"limit": None})) if ask else None
        if candidates is None:
            candidates = provider.iter_entries(query.model_copy(update={"text": None, "limit": None}))
        return scan_hits(candidates, query, default_operator=default_operator, snippets=snippets)
    index.refresh_if_changed()
    return index.search(query, default_operator=default_operator, snippets=snippets)


def search_if_indexed(provider: MemoryProvider, query: Query) -> list[MemoryEntry] | None:
    """Search through the store's index if one was built; ``None`` when there is none.

    The index stays open on the provider and is refreshed first when a file may have changed
    (see :func:`search_hits`), so the answer reflects the files as they are now. ``None`` too
    when :func:`read_denied` says the store may not be read: the caller's own read then
    refuses with the provider's error, and no index file is opened.
    """
    if Capability.REMOTE in provider.capabilities or read_denied(provider) is not None:
        return None
    index = _cached_index(provider)
    if index is None:
        return None
    index.refresh_if_changed()
    hits = index.search(query, snippets=False)
    return SearchResults((hit.entry for hit in hits), note=hits.note)
