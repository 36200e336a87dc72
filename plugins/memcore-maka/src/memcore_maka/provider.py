"""The Maka provider: one MEMORY.md (plus PENDING.md), fail-open on read, safe on write.

Store URL: ``maka:./memory/MEMORY.md`` (the location is the MEMORY.md file; a folder means
``<folder>/MEMORY.md``). Contract: ``../shared/specs/maka-memory-contract.md``; rules as Maka's
own code applies them: docs/formats/maka.md.

Reading never raises for a bad file: over 128 KiB the store is in safe mode (no entries, a
``maka.oversize`` diagnostic); a file that is not UTF-8 is read with replacement characters
and put in the ``error`` state. Writing fails closed: a store that could not be parsed fully
(safe mode, not UTF-8) raises :class:`~memcore.errors.ReadOnlyStoreError`, a write that would
take the file over 128 KiB raises :class:`~memcore.errors.StoreLimitError` and changes nothing.

Every write runs in memcore's write session (:meth:`~memcore.provider.BaseProvider.session`:
the store lock, each file read once, a conflict check, atomic writes through
:attr:`~memcore.provider.BaseProvider.storage`, 0600 files). In a session MEMORY.md is parsed
once and each add / update edits the parse in place (only the sections it touches are parsed
again), so a write costs what it changes, not the file size; the file is staged once, at the
end, after a copy of what it held before (``MEMORY.md.bak``). The provider keeps the last bytes
it read or wrote with their parse: reading back what was just written costs a comparison of the
bytes and a copy of each entry, not a parse.
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    ReadOnlyStoreError,
    StoreLimitError,
    UnsafePathError,
)
from memcore.models import Diagnostic, MemoryEntry, Query, Status, require_unicode, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot, option_flag
from memcore.redact import holds_secret, redact_entry, redact_secrets
from memcore.storage import CREATE, LocalStorage, Storage, TempSweeper, WriteSession, safe_join, temp_file_diagnostics
from memcore_maka import _render, validate
from memcore_maka._parse import (
    MAX_BYTES,
    Document,
    Section,
    js_trim,
    js_trim_end,
    parse_document,
    parse_finite_number,
    parse_tags,
)
from memcore_maka._render import Edit
from memcore_maka._storage import MakaStorage
from memcore_maka.codec import (
    EntryView,
    from_ms,
    is_safe_value,
    normalize_meta_value,
    render_section,
    stable_entry_id,
    stable_proposal_id,
    to_ms,
    view,
)
from memcore_maka.mapping import FORMAT, MEMORY_HEADER, PENDING_HEADER

__all__ = [
    "MEMORY_HEADER",
    "PENDING_HEADER",
    "PROMPT_MAX_CHARS",
    "TRUNCATION_MARKER",
    "IncognitoBlockedError",
    "MakaProvider",
    "MakaState",
]

#: Maka's ``LOCAL_MEMORY_PROMPT_MAX_CHARS`` (UTF-16 code units, as JavaScript counts).
PROMPT_MAX_CHARS = 12_000
#: Maka's ``LOCAL_MEMORY_PROMPT_TRUNCATION_MARKER``.
TRUNCATION_MARKER = "[本地记忆已按长度截断]"
FILE_MODE = 0o600
DIR_MODE = 0o700

StateStatus = Literal["ok", "disabled", "safe_mode", "incognito_blocked", "error"]
_SNIFF_COMMENT = re.compile(r"<!--\s*maka-memory:")


class IncognitoBlockedError(ReadOnlyStoreError):
    """Incognito is on: Maka memory is neither read nor written (nothing on disk was touched).

    Raised by every read and write of a :class:`MakaProvider` opened with ``incognito=True``
    (``render_prompt`` returns ``""`` instead). A :class:`~memcore.errors.ReadOnlyStoreError`.
    """


@dataclass(frozen=True)
class MakaState:
    """Maka's ``LocalMemoryState``: what a host shows about the memory file.

    Attributes:
        path: The MEMORY.md path.
        enabled: The ``enabled`` setting.
        agent_read_enabled: The ``agentReadEnabled`` setting.
        incognito: Whether incognito is on.
        status: ``ok``, ``disabled``, ``safe_mode``, ``incognito_blocked`` or ``error``.
        entry_count: Entries Maka shows (0 unless ``ok``).
        active_count: Entries with status active.
        archived_count: Entries with status archived.
        size: File size in bytes, when read.
        reason: Why the status is not ``ok`` (``oversize``, ``not-utf8``, an I/O error), or
            ``empty`` / ``missing`` for an empty or absent file.
    """

    path: str
    enabled: bool
    agent_read_enabled: bool
    incognito: bool
    status: StateStatus
    entry_count: int = 0
    active_count: int = 0
    archived_count: int = 0
    size: int | None = None
    reason: str | None = None


@dataclass
class _Loaded:
    path: Path
    pending: bool
    data: bytes | None = None
    size: int | None = None
    doc: Document = field(default_factory=lambda: Document(size=0))
    views: list[EntryView] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    status: StateStatus = "ok"
    reason: str | None = None

    @property
    def writable(self) -> bool:
        return self.status == "ok"


@dataclass
class _Work:
    """What the provider keeps beside its open write session.

    Attributes:
        old: Each file's bytes as the session first read them (what its ``.bak`` gets).
        doc: MEMORY.md parsed, edited in place by each write; ``None`` until read and after a
            write that replaced the whole text (then the session's staged bytes are the file).
        stale: Whether ``doc`` has edits not staged in the session yet.
        saved: MEMORY.md's bytes as the session will save them (set when it ends).
    """

    old: dict[str, bytes | None] = field(default_factory=dict)
    doc: Document | None = None
    stale: bool = False
    saved: bytes | None = None


_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def _switch(value: Any) -> bool | None:
    """Return an on/off option as a bool, ``None`` when missing or unknown.

    Reads ``True``/``False``, ``1``/``0`` and the strings ``true``/``false``, ``yes``/``no``,
    ``on``/``off``, ``1``/``0`` (any case, trimmed).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return value == 1
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _utf16_cut(text: str, units: int) -> str:
    raw = text.encode("utf-16-le", "surrogatepass")[: units * 2]
    return raw.decode("utf-16-le", "ignore")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class MakaProvider(BaseProvider):
    """Maka's MEMORY.md as a memcore store.

    Args:
        location: Path of MEMORY.md (or of its folder).
        enabled: Maka's ``enabled`` setting (default on). Off: reads yield nothing, writes
            raise :class:`ReadOnlyStoreError`, the file is not touched.
        agent_read_enabled: Maka's ``agentReadEnabled`` (default off; only a true value
            turns it on). Gates :meth:`render_prompt` only. On/off options read ``True``/
            ``False``, ``1``/``0``, ``"true"``/``"false"``, ``"yes"``/``"no"``, ``"on"``/``"off"``
            alike.
        incognito: Workspace privacy context (:func:`~memcore.provider.option_flag`: any value
            but a false one turns it on). On: every read and write raises
            :class:`IncognitoBlockedError` before touching the disk.
        read_only: Refuse every write (and the decay rewrite): memcore's own option.
        apply_decay: Archive expired entries (``createdAt + decayTtlMs`` passed) on load, as a
            visible rewrite of their comment (default on).
        **options: Ignored provider options (kept in ``self.options``).
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
        #: removes temp files of interrupted writes on the first write holding the lock
        self._temps = TempSweeper(path)
        self.folder = path.parent
        # A fixed name (nothing to escape with); not resolved here, so a symlinked PENDING.md
        # is reported by reads (maka.symlink) and refused by writes instead of breaking the store.
        self.pending_path = self.folder / "PENDING.md"
        # enabled: on unless a recognised false value; agent_read_enabled: off unless a true one
        # (the CLI passes -o enabled=0 as 0); incognito fails closed, as read_only does.
        self.enabled = _switch(options.get("enabled")) is not False
        self.agent_read_enabled = _switch(options.get("agent_read_enabled")) is True
        self.incognito = option_flag(options.get("incognito"))
        self.apply_decay = _switch(options.get("apply_decay")) is not False
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
        """``MEMORY.md.bak`` beside the store file, built only when a write needs it.

        Raises:
            UnsafePathError: The name is one memcore refuses (``nul.md.bak``…); reads never
                build it, so such a store can still be read.
        """
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
            head = LocalStorage(p.parent).read(p.name)[0][: MAX_BYTES + 1].decode("utf-8", "replace")
        except (OSError, UnsafePathError):
            return False
        if _SNIFF_COMMENT.search(head):
            return True
        for line in head.lstrip("\ufeff").splitlines():
            if line.strip():
                return line.strip() in (MEMORY_HEADER, PENDING_HEADER)
        return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create ``location`` (MEMORY.md, 0600, folder 0700) holding only ``# Maka Memory``.

        An existing file is left untouched.
        """
        provider = cls(location, **options)
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
        loaded = self._load(self.path)
        statuses = [v.entry.status for v in loaded.views]
        return MakaState(
            path,
            enabled,
            agent,
            incognito,
            status=loaded.status,
            entry_count=len(loaded.views),
            active_count=statuses.count(Status.ACTIVE),
            archived_count=statuses.count(Status.ARCHIVED),
            size=loaded.size,
            reason=loaded.reason,
        )

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
            return self.storage.read(name)[0]
        staged = name in session.staged
        data = session.read(name)
        if self._work is not None and not staged:
            self._work.old.setdefault(name, data)
        if data is None:
            raise FileNotFoundError(2, "No such file or directory", name)
        return data

    def _load(self, path: Path, *, pending: bool = False, full: bool = True) -> _Loaded:
        """Read and parse ``path``; with ``full``, also build every entry and the diagnostics."""
        loaded = _Loaded(path=path, pending=pending)
        shown = str(path)
        work = self._working() if path == self.path else None
        if work is not None and work.doc is not None:
            # MEMORY.md as the session holds it: parsed once, kept up to date by each write.
            loaded.doc, loaded.size = work.doc, work.doc.size
            loaded.reason = "empty" if work.doc.reason == "empty" else None
            if full:
                loaded.views = [view(work.doc, section, pending) for section in work.doc.entries]
                loaded.diagnostics.extend(validate.document_diagnostics(loaded.doc, loaded.views, shown))
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
        loaded.data, loaded.size = data, len(data)
        if len(data) > MAX_BYTES:
            loaded.status, loaded.reason = "safe_mode", "oversize"
            loaded.doc = Document(size=len(data), safe_mode=True, reason="oversize")
            loaded.diagnostics.append(validate.oversize_diagnostic(shown, len(data)))
            return loaded
        cached = self._parsed if path == self.path else None
        if cached is not None and cached[0] == data:
            # the bytes this provider last parsed or wrote: the same parse (never edited in place)
            self._use_parse(loaded, cached[1], work, full=full)
            return loaded
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", "replace")
            loaded.status, loaded.reason = "error", "not-utf8"
            loaded.diagnostics.append(validate.encoding_diagnostic(shown, data, exc))
        doc = parse_document(text, size=len(data))
        if path == self.path and loaded.writable:
            self._parsed = (data, doc)
        self._use_parse(loaded, doc, work, full=full)
        return loaded

    def _use_parse(self, loaded: _Loaded, doc: Document, work: _Work | None, *, full: bool) -> None:
        """Fill ``loaded`` from ``doc``; an open session takes its own copy of ``doc`` to edit."""
        if work is not None and loaded.writable:
            doc = doc.clone()  # the session edits its copy in place; ``_parsed`` keeps the file's
            work.doc, work.stale = doc, False
        loaded.doc = doc
        if doc.reason == "empty" and loaded.reason is None:
            loaded.reason = "empty"
        if full:
            loaded.views = [view(doc, section, loaded.pending) for section in doc.entries]
            loaded.diagnostics.extend(validate.document_diagnostics(doc, loaded.views, str(loaded.path)))

    def _expired(self, read: EntryView, now_ms: int) -> bool:
        if read.entry.status is not Status.ACTIVE:
            return False
        created = parse_finite_number(read.meta.get("createdAt"))
        ttl = parse_finite_number(read.meta.get("decayTtlMs"))
        return created is not None and ttl is not None and now_ms > created + ttl

    def _load_entries(self, *, full: bool = True) -> _Loaded:
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
        """Archive every expired active entry by rewriting its comment (visible in the file).

        Returns:
            The entries archived; none when the store cannot be written (read-only, over the
            size limit), where expired entries stay active on disk.
        """
        archived: list[validate.Decayed] = []

        def change(loaded: _Loaded) -> str | None:
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
        """Yield MEMORY.md's entries in file order, filtered by ``query``.

        Disabled: yields nothing. Safe mode: yields nothing (see :meth:`validate`).

        Raises:
            IncognitoBlockedError: Incognito is on (nothing was read).
        """
        if not self._gate_read():
            return
        entries = [v.entry for v in self._load_entries().views]
        yield from (query or Query()).apply(entries)

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry whose id is ``entry_id`` (NFC), as :meth:`iter_entries` reads it.

        Only that entry is built (the id index finds its section), so inside a batch a get
        does not cost the file size.

        Raises:
            EntryNotFoundError: No such entry (also when disabled).
            AmbiguousIdError: Two or more sections read under this id (the same title twice,
                titles that slug to nothing, a repeated ``id=``); the message names each line.
            IncognitoBlockedError: Incognito is on (nothing was read).
        """
        if self._gate_read():
            loaded = self._load_entries(full=False)
            wanted = _nfc(entry_id)
            found = sorted(loaded.doc.index().entries.get(wanted, []), key=lambda s: s.start)
            if len(found) > 1:
                raise _ambiguous(loaded.path, entry_id, found)
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
        """Return what Maka's rules find in MEMORY.md and PENDING.md (never raises for bad files).

        Raises:
            IncognitoBlockedError: Incognito is on.
        """
        if not self._gate_read():
            return []
        return self._load(self.path).diagnostics + self._other_diagnostics()

    def _other_diagnostics(self) -> list[Diagnostic]:
        """PENDING.md's findings, then the folder's: leftover temp files, symlinked backups."""
        out: list[Diagnostic] = []
        if os.path.lexists(self.pending_path):
            out.extend(self._load(self.pending_path, pending=True).diagnostics)
        out.extend(temp_file_diagnostics(self.path, "maka"))
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

    @staticmethod
    def _encode_checked(path: Path, text: str) -> bytes:
        """Return ``text`` as UTF-8; raise :class:`StoreLimitError` over 128 KiB (nothing written)."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            line = text.count("\n", 0, exc.start) + 1
            raise InvalidEntryError(
                f"maka: the new text of {path} has a lone surrogate (U+{ord(text[exc.start]):04X}) on line "
                f"{line}: not UTF-8, nothing written"
            ) from None
        if len(data) > MAX_BYTES:
            raise _over_limit(path, len(data))
        return data

    def _mutate(
        self,
        path: Path,
        change: Callable[[_Loaded], str | Edit | None],
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
            _refuse_symlinks((path, safe_join(self.folder, path.name + ".bak")), operation)
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
            data = self._encode_checked(path, text)
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
            raise _over_limit(self.path, size)
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
        self._temps.sweep()
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
            try:
                now: str | None = self.storage.stat(self.path.name).version
            except FileNotFoundError:
                now = None
            if now != session.version(self.path.name):
                count = session.writes
                raise ConflictError(
                    f"maka: {self.path} changed on disk during the batch (another writer); the batch's "
                    f"{count} write{'s' if count != 1 else ''} were not saved and the file was left as "
                    "it is now; re-run the batch"
                )
        _refuse_symlinks(tuple(self.folder / name for name in session.staged), "batch")
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
        """Group writes in one write session: MEMORY.md is read once and written once, at the end.

        Each :meth:`add` / :meth:`update` / :meth:`delete` (and archive, supersede, decay,
        PENDING.md's propose / approve / reject) is checked as it would be alone (ids, conflicts,
        the 128 KiB limit: a write over it raises :class:`StoreLimitError` and leaves the block's
        earlier writes in place) and applied in memory; reads in the block see those writes.
        When the outermost block ends, MEMORY.md is saved once (its old bytes to
        ``MEMORY.md.bak`` first), PENDING.md after it, also when the block raises. Incognito,
        disabled or read-only: the block runs without a session (writes raise as usual).

        Raises:
            ConflictError: MEMORY.md changed on disk during the block (a writer that does not
                take memcore's lock, or another provider on the same file in this thread): the
                block's writes are not saved, the file is left as it is.
            UnsafePathError: MEMORY.md or MEMORY.md.bak was replaced by a symlink during the
                block: nothing saved.
        """
        if self.incognito or not self.enabled:
            yield
            return
        with super().batch():
            yield

    @staticmethod
    def _find(loaded: _Loaded, entry_id: str, *, by_proposal: bool = False) -> EntryView:
        wanted = _nfc(entry_id)
        if by_proposal:
            found = [
                s
                for s in loaded.doc.entries
                if _nfc(s.id) == wanted or _nfc((s.meta or {}).get("proposalId", "")) == wanted
            ]
        else:
            found = sorted(loaded.doc.index().entries.get(wanted, []), key=lambda s: s.start)
        if not found:
            raise EntryNotFoundError(f"maka: no entry {entry_id!r} in {loaded.path}")
        if len(found) > 1:
            raise _ambiguous(loaded.path, entry_id, found)
        return view(loaded.doc, found[0], loaded.pending)

    @staticmethod
    def _prepare(entry: MemoryEntry) -> MemoryEntry:
        """Return a copy of ``entry`` with secrets redacted from every string it holds.

        :func:`memcore.redact.redact_entry`: title, body, tags, source, scope, parent, relation
        types and targets, every key and string of ``extra`` (so no secret reaches the file,
        neither as text nor base64 inside ``mcData``).

        Raises:
            InvalidEntryError: A string of the entry has a lone surrogate (not UTF-8; one can
                get past the model's validation through ``model_copy(update=...)`` or list
                mutation), or the id holds a secret (an id is never rewritten); nothing is written.
        """
        texts = [entry.id or "", entry.title, entry.body, entry.source or "", entry.scope or "", entry.parent or ""]
        texts.append(entry.version or "")
        for relation in entry.relations:
            texts += (relation.type, relation.target)
        texts += entry.tags
        _collect_texts(entry.extra, texts)
        if not _all_text(texts):
            # the full walk names the place of the bad character (or finds nothing to refuse)
            require_unicode(entry.model_dump(), "entry", prefix="maka")
        if entry.id is not None and holds_secret(entry.id):
            raise InvalidEntryError(
                "maka: the entry's id looks like a secret (a token, key or password); memcore never writes "
                "one and never changes an id: give the entry another id (or none, for a new one)"
            )
        return redact_entry(entry)

    def _new_entry(self, entry: MemoryEntry, loaded: _Loaded, *, proposal: bool = False) -> MemoryEntry:
        now = self._now()
        entry = self._prepare(entry)
        if entry.created_at is None:
            entry.created_at = from_ms(now)
        if entry.updated_at is None:
            entry.updated_at = entry.created_at
        assert entry.created_at is not None
        if entry.id is None:
            ms = to_ms(entry.created_at)
            base = stable_proposal_id(entry.body, ms) if proposal else stable_entry_id(entry.body, ms)
            taken = loaded.doc.index().taken
            candidate, n = base, 1
            while candidate in taken:
                n += 1
                candidate = f"{base}-{n}"
            entry.id = candidate
        elif entry.id in loaded.doc.index().entries:
            raise ConflictError(f"maka: an entry with id {entry.id!r} already exists in {loaded.path}")
        unowned = not normalize_meta_value(str(entry.extra.get(FORMAT, {}).get("sessionId", "")))
        if proposal and entry.scope == "session" and unowned:
            raise InvalidEntryError(
                "maka: scope 'session' needs extra['maka']['sessionId'] (Maka refuses session entries "
                "without an owning session)"
            )
        return entry

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

        def change(loaded: _Loaded) -> Edit | str:
            new = self._new_entry(entry, loaded)
            ids.append(new.id or "")
            return _render.append(loaded.doc, MEMORY_HEADER, render_section(new))

        doc = self._mutate(self.path, change, "add", reread=True)
        assert doc is not None
        return self._stored(ids[0], doc)

    def _stored(self, entry_id: str, doc: Document) -> MemoryEntry:
        """Return MEMORY.md's entry ``entry_id`` as read back from ``doc`` (what was just written)."""
        return self._find(_Loaded(path=self.path, pending=False, doc=doc), entry_id).entry

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Rewrite the section of ``entry.id``: only the heading, comment or content that changed.

        Values that did not change keep their raw text. ``updated_at`` is set to now when
        something changed and the caller did not change it.

        Raises:
            EntryNotFoundError: No such id.
            ConflictError: ``expected_version`` is stale.
            AmbiguousIdError: The id names two or more sections (each named by file:line).
            InvalidEntryError: An id that cannot be written.
            StoreLimitError: The file would go over 128 KiB (nothing written).
            ReadOnlyStoreError: Incognito, disabled, read-only, or a file that could not be parsed.
        """
        self.require(Capability.UPDATE, "update")
        if entry.id is None:
            raise EntryNotFoundError("maka: update needs an entry with an id")
        def change(loaded: _Loaded) -> Edit | None:
            assert entry.id is not None
            old = self._find(loaded, entry.id)
            if expected_version is not None and old.entry.version != expected_version:
                raise ConflictError(
                    f"maka: entry {entry.id!r} changed since it was read (version {expected_version!r}, "
                    f"now {old.entry.version!r}); read it again and retry"
                )
            new = self._prepare(entry)
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
            EntryNotFoundError: No such id.
            AmbiguousIdError: The id names two or more sections (each named by file:line).
            ReadOnlyStoreError: Incognito, disabled, read-only, or a file that could not be parsed.
        """
        self.require(Capability.DELETE, "delete")

        def change(loaded: _Loaded) -> str:
            return _render.remove_section(loaded.doc, self._find(loaded, entry_id).section)

        self._mutate(self.path, change, "delete")

    # -- prompt -----------------------------------------------------------------------------
    def render_prompt(self, session_id: str | None = None, budget: int = PROMPT_MAX_CHARS) -> str:
        """Return the memory section for a model's system prompt, as Maka builds it.

        Nothing (``""``) unless ``enabled`` and ``agent_read_enabled`` are on and incognito is
        off (checked before the disk is touched), and nothing in safe mode. Only active,
        unexpired entries; ``scope=session`` entries only when ``session_id`` equals their
        ``sessionId`` (one without ``sessionId`` never shows). Each entry is ``## title``, then
        ``Tags: a, b`` when tagged, then its content; secrets redacted; blocks joined by a blank
        line; over ``budget`` UTF-16 code units it is cut (never inside a character) and ends
        with the marker ``[本地记忆已按长度截断]``.

        Args:
            session_id: The current session, or ``None``.
            budget: Maximum length in UTF-16 code units (Maka: 12,000) before the marker.
        """
        if not (self.enabled and self.agent_read_enabled) or self.incognito:
            return ""
        loaded = self._load_entries()
        if loaded.status != "ok":
            return ""
        session = normalize_meta_value(session_id or "")
        now = self._now()
        blocks: list[str] = []
        for item in loaded.views:
            if item.entry.status is not Status.ACTIVE or self._expired(item, now):
                continue
            if item.meta.get("scope") == "session" and not (session and item.meta.get("sessionId") == session):
                continue
            lines = [f"## {item.section.title}"]
            tags = parse_tags(item.meta.get("tags"))
            if tags:
                lines.append(f"Tags: {', '.join(tags)}")
            lines.append(item.section.content)
            blocks.append(redact_secrets("\n".join(lines)))
        body = js_trim("\n\n".join(blocks))
        if not body:
            return ""
        if _utf16_len(body) <= budget:
            return body
        return f"{js_trim_end(_utf16_cut(body, budget))}\n\n{TRUNCATION_MARKER}"

    # -- pending proposals ------------------------------------------------------------------
    def _pending_loaded(self) -> _Loaded:
        if not self._gate_read():
            return _Loaded(path=self.pending_path, pending=True)
        return self._load(self.pending_path, pending=True)

    def pending(self) -> list[MemoryEntry]:
        """Return PENDING.md's proposals still waiting for review (draft / review_required).

        Raises:
            IncognitoBlockedError: Incognito is on.
        """
        return [
            v.entry
            for v in self._pending_loaded().views
            if v.entry.status in (Status.DRAFT, Status.REVIEW_REQUIRED)
        ]

    def proposals(self) -> list[MemoryEntry]:
        """Return every section of PENDING.md as an entry (rejected ones too)."""
        return [v.entry for v in self._pending_loaded().views]

    def propose(self, entry: MemoryEntry) -> MemoryEntry:
        """Add ``entry`` to PENDING.md as an extracted proposal waiting for review.

        Written as Maka's ``appendLocalMemoryProposalDraft`` does: ``id`` = ``proposalId`` =
        ``proposal-`` + 16 hex, ``origin=extracted source=chat_extracted``, ``proposedAt``,
        ``status=review_required``, ``scope`` (workspace unless session).

        Raises:
            InvalidEntryError: A session-scoped proposal without ``extra["maka"]["sessionId"]``
                (Maka's ``invalid_session_id``), or an id that cannot be written.
            ConflictError, StoreLimitError, ReadOnlyStoreError: As :meth:`add`.
        """
        stored: list[MemoryEntry] = []

        def change(loaded: _Loaded) -> Edit | str:
            draft = entry.model_copy(deep=True)
            draft.status = Status.REVIEW_REQUIRED
            draft.source = "extracted"
            if draft.scope != "session":
                draft.scope = "workspace"
            new = self._new_entry(draft, loaded, proposal=True)
            assert new.id is not None and new.created_at is not None
            maka = dict(new.extra.get(FORMAT, {}))
            maka.update(proposalId=new.id, source="chat_extracted", proposedAt=str(to_ms(new.created_at)))
            new.extra = {**new.extra, FORMAT: maka}
            new.created_at = None
            new.updated_at = None
            stored.append(new)
            return _render.append(loaded.doc, PENDING_HEADER, render_section(new))

        self._mutate(self.pending_path, change, "propose", pending=True)
        return self._find(self._load(self.pending_path, pending=True, full=False), stored[0].id or "").entry

    def approve(self, proposal_id: str, *, entry_id: str | None = None) -> MemoryEntry:
        """Move a pending proposal into MEMORY.md as an active entry and remove it from PENDING.md.

        The new entry (Maka's ``approveLocalMemoryProposalDraft``): id ``entry_id`` or
        ``mem-`` + 16 hex of the content and the confirmation time; ``origin=extracted``,
        ``source=chat_extracted``, ``createdAt = updatedAt = confirmedAt`` = now,
        ``status=active``, ``approvedBy=user``, ``approvalSurface=settings_review_queue``,
        ``proposalId``; scope, session, tags and memcore fields carried over. MEMORY.md is
        written first; approving again after a crash between the two writes only removes the
        proposal.

        Raises:
            EntryNotFoundError: No such proposal.
            ConflictError: The proposal is not pending (rejected, active…), or the id exists.
            StoreLimitError: MEMORY.md would go over 128 KiB (nothing written).
            ReadOnlyStoreError: Incognito, disabled, read-only, or a file that could not be parsed.
        """
        self._gate_write("approve")
        with self.session("approve"):
            proposal = self._find(
                self._load(self.pending_path, pending=True, full=False), proposal_id, by_proposal=True
            )
            if proposal.entry.status not in (Status.DRAFT, Status.REVIEW_REQUIRED):
                raise ConflictError(
                    f"maka: proposal {proposal_id!r} is {proposal.entry.status.value}, not pending; "
                    "only draft / review_required proposals can be approved"
                )
            pid = proposal.meta.get("proposalId") or proposal.entry.id or proposal_id
            memory = self._load(self.path)
            already = [v for v in memory.views if v.meta.get("proposalId") == pid]
            if not already:
                now = self._now()
                new = proposal.entry.model_copy(deep=True)
                new.id = entry_id or stable_entry_id(proposal.section.content, now)
                if not is_safe_value(new.id):
                    raise InvalidEntryError(f"maka: entry id {new.id!r} cannot be written in a comment")
                new.status = Status.ACTIVE
                new.source = "extracted"
                new.scope = "session" if proposal.meta.get("scope") == "session" else "workspace"
                if new.scope == "session" and not normalize_meta_value(proposal.meta.get("sessionId", "")):
                    raise InvalidEntryError(
                        f"maka: proposal {proposal_id!r} is session-scoped without a sessionId; Maka refuses "
                        "to approve it (invalid_session_id)"
                    )
                new.created_at = new.updated_at = from_ms(now)
                maka = {k: v for k, v in new.extra.get(FORMAT, {}).items() if k not in ("proposedAt", "status")}
                maka.update(
                    source="chat_extracted",
                    confirmedAt=str(now),
                    approvedBy="user",
                    approvalSurface="settings_review_queue",
                    proposalId=pid,
                )
                new.extra = {**new.extra, FORMAT: maka}
                new.version = None
                self.add(new)
            self._mutate(
                self.pending_path,
                lambda loaded: _render.remove_section(loaded.doc, self._find(loaded, pid, by_proposal=True).section),
                "approve",
                pending=True,
            )
            memory = self._load(self.path)
            return next(v.entry for v in memory.views if v.meta.get("proposalId") == pid)

    def reject(self, proposal_id: str) -> MemoryEntry:
        """Mark a pending proposal rejected in PENDING.md (``status=rejected rejectedAt=<ms>``).

        Raises:
            EntryNotFoundError: No such proposal.
            ConflictError: The proposal is not pending.
            ReadOnlyStoreError: Incognito, disabled, read-only, or a file that could not be parsed.
        """
        found: list[str] = []

        def change(loaded: _Loaded) -> str:
            old = self._find(loaded, proposal_id, by_proposal=True)
            if old.entry.status not in (Status.DRAFT, Status.REVIEW_REQUIRED):
                raise ConflictError(f"maka: proposal {proposal_id!r} is {old.entry.status.value}, not pending")
            assert old.entry.id is not None
            meta = dict(old.meta)
            meta.update(
                id=old.entry.id,
                proposalId=meta.get("proposalId") or old.entry.id,
                status="rejected",
                rejectedAt=str(self._now()),
            )
            found.append(old.entry.id)
            return _render.with_meta(loaded.doc, old, meta)

        self._mutate(self.pending_path, change, "reject", pending=True)
        return self._find(self._load(self.pending_path, pending=True, full=False), found[0]).entry


def _refuse_symlinks(targets: tuple[Path, ...], operation: str) -> None:
    """Raise :class:`UnsafePathError` when one of ``targets`` is a symlink (a write would replace it)."""
    for target in targets:
        if target.is_symlink():
            raise UnsafePathError(
                f"maka: {target} is a symlink; memcore never writes through or replaces one, `{operation}` refused"
            )


def _over_limit(path: Path, size: int) -> StoreLimitError:
    """The error for a write that would make ``path`` ``size`` bytes (over 128 KiB)."""
    return StoreLimitError(
        f"maka: this write would make {path} {size:,} bytes, over Maka's 128 KiB limit "
        f"({MAX_BYTES:,} bytes); nothing was written. Archive or delete entries first"
    )


def _all_text(texts: list[Any]) -> bool:
    """Return True when ``texts`` are all strings that encode as UTF-8 (no lone surrogate).

    One join and one encode for every string of an entry; False also for anything that is
    not a string, which the full check (:func:`~memcore.models.require_unicode`) then walks.
    """
    try:
        "\n".join(texts).encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return False
    return True


def _ambiguous(path: Path, entry_id: str, sections: list[Section]) -> AmbiguousIdError:
    """Return the error for an id that ``sections`` (two or more, in file order) all read as."""
    places = tuple(f"{path}:{s.start + 1}" for s in sections)
    return AmbiguousIdError(
        f"maka: id {entry_id!r} names {len(sections)} sections ({', '.join(places)}); memcore acts on "
        "neither: give each its own id (add `<!-- maka-memory: id=<unique-id> -->` under one heading, "
        "or retitle it)",
        entry_id=entry_id,
        places=places,
    )


def _collect_texts(value: Any, texts: list[Any]) -> None:
    """Add every key and string of JSON data to ``texts`` (for the one surrogate check).

    A value of another type (a tuple, a set: not JSON) goes to ``texts`` as is, so that the
    surrogate check walks the entry in full.
    """
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, dict):
        texts.extend(value)
        for item in value.values():
            _collect_texts(item, texts)
    elif isinstance(value, list):
        for item in value:
            _collect_texts(item, texts)
    elif isinstance(value, tuple | set | frozenset):
        texts.append(value)
