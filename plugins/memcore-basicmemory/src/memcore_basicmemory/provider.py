"""The basic-memory project provider (format name ``basicmemory``, URL ``basicmemory:./project``).

Spec: basic-memory.md. A project is a folder tree of markdown notes; each note is one entry whose
id is its ``permalink``. All I/O goes through ``self.storage``, every write through memcore's write
session. Reading fails open (a malformed note reads as basic-memory reads it: all body); writing
fails closed (such a note is never rewritten or deleted); an update that changes nothing writes no byte.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
from memcore.layout import apply_layout, layout_file
from memcore.models import Diagnostic, MemoryEntry, Query, Severity, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.storage import WriteSession, check_component, join, version_token
from memcore_basicmemory._parse import Note, generate_permalink, parse_note, title_stem
from memcore_basicmemory._render import render, render_new
from memcore_basicmemory.codec import entry_from_note, fields_for
from memcore_basicmemory.mapping import LAYOUT, NAMESPACE, RELATION_TYPES
from memcore_basicmemory.validate import note_diagnostics

__all__ = ["BasicMemoryProvider"]

#: Folder names basic-memory's indexer never enters (``ignore_utils.DEFAULT_IGNORE_PATTERNS``).
IGNORED_FOLDERS = frozenset(
    {"node_modules", "build", "dist", "__pycache__", "venv", "env", "site-packages", "target", "coverage"}
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class _Project:
    """Every note of the project as read once, with the lookups relations resolve through."""

    notes: dict[str, Note] = field(default_factory=dict)  # path -> note, path order
    ids: dict[str, str] = field(default_factory=dict)  # path -> id
    paths: dict[str, str] = field(default_factory=dict)  # id -> path
    duplicates: dict[str, str] = field(default_factory=dict)  # path -> path owning its permalink
    titles: dict[str, str] = field(default_factory=dict)  # title -> id (first in path order)
    folded: dict[str, str] = field(default_factory=dict)  # casefolded title -> id

    def claim(self, path: str, entry_id: str, title: str) -> None:
        self.ids[path] = entry_id
        self.paths[entry_id] = path
        self.titles.setdefault(title, entry_id)
        self.folded.setdefault(title.casefold(), entry_id)

    def resolve(self, target: str, folder: str) -> str | None:
        """Return the id a link target names: permalink, title, path, then the target's permalink form."""
        text = target.split("|", 1)[0].strip()
        if text.startswith(("./", "../", "/")):
            where = posixpath.normpath(text.lstrip("/") if text.startswith("/") else join(folder, text))
            return self.ids.get(where)
        if text in self.paths:
            return text
        found = self.titles.get(text) or self.folded.get(text.casefold())
        if found is not None:
            return found
        for candidate in (text, text + ".md"):
            if candidate in self.ids:
                return self.ids[candidate]
        slug = generate_permalink(text)
        return slug if slug in self.paths else None


class BasicMemoryProvider(BaseProvider):
    """A basic-memory project folder.

    Args:
        location: The project folder.
        **options: ``project``: the project name whose slug prefixes the permalinks of new notes
            (basic-memory's ``permalinks_include_project``); default none (plain
            ``notes/my-note`` permalinks, which basic-memory keeps as written, §4.3).
    """

    format_name: ClassVar[str] = "basicmemory"
    option_names: ClassVar[frozenset[str] | None] = frozenset({"project"})
    relation_types: ClassVar[dict[str, str]] = RELATION_TYPES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        map(Capability, ["add", "update", "delete", "archive", "supersede", "graph", "concurrent", "batch"])
    )

    def __init__(self, location: str | Path, **options: Any) -> None:
        super().__init__(location, **options)
        project = str(options.get("project") or "")
        self._prefix = generate_permalink(project) if project else ""
        self._cache: dict[str, tuple[tuple[int, int, int] | None, bytes, Note]] = {}
        self._live: _Project | None = None  # the write session's project, kept up to date by add()

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is a folder whose notes carry basic-memory ``permalink:`` keys."""
        root = Path(path)
        if not root.is_dir() or (root / "_box-memory.json").exists():
            return False
        for _, note in zip(range(50), root.rglob("*.md"), strict=False):
            with contextlib.suppress(OSError), note.open("rb") as handle:
                if re.match(rb"---[ \t]*\r?\n(?:.*\n)*?permalink:", handle.read(2000)):
                    return True
        return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create the project folder (an empty project is an empty folder); an existing one is kept."""
        Path(location).mkdir(parents=True, exist_ok=True)

    def open(self) -> BasicMemoryProvider:
        """Check that the project folder exists and return ``self``.

        Raises:
            ConfigError: ``location`` is not a folder.
        """
        if not Path(self.location).is_dir():
            raise ConfigError(
                f"basicmemory: {self.location} is not a folder; "
                f"`memcore init --store basicmemory:{self.location}` creates an empty project"
            )
        return super().open()

    # -- reading ----------------------------------------------------------------------
    def _walk(self, folder: str = "") -> Iterator[str]:
        try:
            items = self.storage.list(folder)
        except (FileNotFoundError, NotADirectoryError, UnsafePathError):
            return
        for item in items:
            if item.name.startswith("."):
                continue
            if item.is_folder:
                if item.name not in IGNORED_FOLDERS:
                    yield from self._walk(join(folder, item.name))
            elif item.name.lower().endswith(".md"):
                yield join(folder, item.name)

    def _listing(self) -> list[str]:
        paths = set(self._walk())
        session = self.active_session()
        if session is not None:
            for path, data in session.staged.items():
                if data is None:
                    paths.discard(path)
                elif path.lower().endswith(".md"):
                    paths.add(path)
        return sorted(paths)

    def _stamp(self, path: str) -> tuple[int, int, int] | None:
        """``(inode, size, mtime ns)`` of a local note: an atomic replace always changes it."""
        try:
            found = os.stat(os.path.join(self.location, path))
        except OSError:
            return None
        return (found.st_ino, found.st_size, found.st_mtime_ns)

    def _note(self, path: str) -> Note | None:
        """Return the note at ``path`` as this thread sees it; a file with its parsed inode, size, mtime is not read."""
        session = self.active_session()
        if session is not None and path in session.staged:
            data = session.staged[path]
            return None if data is None else self._parse(path, data)
        stamp = self._stamp(path)
        cached = self._cache.get(path)
        if stamp is not None and cached is not None and cached[0] == stamp:
            return cached[2]
        try:
            data = session.read(path) if session is not None else self.storage.read(path)[0]
        except (FileNotFoundError, IsADirectoryError, UnsafePathError):
            return None
        return None if data is None else self._parse(path, data, stamp)

    def _parse(self, path: str, data: bytes, stamp: tuple[int, int, int] | None = None) -> Note:
        cached = self._cache.get(path)
        if cached is not None and cached[1] == data:
            if stamp is not None:
                self._cache[path] = (stamp, data, cached[2])
            return cached[2]
        note = parse_note(path, data)
        self._cache[path] = (stamp, data, note)
        return note

    def _session_started(self, session: WriteSession) -> None:
        self._live = None

    def _session_ended(self, session: WriteSession, ok: bool) -> None:
        self._live = None

    def _project(self) -> _Project:
        """Read every note, ids by own permalinks then generated ones (§4.3); once per write session."""
        in_session = self.active_session() is not None
        if in_session and self._live is not None:
            return self._live
        project = _Project()
        for path in self._listing():
            note = self._note(path)
            if note is not None:
                project.notes[path] = note
        for path in sorted(set(self._cache) - set(project.notes)):
            del self._cache[path]
        owners: dict[str, str] = {}
        later: list[str] = []
        for path, note in project.notes.items():
            permalink = note.bm_metadata.get("permalink")
            if isinstance(permalink, str) and permalink.strip() and permalink not in owners:
                owners[permalink] = path
                project.claim(path, permalink, str(note.bm_metadata["title"]))
            else:
                if isinstance(permalink, str) and permalink in owners:
                    project.duplicates[path] = owners[permalink]
                later.append(path)
        for path in later:
            note = project.notes[path]
            base = (project.duplicates.get(path) and str(note.bm_metadata["permalink"])) or self._permalink_for(path)
            project.claim(path, self._free_id(project, base), str(note.bm_metadata["title"]))
        if in_session:
            self._live = project
        return project

    def _permalink_for(self, path: str) -> str:
        slug = generate_permalink(path) or "note"
        return f"{self._prefix}/{slug}" if self._prefix else slug

    @staticmethod
    def _free_id(project: _Project, base: str) -> str:
        candidate, n = base, 0
        while candidate in project.paths:
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    def _path_of(self, project: _Project, entry_id: str) -> str:
        path = project.paths.get(unicodedata.normalize("NFC", entry_id))
        if path is None:
            raise EntryNotFoundError(f"basicmemory: no note with permalink {entry_id!r} in {self.location}")
        return path

    def _entry(self, project: _Project, path: str) -> tuple[MemoryEntry, list[Diagnostic]]:
        note = project.notes[path]
        return entry_from_note(note, project.ids[path], project.resolve, version_token(note.raw))

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield every note's entry, by ``created`` then path (malformed notes too: read as their body)."""
        yield from (query or Query()).apply(self._snapshot(diagnose=False).entries)

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry whose permalink is ``entry_id``.

        Raises:
            EntryNotFoundError: No note has that id.
        """
        project = self._project()
        path = self._path_of(project, entry_id)
        return self._entry(project, path)[0]

    # memcore.provider.FileBackedProvider
    def source_files(self) -> list[str]:
        """Return every note file, project-relative."""
        return self._listing()

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the entry of one note file (nothing when it is not a note of the project)."""
        project = self._project()
        if path in project.notes:
            yield self._entry(project, path)[0]

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the project-relative file of ``entry`` (``""`` when unknown)."""
        return self._project().paths.get(entry.id or "", "")

    def validate(self) -> list[Diagnostic]:
        """Check every note: frontmatter that does not parse (errors), values, permalinks, relation lines."""
        return self.read_all().diagnostics

    def read_all(self) -> StoreSnapshot:
        """Return every entry and every diagnostic from one read of each note."""
        return self._snapshot(diagnose=True)

    def _snapshot(self, *, diagnose: bool) -> StoreSnapshot:
        project = self._project()
        entries: list[MemoryEntry] = []
        diagnostics: list[Diagnostic] = []
        for path, note in project.notes.items():
            entry, problems = self._entry(project, path)
            entries.append(entry)
            if not diagnose:
                continue
            unresolved = [(r.line, r.target) for r in note.relations if project.resolve(r.target, note.folder) is None]
            diagnostics += note_diagnostics(note, duplicate_of=project.duplicates.get(path), unresolved=unresolved)
            diagnostics += problems
        entries.sort(key=lambda entry: (entry.created_at or _EPOCH, project.paths[entry.id or ""]))
        return StoreSnapshot(entries, diagnostics)

    # -- writing ----------------------------------------------------------------------
    def _file_name(self, project: _Project, entry: MemoryEntry, folder: str) -> str:
        """A new note's file: ``layout.file`` if a safe, free ``.md`` name (no dotfile), else its title's (§4.1)."""
        _, held, files = next(os.walk(os.path.join(self.location, folder)), ("", [], []))  # no note's names are taken
        names = (*project.notes, *(join(folder, name) for name in held + files))
        taken = {unicodedata.normalize("NFC", p).casefold() for p in names}  # in any case or NFC/NFD spelling
        wanted = layout_file(entry.extra.get(NAMESPACE, {}).get(LAYOUT), ".md")
        if wanted is not None and unicodedata.normalize("NFC", join(folder, wanted)).casefold() not in taken:
            return join(folder, wanted)
        stem = title_stem(entry.title, entry.body)
        paths = (join(folder, f"{stem} {n}.md" if n else f"{stem}.md") for n in range(1 << 62))
        return next(p for p in paths if unicodedata.normalize("NFC", p).casefold() not in taken)

    @staticmethod
    def _folder_of(entry: MemoryEntry) -> str:
        folder = entry.extra.get(NAMESPACE, {}).get("folder")
        if not isinstance(folder, str) or not folder.strip("/"):
            return ""
        parts = [p for p in folder.strip("/").split("/") if p]
        for part in parts:
            check_component(part)
        return "/".join(parts)

    @contextlib.contextmanager
    def _forget_on_error(self) -> Iterator[None]:
        """Drop the session's project when a write fails half-way (it may hold a claim with no file)."""
        try:
            yield
        except BaseException:
            self._live = None
            raise

    def _refuse(self, note: Note, operation: str) -> None:
        if not note.writable:
            first = next((d for d in note.problems if d.severity == Severity.ERROR), None)
            why = first.message if first is not None else "its frontmatter does not parse"
            raise ParseError(
                f"basicmemory: {note.path} is left untouched by {operation}: {why}",
                path=note.path,
                line=first.line if first is not None else 1,
            )

    def _stored(self, project: _Project, path: str, data: bytes) -> MemoryEntry:
        note = self._parse(path, data)
        project.notes[path] = note
        return self._entry(project, path)[0]

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Write a new note: file name from its title (§4.1), permalink = the id, times stamped when unset.

        The layout the note was read in (``extra.basicmemory.layout``) is followed where it is safe.

        Raises:
            ConflictError: A note with that permalink exists.
            InvalidEntryError: The id cannot be a permalink.
            UnsafePathError: ``extra.basicmemory.folder`` would leave the project.
        """
        entry = entry.model_copy(deep=True)
        with self.session("add") as session, self._forget_on_error():
            project = self._project()
            folder = self._folder_of(entry)
            path = self._file_name(project, entry, folder)
            if entry.id is None:
                entry.id = self._free_id(project, self._permalink_for(path))
            elif not entry.id.strip() or entry.id != entry.id.strip() or "\n" in entry.id:
                raise InvalidEntryError(f"basicmemory: id {entry.id!r} cannot be a permalink (blank or multi-line)")
            if entry.id in project.paths:
                raise ConflictError(
                    f"basicmemory: a note with permalink {entry.id!r} exists ({project.paths[entry.id]})"
                )
            given = entry.model_fields_set  # a time given as None stays absent, as bm write-note leaves it
            entry.created_at = entry.created_at or (None if "created_at" in given else utc_now())
            entry.updated_at = entry.updated_at or (None if "updated_at" in given else entry.created_at)
            stem = posixpath.basename(path)[:-3]
            project.claim(path, entry.id, entry.title or stem)
            meta, body = fields_for(entry, title_fallback=stem, folder=folder, resolve=project.resolve)
            own = entry.extra.get(NAMESPACE, {})  # keys the note had not: left out where basic-memory reads the same
            absent, same = own.get("frontmatter") == "absent", entry.id == self._permalink_for(path)
            drop = {"title": meta["title"] == stem, "type": meta["type"] == "note", "permalink": same}
            meta = apply_layout(meta, {"keys": []} if absent else own.get(LAYOUT), drop)
            data = body.encode() if absent and not meta else render_new(meta, body)
            session.write(path, data)
            session.count()
            return self._stored(project, path, data)

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the note of ``entry.id`` in place, changing only what changed (no change: no write).

        Raises:
            InvalidEntryError: ``entry`` has no id.
            EntryNotFoundError: No note has that id.
            ConflictError: ``expected_version`` is not the note's version.
            ParseError: The note's frontmatter does not parse (nothing is written).
        """
        if entry.id is None:
            raise InvalidEntryError("basicmemory: update() needs an entry with an id; use add() for new notes")
        entry_id, entry = entry.id, entry.model_copy(deep=True)
        with self.session("update") as session:
            project = self._project()
            path = self._path_of(project, entry_id)
            note = project.notes[path]
            current = version_token(note.raw)
            if expected_version is not None and expected_version != current:
                raise ConflictError(
                    f"basicmemory: {path} changed since version {expected_version} was read; get() it again"
                )
            self._refuse(note, "update")
            meta, body = fields_for(entry, title_fallback=note.stem, folder=note.folder, resolve=project.resolve)
            defaults = {"title": note.bm_metadata["title"], "type": "note", "permalink": project.ids[path]}
            for key, value in defaults.items():
                if key not in note.plain and meta.get(key) == value:
                    del meta[key]  # basic-memory reads it so without the key: leave the file as it is
            old_body = note.body[1:] if note.state == "present" and note.body.startswith("\n") else note.body
            data = render(note, meta, body, old_body)
            if data != note.raw:
                session.write(path, data)
                session.count()
            self._live = None
            return self._stored(project, path, data)

    def delete(self, entry_id: str) -> None:
        """Delete the note of ``entry_id``.

        Raises:
            EntryNotFoundError: No note has that id.
            ParseError: The note's frontmatter does not parse (it is kept).
        """
        with self.session("delete") as session:
            project = self._project()
            path = self._path_of(project, entry_id)
            self._refuse(project.notes[path], "delete")
            session.delete(path)
            session.count()
            self._live = None
