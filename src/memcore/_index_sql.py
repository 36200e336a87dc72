"""The search index's database: its schema, its ranked query, where it lives. No pydantic.

:mod:`memcore.index` builds and refreshes the database through a provider; this module holds
what reading it needs, so that the CLI's indexed search (:mod:`memcore.cli._fast_search`)
answers from the rows without importing the models or a provider. The ranked query is written
once, here: both paths run :func:`search_rows`, so their answers agree by construction.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from memcore.query_syntax import TOKENIZE
from memcore.ranking import WEIGHTS as RANK_WEIGHTS

__all__ = [
    "RANK_SQL",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "WHOLE_STORE",
    "default_cache_dir",
    "index_file_name",
    "search_rows",
    "utc_text",
]

#: 2: ``entries.expires_at`` / ``entries.indexed_at`` (re-read a file once an entry in it expires).
#: 3: the ``fts`` table stems (``porter unicode61 remove_diacritics 2``); an older database is
#: rebuilt, never read with the new query syntax.
#: 4: ``entries.dlen`` (the entry's length in tokens as FTS5 counts it: BM25's document length)
#: and ``meta.generation`` (bumped by every refresh that changes an entry), for
#: :mod:`memcore.ranking`.
SCHEMA_VERSION = 4

SCHEMA_SQL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, file TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT, status TEXT, scope TEXT, created_at TEXT, data TEXT NOT NULL,
    expires_at TEXT, indexed_at TEXT NOT NULL, dlen INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_file ON entries(file);
CREATE INDEX IF NOT EXISTS entries_expires ON entries(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS entries_id ON entries(id);
CREATE TABLE IF NOT EXISTS tags (rowid INTEGER NOT NULL, tag TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag);
CREATE INDEX IF NOT EXISTS tags_rowid ON tags(rowid);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, body, tags, tokenize = '{TOKENIZE}'
);
"""

#: The ranking: BM25 with a title hit worth 10 body hits and a tag hit 5 (columns title, body,
#: tags), also kept as the table's configured ``rank``.
WEIGHTS = ", ".join(str(w) for w in RANK_WEIGHTS)
RANK_SQL = f"INSERT INTO fts (fts, rank) VALUES ('rank', 'bm25({WEIGHTS})')"

#: ``entries.file`` of the entries of a provider that is re-read whole (not file by file).
WHOLE_STORE = "*"

E = TypeVar("E")


def default_cache_dir() -> Path:
    """Return the folder index databases live in (created on first use).

    ``$MEMCORE_CACHE_DIR`` when set, else :func:`platformdirs.user_cache_dir` (which follows
    ``$XDG_CACHE_HOME`` on Linux); the lock folder (``memcore.storage``) is ``locks`` in it.
    """
    if os.environ.get("MEMCORE_CACHE_DIR"):
        return Path(os.environ["MEMCORE_CACHE_DIR"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("memcore", appauthor=False, ensure_exists=False))


def index_file_name(format_name: str, location: str, options: dict[str, Any]) -> str:
    """Return the database file name of a store: ``<format>-<32 hex>.sqlite``.

    The hex is the sha256 of the format, the location (resolved when it exists) and the
    options, so a store opened with other options (another scope) never shares a database.
    """
    with contextlib.suppress(OSError):
        if os.path.exists(location):
            location = str(Path(location).resolve())
    blob = json.dumps([format_name, location, options], sort_keys=True, default=str)
    return f"{format_name}-{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:32]}.sqlite"


def utc_text(moment: datetime) -> str:
    """``moment`` as fixed-width UTC text (``2026-01-01T00:00:00.000000Z``), so text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def search_rows(
    conn: sqlite3.Connection,
    *,
    text: str | None,
    kinds: Sequence[str] | None = None,
    statuses: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    scope: str | None = None,
    tags_any: Sequence[str] | None = None,
    tags_all: Sequence[str] | None = None,
    limit: int | None,
    decode: Callable[[str], E],
    title_of: Callable[[E], str],
    keep: Callable[[E], bool] | None = None,
    retry: Callable[[Callable[[], list[Any]]], list[Any]] = lambda run: run(),
    snippets: bool = True,
    top: Callable[[sqlite3.Connection, str, int], list[tuple[int, str, float]] | None] | None = None,
) -> list[tuple[E, float, str]]:
    """Run the ranked query on an index database; return ``(entry, score, snippet)`` best first.

    Args:
        conn: An index database (a store's, or a scan's in memory).
        text: The FTS5 expression of the query's text (:attr:`ParsedQuery.fts`), or ``None``.
        kinds: Only these ``entries.kind`` values (``[]``: nothing).
        statuses: Only these statuses (``[]``: nothing).
        ids: Only these ids (``[]``: nothing).
        scope: Only this scope.
        tags_any: At least one of these tags.
        tags_all: Every one of these tags.
        limit: At most this many hits (``None``: all).
        decode: Turns an ``entries.data`` JSON text into the entry returned.
        title_of: The entry's title (the snippet of a hit without a text match).
        keep: A filter SQL does not express (created range, parent), run on each decoded entry;
            with it the limit is applied after the filter, not in SQL.
        retry: Runs the read, retrying while the database is busy.
        snippets: ``False`` makes no fragment: each snippet is the title.
        top: The best ``limit`` rows ``(rowid, entries.data, score)`` of a text without
            filters, best first, the same as the SQL ranking gives (:mod:`memcore.ranking`), or
            ``None`` to rank in SQL; used only for a text with a limit and no filter.

    Returns:
        Hits by BM25 rank (title 10, body 1, tags 5) then file order when there is text, else in
        file order; each snippet on one line with hits in ``[`` ``]``.
    """
    where: list[str] = []
    params: list[Any] = []
    if text:
        params.append(text)
    for column, values in (("kind", kinds), ("status", statuses), ("id", ids)):
        if values is not None:
            where.append(f"e.{column} IN ({','.join('?' * len(values))})" if values else "0")
            params.extend(str(v) for v in values)
    if scope is not None:
        where.append("e.scope = ?")
        params.append(scope)
    if tags_any is not None:
        where.append(f"e.rowid IN (SELECT rowid FROM tags WHERE tag IN ({','.join('?' * len(tags_any))}))")
        params.extend(tags_any)
    for tag in tags_all or []:
        where.append("e.rowid IN (SELECT rowid FROM tags WHERE tag = ?)")
        params.append(tag)
    # Without a filter outside SQL the limit goes into SQL, so a common word never reads (or
    # snippets) every match. Snippets are made for the hits kept only, in a second query: in the
    # ranking query SQLite would make one for every match before the LIMIT applies (most of a
    # common word's cost).
    sql_limit = int(limit) if limit is not None and keep is None else None
    # With no filter outside FTS5, the limit goes inside the ranking subquery (the join then
    # reads ``limit`` entries, not every match); one row more shows whether a tie of scores
    # crosses the cut, which the full query settles by file order.
    inner = sql_limit + 1 if sql_limit is not None and text and not where else None

    def ranked_sql(inner_limit: int | None) -> str:
        return (
            # BM25 (weights in WEIGHTS) ordered inside the FTS5 subquery, with the limit there
            # when no filter follows: SQLite keeps the best rows as it scores, and the join
            # reads only the entries kept.
            (
                f"SELECT e.rowid, e.data, f.score FROM (SELECT rowid, bm25(fts, {WEIGHTS}) AS score"
                " FROM fts WHERE fts MATCH ? ORDER BY score"
                + (f" LIMIT {inner_limit}" if inner_limit is not None else "")
                + ") AS f JOIN entries e ON e.rowid = f.rowid"
                if text
                else "SELECT e.rowid, e.data, 0.0 FROM entries e"
            )
            + (" WHERE " + " AND ".join(where) if where else "")
            + (" ORDER BY f.score, e.file, e.seq" if text else " ORDER BY e.file, e.seq")
            + (f" LIMIT {sql_limit + (1 if inner_limit is not None else 0)}" if sql_limit is not None else "")
        )

    def rows(inner_limit: int | None) -> list[tuple[int, E, float]]:
        kept: list[tuple[int, E, float]] = []
        for rowid, data, score in conn.execute(ranked_sql(inner_limit), params):
            if limit is not None and len(kept) >= limit:
                if inner_limit is None or float(score) != kept[-1][2]:
                    break
                # the extra row of an inner limit ties with the last hit kept: the full query
                # settles equal scores by file and position
                return rows(None)
            entry = decode(data)
            if keep is not None and not keep(entry):
                continue
            kept.append((rowid, entry, float(score)))
        return kept

    def run() -> list[tuple[E, float, str]]:
        if limit == 0:
            return []
        best = None
        if top is not None and text and not where and keep is None and limit is not None:
            best = top(conn, text, int(limit))
        kept = [(rowid, decode(data), score) for rowid, data, score in best] if best is not None else rows(inner)
        fragments: dict[int, str] = {}
        if text and kept and snippets:
            marks = ",".join("?" * len(kept))
            fragments = dict(
                conn.execute(
                    "SELECT rowid, snippet(fts, -1, '[', ']', '…', 12) FROM fts"
                    f" WHERE fts MATCH ? AND rowid IN ({marks})",
                    [text, *(rowid for rowid, _, _ in kept)],
                )
            )
        # One line: the fragment's line breaks and runs of blanks become single spaces.
        return [
            (entry, score, " ".join(fragments[rowid].split()) if fragments.get(rowid) else title_of(entry))
            for rowid, entry, score in kept
        ]

    return retry(run)
