"""A memcore provider for Claude Code's memory files (``claudecode:./memory-folder``).

Spec: claude-code-memory.md. The store is a folder: the auto-memory index ``MEMORY.md`` and its
topic files (Part B) at the top level, ``CLAUDE.md`` / ``CLAUDE.local.md`` / ``AGENTS.md`` files at
any depth and ``.claude/rules/**/*.md`` (Part A), and the markdown files their ``@imports`` reach
inside the folder. Each file is one entry, its id the file's store-relative path; the field
table is :mod:`memcore_claudecode.mapping`.

Writes run in memcore's write session (lock, one read per file, atomic replacement, read-only
refused by core); ``MEMORY.md`` is kept in step with the topics, as Claude Code keeps it, and
written once per session. A file that could not be parsed is read as text and never rewritten;
an update that changes nothing writes no byte.
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from memcore.errors import (
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    ParseError,
    UnsafePathError,
)
from memcore.models import Diagnostic, MemoryEntry, Query, lf_body, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.storage import WriteSession, atomic_write, check_component, join
from memcore_claudecode._parse import Doc, role_of
from memcore_claudecode._render import index_bytes, remove_line, set_line
from memcore_claudecode._store import Snapshot
from memcore_claudecode.codec import encode, same_content
from memcore_claudecode.mapping import FORMAT, INDEX_FILE, RELATION_TYPES, TYPE_OF_KIND
from memcore_claudecode.validate import check

__all__ = ["ClaudeCodeProvider"]

_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})
_INDEX_LINK = re.compile(rb"^[ \t]*[-*+][ \t]+\[[^\]\n]*\]\([^)\n]+\.md\)", re.MULTILINE)


def _slug(text: str) -> str:
    """Return ``text`` as a file-name slug: ASCII letters and digits joined by ``_`` (at most 48)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_text).strip("_")
    return slug[:48].rstrip("_")


class ClaudeCodeProvider(BaseProvider):
    """A Claude Code memory folder (auto memory and CLAUDE.md files).

    Args:
        location: The folder (created by :meth:`init_store`).
        **options: Only memcore's own (``read_only``, ``index``).
    """

    format_name: ClassVar[str] = FORMAT
    option_names: ClassVar[frozenset[str] | None] = frozenset()
    relation_types: ClassVar[dict[str, str]] = RELATION_TYPES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        map(Capability, ["add", "update", "delete", "archive", "supersede", "graph", "batch", "concurrent"])
    )

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        super().__init__(location, **options)
        self.root = Path(self.location)  #: the memory folder
        self._pending: Snapshot | None = None  # the write session's view of the store
        self._parsed: dict[tuple[str, bool], tuple[object, Doc]] = {}  # parses, reused while a file's stat holds

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` looks like a Claude Code memory folder; never raises.

        True for a folder with a ``CLAUDE.md`` or a ``.claude/`` folder, or a ``MEMORY.md`` of
        ``- [Title](file.md)`` lines (and no RightMemory ``{#id}`` anchors).
        """
        try:
            path, index = Path(path), Path(path) / INDEX_FILE
            if (path / "CLAUDE.md").is_file() or (path / ".claude").is_dir():
                return True
            if not index.is_file():
                return False
            with index.open("rb") as fh:
                head = fh.read(65536)
            return bool(_INDEX_LINK.search(head)) and b"{#" not in head
        except OSError:
            return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create the memory folder (and its parents) with an empty ``MEMORY.md``; leave an existing one alone."""
        cls.init_store_like(location, None)

    @classmethod
    def init_store_like(cls, location: str, source: Any, **options: Any) -> list[str]:
        """As :meth:`init_store`, with ``source``'s own ``MEMORY.md`` byte for byte (none when it has none)."""
        (root := Path(location)).mkdir(parents=True, exist_ok=True)
        index = None if source is None else Path(os.fspath(source.location)) / INDEX_FILE
        if not (root / INDEX_FILE).exists() and (index is None or (index.is_file() and not index.is_symlink())):
            atomic_write(root / INDEX_FILE, b"" if index is None else index.read_bytes())
        return []

    def open(self) -> ClaudeCodeProvider:
        """Check that the folder exists and return ``self``.

        Raises:
            ConfigError: ``location`` is not a folder.
        """
        if not self.root.is_dir():
            why = f"{FORMAT}: {self.location} is not a folder; create it with `memcore init --store {self.url}`"
            raise ConfigError(why)
        return super().open()

    # -- reading ----------------------------------------------------------------------
    def _walk(self) -> dict[str, str]:
        """Return path -> role of every file that is an entry by its name (see :func:`role_of`)."""
        roles: dict[str, str] = {}
        folders = [""]
        while folders:
            folder = folders.pop()
            try:
                items = self.storage.list(folder)
            except (FileNotFoundError, NotADirectoryError, UnsafePathError):
                continue
            for item in items:
                rel = unicodedata.normalize("NFC", join(folder, item.name))
                if item.is_folder:
                    if item.name not in _SKIPPED_FOLDERS and (not item.name.startswith(".") or item.name == ".claude"):
                        folders.append(rel)
                elif (role := role_of(rel) or "index") != "index":
                    roles[rel] = role
        return roles

    def _snapshot(self, session: WriteSession | None = None) -> Snapshot:
        """The store read through ``session`` (its staged writes seen), else from storage."""
        source = session.read if session is not None else (lambda path: self.storage.read(path)[0])

        def read(path: str) -> bytes | None:
            with contextlib.suppress(OSError, UnsafePathError):
                return source(path)
            return None

        def stat(path: str) -> tuple[int, int, int] | None:
            with contextlib.suppress(OSError):
                st = os.stat(self.root / path)
                return (st.st_mtime_ns, st.st_size, st.st_ino)
            return None

        return Snapshot(read, lambda path: os.path.islink(self.root / path), self._walk(), stat, self._parsed)

    def _read(self) -> Snapshot:
        """Return the store as the caller sees it: inside a write session, with its writes."""
        pending = self._pending
        return pending if pending is not None and self.active_session() is not None else self._snapshot()

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield every entry in store order: instruction files, then topics in ``MEMORY.md`` order, then imports."""
        yield from (query or Query()).apply(self._read().entries())

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry whose file is ``entry_id``.

        Raises:
            EntryNotFoundError: No entry file at that path.
        """
        snap = self._read()
        return snap.entry(self._known(entry_id, snap))

    def _known(self, entry_id: str, snap: Snapshot) -> str:
        path = unicodedata.normalize("NFC", entry_id)
        if path not in snap.docs:
            raise EntryNotFoundError(f"{FORMAT}: no memory file {entry_id!r} in {self.location}")
        return path

    def validate(self) -> list[Diagnostic]:
        """Report what :mod:`memcore_claudecode.validate` finds (file:line)."""
        return check(self._read())

    def read_all(self) -> StoreSnapshot:
        """Read every entry and check the store from one pass over its files."""
        snap = self._read()
        return StoreSnapshot(snap.entries(), check(snap))

    def source_files(self) -> list[str]:
        """Return every file entries are read from (and ``MEMORY.md``), store-relative."""
        snap = self._read()
        files = [*snap.order(), *(doc.path for doc in snap.unreadable)]
        return [*files, INDEX_FILE] if snap.index.file is not None or snap.index.broken else files

    # -- writing ----------------------------------------------------------------------
    @contextlib.contextmanager
    def _editing(self, operation: str) -> Iterator[tuple[Snapshot, WriteSession]]:
        """Run one write in the write session, on the session's view of the store (built once)."""
        with self.session(operation) as session:
            if self._pending is None:
                self._pending = self._snapshot(session)
            yield self._pending, session
            session.count()

    def _session_ending(self, session: WriteSession) -> None:
        """Stage ``MEMORY.md`` once, when the outermost write session ends."""
        pending, self._pending = self._pending, None
        if pending is not None and pending.index.changed:
            session.write(INDEX_FILE, index_bytes(pending.index))

    def _refuse_broken(self, snap: Snapshot, path: str) -> None:
        """Raise :class:`ParseError` when ``path`` could not be parsed (it is never rewritten)."""
        problems = [*snap.docs[path].problems, *snap.decoded(path)[1]]
        if snap.docs[path].broken or problems:
            why = str(problems[0]) if problems else "it holds control characters"
            line = problems[0].line if problems else None
            raise ParseError(f"{FORMAT}: {path} is left untouched because {why}; fix it first", path=path, line=line)

    def _index_writable(self, snap: Snapshot) -> None:
        if snap.index.broken:
            why = f"{self.location}/{INDEX_FILE} is not UTF-8, so the index cannot be kept in step; re-save it as UTF-8"
            raise ParseError(f"{FORMAT}: {why}", path=INDEX_FILE)

    def _check_path(self, wanted: str, snap: Snapshot, session: WriteSession) -> tuple[str, str]:
        """Return ``(path, role)`` for a new file at ``wanted``, or raise.

        ``UnsafePathError``: a component is unsafe (``..``, a reserved name…); ``InvalidEntryError``: not a
        memory file path; ``ConflictError``: a file is there already.
        """
        path = unicodedata.normalize("NFC", wanted)
        for component in path.split("/"):
            check_component(component)
        role = role_of(path)
        if role is None and path.endswith(".md") and path in snap.import_targets():
            role = "import"
        if role is None or role == "index":
            why = f"a topic is a `.md` file at the folder's top level (not {INDEX_FILE}); CLAUDE.md, CLAUDE.local.md,"
            why += " AGENTS.md and .claude/rules/*.md may be anywhere"
            raise InvalidEntryError(f"{FORMAT}: {wanted!r} is not a memory file path: {why}")
        if path in snap.docs or path.lower() in snap.taken or session.read(path) is not None:
            raise ConflictError(f"{FORMAT}: {self.location}/{path} exists already")
        return path, role

    def _place(self, entry: MemoryEntry, snap: Snapshot, session: WriteSession) -> tuple[str, str]:
        """Choose the new entry's file: its id, else ``extra.claudecode.path``, else ``<type>_<slug>.md``."""
        if entry.id is not None:
            return self._check_path(entry.id, snap, session)
        wanted = (entry.extra.get(FORMAT) or {}).get("path")
        if isinstance(wanted, str):
            with contextlib.suppress(UnsafePathError, InvalidEntryError, ConflictError):
                return self._check_path(wanted, snap, session)
        words = entry.title if entry.title.strip() else " ".join(entry.body.split()[:8])
        base = f"{TYPE_OF_KIND[entry.kind]}_{_slug(words) or 'memory'}"
        for n in range(1, 10000):
            name = f"{base}.md" if n == 1 else f"{base}_{n}.md"
            if name.lower() not in snap.taken and session.read(name) is None:
                return name, "topic"
        raise ConflictError(f"{FORMAT}: no free file name for {base}.md in {self.location}")  # pragma: no cover

    def _write(self, snap: Snapshot, session: WriteSession, entry: MemoryEntry, role: str) -> None:
        """Encode ``entry`` into its file and stage it (nothing when the bytes stay the same)."""
        path = str(entry.id)
        old = snap.docs.get(path)
        text = encode(entry, role, old, snap.context(extra_id=path))
        data = old.file.encode(text) if old is not None and old.file is not None else text.encode("utf-8")
        if old is None or data != old.raw:
            session.write(path, data)
            snap.changed(path, data, role)

    def _index_line(self, snap: Snapshot, entry: MemoryEntry, new: bool) -> None:
        """Keep ``MEMORY.md`` in step with a topic: its line's link text and hook."""
        cc = entry.extra.get(FORMAT) or {}
        path = str(entry.id)
        if cc.get("indexed") is False and (new or path not in snap.index.links):
            return
        doc = snap.docs.get(path)
        description = (doc.meta or {}).get("description") if doc is not None else cc.get("description")
        title = str(cc["index_title"]) if "index_title" in cc else entry.title
        hook = str(cc["hook"]) if "hook" in cc else description if isinstance(description, str) else ""
        self._index_writable(snap)  # a broken index lists nothing: a topic's line could not be kept
        if set_line(snap.index, path, title, hook):
            snap.index_changed()

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Write a new memory file; a topic also gets its line at the end of ``MEMORY.md``.

        The file is the entry's id when that is a memory file path, else
        ``extra.claudecode.path`` when free, else ``<type>_<slug>.md`` from the title. A topic
        without times gets ``modified`` now (unless given as ``None``); other files hold no times
        of their own. A body's CR and CRLF line breaks are stored (and returned) as the file's own.

        Raises:
            ConflictError: A file exists at the id given.
            InvalidEntryError: The id is no memory file path, or the entry would not read back.
            UnsafePathError: The id leaves the store.
        """
        entry = lf_body(entry).model_copy(deep=True)
        with self._editing("add") as (snap, session):
            path, role = self._place(entry, snap, session)
            entry.id = path
            if role == "topic":
                self._index_writable(snap)
                told = entry.model_fields_set  # a time told as None (a copy of a topic without one) stays absent
                entry.updated_at = entry.updated_at or (None if "updated_at" in told else entry.created_at or utc_now())
                entry.created_at = entry.created_at or (None if "created_at" in told else entry.updated_at)
            self._write(snap, session, entry, role)
            if role == "topic":
                self._index_line(snap, entry, new=True)
            return snap.entry(path)

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the file of ``entry.id`` (only what changed) and its index line.

        Raises:
            InvalidEntryError: ``entry`` has no id, or would not read back.
            EntryNotFoundError: No such memory file.
            ConflictError: ``expected_version`` is not the stored version.
            ParseError: The file could not be parsed (nothing is written).
        """
        if entry.id is None:
            raise InvalidEntryError(f"{FORMAT}: update needs an entry with an id")
        with self._editing("update") as (snap, session):
            path = self._known(entry.id, snap)
            current = snap.entry(path)
            if expected_version is not None and expected_version != current.version:
                why = f"version {current.version}, expected {expected_version}"
                raise ConflictError(f"{FORMAT}: {path} changed since it was read ({why}); read it again")
            self._refuse_broken(snap, path)
            entry = lf_body(entry).model_copy(deep=True)
            entry.id = path
            role = snap.roles[path]
            if not same_content(entry, current):
                self._write(snap, session, entry, role)
            if role == "topic":
                self._index_line(snap, entry, new=False)
            return snap.entry(path)

    def delete(self, entry_id: str) -> None:
        """Remove the memory file of ``entry_id`` and its ``MEMORY.md`` line.

        Raises:
            EntryNotFoundError: No such memory file.
            ParseError: The file could not be parsed (nothing is removed).
        """
        with self._editing("delete") as (snap, session):
            path = self._known(entry_id, snap)
            self._refuse_broken(snap, path)
            remove_line(snap.index, path)  # a broken index lists nothing, so it is never edited
            session.delete(path)
            snap.changed(path, None)
