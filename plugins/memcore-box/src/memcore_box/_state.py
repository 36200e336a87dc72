"""The workspace as memcore holds it: config, folder indexes and rollup, read, repaired, written.

:class:`WorkspaceState` is the base of :class:`~memcore_box.provider.BoxMemoryProvider`: the
cached ``_box-memory.json``, each memory folder's ``_index.json`` (read when first needed,
re-read when it changed in storage, repaired from the files after a failed write) and the
rollup. Its write-session hooks (:meth:`memcore.provider.BaseProvider.session`) sync before the
first write and write every changed index, then the rollup, then the config, when the outermost
block ends; a failed write says whether it left the workspace ``unchanged`` or ``pending``.
"""

from __future__ import annotations

import mimetypes
import os
import posixpath
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import is_
from typing import Any, ClassVar

from ulid import ULID

from memcore.errors import (
    ConflictError,
    ImmutableEntryError,
    InvalidEntryError,
    MemcoreError,
    ParseError,
    UnsafePathError,
)
from memcore.models import Diagnostic, Kind, MemoryEntry, utc_now
from memcore.provider import BaseProvider
from memcore.storage import (
    ANY_VERSION,
    CREATE,
    Item,
    LocalStorage,
    Storage,
    WriteSession,
    join,
)
from memcore_box import _drift, _patch, _readall, _scan, _splice
from memcore_box._json import IndexWriter, RawBytes, dumps_json, loads_json
from memcore_box._maps import map_texts
from memcore_box._parse import _File, is_memory_name, parse, read_memory_files, read_meta
from memcore_box._workspace import CONFIG_FILE
from memcore_box.codec import _sort_key
from memcore_box.index import (
    INDEX_FILE,
    INDEX_MAPS,
    IndexRow,
    _fold,
    _Folder,
    _Where,
    index_row,
    row_from_json,
    row_maps,
)
from memcore_box.mapping import format_timestamp
from memcore_box.validate import check_team

__all__ = ["WorkspaceState"]

_INDEX_KEYS = frozenset(
    {"version", "folder_id", "folder_path", "updated_at", "tier", "entry_count", "entries", *INDEX_MAPS}
)
_ROLLUP_KEYS = _INDEX_KEYS | {"child_indexes"}
_MAX_SLUG_TRIES = 1000


class WorkspaceState(BaseProvider):
    """A Box-memory workspace's config and indexes over :attr:`storage` (see the module docstring)."""

    #: Whether reads and checks take plain frontmatter from libyaml (:func:`load_fast`) where
    #: it is exact; ``False`` parses every file round-trip (same results, slower; tests
    #: compare both).
    fast_yaml: ClassVar[bool] = True

    def __init__(self, location: str | Any, *, storage: Storage | None = None, **options: Any) -> None:
        super().__init__(location, **options)
        if storage is not None:
            self.storage = storage
        self._config: dict[str, Any] = {}
        self._config_version: str | None = None
        self._config_problem: str | None = None
        self._config_dirty = False
        self._folders: dict[str, _Folder] = {}
        self._rollup_version: str | None = None
        self._rollup_keep: dict[str, Any] = {}
        self._rollup_problem: str | None = None
        self._rollup_dirty = False
        self._rollup_writer = IndexWriter()
        self._rollup_scanned = False  # the rollup's keys were scanned, its content not parsed
        # folder -> its file names as the last listing saw them, while the folder stays unchanged
        self._listed: dict[str, _drift.Listed] = {}
        # The rows and map texts the last index written in this flush was given (see _maps_of).
        self._map_texts: tuple[tuple[IndexRow, ...], list[tuple[str, RawBytes]]] | None = None
        # Mutating storage calls started (memory files, indexes, config): a failed operation
        # that started none left the workspace as it was.
        self._mutations = 0
        self._started = 0  # _mutations when the write session began
        self._outside: BaseException | None = None  # the exception being handled when it began
        # Set by a failed write: the next write re-lists every folder and repairs its index from
        # the files, whatever settings.rebuild_index_on_drift says (it completes our own write).
        self._force_repair = False
        # True from the end of _session_started's sync until the session ends: a dirty folder
        # then holds the open session's changes, not yet written, and a re-read (a get that
        # misses, a validate inside a batch) must not replace them with the index on disk.
        # Outside a session a dirty folder is what a failed write left: the next sync re-reads it.
        self._holding = False
        self._titles: tuple[dict[str, str], dict[str, str]] | None = None
        self._slugs: set[str] | None = None
        # id -> path of the memories iteration yielded last (bounded): file_of() answers from it
        # without reading every folder index.
        self._recent: dict[str, str] = {}
        # (folder stamps, listings) of the walk open() made, for the first iteration to reuse
        self._opened_listings: tuple[dict[str, Any], dict[str, list[Any]]] | None = None
        #: removes temp files of interrupted writes on the first write holding the lock (local folders)

    @classmethod
    def storage_for(cls, location: str, **options: Any) -> Storage:
        """Return the storage for ``location``: a :class:`~memcore.storage.LocalStorage` on that folder.

        Args:
            location: The workspace folder.
            **options: Provider options (unused here; a cloud subclass reads credentials).
        """
        return LocalStorage(location, label="box", noun="workspace")

    def make_storage(self) -> Storage:
        """Return :meth:`storage_for` this provider's location and options."""
        return self.storage_for(self.location, **self.options)

    def _ensure_open(self) -> None:
        if not self._is_open:
            self.open()

    # -- config -----------------------------------------------------------------------
    def _load_config(self) -> None:
        try:
            data, version = self.storage.read(CONFIG_FILE)
        except FileNotFoundError:
            self._config, self._config_version, self._config_problem = {}, None, f"no {CONFIG_FILE}"
            return
        if version == self._config_version and self._config_problem is None:
            return
        self._config_version = version
        try:
            parsed = loads_json(data)
        except ValueError as exc:
            self._config, self._config_problem = {}, f"{CONFIG_FILE} is not valid JSON: {exc}"
            return
        if not isinstance(parsed, dict):
            self._config, self._config_problem = {}, f"{CONFIG_FILE} must hold a JSON object"
            return
        self._config, self._config_problem = parsed, None

    def _settings(self) -> dict[str, Any]:
        settings = self._config.get("settings")
        return settings if isinstance(settings, dict) else {}

    @property
    def default_team(self) -> str:
        """The workspace's ``settings.default_team`` (``"default"`` when unset)."""
        return str(self._settings().get("default_team") or "default")

    @property
    def tier(self) -> str | None:
        """The workspace's ``tier``."""
        tier = self._config.get("tier")
        return None if tier is None else str(tier)

    def _tombstones(self) -> set[str]:
        block = self._config.get("memcore")
        ids = block.get("deleted_ids") if isinstance(block, dict) else None
        return {str(i) for i in ids} if isinstance(ids, list) else set()

    def _edit_config(self) -> dict[str, Any]:
        if self._config_problem is not None:
            raise ParseError(
                f"box: refusing to rewrite {CONFIG_FILE}: {self._config_problem}; fix it by hand first",
                path=join(self.storage.description, CONFIG_FILE),
            )
        self._config_dirty = True
        return self._config

    # -- folders and indexes ----------------------------------------------------------
    def _walk(self, folder: str = "", stamps: dict[str, Any] | None = None) -> Iterator[tuple[str, list[Any]]]:
        started = _drift.now_ns()
        before = _drift.stamp(self.storage, folder) if _splice.enabled() or stamps is not None else None
        if stamps is not None:
            stamps[folder] = before  # taken before listing: a change while listing shows
        try:
            items = self.storage.list(folder)
        except FileNotFoundError:
            return
        if before is not None and _splice.enabled():  # what the drift check may take (memcore_box._drift)
            names = frozenset([i.name for i in items if not i.is_folder])
            listed = _drift.take(before, _drift.stamp(self.storage, folder), started, names)
            if listed is None:
                self._listed.pop(folder, None)
            else:
                self._listed[folder] = listed
        yield folder, items
        for item in items:
            if item.is_folder and not item.name.startswith("."):
                yield from self._walk(join(folder, item.name), stamps)

    def _reused_listings(self, *, keep: bool = False) -> dict[str, list[Any]] | None:
        """Return the listings :meth:`open` took, when no folder changed since (then forget them).

        Args:
            keep: Keep them for the next caller (which checks the folders again): the checking
                pass reads the files from them, and core's checks list the same files next
                (:meth:`~memcore_box.provider.BoxMemoryProvider.source_files`).
        """
        kept, self._opened_listings = self._opened_listings, None
        if kept is None or not _scan.enabled():
            return None
        stamps, listings = kept
        for folder, stamp in stamps.items():
            if _drift.stamp(self.storage, folder) != stamp:
                return None
        if keep:
            self._opened_listings = kept
        return listings

    def _discover(self, *, remember: bool = False) -> dict[str, list[Any]]:
        """Find every memory folder (one holding ``_index.json`` or memory files); return listings.

        Args:
            remember: Keep the listings for the first iteration (:meth:`_reused_listings`), when
                every folder is local and was last changed at least :data:`memcore_box._drift.SETTLED_NS` before the
                walk began (a change in the same clock tick as a listing could leave the
                folder's time as it was). Any other walk, or a write, forgets them.
        """
        self._opened_listings = None
        stamps: dict[str, Any] | None = {} if remember and _scan.enabled() else None
        began = _drift.now_ns()
        listings: dict[str, list[Any]] = {}
        for folder, items in self._walk("", stamps):
            if not folder:
                continue
            if any(not i.is_folder and (i.name == INDEX_FILE or is_memory_name(i.name)) for i in items):
                listings[folder] = items
                if folder not in self._folders:
                    self._folders[folder] = _Folder(path=folder)  # its index is read when needed
        for path in [p for p in self._folders if p not in listings]:
            if not self.storage.exists(path):
                del self._folders[path]
                self._invalidate()
        if stamps and all(s is not None and s[3] < began - _drift.SETTLED_NS for s in stamps.values()):
            self._opened_listings = (stamps, dict(listings))
        return listings

    def _loaded(self, folder: _Folder) -> _Folder:
        """Return ``folder`` with its index read (once; :meth:`_sync` re-reads changed ones)."""
        if not folder.loaded:
            self._load_index(folder)
        return folder

    def _load_index(self, folder: _Folder) -> None:
        folder.loaded = True
        if folder.dirty and self._holding:
            return  # the open session's pending changes: written when it ends, never re-read over
        index_path = join(folder.path, INDEX_FILE)
        try:
            if folder.version is not None and not folder.dirty:
                if self.storage.stat(index_path).version == folder.version:
                    return  # unchanged since read or written: skip reading a large file
            data, version = self.storage.read(index_path)
        except FileNotFoundError:
            if folder.version is not None or folder.problem is None:
                folder.entries, folder.version, folder.stale, folder.problem = [], None, True, "missing"
                folder.reposition()
                self._invalidate()
            return
        if version == folder.version and not folder.dirty:
            return
        folder.version = version
        self._invalidate()
        layout = None
        if _patch.enabled() and self._splicing():  # a layout saved by the process that wrote these bytes
            layout = _patch.recall(self._local_path(index_path), version, None, len(data))
        try:
            parsed = _patch.parse_known(data, layout) if layout is not None else None
            if parsed is None or len(parsed["entries"]) != layout.count:  # type: ignore[union-attr]
                parsed, layout = loads_json(data), None
            if not isinstance(parsed, dict) or not isinstance(parsed.get("entries"), list):
                raise ValueError("not an object with an 'entries' list")
            if not all(isinstance(e, dict) for e in parsed["entries"]):
                raise ValueError("an entry is not an object")
            if not all(isinstance(e.get("id"), str) and isinstance(e.get("filename"), str) for e in parsed["entries"]):
                raise ValueError("an entry lacks a string 'id' or 'filename'")
            entries = [row_from_json(e) for e in parsed["entries"]]
            parsed["entries"] = None
        except ValueError as exc:
            folder.entries, folder.stale, folder.problem = [], True, f"malformed: {exc}"
            folder.source = folder.layout = None  # nothing of a file that did not parse is ever reused
            folder.reposition()
            return
        folder.entries, folder.stale, folder.problem = entries, False, None
        folder.source, folder.layout = (version, tuple(entries)), layout
        folder.folder_id = parsed.get("folder_id") if isinstance(parsed.get("folder_id"), str) else folder.folder_id
        known = {"version", "folder_id", "folder_path", "updated_at", "tier", "entry_count", "entries"}
        known.update(("by_id", "by_slug", "by_wikilink", "by_kind", "by_tag", "by_status", "by_companion_for"))
        folder.keep = {k: v for k, v in parsed.items() if k not in known}
        folder.reposition()

    def _known_index_entries(self, path: str) -> list[Any] | None:
        """Return the entries of a never-read folder index whose bytes memcore wrote, as parsed JSON, or ``None``.

        For the drift check (:func:`memcore_box.validate.drift_diags`): the index file's layout
        record (:func:`memcore_box._patch.recall`) says it holds exactly what the writer made,
        so its entries parse (:func:`memcore_box._patch.parse_known`) without its maps, and the
        folder is left unread (its rows are built when something needs them). ``None`` for a
        folder read already or unknown, an index without a record (or another version), or the
        fast paths off (``MEMCORE_BOX_PATCH``, ``MEMCORE_BOX_SPLICE``).
        """
        folder = self._folders.get(path)
        if folder is None or folder.loaded or folder.dirty or not (_patch.enabled() and self._splicing()):
            return None
        index_path = join(path, INDEX_FILE)
        try:
            data, version = self.storage.read(index_path)
        except FileNotFoundError:
            return None
        layout = _patch.recall(self._local_path(index_path), version, None, len(data))
        parsed = _patch.parse_known(data, layout) if layout is not None else None
        if parsed is None or len(parsed["entries"]) != layout.count:  # type: ignore[union-attr]
            return None
        entries: list[Any] = parsed["entries"]
        return entries

    def _load_rollup(self, *, full: bool = False) -> None:
        """Read the rollup's unknown keys (and whether it is missing or malformed) when it changed.

        Args:
            full: Parse the whole rollup (validate reports a malformed one); otherwise a rollup
                in the writer's layout has only its top-level keys scanned
                (:func:`memcore_box._splice.top_level_extras`).
        """
        try:
            if (
                self._rollup_version is not None
                and not (full and self._rollup_scanned)
                and self.storage.stat(INDEX_FILE).version == self._rollup_version
            ):
                return
            data, version = self.storage.read(INDEX_FILE)
        except FileNotFoundError:
            self._rollup_version, self._rollup_keep, self._rollup_problem = None, {}, "missing"
            return
        if version == self._rollup_version and not (full and self._rollup_scanned):
            return
        self._rollup_version = version
        if self._rollup_recorded() and _drift.rollup_known(self._local_path(INDEX_FILE), version, len(data)):
            extras = _splice.top_level_extras(data, _ROLLUP_KEYS)
            if extras is not None:  # the writer's bytes (a JSON object): known whole without parsing it
                self._rollup_keep, self._rollup_problem, self._rollup_scanned = extras, None, False
                return
        if _splice.enabled() and not full:
            extras = _splice.top_level_extras(data, _ROLLUP_KEYS)
            if extras is not None:  # the writer's layout: only the unknown keys were decoded
                self._rollup_keep, self._rollup_problem, self._rollup_scanned = extras, None, True
                return
        self._rollup_scanned = False
        try:
            parsed = loads_json(data)
            if not isinstance(parsed, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            self._rollup_keep, self._rollup_problem = {}, f"malformed: {exc}"
            return
        self._rollup_keep = {k: v for k, v in parsed.items() if k not in _ROLLUP_KEYS}
        self._rollup_problem = None

    def _sync(self, *, repair: bool = False, unread: bool = True) -> None:
        """Re-read config and indexes that changed in storage (another process wrote).

        Args:
            repair: Also bring each folder index in line with the folder's files when
                ``settings.rebuild_index_on_drift`` is true (the default): index files nobody
                indexed (e.g. a writer killed between the memory file and the index) and drop
                entries whose file is gone. Done at the first write after opening and whenever
                a folder's index changed under us (another process wrote), not on every write.
            unread: Also read the indexes of folders whose index was never read (else they
                stay unread until something needs them, as after opening).
        """
        self._load_config()
        forced = repair and self._force_repair
        for folder in list(self._folders.values()):
            if not unread and not folder.loaded and not repair:
                continue
            self._load_index(folder)
            if (
                repair
                and folder.repaired != folder.version
                and not folder.stale
                and (forced or self._settings().get("rebuild_index_on_drift", True))
            ):
                self._repair(folder, forced=forced)
                folder.repaired = folder.version
        if forced:
            self._discover()  # a folder the failed write created is repaired on its first use
            self._force_repair = False
        self._load_rollup()

    def _repair(self, folder: _Folder, *, forced: bool = False) -> None:
        listed = self._listed.pop(folder.path, None)
        if (
            listed is not None
            and not forced
            and _splice.enabled()
            and _drift.stamp(self.storage, folder.path) == listed.stamp
        ):
            # No name added, removed or renamed in the folder since opening listed it.
            if _drift.indexed_files_match(folder.entries, listed.names, is_memory_name):
                return
        try:
            items = self.storage.list(folder.path)
        except FileNotFoundError:
            return
        present = {i.name: i for i in items if not i.is_folder and is_memory_name(i.name)}
        indexed = {e.filename for e in folder.entries}
        if indexed == set(present):
            return
        gone = indexed - set(present)
        if gone:
            folder.entries = [e for e in folder.entries if e.filename not in gone]
            folder.reposition()
        for name in sorted(set(present) - indexed):
            path = join(folder.path, name)
            try:
                data, version = self.storage.read(path)
            except FileNotFoundError:
                continue
            parsed = self._parse(path, data, version, present[name].id)
            if isinstance(parsed, _File):
                self._index_put(folder, index_row(parsed.meta, filename=name, file_id=parsed.file_id, size=parsed.size))
        folder.dirty = True
        self._invalidate()

    def _folder(self, path: str, *, create: bool = False) -> _Folder:
        folder = self._folders.get(path)
        if folder is None:
            if create:
                self.storage.make_folder(path)
            folder = _Folder(path=path)
            self._folders[path] = folder
        return self._loaded(folder)

    def _ensure_fresh(self, folder: _Folder) -> None:
        """Rebuild a folder's entries from its files when its index is missing or malformed."""
        if not self._loaded(folder).stale:
            return
        old = {e.filename: e for e in folder.entries}
        files, _ = self._scan_folder(folder.path)
        folder.entries = self._entries_for(files, old)
        folder.reposition()
        folder.stale = False
        folder.dirty = True
        self._invalidate()

    def _entries_for(self, files: list[_File], old: dict[str, IndexRow]) -> list[IndexRow]:
        entries = []
        for f in sorted(files, key=lambda f: _sort_key(f.meta.get("created_at"), str(f.meta.get("id")))):
            previous = old.get(f.name)
            file_id = f.file_id
            if file_id is None and previous is not None and previous.id == str(f.meta.get("id")):
                file_id = previous.file_id
            entries.append(index_row(f.meta, filename=f.name, file_id=file_id, size=f.size))
        return entries

    def _invalidate(self) -> None:
        self._recent.clear()
        self._titles = None
        self._slugs = None

    def _where_map(self) -> _Where:
        return _Where([self._loaded(self._folders[path]) for path in sorted(self._folders)])

    def _title_maps(self) -> tuple[dict[str, str], dict[str, str]]:
        if self._titles is None:
            exact: dict[str, str] = {}
            folded: dict[str, str] = {}
            active: set[str] = set()
            for path in sorted(self._folders):
                for entry in self._loaded(self._folders[path]).entries:
                    title = unicodedata.normalize("NFC", str(entry.title or ""))
                    if not title:
                        continue
                    is_active = entry.status == "active"
                    if title not in exact or (is_active and exact[title] not in active):
                        exact[title] = entry.id
                    folded.setdefault(_fold(title), entry.id)
                    if is_active:
                        active.add(entry.id)
            self._titles = (exact, folded)
        return self._titles

    def _slug_set(self) -> set[str]:
        if self._slugs is None:
            self._slugs = {_fold(str(e.slug or "")) for f in self._folders.values() for e in self._loaded(f).entries}
        return self._slugs

    def _resolve(self, title: str) -> str | None:
        exact, folded = self._title_maps()
        found = exact.get(title) or folded.get(title.casefold())
        if found is None and title in self._where_map():
            found = title
        return found

    def _title_of(self, entry_id: str) -> str | None:
        path = self._where_map().get(entry_id)
        if path is None:
            return None
        folder = self._folders[path]
        title = folder.entries[folder.pos[entry_id]].title
        return str(title) if title else None

    def _is_known(self, entry_id: str) -> bool:
        return entry_id in self._where_map()

    def _index_put(self, folder: _Folder, entry: IndexRow) -> None:
        entry_id = entry.id
        if entry_id in folder.pos:
            old = folder.entries[folder.pos[entry_id]]
            folder.entries[folder.pos[entry_id]] = entry
            if old.title != entry.title or old.status != entry.status:
                self._titles = None
        else:
            folder.entries.append(entry)
            folder.pos[entry_id] = len(folder.entries) - 1
            title = unicodedata.normalize("NFC", str(entry.title or ""))
            if self._titles is not None and title:
                # Incremental, so that a batch of adds does not rebuild the maps per add.
                exact, folded = self._titles
                if title not in exact:
                    exact[title] = entry_id
                elif entry.status == "active":
                    self._titles = None  # an active memory may take the title over: rebuild lazily
                folded.setdefault(_fold(title), entry_id)
        if self._slugs is not None:
            self._slugs.add(_fold(str(entry.slug or "")))
        folder.dirty = True

    def _index_remove(self, folder: _Folder, entry_id: str) -> None:
        if entry_id in folder.pos:
            folder.entries = [e for e in folder.entries if e.id != entry_id]
            folder.reposition()
            folder.dirty = True
            self._invalidate()

    def _put(self, session: WriteSession, path: str, data: bytes | bytearray, expected: str | None) -> Item:
        """Write one derived file (an index, the config) through ``session``, conditional on ``expected``.

        ``expected`` is the version memcore last read or wrote (:data:`CREATE`: none), or
        :data:`ANY_VERSION` for a malformed file that is rebuilt whatever it holds now.
        """
        if expected != ANY_VERSION:
            session.seen(path, None, expected)
        session.write(path, bytes(data))
        return self._commit(session)[0]

    def _commit(self, session: WriteSession) -> list[Item]:
        """Flush what ``session`` staged; a refused precondition (nothing written) is not a mutation."""
        self._mutations += 1
        try:
            return session.flush()
        except (ConflictError, FileNotFoundError):
            self._mutations -= 1
            raise

    def _flush(self, session: WriteSession) -> None:
        """Write every changed folder index, then the rollup, then the config (in that order)."""
        now = format_timestamp(utc_now())
        wrote = False
        written: dict[str, _splice.Spans] = {}  # folder -> the index just written, for the rollup
        for path in sorted(self._folders):
            folder = self._folders[path]
            if not folder.dirty:
                continue
            expected = folder.version if folder.version is not None else CREATE
            old = self._old_texts(folder)
            maps = self._appended_maps(folder, old)
            region: list[int] | None = [] if self._splicing() else None
            values: dict[str, tuple[int, int]] = {}
            payload = folder.writer.dumps(
                self._index_items(folder, now, maps),
                groups=[(folder.entries, None)],
                splice=[old],
                region=region,
                values=values,
            )
            del old, maps
            item = self._put(session, join(path, INDEX_FILE), payload, expected)
            rows = tuple(folder.entries)
            folder.source = (item.version, rows) if item.version else None
            folder.layout = None
            if region is not None:
                written[path] = _splice.Spans(payload, (region[0], region[1]), rows)
                self._keep_layout(folder, payload, item.version, (region[0], region[1]), values)
            del payload
            if folder.repaired == folder.version:
                folder.repaired = item.version  # our own write keeps files and index in step
            folder.version, folder.dirty, folder.problem = item.version, False, None
            folder.index_id = item.id or folder.index_id
            wrote = True
        try:
            if wrote or self._rollup_dirty:
                self._write_rollup(session, now, written)
        finally:
            self._map_texts = None
        written.clear()
        if self._config_dirty:
            self._config["updated_at"] = now
            expected = self._config_version if self._config_version is not None else CREATE
            item = self._put(session, CONFIG_FILE, dumps_json(self._config), expected)
            self._config_version, self._config_dirty = item.version, False

    def _appended_maps(self, folder: _Folder, old: _splice.Spans | None) -> list[tuple[str, RawBytes]] | None:
        """Return the maps patched for appended rows (:func:`memcore_box._patch.appended_maps`), or ``None``.

        Only for a file memcore wrote itself, unchanged since (``folder.layout``); the texts are
        kept for the rollup (:meth:`_maps_of`) when it has the same rows.
        """
        layout = folder.layout
        if old is None or layout is None or not _patch.enabled() or folder.source is None:
            return None
        if layout.version != folder.source[0] or layout.entries != old.region:
            return None
        maps = _patch.appended_maps(layout, bytes(old.data), folder.source[1], folder.entries, folder.pos)
        if maps is not None:
            self._map_texts = (tuple(folder.entries), maps)
        return maps

    def _keep_layout(
        self,
        folder: _Folder,
        payload: bytes,
        version: str | None,
        entries: tuple[int, int],
        values: Mapping[str, tuple[int, int]],
    ) -> None:
        """Remember where a just-written folder index's entries and maps are (when its maps are exact texts).

        The rollup's copy of the maps then refers to the new file's bytes (the old file's are freed).
        """
        cached = self._map_texts
        rows = folder.entries
        if cached is None or len(cached[0]) != len(rows) or not all(map(is_, cached[0], rows)):
            return  # maps built as dicts (rows _maps.map_texts does not cover): not patched later
        view = memoryview(payload)
        self._map_texts = (cached[0], [(name, RawBytes(view[slice(*values[name])])) for name, _ in cached[1]])
        if version and _patch.enabled() and isinstance(payload, bytes):
            folder.layout = _patch.Layout(version, entries, {name: values[name] for name, _ in cached[1]})
            _patch.save(self._local_path(join(folder.path, INDEX_FILE)), folder.layout, len(rows), len(payload))

    def _local_path(self, path: str) -> str:
        """Return the absolute path of a workspace file on a local folder."""
        root = getattr(self.storage, "root", "")
        return os.path.join(os.fspath(root), *path.split("/"))

    def _index_items(
        self, folder: _Folder, now: str, maps: Iterable[tuple[str, Any]] | None = None
    ) -> Iterator[tuple[str, Any]]:
        """Yield a folder index's keys and values in the schema's order, maps one at a time (or ``maps``)."""
        yield from (
            ("version", 1),
            ("folder_id", folder.folder_id),
            ("folder_path", folder.path + "/"),
            ("updated_at", now),
            ("tier", self.tier),
            ("entry_count", len(folder.entries)),
            ("entries", None),
        )
        yield from self._maps_of(folder.entries) if maps is None else maps
        for key, value in folder.keep.items():
            if key not in _INDEX_KEYS:
                yield key, value

    def _maps_of(self, rows: Sequence[IndexRow]) -> Iterable[tuple[str, Any]]:
        """Return the ``by_*`` maps of ``rows``: their text (:func:`memcore_box._maps.map_texts`), or dicts.

        The text is built once per flush for the same rows (the rollup of a workspace whose
        entries are all in one folder has that folder's maps). With ``MEMCORE_BOX_SPLICE=0``, or
        rows :func:`~memcore_box._maps.map_texts` does not cover, the maps are built as dicts
        one at a time (:func:`memcore_box.index.row_maps`).
        """
        if not _splice.enabled():
            return row_maps(rows)
        cached = self._map_texts
        if cached is not None and len(cached[0]) == len(rows) and all(map(is_, cached[0], rows)):
            return cached[1]
        found = map_texts(rows)
        if found is None:
            return row_maps(rows)
        texts: list[tuple[str, RawBytes]] = []
        for i, (name, text) in enumerate(found):  # encoded once for both files, each text dropped as it goes
            texts.append((name, RawBytes(text.encode("utf-8"))))
            found[i] = None  # type: ignore[call-overload]
        del found
        self._map_texts = (tuple(rows), texts)
        return texts

    def _rollup_folders(self) -> list[_Folder]:
        return [f for _, f in sorted(self._folders.items()) if not (self._loaded(f).version is None and not f.entries)]

    def _rollup_items(self, folders: list[_Folder], rows: list[IndexRow], now: str) -> Iterator[tuple[str, Any]]:
        """Yield the rollup's keys and values in order (see :func:`memcore_box.index.build_rollup`)."""
        ids = self._config.get("folder_ids")
        root_id = ids.get("root") if isinstance(ids, dict) else None
        children = [
            {"folder_path": f.path + "/", "folder_id": f.folder_id, "index_file_id": f.index_id} for f in folders
        ]
        yield from (
            ("version", 1),
            ("folder_id", root_id if isinstance(root_id, str) else None),
            ("folder_path", "/"),
            ("updated_at", now),
            ("tier", self.tier),
            ("entry_count", len(rows)),
            ("child_indexes", children),
            ("entries", None),
        )
        yield from self._maps_of(rows)
        for key, value in self._rollup_keep.items():
            if key not in _ROLLUP_KEYS:
                yield key, value

    def _rollup_entries(self) -> Iterator[dict[str, Any]]:
        """Yield the rollup's entries as dicts (each folder's entries plus ``folder_path``)."""
        for folder in self._rollup_folders():
            for row in folder.entries:
                yield {**row.as_dict(), "folder_path": folder.path + "/"}

    def _rollup_recorded(self) -> bool:
        """Whether rollups memcore writes are recorded and recognised (:func:`memcore_box._drift.rollup_known`).

        Local folders, with ``MEMCORE_BOX_READ_ALL_FAST`` and ``MEMCORE_BOX_SPLICE`` on.
        """
        return self._splicing() and _readall.enabled()

    def _splicing(self) -> bool:
        """Whether index writes reuse unchanged entries' bytes (local folders; ``MEMCORE_BOX_SPLICE``)."""
        return isinstance(self.storage, LocalStorage) and _splice.enabled()

    def _old_texts(self, folder: _Folder) -> _splice.Spans | None:
        """Return the entry texts of ``folder``'s index file as memcore last read or wrote it, or ``None``.

        ``None`` when splicing is off, the file changed since (another version) or is not in
        the writer's layout (then every entry is encoded).
        """
        source = folder.source
        if source is None or not self._splicing() or source[0] != folder.version:
            return None
        try:
            data, version = self.storage.read(join(folder.path, INDEX_FILE))
        except FileNotFoundError:
            return None
        if version != source[0]:
            return None
        layout = folder.layout
        if layout is not None and layout.version == version and _patch.enabled():
            return _splice.Spans(data, layout.entries, source[1])  # written by memcore as it is now
        region = _splice.entries_region(data, len(source[1]))
        if region is not None:
            return _splice.Spans(data, region, source[1])
        spans = _splice.entry_spans(data, len(source[1]))  # one entry at a time (long non-ASCII lists)
        if spans is None:
            return None
        edges = (spans[0][0], spans[1][-1]) if len(spans[0]) else (0, 0)
        return _splice.Spans(data, edges, source[1], spans)

    def _write_rollup(
        self, session: WriteSession, now: str, written: Mapping[str, _splice.Spans] | None = None
    ) -> None:
        expected = self._rollup_version if self._rollup_version is not None else CREATE
        if self._rollup_problem not in (None, "missing"):
            expected = ANY_VERSION  # derived state: a malformed rollup is rebuilt from the folder indexes
        folders = self._rollup_folders()
        rows = [row for f in folders for row in f.entries]  # one reference per entry, for the maps
        groups: list[tuple[list[IndexRow], str | None]] = [(f.entries, f.path + "/") for f in folders]
        texts = [(written or {}).get(f.path) or self._old_texts(f) for f in folders]
        payload = self._rollup_writer.dumps(
            self._rollup_items(folders, rows, now), groups=groups, borrow=[f.writer for f in folders], splice=texts
        )
        del texts
        del rows
        item = self._put(session, INDEX_FILE, payload, expected)
        self._rollup_version, self._rollup_problem, self._rollup_dirty = item.version, None, False
        self._rollup_scanned = False  # what was just written is known whole
        if self._rollup_recorded() and item.version:
            _drift.remember_rollup(self._local_path(INDEX_FILE), item.version, len(payload))

    # -- the write session (memcore.provider.BaseProvider.session) -----------------------
    # Every write runs in the core session: it holds the lock; each operation flushes its own
    # memory files when it returns (so a batch's files are on disk as it goes), and the indexes,
    # the rollup and the config are written once, when the outermost block ends.
    def _session_started(self, session: WriteSession) -> None:
        """Sync with storage (repairing drift) before the first write (core swept temp files)."""
        self._opened_listings = None
        self._started = self._mutations
        self._outside = sys.exc_info()[1]
        self._ensure_open()
        self._sync(repair=True)
        self._holding = True

    def _failing(self) -> Exception | None:
        """Return the exception the session's block is ending with (``None``: it returned)."""
        exc = sys.exc_info()[1]
        return exc if isinstance(exc, Exception) and exc is not self._outside else None

    def _session_ending(self, session: WriteSession) -> None:
        """Write the indexes for what the session wrote (after a failure, only if it wrote something).

        A write that fails is either without effect or completed by the next write (issue 17,
        item 16): see :meth:`_session_ended`.
        """
        if self._failing() is None:
            self._flush(session)
        elif self._mutations != self._started:
            try:
                self._flush(session)
            except Exception:  # noqa: BLE001 - the index stays pending; the next write repairs it
                pass

    def _session_ended(self, session: WriteSession, ok: bool) -> None:
        """Record a failed write on its exception (``workspace_state``) and make the next write complete it.

        Sets ``exc.workspace_state``: ``"unchanged"`` when no storage write or delete had
        started (a refusal, a conflict found before writing), else ``"pending"``: a memory file
        may be written or deleted while its index is not; the next write that holds the lock
        re-lists every folder and brings each index (and the rollup) in line with the files.
        A pending state is also said in the message of memcore's errors.
        """
        self._holding = False
        exc = None if ok else self._failing()
        if exc is None:
            return
        state = "unchanged" if self._mutations == self._started else "pending"
        try:
            exc.workspace_state = state  # type: ignore[attr-defined]
        except AttributeError:  # pragma: no cover - an exception type with __slots__
            pass
        if state == "unchanged":
            return
        self._force_repair = True
        for folder in self._folders.values():
            folder.repaired = None
        note = (
            f"the workspace {self.storage.description} may hold part of this write (a memory file written "
            "or deleted, its _index.json not updated); the next write to it completes that by re-indexing "
            "every folder from its files, or run `memcore reindex`"
        )
        exc.add_note(note)
        if isinstance(exc, MemcoreError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
            exc.args = (f"{exc.args[0]} [{note}]",)

    def _parse(
        self, path: str, data: bytes, version: str, file_id: str | None = None, *, fast: bool = False
    ) -> _File | Diagnostic:
        """Return :func:`memcore_box._parse.parse` of a memory file, with this provider's :attr:`fast_yaml`."""
        return parse(path, data, version, file_id, fast=fast, fast_yaml=self.fast_yaml)

    def _read_meta(self, path: str, data: bytes) -> tuple[Mapping[str, Any], str] | None:
        """Return :func:`memcore_box._parse.read_meta` of a memory file (``None``: an orphan)."""
        return read_meta(path, data, self.fast_yaml)

    def _scan_folder(
        self, folder: str, items: list[Any] | None = None, *, fast: bool = False
    ) -> tuple[list[_File], list[Diagnostic]]:
        """Return a folder's memory files and orphan diagnostics, in listing order.

        Args:
            folder: Workspace-relative folder.
            items: Its listing, when already known.
            fast: Parse for reading only (see :meth:`_parse`); writes keep the default.
        """
        files: list[_File] = []
        orphans: list[Diagnostic] = []
        if items is None:
            try:
                items = self.storage.list(folder)
            except FileNotFoundError:
                return files, orphans
        for item, path, data, version in read_memory_files(folder, items, self.storage.read):
            parsed = self._parse(path, data, version or "", item.id, fast=fast)
            (files if isinstance(parsed, _File) else orphans).append(parsed)  # type: ignore[arg-type]
        return files, orphans

    def _scan(self, *, fast: bool = False) -> tuple[list[_File], list[Diagnostic]]:
        """Return every memory file (folders sorted) and the orphans' diagnostics.

        Args:
            fast: Parse for reading only (see :meth:`_parse`); writes keep the default.
        """
        files: list[_File] = []
        orphans: list[Diagnostic] = []
        for folder, items in sorted(self._discover().items()):
            found, bad = self._scan_folder(folder, items, fast=fast)
            files += found
            orphans += bad
        return files, orphans

    # -- where a new memory goes: ids, slugs, team folders, companions' binaries --------
    # -- writing ----------------------------------------------------------------------
    def _new_id(self) -> str:
        taken = self._where_map()
        dead = self._tombstones()
        while True:
            entry_id = f"mem_{ULID()}"
            if entry_id not in taken and entry_id not in dead:
                return entry_id

    def _unique_slug(self, base: str, *, skip: int = 0) -> str:
        taken = self._slug_set()
        n = 1 + skip
        for _ in range(_MAX_SLUG_TRIES):
            slug = base if n == 1 else f"{base}-{n}"
            if slug.casefold() not in taken:
                return slug
            n += 1
        raise InvalidEntryError(f"box: more than {_MAX_SLUG_TRIES} memories share the slug {base!r}")

    def _check_new_id(self, entry_id: str) -> str:
        entry_id = unicodedata.normalize("NFC", entry_id)
        if entry_id != entry_id.strip() or any(c in entry_id for c in "\r\n"):
            raise InvalidEntryError(f"box: id {entry_id!r} has surrounding blanks or a line break")
        if entry_id in self._tombstones():
            raise ConflictError(f"box: id {entry_id!r} belonged to a deleted memory; Box-memory never reuses ids")
        if self._is_known(entry_id):
            raise ConflictError(f"box: a memory with id {entry_id!r} already exists; use update()")
        return entry_id

    def _active_slug_holder(self, slug: str, entry_id: str) -> str | None:
        """Return the file of another active memory whose slug is ``slug`` (case-folded), or ``None``."""
        folded = slug.casefold()
        for path in sorted(self._folders):
            for row in self._loaded(self._folders[path]).entries:
                if row.id != entry_id and row.status == "active" and str(row.slug or "").casefold() == folded:
                    return join(path, row.filename)
        return None

    def _refuse_held(self, f: _File, operation: str) -> None:
        if str(f.meta.get("status")) == "held":
            raise ImmutableEntryError(
                f"box: memory {f.meta['id']} ({f.path}) is on legal hold (status: held) and cannot be "
                f"changed; `{operation}` refused. Release the hold in Box first."
            )

    def binary_path(self, file_id: str, near: str) -> str | None:
        """Return the workspace path of the binary a companion describes, or ``None``.

        On a local folder ``companion_for.file_id`` is the binary's workspace-relative path
        (``files/report.pdf``); a Box file id (digits) cannot be found locally and gives
        ``None``. Subclasses on Box override this.

        Args:
            file_id: ``companion_for.file_id``.
            near: The companion's folder (for sibling layouts; unused locally).
        """
        if not file_id or file_id.isdigit():
            return None
        try:
            return file_id if self.storage.exists(file_id) else None
        except UnsafePathError:
            return None

    def _fill_companion(self, entry: MemoryEntry) -> None:
        companion = entry.ns("box").get("companion_for")
        if not isinstance(companion, dict) or not companion.get("file_id"):
            return
        path = self.binary_path(str(companion["file_id"]), "")
        if path is None:
            return
        if companion.get("sha256") and companion.get("size_bytes") is not None:
            return
        algo, digest, size = self.storage.checksum(path)
        companion.setdefault("filename", posixpath.basename(path))
        companion[algo] = digest
        companion["hash_algo"] = algo
        companion["size_bytes"] = size
        companion.setdefault("mime_type", mimetypes.guess_type(path)[0] or "application/octet-stream")
        companion.setdefault("reviewed_at", format_timestamp(utc_now()))
        if entry.source:
            companion.setdefault("reviewed_by", entry.source)

    def _team_folder(self, team: str | None, sub: str) -> str:
        if team is None or team == self.default_team:
            return sub
        teams = self._config.get("teams")
        known = teams if isinstance(teams, list) else []
        check_team(team, [*known, *([self.default_team] if self.default_team not in known else [])])
        path = join("teams", team, sub)
        if not isinstance(teams, list) or team not in teams:
            config = self._edit_config()
            config["teams"] = [*(teams if isinstance(teams, list) else []), team]
            ids = config.setdefault("folder_ids", {})
            if isinstance(ids, dict):
                for part in ("root", "memories", "files", "companions"):
                    folder = join("teams", team) if part == "root" else join("teams", team, part)
                    ids.setdefault(f"team_{team}_{part}", self.storage.make_folder(folder).id)
        return path

    def _target_folder(self, entry: MemoryEntry) -> str:
        if entry.kind == Kind.COMPANION:
            companion = (entry.extra.get("box") or {}).get("companion_for")
            if isinstance(companion, dict) and companion.get("file_id"):
                binary = self.binary_path(str(companion["file_id"]), "")
                if binary is not None:
                    if self._settings().get("companion_layout") == "folder":
                        return self._team_folder(entry.scope, "companions")
                    return posixpath.dirname(binary) or self._team_folder(entry.scope, "memories")
        return self._team_folder(entry.scope, "memories")
