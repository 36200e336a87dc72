"""The Maka provider: one MEMORY.md (plus PENDING.md), fail-open on read, safe on write.

Store URL: ``maka:./memory/MEMORY.md`` (the location is the MEMORY.md file; a folder means
``<folder>/MEMORY.md``). Contract: ``../shared/specs/maka-memory-contract.md``; rules as Maka's
own code applies them: docs/formats/maka.md.

Reading never raises for a bad file: over 128 KiB the store is in safe mode (no entries, a
``maka.oversize`` diagnostic); a file that is not UTF-8 is read with replacement characters
and put in the ``error`` state. Writing fails closed: a store that could not be parsed fully
(safe mode, not UTF-8) raises :class:`~memcore.errors.ReadOnlyStoreError`, a write that would
take the file over 128 KiB raises :class:`~memcore.errors.StoreLimitError` and changes nothing.

Every write runs in memcore's write session (lock, each file read once, conflict check, atomic
0600 writes through ``self.storage``). In a session MEMORY.md is parsed once and each write edits
the parse in place, so a write costs what it changes; the file is staged once, at the end, after
a copy of its old bytes (``MEMORY.md.bak``). The last bytes read or written keep their parse.
"""

from __future__ import annotations

import contextlib
import os
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from memcore.errors import (
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    ReadOnlyStoreError,
    StoreLimitError,
    UnsafePathError,
)
from memcore.models import Diagnostic, MemoryEntry, Query, Status, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot, option_flag
from memcore.storage import CREATE, Storage, WriteSession, safe_join
from memcore_maka import _render, codec, validate
from memcore_maka import pending as _pending
from memcore_maka._bulk import BulkAdd
from memcore_maka._parse import MAX_BYTES, Document, looks_like_maka, parse_document, parse_finite_number
from memcore_maka._render import Edit
from memcore_maka._state import IncognitoBlockedError, Loaded, MakaState, parse_bytes, switch
from memcore_maka._storage import MakaStorage, refuse_foreign_folder, refuse_symlinks
from memcore_maka.codec import EntryView, from_ms, render_section, to_ms, view
from memcore_maka.mapping import FORMAT, MEMORY_HEADER, PENDING_HEADER
from memcore_maka.prompt import PROMPT_MAX_CHARS, TRUNCATION_MARKER, prompt_text
from memcore_maka.reference import MakaReference

__all__ = [
    "MEMORY_HEADER",
    "PENDING_HEADER",
    "PROMPT_MAX_CHARS",
    "TRUNCATION_MARKER",
    "IncognitoBlockedError",
    "MakaProvider",
    "MakaState",
]

FILE_MODE = 0o600
DIR_MODE = 0o700


@dataclass
class _Work:
    """What the provider keeps beside its open write session.

    Attributes:
        old: Each file's bytes as the session first read them (what its ``.bak`` gets).
        doc: MEMORY.md parsed, edited in place by each write; ``None`` until read and after a
            write that replaced the whole text (then the session's staged bytes are the file).
        stale: Whether ``doc`` has edits not staged in the session yet.
        saved: MEMORY.md's bytes as the session will save them (set when it ends).
        checked: The files a write checked are not symlinks (nor their backups).
    """

    old: dict[str, bytes | None] = field(default_factory=dict)
    doc: Document | None = None
    stale: bool = False
    saved: bytes | None = None
    checked: set[str] = field(default_factory=set)


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


class MakaProvider(BulkAdd, MakaReference, BaseProvider):
    """Maka's MEMORY.md as a memcore store.

    Args:
        location: Path of MEMORY.md (or of its folder).
        **options: Maka's settings, and memcore's own (kept in ``self.options``):

            - ``enabled``: Maka's ``enabled`` setting (default on). Off: reads yield nothing,
              writes raise :class:`ReadOnlyStoreError`, the file is not touched.
            - ``agent_read_enabled``: Maka's ``agentReadEnabled`` (default off; only a true value
              turns it on; on/off read as :func:`memcore_maka._state.switch`). Gates
              :meth:`render_prompt`.
            - ``incognito``: workspace privacy context (:func:`~memcore.provider.option_flag`: any
              value but a false one turns it on). On: every read and write raises
              :class:`IncognitoBlockedError` before touching the disk.
            - ``read_only``: refuse every write (and the decay rewrite): memcore's own option.
            - ``apply_decay``: archive expired entries (``createdAt + decayTtlMs`` passed) on
              load, as a visible rewrite of their comment (default on).
    """

    format_name: ClassVar[str] = FORMAT
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.DELETE,
            Capability.ARCHIVE,
            Capability.SUPERSEDE,
            Capability.CONCURRENT,
            Capability.BATCH,
        }
    )
    write_operations: ClassVar[frozenset[str]] = BaseProvider.write_operations | {"propose", "approve", "reject"}

    #: what ``-o name=value`` may set (``read_only`` too); anything else is a ConfigError
    option_names = frozenset({"agent_read_enabled", "apply_decay", "enabled", "incognito"})

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        super().__init__(location, **options)
        path = Path(self.location)
        if path.is_dir() or (not path.exists() and path.suffix.lower() != ".md"):
            path = safe_join(path, "MEMORY.md") if path.exists() else path / "MEMORY.md"
        self.path = path
        self.folder = path.parent
        # A fixed name (nothing to escape with); not resolved here, so a symlinked PENDING.md
        # is reported by reads (maka.symlink) and refused by writes instead of breaking the store.
        self.pending_path = self.folder / "PENDING.md"
        # enabled: on unless a recognised false value; agent_read_enabled: off unless a true one
        # (the CLI passes -o enabled=0 as 0); incognito fails closed, as read_only does.
        self.enabled = switch(options.get("enabled")) is not False
        self.agent_read_enabled = switch(options.get("agent_read_enabled")) is True
        self.incognito = option_flag(options.get("incognito"))
        self.apply_decay = switch(options.get("apply_decay")) is not False
        self._now: Callable[[], int] = lambda: to_ms(utc_now())
        self._work: _Work | None = None
        # MEMORY.md's bytes as this provider last read or wrote them, and their parse (never
        # edited: a session edits a clone). A read of the same bytes reuses it and the entries
        # already built on its sections, so reading back what was just written costs a copy.
        self._parsed: tuple[bytes, Document] | None = None

    def make_storage(self) -> Storage:
        """The store's folder; the lock is taken on MEMORY.md, every file written 0600."""
        return MakaStorage(self.folder, label=FORMAT, lock_target=self.path, file_mode=FILE_MODE)

    @property
    def backup_path(self) -> Path:
        """``MEMORY.md.bak`` beside the store file (UnsafePathError for a name memcore refuses)."""
        return safe_join(self.folder, self.path.name + ".bak")

    # -- life cycle -----------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` is a Maka memory file.

        True for a ``.md`` file holding a ``<!-- maka-memory:`` comment or starting with the
        ``# Maka Memory`` / ``# Maka Pending Memory`` header Maka's template writes. Never raises.
        """
        try:
            p = Path(path)
            if p.suffix.lower() != ".md" or not p.is_file():
                return False
            with open(p, "rb") as fh:  # a probe of any path, before there is a store
                head = fh.read(MAX_BYTES + 1).decode("utf-8", "replace")
        except OSError:
            return False
        return looks_like_maka(head)

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create ``location`` (MEMORY.md, 0600, folder 0700) holding only ``# Maka Memory``.

        An existing file is left untouched.
        """
        provider = cls(location, **options)
        refuse_foreign_folder(Path(provider.location), provider.path, provider.pending_path, cls.sniff)
        if os.path.lexists(provider.path):
            return
        provider._ensure_folder()
        provider.storage.write(provider.path.name, (MEMORY_HEADER + "\n").encode("utf-8"), expected_version=CREATE)
        provider._fix_folder_mode()

    def open(self) -> Self:
        """Check the memory file is there and is not a symlink; return ``self``.

        A folder location without MEMORY.md opens as an empty store (the first write creates
        the file, as Maka does).

        Raises:
            UnsafePathError: MEMORY.md is a symlink (memcore never reads or writes through one).
            ConfigError: No such file (and the location is not an existing folder); the message
                says how to create one.
        """
        if self.path.is_symlink():
            raise UnsafePathError(
                f"maka: {self.path} is a symlink; memcore neither reads nor writes through symlinks "
                "(replace it with the file itself)"
            )
        if not self.path.exists() and not Path(self.location).is_dir():
            raise ConfigError(
                f"maka: {self.path} does not exist; create it with `memcore init --store maka:{self.location}`"
            )
        refuse_foreign_folder(Path(self.location), self.path, self.pending_path, self.sniff)
        return super().open()

    # -- settings and state ---------------------------------------------------------------
    @property
    def state(self) -> MakaState:
        """Maka's state object: ``ok`` / ``disabled`` / ``safe_mode`` / ``incognito_blocked`` / ``error``.

        ``disabled`` and ``incognito_blocked`` are decided before the disk is touched.
        """
        path, enabled, agent, incognito = str(self.path), self.enabled, self.agent_read_enabled, self.incognito
        if not self.enabled:
            return MakaState(path, enabled, agent, incognito, status="disabled", reason="disabled")
        if self.incognito:
            return MakaState(path, enabled, agent, incognito, status="incognito_blocked", reason="incognito")
        return self._load(self.path).state(enabled, agent, incognito)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What reading MEMORY.md found (safe mode, dropped tokens, duplicate ids…)."""
        return self.validate()

    def _gate_read(self) -> bool:
        """Raise when incognito; return False when disabled (reads then see nothing)."""
        if self.incognito:
            raise IncognitoBlockedError(
                f"maka: incognito is on; {self.path} is neither read nor written (turn incognito off)"
            )
        return self.enabled

    def _gate_write(self, operation: str) -> None:
        if self.incognito:
            raise IncognitoBlockedError(f"maka: incognito is on; `{operation}` refused before touching {self.path}")
        if not self.enabled:
            raise ReadOnlyStoreError(
                f"maka: memory is disabled (enabled=false); `{operation}` refused, {self.path} untouched"
            )

    # -- reading --------------------------------------------------------------------------
    def _working(self) -> _Work | None:
        """Return what this thread's open write session holds, or ``None`` outside one."""
        return self._work if self.active_session() is not None else None

    def _read_bytes(self, name: str) -> bytes:
        """Return the bytes of ``name``; in a write session as the session has them (read once).

        Raises:
            FileNotFoundError: No such file (nor one staged by the session).
            OSError: The file cannot be read.
        """
        session = self.active_session()
        if session is None:
            storage = self.storage
            return storage.read_bytes(name) if isinstance(storage, MakaStorage) else storage.read(name)[0]
        staged = name in session.staged
        data = session.read(name)
        if self._work is not None and not staged:
            self._work.old.setdefault(name, data)
        if data is None:
            raise FileNotFoundError(2, "No such file or directory", name)
        return data

    def _load(self, path: Path, *, pending: bool = False, full: bool = True) -> Loaded:
        """Read and parse ``path``; with ``full``, also build every entry and the diagnostics."""
        loaded = Loaded(path=path, pending=pending)
        shown = str(path)
        work = self._working() if path == self.path else None
        if work is not None and work.doc is not None:
            # MEMORY.md as the session holds it: parsed once, kept up to date by each write.
            loaded.size = work.doc.size
            loaded.fill(work.doc, full=full)
            return loaded
        if path.is_symlink():
            loaded.status, loaded.reason = "error", "symlink"
            loaded.diagnostics.append(validate.symlink_diagnostic(shown))
            return loaded
        try:
            data = self._read_bytes(path.name)
        except FileNotFoundError:
            loaded.reason = "missing"
            return loaded
        except OSError as exc:
            loaded.status, loaded.reason = "error", f"cannot read the file ({exc.strerror or exc})"
            loaded.diagnostics.append(validate.io_error_diagnostic(shown, exc))
            return loaded
        doc = parse_bytes(loaded, data, self._parsed if path == self.path else None)
        if doc is None:
            return loaded
        if path == self.path and loaded.writable:
            self._parsed = (data, doc)
            if work is not None:
                doc = doc.clone()  # the session edits its copy in place; ``_parsed`` keeps the file's
                work.doc, work.stale = doc, False
        loaded.fill(doc, full=full)
        return loaded

    def _expired(self, read: EntryView, now_ms: int) -> bool:
        if read.entry.status is not Status.ACTIVE:
            return False
        created = parse_finite_number(read.meta.get("createdAt"))
        ttl = parse_finite_number(read.meta.get("decayTtlMs"))
        return created is not None and ttl is not None and now_ms > created + ttl

    def _load_entries(self, *, full: bool = True) -> Loaded:
        """Load MEMORY.md, archiving expired entries first (then it is read again).

        With ``full``, each entry this load archived adds a ``maka.decayed`` warning to the
        diagnostics (what :meth:`read_all` returns), naming the entry and why its status changed.
        The rewrite is a write (a session of its own, or the open one); never on a read-only store.
        """
        loaded = self._load(self.path, full=full)
        if self.apply_decay and not self.read_only and loaded.writable:
            now = self._now()
            expiring = (s for s in loaded.doc.sections if s.is_entry and "decayTtlMs" in (s.meta or {}))
            if any(self._expired(view(loaded.doc, s, False), now) for s in expiring):
                archived = self._decay()
                loaded = self._load(self.path, full=full)
                if full:
                    loaded.diagnostics.extend(validate.decay_notes(str(self.path), archived))
        return loaded

    def _decay(self) -> list[validate.Decayed]:
        """Archive every expired active entry by rewriting its comment; return those archived.

        None when the store cannot be written (read-only, over the limit): they stay active.
        """
        archived: list[validate.Decayed] = []

        def change(loaded: Loaded) -> str | None:
            now = self._now()
            text, found = _render.decay(loaded.doc, now, lambda read: self._expired(read, now))
            archived[:] = found
            return text

        try:
            self._mutate(self.path, change, "decay")
        except (ReadOnlyStoreError, StoreLimitError):
            return []
        return archived

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield MEMORY.md's entries in file order, filtered by ``query`` (disabled, safe mode: none).

        Raises:
            IncognitoBlockedError: Incognito is on (nothing was read).
        """
        if not self._gate_read():
            return
        entries = [v.entry for v in self._load_entries().views]
        yield from (query or Query()).apply(entries)

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry whose id is ``entry_id`` (NFC); only that entry is built.

        Raises:
            EntryNotFoundError: No such entry (also when disabled).
            AmbiguousIdError: Two or more sections read under this id (each line named).
            IncognitoBlockedError: Incognito is on (nothing was read).
        """
        if self._gate_read():
            loaded = self._load_entries(full=False)
            wanted = _nfc(entry_id)
            found = sorted(loaded.doc.index().entries.get(wanted, []), key=lambda s: s.start)
            if len(found) > 1:
                raise codec.ambiguous_error(loaded.path, entry_id, found)
            for section in found:
                entry = view(loaded.doc, section, False).entry
                if entry.id == wanted:
                    return entry
        raise EntryNotFoundError(f"{self.format_name}: no entry {entry_id!r} in {self.location}")

    # memcore.provider.FileBackedProvider: lets memcore.index refresh without a directory walk.
    def source_files(self) -> list[str]:
        """Return the one memory file, relative to its folder (also when opened by the folder)."""
        return [self.path.name] if self.path.is_file() else []

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the file's entries (there is only one file)."""
        return self.iter_entries()

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the memory file's name."""
        return self.path.name

    def validate(self) -> list[Diagnostic]:
        """Return what Maka's rules find in MEMORY.md and PENDING.md (IncognitoBlockedError: incognito)."""
        if not self._gate_read():
            return []
        return self._load(self.path).diagnostics + self._other_diagnostics()

    def _other_diagnostics(self) -> list[Diagnostic]:
        """PENDING.md's findings, then symlinked backups (core's validate reports leftover temp files)."""
        out: list[Diagnostic] = []
        if os.path.lexists(self.pending_path):
            out.extend(self._load(self.pending_path, pending=True).diagnostics)
        for path in (self.path, self.pending_path):
            try:
                backup = safe_join(self.folder, path.name + ".bak")
            except UnsafePathError:
                continue
            if backup.is_symlink():
                out.append(validate.symlinked_backup_diagnostic(backup.name, path.name))
        return out

    def read_all(self) -> StoreSnapshot:
        """Return every entry and every diagnostic from one read of MEMORY.md (and PENDING.md).

        Equal to ``StoreSnapshot(list(self.iter_entries()), self.validate())``: expired entries
        are archived first, as :meth:`iter_entries` does (then the file is read again), and the
        diagnostics are those of the same parse the entries come from, plus one ``maka.decayed``
        warning per entry this read archived. Disabled: nothing.

        Raises:
            IncognitoBlockedError: Incognito is on (nothing was read).
        """
        if not self._gate_read():
            return StoreSnapshot([], [])
        loaded = self._load_entries()
        return StoreSnapshot([v.entry for v in loaded.views], loaded.diagnostics + self._other_diagnostics())

    # -- writing --------------------------------------------------------------------------
    def _ensure_folder(self) -> None:
        if not self.folder.exists():
            self.storage.make_folder("")
            self._fix_folder_mode()

    def _fix_folder_mode(self) -> None:
        with contextlib.suppress(OSError):
            os.chmod(self.folder, DIR_MODE)

    def _mutate(
        self,
        path: Path,
        change: Callable[[Loaded], str | Edit | None],
        operation: str,
        *,
        pending: bool = False,
        reread: bool = False,
    ) -> Document | None:
        """Run one read-modify-write of ``path`` in the write session.

        ``change`` returns the new text, an :class:`~memcore_maka._render.Edit` of the lines,
        or ``None`` (nothing to write). An edit of MEMORY.md is applied to the session's parsed
        document in place (cost: the lines it changes); a new text is staged in the session.

        Returns:
            With ``reread``: the file as it now reads (the session's document, or a parse of
            the new text); ``None`` when nothing changed or without ``reread``.
        """
        self._gate_write(operation)
        with self.session(operation) as session:
            work = self._work
            assert work is not None
            if path.name not in work.checked:  # checked again when the session ends
                refuse_symlinks((path, safe_join(self.folder, path.name + ".bak")), operation)
                work.checked.add(path.name)
            if path != self.path:
                self._stage_memory(session)  # MEMORY.md first, so approve keeps its order
            loaded = self._load(path, pending=pending, full=False)
            if not loaded.writable:
                raise ReadOnlyStoreError(
                    f"maka: {path} is in the {loaded.status!r} state ({loaded.reason}); memcore will not "
                    f"rewrite a file it could not parse fully, `{operation}` refused"
                )
            result = change(loaded)
            if result is None:
                return None
            if path == self.path and isinstance(result, Edit) and work.doc is loaded.doc:
                if self._splice(work, result):
                    session.count()
                    return work.doc if reread else None
            text = result if isinstance(result, str) else result.apply(loaded.doc)
            data = _render.encoded(path, text)
            self._stage(session, path.name, data)
            if path == self.path:
                work.doc, work.stale = None, False
            session.count()
            if path != self.path:
                self._flush(session)  # PENDING.md is written at once (MEMORY.md's changes first)
            return parse_document(text, size=len(data)) if reread else None

    def _splice(self, work: _Work, edit: Edit) -> bool:
        """Apply ``edit`` to the session's document in place; False when it must go as text.

        Raises:
            StoreLimitError: The file would go over 128 KiB (nothing changed).
        """
        doc = work.doc
        assert doc is not None
        try:
            "".join(edit.new).encode("utf-8")
        except UnicodeEncodeError:
            return False  # lone surrogates: written as text, so the file reads as not UTF-8 again
        size = doc.spliced_size(edit.start, edit.end, edit.new, edit.seps)
        if size > MAX_BYTES:
            raise _render.over_limit(self.path, size)
        doc.splice(edit.start, edit.end, edit.new, edit.seps)
        work.stale = True
        return True

    def _stage(self, session: WriteSession, name: str, data: bytes) -> None:
        """Stage ``data`` as ``name``, after a copy of what it held before as ``<name>.bak``."""
        work = self._work
        assert work is not None
        if name not in session.staged:
            old = work.old.get(name)
            if old is not None:
                session.write(name + ".bak", old)
        session.write(name, data)

    def _stage_memory(self, session: WriteSession) -> None:
        """Stage the session's edited MEMORY.md (encoded once, however many writes it holds)."""
        work = self._work
        if work is not None and work.stale and work.doc is not None:
            self._stage(session, self.path.name, work.doc.text().encode("utf-8", "surrogatepass"))
            work.stale = False

    def _session_started(self, session: WriteSession) -> None:
        self._work = _Work()

    def _session_ending(self, session: WriteSession) -> None:
        """Stage MEMORY.md; refuse to save over a file changed on disk or replaced by a link."""
        work = self._work
        assert work is not None
        self._stage_memory(session)
        for name, data in list(session.staged.items()):
            if not name.endswith(".bak") and name in work.old and data == work.old[name]:
                session.discard(name)  # back to what it was: neither it nor its backup is written
                session.discard(name + ".bak")
        names = [name for name in session.staged if not name.endswith(".bak")]
        if not names:
            return
        if self.path.name in names:
            work.saved = session.staged[self.path.name]
        refuse_symlinks(tuple(self.folder / name for name in session.staged), "batch")
        self._ensure_folder()

    def _flush(self, session: WriteSession) -> None:
        """Save what the session staged now; the saved bytes are what later backups keep."""
        work = self._work
        assert work is not None
        self._session_ending(session)
        saved = {name: data for name, data in session.staged.items() if not name.endswith(".bak")}
        session.flush()
        work.old.update(saved)

    def _session_ended(self, session: WriteSession, ok: bool) -> None:
        work, self._work = self._work, None
        if ok and work is not None and work.saved is not None:
            self._fix_folder_mode()
            if work.doc is not None:
                self._parsed = (work.saved, work.doc)  # the session is over: no more edits

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes in one write session: MEMORY.md is read once and saved once, at the end.

        Each write is checked as it would be alone (a write over 128 KiB raises
        :class:`StoreLimitError` and leaves the block's earlier ones) and applied in memory;
        reads in the block see it. PENDING.md writes save MEMORY.md's changes, then PENDING.md,
        at once. Incognito, disabled or read-only: a plain block (writes raise as usual).

        Raises:
            ConflictError: MEMORY.md changed on disk during the block: nothing of it is saved.
            UnsafePathError: MEMORY.md or its backup became a symlink: nothing saved.
        """
        if self.incognito or not self.enabled:
            yield
            return
        with super().batch():
            yield

    @staticmethod
    def _find(loaded: Loaded, entry_id: str, *, by_proposal: bool = False) -> EntryView:
        return codec.find(loaded.doc, loaded.path, entry_id, pending=loaded.pending, by_proposal=by_proposal)

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Append ``entry`` to MEMORY.md and return it as stored.

        New ids are Maka's ``mem-`` + 16 hex of sha256(trimmed content + "\\n" + createdAt ms);
        ``created_at`` defaults to now (ms). Secrets in title, body and ``extra`` strings are
        redacted first.

        Raises:
            InvalidEntryError: An id that cannot be written in a comment.
            ConflictError: The id exists.
            StoreLimitError: The file would go over 128 KiB (nothing written).
            ReadOnlyStoreError: Incognito, disabled, read-only, or a file in safe mode / not UTF-8.
        """
        self.require(Capability.ADD, "add")
        ids: list[str] = []

        def change(loaded: Loaded) -> Edit | str:
            new = codec.new_entry(entry, loaded.doc, loaded.path, self._now())
            ids.append(new.id or "")
            return _render.append(loaded.doc, MEMORY_HEADER, render_section(new))

        doc = self._mutate(self.path, change, "add", reread=True)
        assert doc is not None
        return self._stored(ids[0], doc)

    def _stored(self, entry_id: str, doc: Document) -> MemoryEntry:
        """Return MEMORY.md's entry ``entry_id`` as read back from ``doc`` (what was just written)."""
        return self._find(Loaded(path=self.path, pending=False, doc=doc), entry_id).entry

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the section of ``entry.id``: only the heading, comment or content that changed.

        Values that did not change keep their raw text. ``updated_at`` is set to now when
        something changed and the caller did not change it.

        Raises:
            EntryNotFoundError, AmbiguousIdError: No such id; an id of two or more sections.
            ConflictError: ``expected_version`` is stale.
            InvalidEntryError, StoreLimitError, ReadOnlyStoreError: As :meth:`add`.
        """
        self.require(Capability.UPDATE, "update")
        if entry.id is None:
            raise EntryNotFoundError("maka: update needs an entry with an id")

        def change(loaded: Loaded) -> Edit | None:
            assert entry.id is not None
            old = self._find(loaded, entry.id)
            if expected_version is not None and old.entry.version != expected_version:
                raise ConflictError(
                    f"maka: entry {entry.id!r} changed since it was read (version {expected_version!r}, "
                    f"now {old.entry.version!r}); read it again and retry"
                )
            new = codec.prepare(entry)
            new.version = old.entry.version
            if new.content_dict() == old.entry.content_dict():
                return None
            if new.updated_at == old.entry.updated_at:
                new.updated_at = from_ms(self._now())
            return _render.rewrite(loaded.doc, old, new)

        doc = self._mutate(self.path, change, "update", reread=True)
        return self._stored(entry.id, doc) if doc is not None else self.get(entry.id)

    def delete(self, entry_id: str) -> None:
        """Remove the entry's whole section (heading to the next heading).

        Raises:
            EntryNotFoundError, AmbiguousIdError, ReadOnlyStoreError: As :meth:`update`.
        """
        self.require(Capability.DELETE, "delete")

        def change(loaded: Loaded) -> str:
            return _render.remove_section(loaded.doc, self._find(loaded, entry_id).section)

        self._mutate(self.path, change, "delete")

    # -- prompt -----------------------------------------------------------------------------
    def render_prompt(self, session_id: str | None = None, budget: int = PROMPT_MAX_CHARS) -> str:
        """Return the memory section for a model's system prompt, as Maka builds it.

        ``""`` unless ``enabled`` and ``agent_read_enabled`` are on and incognito is off
        (checked before the disk is touched), and in safe mode; otherwise
        :func:`memcore_maka.prompt.prompt_text` of the entries (``budget``: UTF-16 code units).
        """
        if not (self.enabled and self.agent_read_enabled) or self.incognito:
            return ""
        loaded = self._load_entries()
        if loaded.status != "ok":
            return ""
        now = self._now()
        return prompt_text(loaded.views, session_id, lambda item: self._expired(item, now), budget)

    # -- pending proposals (PENDING.md: memcore_maka.pending) -------------------------------
    def pending(self) -> list[MemoryEntry]:
        """Return PENDING.md's proposals still waiting for review (:func:`memcore_maka.pending.waiting`)."""
        return _pending.waiting(self)

    def proposals(self) -> list[MemoryEntry]:
        """Return every section of PENDING.md as an entry (rejected ones too)."""
        return [v.entry for v in _pending.loaded(self).views]

    def propose(self, entry: MemoryEntry) -> MemoryEntry:
        """Add ``entry`` to PENDING.md as a proposal waiting for review (:func:`memcore_maka.pending.propose`)."""
        return _pending.propose(self, entry)

    def approve(self, proposal_id: str, *, entry_id: str | None = None) -> MemoryEntry:
        """Move a proposal into MEMORY.md, then out of PENDING.md (:func:`memcore_maka.pending.approve`)."""
        return _pending.approve(self, proposal_id, entry_id=entry_id)

    def reject(self, proposal_id: str) -> MemoryEntry:
        """Mark a pending proposal rejected (:func:`memcore_maka.pending.reject`)."""
        return _pending.reject(self, proposal_id)
