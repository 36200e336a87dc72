"""``memcore search`` answered from a fresh index's rows: no provider, no pydantic model.

The whole path of an indexed search opens the store through its provider, refreshes the index
(listing and fingerprinting every source file) and decodes each hit into a
:class:`~memcore.models.MemoryEntry`; it imports the provider, its YAML layers and the models
first. When the index's freshness stamp (:mod:`memcore._fresh`) matches the store's folders as
they are now, that refresh would re-read nothing, so this path opens the database read-only,
runs the same ranked query (:func:`memcore._index_sql.search_rows`) and prints each row's
entry as the JSON it was indexed as, which is what the whole path prints
(``MemoryEntry.model_validate_json(data).model_dump(mode="json")`` is ``json.loads(data)`` for
every entry memcore writes; ``tests/test_search_fast.py`` holds the two paths to the same
output).

Whenever anything is not as the whole path would leave it, this path answers ``None`` and the
command runs the whole path: no index, a stamp missing, not settled or different, another set
of plugins, an entry expired since it was indexed, an index database not private (0600: the
whole path narrows it), another schema, any SQLite error, a bare store path (sniffing asks
every provider), a remote store, ``-o index=false``, ``-o incognito``. So a hand edit, an added
or removed file, a changed scopes.md or a plugin upgrade is seen by the next search, and every
error message is the whole path's.

``MEMCORE_FAST_SEARCH=0`` turns this path off (the benchmark shows both).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcore._fresh import STAMP_KEY, folder_stamp, plugin_stamp
from memcore._index_sql import SCHEMA_VERSION, default_cache_dir, index_file_name, search_rows, utc_text
from memcore.switches import switch_on

__all__ = ["FastHits", "enabled", "fast_search"]


@dataclass(frozen=True)
class FastHits:
    """Search results read from the index rows.

    Attributes:
        hits: ``(entry, score, snippet)`` best first, as :class:`memcore.index.SearchHit` has
            them, each entry as JSON data (``MemoryEntry.model_dump(mode="json")``).
        note: Why nothing was searched (no searchable term), else ``None``.
    """

    hits: list[tuple[dict[str, Any], float, str]]
    note: str | None = None


def enabled() -> bool:
    """Return whether the fast path is on (``MEMCORE_FAST_SEARCH`` unset, or not 0/false/no/off)."""
    return switch_on("MEMCORE_FAST_SEARCH")


def _flag(value: Any) -> bool:
    # memcore.provider.option_flag, without importing the provider module (and the models)
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value.strip().lower() not in {"", "0", "false", "no", "off", "none"}
    if isinstance(value, (int, float)):
        return bool(value)
    return True


def _private(path: Path) -> bool:
    """Whether ``path`` is a regular file only its owner may read or write (as the whole path leaves it)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and not stat.S_IMODE(st.st_mode) & 0o077


def fast_search(
    store: str | None,
    options: dict[str, Any],
    *,
    text: str | None,
    kinds: list[str] | None,
    statuses: list[str] | None,
    tags_any: list[str] | None,
    limit: int | None,
) -> FastHits | None:
    """Answer ``memcore search`` from the store's index when it is provably fresh; else ``None``.

    Args:
        store: ``--store`` (or ``None``: ``MEMCORE_STORE``, then memcore.toml).
        options: ``-o`` options and ``--scope``, as :func:`memcore.cli.helpers.parse_options`
            returns them (they override the config file's).
        text: The query text (memcore's search syntax), or ``None``.
        kinds: Only these kinds (``None``: any).
        statuses: Only these statuses (``None``: any).
        tags_any: At least one of these tags (``None``: any).
        limit: At most this many hits.

    Returns:
        The hits, or ``None`` whenever the whole path must answer (the module docstring says
        when); never raises.
    """
    try:
        return _fast_search(store, options, text, kinds, statuses, tags_any, limit)
    except Exception:  # noqa: BLE001 - the whole path answers, and reports any error itself
        return None


def _fast_search(
    store: str | None,
    options: dict[str, Any],
    text: str | None,
    kinds: list[str] | None,
    statuses: list[str] | None,
    tags_any: list[str] | None,
    limit: int | None,
) -> FastHits | None:
    from memcore.config import resolve_store

    spec = resolve_store(store, sniff=False)
    merged = {**spec.options, **options}
    if "+" in spec.format_name or not _flag(merged.get("index", True)) or _flag(merged.get("incognito")):
        return None
    path = default_cache_dir() / index_file_name(spec.format_name, os.fspath(spec.location), merged)
    if not _private(path):
        return None
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if os.path.lexists(side) and not _private(side):
            return None
    conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=ro", uri=True, timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN")  # one snapshot: the stamp and the rows it vouches for
        if conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() != (str(SCHEMA_VERSION),):
            return None
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (STAMP_KEY,)).fetchone()
        if row is None:
            return None
        stamp = json.loads(row[0])
        if stamp.get("format") != spec.format_name or stamp.get("plugins") != plugin_stamp():
            return None
        if folder_stamp(stamp["dirs"])[0] != stamp.get("digest"):
            return None
        expired = conn.execute(
            "SELECT 1 FROM entries WHERE expires_at IS NOT NULL AND expires_at <= ? AND expires_at > indexed_at"
            " LIMIT 1",
            (_now_text(),),
        ).fetchone()
        if expired is not None:
            return None
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            return None
        fts = None
        if text is not None and text.strip():
            from memcore.query_syntax import parse_query

            parsed = parse_query(text)
            if parsed.fts is None:
                return FastHits([], note=parsed.note)
            fts = parsed.fts
        hits = search_rows(
            conn,
            text=fts,
            kinds=kinds,
            statuses=statuses,
            tags_any=tags_any,
            limit=limit,
            decode=json.loads,
            title_of=lambda entry: str(entry["title"]),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()
    return FastHits(hits)


def _uri_path(path: Path) -> str:
    # what SQLite's URI file names must escape (urllib.parse would import ipaddress, and more)
    return str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def _now_text() -> str:
    # memcore.models.utc_now (milliseconds) as the index's fixed-width UTC text
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    return utc_text(now.replace(microsecond=now.microsecond // 1000 * 1000))
