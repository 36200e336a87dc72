"""The Box-memory workspace provider (format name ``box``), on any :class:`~memcore.storage.Storage`.

Spec: box-memory-schema.md; what the authors' skills do: reference-notes/box-memory.md.
All I/O goes through ``self.storage`` (:class:`~memcore.storage.LocalStorage` for
``box:PATH``); the Box cloud provider subclasses this class and overrides
:meth:`BoxMemoryProvider.storage_for`.

Workspace layout (``init_store``)::

    _box-memory.json        workspace config (every schema field; unknown fields kept)
    _index.json             workspace rollup: every folder index's entries + child_indexes
    memories/_index.json    memories of no team / the default team
    files/  companions/     binaries; companions (sibling layout: next to the binary)
    teams/<team>/{memories,files,companions}/

Writes run in memcore's write session (:meth:`memcore.provider.BaseProvider.session`, under
the storage's lock; refused before any I/O on a ``read_only`` store): each operation's memory
file (``<kind>__<slug>.md``) is written when the operation returns, atomically and conditional on
the version read; each changed folder ``_index.json``, the rollup and the config are written once,
when the outermost block ends (one write, or ``with store.batch():``). Modules: :mod:`._parse`
(bytes -> file), :mod:`.codec` (frontmatter <-> entry), :mod:`._render` (byte-preserving edits),
:mod:`.validate` (rules), :mod:`._state` (config and indexes), :mod:`.index` (index rows).

Ids are ``mem_`` + a ULID. An id is never reused: a deleted id goes into the tombstone list
``_box-memory.json`` -> ``memcore.deleted_ids`` and ``add`` refuses it afterwards.
"""

from __future__ import annotations

import mimetypes
import posixpath
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import (
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    UnsafePathError,
)
from memcore.frontmatter import text_of
from memcore.frontmatter import to_plain as plain
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot, unchanged_by
from memcore.storage import Item, Storage, WriteSession, join
from memcore_box import _readall
from memcore_box._bulk import BulkAdd, checked_read, with_version
from memcore_box._json import loads_json
from memcore_box._parse import _File, is_memory_name
from memcore_box._plan import Reservations, plan_box_ids
from memcore_box._render import patched, render
from memcore_box._state import _MAX_SLUG_TRIES, WorkspaceState
from memcore_box._stream import stream_entries
from memcore_box._workspace import CONFIG_FILE, init_workspace, init_workspace_like
from memcore_box.codec import _EPOCH, _working_copy, entry_from_meta, file_stem, meta_from_entry, written_entry
from memcore_box.index import (
    INDEX_FILE,
    _Titles,
    index_row,
)
from memcore_box.mapping import format_timestamp, slugify
from memcore_box.reference import BoxReference
from memcore_box.validate import check_team, companion_for_problem, content_diags, fold_team, refuse_errors

__all__ = ["CONFIG_FILE", "INDEX_FILE", "BoxMemoryProvider", "check_team", "companion_for_problem", "fold_team"]

_RECENT_PATHS = 1024


class BoxMemoryProvider(BulkAdd, BoxReference, WorkspaceState):
    """Box-memory workspace provider on a :class:`~memcore.storage.Storage`.

    Args:
        location: The workspace: a folder path for ``box``.
        storage: The storage to use; default: :meth:`make_storage` (a :class:`LocalStorage`).
        **options: Provider options (``agent``: default ``agent`` for new memories).

    Subclass for another backend by setting ``format_name`` and overriding
    :meth:`make_storage` (and :meth:`binary_path` when binaries are found differently).
    """

    format_name: ClassVar[str] = "box"
    #: what ``-o name=value`` may set on a local workspace (``read_only`` and ``index`` too):
    #: ``agent`` (default source of new memories) and the init options; anything else is a
    #: ConfigError naming the closest one. The cloud subclass takes its own (any).
    option_names: ClassVar[frozenset[str] | None] = frozenset(
        {"agent", "workspace_name", "tier", "teams", "agents", "companion_layout", "default_team"}
    )
    #: ``add_companion`` writes a memory, ``reindex`` the indexes: refused on a ``read_only`` store too.
    write_operations: ClassVar[frozenset[str]] = BaseProvider.write_operations | {"add_companion", "reindex"}
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.DELETE,
            Capability.SUPERSEDE,
            Capability.ARCHIVE,
            Capability.COMPANIONS,
            Capability.GRAPH,
            Capability.BATCH,
            Capability.CONCURRENT,
            Capability.REINDEX,
        }
    )

    # -- construction -----------------------------------------------------------------
    def __init__(self, location: str | Any, *, storage: Storage | None = None, **options: Any) -> None:
        super().__init__(location, storage=storage, **options)
        #: ids plan_ids() minted, for the next adds without an id (in order)
        self._reserved = Reservations()

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is a folder holding ``_box-memory.json``."""
        try:
            return (Path(path) / CONFIG_FILE).is_file()
        except OSError:
            return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create a workspace (box-init steps 4-6): config, folders, empty indexes, rollup.

        Idempotent: existing folders, config and indexes are kept (an existing config is
        not rewritten, so its unknown fields stay).

        Args:
            location: The workspace root.
            **options: ``workspace_name`` (default: the folder's name), ``tier`` (default
                ``"unknown"``: a local folder has no Box plan), ``teams`` (list or
                comma-separated; default ``["default"]``), ``agents``, ``companion_layout``
                (``sibling`` | ``folder``), ``default_team``, ``storage``.
        """
        storage = options.pop("storage", None) or cls.storage_for(location, **options)
        cls.initialize(storage, location=location, **options)

    initialize = staticmethod(init_workspace)

    @classmethod
    def init_store_like(cls, location: str, source: Any, **options: Any) -> list[str]:
        """A workspace with ``source``'s own config (:func:`~memcore_box._workspace.init_workspace_like`)."""
        storage = options.pop("storage", None) or cls.storage_for(location, **options)
        return init_workspace_like(storage, source.storage, location=location, **options)

    # -- life cycle -------------------------------------------------------------------
    def open(self) -> BoxMemoryProvider:
        """Read ``_box-memory.json`` and the folder indexes.

        Raises:
            ConfigError: No workspace here (no ``_box-memory.json``); the message says how to
                create one.
        """
        if not self.storage.exists(CONFIG_FILE):
            raise ConfigError(
                f"box: {self.storage.description} is not a Box-memory workspace (no {CONFIG_FILE}); "
                f"create one with `memcore init --store {self.format_name}:{self.location}`"
            )
        self._load_config()
        self._discover(remember=True)
        # The rollup is read at the first write or validate (``_sync``), not here: only its
        # unknown keys and version are kept, and parsing it (as large as all folder indexes
        # together) would double a reader's peak memory for nothing.
        self._is_open = True
        return self

    def close(self) -> None:
        """Forget cached state; everything was written already."""
        self._folders.clear()
        self._opened_listings = None
        self._listed.clear()
        self._invalidate()
        self._reserved.clear()
        self._forget_written()
        super().close()

    @staticmethod
    def _file_resolver(files: list[_File]) -> tuple[Callable[[str], str | None], Callable[[str], bool]]:
        titles = _Titles()
        for f in files:
            titles.add(f.meta)
        return titles.resolve, titles.known

    def _entry_of(
        self, f: _File, resolve: Callable[[str], str | None] | None = None, known: Callable[[str], bool] | None = None
    ) -> tuple[MemoryEntry, list[Diagnostic]]:
        return entry_from_meta(
            f.meta,
            f.body,
            path=f.path,
            version=f.version,
            resolve=resolve or self._resolve,
            is_known_id=known or self._is_known,
        )

    def _read(self, path: str) -> tuple[bytes, str]:
        """Return ``(bytes, version)`` of a file, as this thread's write session sees it when one is open.

        Raises:
            FileNotFoundError: No such file (or the session deleted it).
        """
        session = self.active_session()
        if session is None:
            return self.storage.read(path)
        data = session.read(path)
        if data is None:
            raise FileNotFoundError(path)
        return data, session.version(path) or ""

    def _read_file(self, entry_id: str) -> _File:
        """Return the parsed file of ``entry_id``, through the indexes, else by scanning.

        Raises:
            EntryNotFoundError: No memory file has that id.
        """
        entry_id = unicodedata.normalize("NFC", entry_id)
        for attempt in range(2):
            folder_path = self._where_map().get(entry_id)
            if folder_path is not None:
                folder = self._folders[folder_path]
                path = join(folder_path, folder.entries[folder.pos[entry_id]].filename)
                try:
                    data, version = self._read(path)
                except (FileNotFoundError, UnsafePathError):
                    data = b""
                    version = ""
                if data:
                    # Plain frontmatter where libyaml reads it exactly (update() turns to the
                    # round-trip parse when it cannot patch the text from that).
                    parsed = self._parse(path, data, version, fast=True)
                    if isinstance(parsed, _File) and str(parsed.meta["id"]) == entry_id:
                        return parsed
            if attempt == 0:
                self._sync()
        files, _ = self._scan()
        for f in files:
            if unicodedata.normalize("NFC", str(f.meta["id"])) == entry_id:
                return f
        raise EntryNotFoundError(f"box: no memory {entry_id!r} in {self.storage.description}")

    # memcore.provider.FileBackedProvider: lets memcore.index refresh one memory file at a time.
    def source_files(self) -> list[str]:
        """Return every memory file, workspace-relative (``memories/decision__x.md``).

        From the listings :meth:`open` made when no folder changed since and the checking
        pass's fast paths are on (:mod:`memcore_box._readall`), else from a new listing.
        """
        self._ensure_open()
        listings = (self._reused_listings() if _readall.enabled() else None) or self._discover()
        return sorted(
            join(folder, item.name)
            for folder, items in listings.items()
            for item in items
            if not item.is_folder and is_memory_name(item.name)
        )

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the memory read from one workspace-relative file (nothing for an orphan)."""
        self._ensure_open()
        try:
            data, version = self.storage.read(path)
        except (FileNotFoundError, UnsafePathError):
            return
        found = self._read_meta(path, data)
        if found is not None:
            entry = entry_from_meta(
                found[0], found[1], path=path, version=version, resolve=self._resolve, is_known_id=self._is_known
            )[0]
            if entry.id is not None:
                self._remember_path(entry.id, path)
            yield entry

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the workspace-relative file of ``entry``.

        For a memory :meth:`iter_entries` or :meth:`iter_file_entries` just yielded (the
        search index asks right after each), the file it was read from; else through the
        folder indexes.
        """
        entry_id = unicodedata.normalize("NFC", entry.id or "")
        recent = self._recent.get(entry_id)
        if recent is not None:
            return recent
        folder_path = self._where_map().get(entry_id)
        if folder_path is None:
            return ""
        folder = self._folders[folder_path]
        return join(folder_path, folder.entries[folder.pos[entry_id]].filename)

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the memory with ``entry_id`` (found through the indexes; files win on drift).

        Raises:
            EntryNotFoundError: No such memory.
        """
        self._ensure_open()
        return self._entry_of(self._read_file(entry_id))[0]

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield every memory, read from the files, ordered by ``created_at`` then id.

        Files that cannot be read as memories (orphans) are skipped here and reported by
        :meth:`validate`. When two files share an id, the first in that order is yielded.
        """
        self._ensure_open()
        query = query or Query()
        if query.ids is not None:
            found = []
            for entry_id in dict.fromkeys(query.ids):
                try:
                    found.append(self.get(entry_id))
                except EntryNotFoundError:
                    continue
            found.sort(key=lambda e: (e.created_at or _EPOCH, e.id or ""))
            yield from query.apply(found)
            return
        yield from query.apply(self._stream_entries())

    def _stream_entries(self) -> Iterator[MemoryEntry]:
        """Yield every memory in ``(created_at, id)`` order (:func:`memcore_box._stream.stream_entries`)."""
        return stream_entries(self)

    def _remember_path(self, entry_id: str, path: str) -> None:
        if len(self._recent) >= _RECENT_PATHS:
            del self._recent[next(iter(self._recent))]
        self._recent[entry_id] = path

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Write a new memory file and index it.

        A missing id gets the next id :meth:`plan_ids` reserved, else ``mem_`` + a new ULID
        (a given id is kept, checked); missing ``created_at``/``updated_at`` get now (given
        ones are kept, so an imported memory keeps its history). The slug comes from
        ``extra["box"]["slug"]`` or the title, made unique with ``-2``, ``-3``…
        (case-insensitively, across the workspace). A relation to a memory :meth:`plan_ids`
        planned and not yet added is written (and returned) as resolved: ``related`` by the
        title that memory will have.

        Raises:
            ConflictError: The id exists, or belonged to a deleted memory.
            InvalidEntryError: The id is not usable.
        """
        entry = _working_copy(entry)
        with self.session("add") as session:
            return self._add_new(entry, session)

    def _add_new(self, entry: MemoryEntry, session: WriteSession, *, bulk: bool = False) -> MemoryEntry:
        """:meth:`add`'s steps for ``entry`` (its working copy) in ``session``.

        ``bulk`` (:meth:`~memcore_box._bulk.BulkAdd.add_many`): the same file, index row, id and
        returned entry, with less work (:mod:`memcore_box._bulk`): a field is assigned only when
        its value changes, the file name is taken as free without reading it (the write's own
        condition refuses a file that exists: the next suffix is tried, as when the read finds
        it), and the file's frontmatter is mapped once for the check and the returned entry
        when no relation in it is resolved (its entry then depends on nothing the indexing
        changes). Either way, an entry with no relation and no ``extra["box"]`` key but ``slug``
        gets its frontmatter and returned entry built directly, and no general check
        (:func:`~memcore_box.codec.written_entry`; ``MEMCORE_BOX_WRITE_FAST=0``: as the others).
        """
        if entry.id is None:
            dead = self._tombstones()
            entry.id = self._reserved.take(lambda i: i not in dead and not self._is_known(i)) or self._new_id()
        else:
            checked = self._check_new_id(entry.id)
            if not bulk or checked != entry.id:
                entry.id = checked
            self._reserved.given(entry.id)
        self._reserved.added(entry.id)
        now = utc_now()
        if not bulk or entry.created_at is None:
            entry.created_at = entry.created_at or now
        if not bulk or entry.updated_at is None:
            entry.updated_at = entry.updated_at or now
        if entry.source is None and self.options.get("agent"):
            entry.source = str(self.options["agent"])
        if entry.kind == Kind.COMPANION:
            self._fill_companion(entry)
        folder_path = self._target_folder(entry)
        folder = self._folder(folder_path, create=True)
        self._ensure_fresh(folder)
        base, kind_name = file_stem(entry)
        for skip in range(_MAX_SLUG_TRIES):
            slug = self._unique_slug(base, skip=skip)
            meta = meta_from_entry(entry, slug=slug, title_of=self._title_or_planned)
            filename = f"{kind_name}__{slug}.md"
            path = join(folder_path, filename)
            checked_entry = written_entry(entry, meta)  # None: checked (and mapped) as below
            if checked_entry is None and bulk:
                checked_entry = checked_read(self, path, meta, entry.body)
            elif checked_entry is None:
                refuse_errors(self, path, meta, entry.body)
            data = render(meta, entry.body)
            try:
                seen = session.version_unread(path) if bulk else session.version(path)
                if seen is not None:
                    raise ConflictError(path)
                session.write(path, data)
                item = self._commit(session)[0]
                break
            except ConflictError:  # an unindexed file holds the name: try the next suffix
                self._slug_set().add(slug.casefold())
                continue
        else:  # pragma: no cover
            raise InvalidEntryError(f"box: no free file name for slug {base!r}")
        self._index_put(folder, index_row(meta, filename=filename, file_id=item.id, size=len(data)))
        self._remember_written(entry.id, item.version, meta)
        if checked_entry is not None:
            return with_version(checked_entry, item.version)
        stored, _ = entry_from_meta(  # after indexing: its own title and id resolve; planned ones too
            meta,
            entry.body,
            path=path,
            version=item.version,
            resolve=lambda title: self._resolve(title) or self._reserved.planned_id(title),
            is_known_id=lambda i: self._is_known(i) or self._reserved.title(i) is not None,
        )
        return stored

    def plan_ids(self, entries: Sequence[MemoryEntry]) -> list[str | None]:
        """Return the ids :meth:`add` will give ``entries`` added in this order now; write nothing.

        Mints the ``mem_<ULID>`` of each entry without an id, reserved for the next adds without
        an id (:func:`memcore_box._plan.plan_box_ids`); an entry with an id keeps it, ``None``
        where add would refuse it.
        """
        self._ensure_open()
        self.require(Capability.ADD, "plan_ids")
        return plan_box_ids(self, self._reserved, entries)

    def _title_or_planned(self, entry_id: str) -> str | None:
        """The title of memory ``entry_id``, or of one :meth:`plan_ids` planned and not yet added."""
        return self._title_of(entry_id) or self._reserved.title(entry_id)

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite a memory file, changing only what changed, and re-index it.

        ``updated_at`` is set to now. The slug is stable (kept from the file). A kind change
        renames the file to ``<new kind>__<slug>.md``; a team change moves it to the team's
        folder; otherwise the file stays where it is, under its name.

        Args:
            entry: The entry, with the id of a stored memory.
            expected_version: Version token the caller read; default ``entry.version``. When
                neither is set the write is unconditional (still under the lock).

        Raises:
            EntryNotFoundError: No memory with that id.
            ConflictError: The file changed since ``expected_version`` was read.
            ImmutableEntryError: The stored memory is ``held``.
        """
        if entry.id is None:
            raise InvalidEntryError("box: update() needs an entry with an id; use add() for new memories")
        entry_id: str = entry.id
        entry = _working_copy(entry)
        self._forget_written(entry_id)
        with self.session("update") as session:
            current = self._read_file(entry_id)
            self._refuse_held(current, "update")
            token = expected_version or entry.version
            if token is not None and token != current.version:
                raise ConflictError(
                    f"box: memory {entry.id} ({current.path}) changed since version {token} was read; "
                    "get() it again and retry"
                )
            stored = self._entry_of(current)[0]
            if unchanged_by(stored, entry):
                return stored  # a no-change update writes no byte (file and indexes alone)
            if entry.created_at is None:
                entry.created_at = stored.created_at or utc_now()
            entry.updated_at = utc_now()
            slug = text_of(current.meta.get("slug")) or self._unique_slug(slugify(entry.title))
            meta, yaml_text = patched(current, entry, slug, title_of=self._title_or_planned, resolve=self._resolve)
            refuse_errors(self, current.path, meta, entry.body, current=current)
            if str(meta.get("status")) == "active" and str(current.meta.get("status")) != "active":
                holder = self._active_slug_holder(slug, entry_id)
                if holder is not None:
                    raise InvalidEntryError(
                        f"box: refusing to make {current.path} active: its slug {slug!r} is on the active memory "
                        f"{holder} (box.slug-conflict; `memcore validate` would report it as an error); "
                        "supersede or archive that one first. Nothing was written"
                    )
            data = current.text.encode(f"---\n{yaml_text}---\n{entry.body}")
            old_folder = self._folder(current.folder)
            self._ensure_fresh(old_folder)
            old_team = text_of(current.meta.get("team"))
            # The folder changes only with the team (a companion next to its binary, or a memory
            # an author filed elsewhere, stays where it is).
            new_folder_path = current.folder if entry.scope == old_team else self._target_folder(entry)
            same_kind = str(current.meta.get("kind")) == str(meta["kind"])
            if same_kind and new_folder_path == current.folder:
                path = current.path
                session.write(path, data)
                new_folder = old_folder
            else:
                new_folder = self._folder(new_folder_path, create=True)
                self._ensure_fresh(new_folder)
                path = join(new_folder_path, f"{slugify(str(meta['kind']))}__{slug}.md")
                if session.version(path) is not None:
                    raise ConflictError(f"box: {path} already exists; refusing to overwrite it")
                session.write(path, data)
                session.delete(current.path)
            written = self._commit(session)
            if path != current.path:
                self._index_remove(old_folder, entry_id)
            item = written[0] if written else Item(posixpath.basename(path), False, current.version)
            previous = old_folder.entries[old_folder.pos[entry.id]] if entry.id in old_folder.pos else None
            file_id = item.id or (previous.file_id if previous is not None and new_folder is old_folder else None)
            self._index_put(
                new_folder, index_row(meta, filename=posixpath.basename(path), file_id=file_id, size=len(data))
            )
            stored, _ = entry_from_meta(
                meta, entry.body, path=path, version=item.version, resolve=self._resolve, is_known_id=self._is_known
            )
        return stored

    def delete(self, entry_id: str) -> None:
        """Delete a memory file, un-index it and tombstone its id (never reused).

        Raises:
            EntryNotFoundError: No such memory.
            ImmutableEntryError: The memory is ``held``.
        """
        self._forget_written(entry_id)
        with self.session("delete") as session:
            current = self._read_file(entry_id)
            self._refuse_held(current, "delete")
            config = self._edit_config()  # refuses (before deleting) when the config is unreadable
            # The tombstone goes in first: a delete whose answer is lost (it may have landed) still
            # records it, written with the indexes now or by the next write (issue 17 item 16).
            block = config.setdefault("memcore", {})
            dead = block.setdefault("deleted_ids", []) if isinstance(block, dict) else None
            tombstoned = isinstance(dead, list) and current.meta["id"] not in dead
            if tombstoned:
                dead.append(str(current.meta["id"]))  # type: ignore[union-attr]
            session.delete(current.path)
            try:
                self._commit(session)
            except (ConflictError, FileNotFoundError):
                if tombstoned:
                    dead.remove(str(current.meta["id"]))  # type: ignore[union-attr]
                raise
            folder = self._folder(current.folder)
            self._ensure_fresh(folder)
            self._index_remove(folder, str(current.meta["id"]))

    def supersede(self, old_id: str, new: MemoryEntry) -> MemoryEntry:
        """Add ``new`` listing ``supersedes: [old_id]``; mark the old memory superseded (kept).

        Raises:
            EntryNotFoundError: ``old_id`` does not exist (nothing written).
            ImmutableEntryError: The old memory is ``held`` (nothing written).
        """
        with self.session("supersede"):
            self._refuse_held(self._read_file(old_id), "supersede")
            return super().supersede(old_id, new)

    def add_companion(
        self,
        binary: str,
        entry: MemoryEntry | None = None,
        *,
        reviewed_by: str | None = None,
    ) -> MemoryEntry:
        """Write a companion memory for a binary in the workspace (box-companion steps 2-9).

        Computes the binary's hash, size and mime type through the storage. Title defaults to
        ``Companion — <filename>``, slug to ``<filename>-companion``, tags to
        ``[companion, <extension>]``.

        Args:
            binary: Workspace-relative path of the binary (becomes ``companion_for.file_id``).
            entry: Title, body, tags… of the companion (kind is set to companion).
            reviewed_by: Agent that reviewed the binary (default: ``entry.source``).

        Raises:
            FileNotFoundError: No file at ``binary``.
        """
        self._ensure_open()
        algo, digest, size = self.storage.checksum(binary)
        filename = posixpath.basename(binary)
        entry = (entry or MemoryEntry()).model_copy(deep=True)
        entry.kind = Kind.COMPANION
        entry.title = entry.title or f"Companion — {filename}"
        if not entry.tags:
            ext = posixpath.splitext(filename)[1].lstrip(".").lower()
            entry.tags = ["companion", *([ext] if ext else [])]
        box = entry.ns("box")
        box.setdefault("slug", f"{slugify(filename)}-companion")
        companion: dict[str, Any] = {
            "file_id": binary,
            "filename": filename,
            algo: digest,
            "hash_algo": algo,
            "size_bytes": size,
            "mime_type": mimetypes.guess_type(filename)[0] or "application/octet-stream",
            "reviewed_at": format_timestamp(utc_now()),
        }
        reviewer = reviewed_by or entry.source
        if reviewer:
            companion["reviewed_by"] = reviewer
        box["companion_for"] = companion
        return self.add(entry)

    def validate(self) -> list[Diagnostic]:
        """Check the workspace: config, every memory file, companions, indexes (drift both ways).

        Never raises for bad files. Errors: unreadable config, orphans (no frontmatter, no id
        or kind, bad YAML), bad field values, duplicate ids, a slug on two active memories, and
        index drift no write repairs on its own: an index entry that differs from its file, and
        (with ``settings.rebuild_index_on_drift`` off) files and index rows that do not match.
        Warnings: drift the next write repairs (indexed but missing, present but unindexed, with
        ``rebuild_index_on_drift`` on: a writer killed between a memory file and its index
        leaves exactly this), a missing or malformed index (rebuilt by the next write to its
        folder), unresolved wikilinks, stale or vanished companions, file names off the
        ``<kind>__<slug>.md`` convention, non-ULID ids.
        """
        return self._check()

    def read_all(self) -> StoreSnapshot:
        """Return every memory and the workspace's diagnostics from one read of each file.

        Equals ``StoreSnapshot(list(self.iter_entries()), self.validate())``: each memory file
        is read and parsed once, as :meth:`validate` parses it (plain frontmatter from libyaml
        where :func:`load_fast` is exact, with the keys' lines for diagnostics; else the
        round-trip parse; both give the same values), and both are built from it. Holds every
        parsed file at once (its text and plain frontmatter), like :meth:`validate`.

        Returns:
            The entries in ``(created_at, id)`` order (orphans left out, of files sharing an
            id the first) and the diagnostics :meth:`validate` gives.
        """
        entries: list[MemoryEntry] = []
        diags = self._check(entries)
        return StoreSnapshot(entries, diags)

    def _check(self, entries: list[MemoryEntry] | None = None) -> list[Diagnostic]:
        self._ensure_open()
        fast = _readall.enabled()  # MEMCORE_BOX_READ_ALL_FAST
        self._sync(unread=not fast)  # the drift check reads the indexes it needs (_known_index_entries)
        return _readall.check_files(self, entries, fast=fast)

    def reindex(self) -> list[Diagnostic]:
        """Rebuild every folder's ``_index.json`` and the rollup from the memory files.

        Memory files are never written. Malformed files are reported as orphans (error
        diagnostics) and left alone; duplicate ids and slug conflicts are reported; stale
        companions too. An index whose content would not change is not rewritten. File ids the
        old index knew for a file (Box ids) are kept when the storage has none.

        Returns:
            The rebuild report as diagnostics.
        """
        with self.session("reindex"):
            files, orphans = self._scan()
            by_folder: dict[str, list[_File]] = {}
            for f in files:
                by_folder.setdefault(f.folder, []).append(f)
            for path in sorted(set(self._folders) | set(by_folder)):
                folder = self._folder(path)
                old = {e.filename: e for e in folder.entries}
                entries = self._entries_for(by_folder.get(path, []), old)
                if folder.problem is not None or [plain(e.as_dict()) for e in entries] != [
                    plain(e.as_dict()) for e in folder.entries
                ]:
                    folder.entries = entries
                    folder.reposition()
                    folder.stale = False
                    folder.dirty = True
                    self._invalidate()
            rollup_differs = self._rollup_problem is not None
            if not rollup_differs:
                try:
                    current = loads_json(self.storage.read(INDEX_FILE)[0]).get("entries")
                    fresh = list(self._rollup_entries())
                    rollup_differs = not isinstance(current, list) or plain(current) != plain(fresh)
                except (FileNotFoundError, ValueError, AttributeError):
                    rollup_differs = True
            self._rollup_dirty = rollup_differs
            content = [
                d
                for d in content_diags(self, files)
                if d.code in {"box.duplicate-id", "box.slug-conflict", "box.companion-stale", "box.companion-vanished"}
            ]
        return orphans + content
