"""The Maka provider: one MEMORY.md (plus PENDING.md), fail-open on read, safe on write.

Store URL: ``maka:./memory/MEMORY.md`` (the location is the MEMORY.md file; a folder means
``<folder>/MEMORY.md``). Contract: ``../shared/specs/maka-memory-contract.md``; rules as Maka's
own code applies them: docs/formats/maka.md.

Reading never raises for a bad file: over 128 KiB the store is in safe mode (no entries, a
``maka.oversize`` diagnostic); a file that is not UTF-8 is read with replacement characters
and put in the ``error`` state. Writing fails closed: a store that could not be parsed fully
(safe mode, not UTF-8) raises :class:`~memcore.errors.ReadOnlyStoreError`, a write that would
take the file over 128 KiB raises :class:`~memcore.errors.StoreLimitError` and changes nothing.
Every save holds the store lock, copies the old file to ``MEMORY.md.bak``, writes a 0600 temp
file and renames it over MEMORY.md, and leaves the folder 0700. Inside
:meth:`MakaProvider.batch` MEMORY.md is read and parsed once, kept in memory and saved once at
the end; each add / update edits the parsed file in place (only the sections it touches are
parsed again, the size is kept as a running count), so a write costs what it changes, not the
file size. :meth:`MakaProvider.read_all` gives the entries and the diagnostics of one parse.
Each section keeps the entry built from it, and the provider keeps the last bytes it read or
wrote with their parse: reading back what was just written (a migration's verification) costs
a comparison of the bytes and a copy of each entry, not a parse.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
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
from memcore.mapping import format_utc
from memcore.models import Diagnostic, MemoryEntry, Query, Severity, Status, json_copy, require_unicode, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.redact import holds_secret, redact_entry, redact_secrets
from memcore.storage import TempSweeper, atomic_write, file_lock, safe_join, temp_file_diagnostics
from memcore_maka._parser import (
    MAX_BYTES,
    Document,
    Section,
    js_trim,
    js_trim_end,
    parse_document,
    parse_finite_number,
    parse_tags,
    section_text,
)
from memcore_maka.mapping import (
    FORMAT,
    EntryView,
    RenderedSection,
    entry_from_section,
    from_ms,
    is_safe_value,
    meta_line,
    normalize_meta_value,
    render_section,
    stable_entry_id,
    stable_proposal_id,
    to_ms,
)

__all__ = [
    "MEMORY_HEADER",
    "PENDING_HEADER",
    "PROMPT_MAX_CHARS",
    "TRUNCATION_MARKER",
    "IncognitoBlockedError",
    "MakaProvider",
    "MakaState",
]

MEMORY_HEADER = "# Maka Memory"
PENDING_HEADER = "# Maka Pending Memory"
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
class _Batch:
    """MEMORY.md as an open :meth:`MakaProvider.batch` holds it (read once, written once).

    Attributes:
        thread: The thread that opened the batch (others read and write the disk as usual).
        read: Whether the file has been read yet.
        old: The bytes on disk when read (or last flushed): what ``MEMORY.md.bak`` gets.
        data: The bytes with the batch's writes applied; ``None`` for a missing file. Out of
            date while ``stale`` (then ``doc`` is the file).
        dirty: Whether the file in memory differs from what is on disk.
        doc: The parse of a readable, writable MEMORY.md, edited in place by each write
            (:meth:`Document.splice`), so a write costs what it changes, not the file size;
            ``None`` until the file was read, and after a write that replaced the whole text.
        stale: Whether ``doc`` has writes ``data`` does not have yet.
        backup: ``MEMORY.md.bak``'s path, once a write in the batch built it.
        checked: Whether a write in the batch checked that MEMORY.md and its backup are not
            symlinks (checked again just before the batch is saved).
        writes: Writes applied in memory and not saved yet (named by the conflict error).
    """

    thread: int
    read: bool = False
    old: bytes | None = None
    data: bytes | None = None
    dirty: bool = False
    doc: Document | None = None
    stale: bool = False
    backup: Path | None = None
    checked: bool = False
    writes: int = 0

    def current(self) -> bytes | None:
        """Return MEMORY.md's bytes with every write applied (encodes ``doc`` when stale)."""
        if self.stale and self.doc is not None:
            self.data = self.doc.text().encode("utf-8", "surrogatepass")
            self.stale = False
        return self.data


@dataclass(frozen=True)
class _Decayed:
    """An entry a load archived because ``createdAt + decayTtlMs`` had passed.

    Attributes:
        entry_id: Its id.
        title: Its heading text.
        line: Line index (0-based) of its metadata comment.
        meta: The comment as it was before (its ``createdAt`` and ``decayTtlMs``).
        now: The time of the rewrite (unix ms): its ``archivedAt``.
    """

    entry_id: str
    title: str
    line: int
    meta: dict[str, str]
    now: int


@dataclass(frozen=True)
class _Edit:
    """One write as a change of lines: ``lines[start:end]`` become ``new`` (terminators ``seps``)."""

    start: int
    end: int
    new: list[str]
    seps: list[str]

    def apply(self, doc: Document) -> str:
        """Return ``doc``'s text with the edit applied (``doc`` itself is not changed)."""
        lines = [*doc.lines[: self.start], *self.new, *doc.lines[self.end :]]
        seps = [*doc.separators[: self.start], *self.seps, *doc.separators[self.end :]]
        return "".join(a + b for a, b in zip(lines, seps, strict=True))


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


def _only_true(value: Any) -> bool:
    """``agentReadEnabled``: on only for a recognised true value (missing or unknown: off)."""
    return _switch(value) is True


def _unless_false(value: Any) -> bool:
    """``enabled``: off only for a recognised false value (missing or unknown: on)."""
    return _switch(value) is not False


def _fail_closed(value: Any) -> bool:
    """``incognito`` / ``read_only``: off when missing or a recognised false value, else on."""
    return value is not None and _switch(value) is not False


def _version(doc: Document, section: Section) -> str:
    raw = section_text(doc.lines, section)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]


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
        incognito: Workspace privacy context. On: every read and write raises
            :class:`IncognitoBlockedError` before touching the disk.
        read_only: Refuse every write (and the decay rewrite).
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
        # Switches read true/false, 1/0, yes/no, on/off alike (the CLI passes -o enabled=0 as 0).
        # enabled: on unless false. agent_read_enabled: off unless true.
        # incognito / read_only: fail closed, any value but None / false turns them on.
        self.enabled = _unless_false(options.get("enabled"))
        self.agent_read_enabled = _only_true(options.get("agent_read_enabled"))
        self.incognito = _fail_closed(options.get("incognito"))
        self.read_only = _fail_closed(options.get("read_only"))
        self.apply_decay = _unless_false(options.get("apply_decay"))
        self._now: Callable[[], int] = lambda: to_ms(utc_now())
        self._batch_state: _Batch | None = None
        # MEMORY.md's bytes as this provider last read or wrote them, and their parse (never
        # edited: a batch edits a clone). A read of the same bytes reuses it and the entries
        # already built on its sections, so reading back what was just written costs a copy.
        self._parsed: tuple[bytes, Document] | None = None

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
            with open(p, "rb") as fh:
                head = fh.read(MAX_BYTES + 1).decode("utf-8", "replace")
        except OSError:
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
        atomic_write(provider.path, (MEMORY_HEADER + "\n").encode("utf-8"), mode=FILE_MODE)
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
            raise IncognitoBlockedError(
                f"maka: incognito is on; `{operation}` refused before touching {self.path}"
            )
        if not self.enabled:
            raise ReadOnlyStoreError(
                f"maka: memory is disabled (enabled=false); `{operation}` refused, {self.path} untouched"
            )
        if self.read_only:
            raise ReadOnlyStoreError(f"maka: {self.path} was opened read-only; `{operation}` refused")

    # -- reading --------------------------------------------------------------------------
    def _load(self, path: Path, *, pending: bool = False, full: bool = True) -> _Loaded:
        """Read and parse ``path``; with ``full``, also build every entry and the diagnostics."""
        loaded = _Loaded(path=path, pending=pending)
        shown = str(path)
        batch = self._active_batch() if path == self.path else None
        if batch is not None and batch.doc is not None:
            # MEMORY.md as the batch holds it: parsed once, kept up to date by each write.
            loaded.doc, loaded.size = batch.doc, batch.doc.size
            loaded.reason = "empty" if batch.doc.reason == "empty" else None
            if full:
                loaded.views = [_view(batch.doc, section, pending) for section in batch.doc.entries]
                loaded.diagnostics.extend(self._diagnose(loaded))
            return loaded
        if path.is_symlink():
            loaded.status, loaded.reason = "error", "symlink"
            loaded.diagnostics.append(
                Diagnostic(
                    path=shown,
                    code="maka.symlink",
                    message=f"{shown} is a symlink: not read (it may point outside the store) and "
                    "never replaced; put the file itself there",
                )
            )
            return loaded
        try:
            data = self._read_bytes(path)
        except FileNotFoundError:
            loaded.reason = "missing"
            return loaded
        except OSError as exc:
            loaded.status, loaded.reason = "error", f"cannot read the file ({exc.strerror or exc})"
            loaded.diagnostics.append(
                Diagnostic(path=shown, code="maka.io-error", message=f"cannot read {shown}: {exc}")
            )
            return loaded
        loaded.data, loaded.size = data, len(data)
        if len(data) > MAX_BYTES:
            loaded.status, loaded.reason = "safe_mode", "oversize"
            loaded.doc = Document(size=len(data), safe_mode=True, reason="oversize")
            loaded.diagnostics.append(
                Diagnostic(
                    path=shown,
                    code="maka.oversize",
                    message=(
                        f"{len(data):,} bytes is over Maka's 128 KiB limit ({MAX_BYTES:,} bytes): safe mode, "
                        "no entries are read and memcore will not write to this file; shorten it below "
                        "the limit (archive old entries elsewhere) to use it again"
                    ),
                )
            )
            return loaded
        cached = self._parsed if path == self.path else None
        if cached is not None and cached[0] == data:
            # the bytes this provider last parsed or wrote: the same parse (never edited in place)
            self._use_parse(loaded, cached[1], batch, full=full)
            return loaded
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", "replace")
            loaded.status, loaded.reason = "error", "not-utf8"
            loaded.diagnostics.append(
                Diagnostic(
                    path=shown,
                    line=data[: exc.start].count(b"\n") + 1,
                    code="maka.encoding",
                    message=(
                        f"not UTF-8 (bad byte at offset {exc.start}); read with replacement characters, "
                        "writes refused; re-save the file as UTF-8"
                    ),
                )
            )
        doc = parse_document(text, size=len(data))
        if path == self.path and loaded.writable:
            self._parsed = (data, doc)
        self._use_parse(loaded, doc, batch, full=full)
        return loaded

    def _use_parse(self, loaded: _Loaded, doc: Document, batch: _Batch | None, *, full: bool) -> None:
        """Fill ``loaded`` from ``doc``; an open batch takes its own copy of ``doc`` to edit."""
        if batch is not None and loaded.writable:
            doc = doc.clone()  # the batch edits its copy in place; ``_parsed`` keeps the file's
            batch.doc, batch.stale = doc, False
        loaded.doc = doc
        if doc.reason == "empty" and loaded.reason is None:
            loaded.reason = "empty"
        if full:
            loaded.views = [_view(doc, section, loaded.pending) for section in doc.entries]
            loaded.diagnostics.extend(self._diagnose(loaded))

    def _diagnose(self, loaded: _Loaded) -> list[Diagnostic]:
        shown = str(loaded.path)
        out: list[Diagnostic] = []
        doc = loaded.doc
        out.extend(_unread_text(doc, shown))
        for index in doc.malformed:
            out.append(
                Diagnostic(
                    path=shown,
                    line=index + 1,
                    code="maka.malformed-comment",
                    severity=Severity.WARNING,
                    message="looks like a maka-memory comment but is not one whole comment line; "
                    "Maka keeps it as content",
                )
            )
        for section in doc.sections:
            for index, token, why in section.dropped:
                out.append(
                    Diagnostic(
                        path=shown,
                        line=index + 1,
                        code="maka.token-dropped",
                        severity=Severity.WARNING,
                        message=f"comment token {token[:40]!r} is ignored by Maka ({why})",
                        entry_id=section.id,
                    )
                )
            for index in section.shadow_indices:
                out.append(
                    Diagnostic(
                        path=shown,
                        line=index + 1,
                        code="maka.shadowed-comment",
                        severity=Severity.INFO,
                        message="a later metadata comment in the section: ignored (the first one is "
                        "authoritative; Maka V0.1 used the last one) and removed from the content; memcore "
                        "keeps the line when it rewrites the section",
                        entry_id=section.id,
                    )
                )
            if not section.is_entry:
                out.append(
                    Diagnostic(
                        path=shown,
                        line=section.start + 1,
                        code="maka.empty-section",
                        severity=Severity.INFO,
                        message=f"section {section.title!r} has no content; Maka does not show it",
                    )
                )
        seen: dict[str, int] = {}
        for view in loaded.views:
            entry, section = view.entry, view.section
            where = (section.meta_index if section.meta_index is not None else section.start) + 1
            assert entry.id is not None
            if entry.id in seen:
                out.append(
                    Diagnostic(
                        path=shown,
                        line=section.start + 1,
                        code="maka.duplicate-id",
                        severity=Severity.WARNING,
                        message=f"id {entry.id!r} is also used at line {seen[entry.id]}; memcore will not "
                        "update or delete an ambiguous id",
                        entry_id=entry.id,
                    )
                )
            else:
                seen[entry.id] = section.start + 1
            if entry.status is Status.UNKNOWN:
                out.append(
                    Diagnostic(
                        path=shown,
                        line=where,
                        code="maka.unknown-status",
                        severity=Severity.WARNING,
                        message=f"status {view.meta.get('status')!r} is not one Maka knows; shown, never "
                        "given to a model",
                        entry_id=entry.id,
                    )
                )
            if view.meta.get("scope") == "session" and not view.meta.get("sessionId"):
                out.append(
                    Diagnostic(
                        path=shown,
                        line=where,
                        code="maka.session-without-owner",
                        severity=Severity.WARNING,
                        message="scope=session without sessionId: never given to a model",
                        entry_id=entry.id,
                    )
                )
            for problem in view.problems:
                out.append(
                    Diagnostic(
                        path=shown,
                        line=where,
                        code="maka.bad-value",
                        severity=Severity.WARNING,
                        message=problem,
                        entry_id=entry.id,
                    )
                )
        return out

    def _expired(self, view: EntryView, now_ms: int) -> bool:
        if view.entry.status is not Status.ACTIVE:
            return False
        created = parse_finite_number(view.meta.get("createdAt"))
        ttl = parse_finite_number(view.meta.get("decayTtlMs"))
        return created is not None and ttl is not None and now_ms > created + ttl

    def _load_entries(self, *, full: bool = True) -> _Loaded:
        """Load MEMORY.md, archiving expired entries first (then it is read again).

        With ``full``, each entry this load archived adds a ``maka.decayed`` warning to the
        diagnostics (what :meth:`read_all` returns), naming the entry and why its status changed.
        """
        loaded = self._load(self.path, full=full)
        if self.apply_decay and not self.read_only and loaded.writable:
            now = self._now()
            expiring = (s for s in loaded.doc.sections if s.is_entry and "decayTtlMs" in (s.meta or {}))
            if any(self._expired(_view(loaded.doc, s, False), now) for s in expiring):
                archived = self._decay()
                loaded = self._load(self.path, full=full)
                if full:
                    loaded.diagnostics.extend(self._decay_notes(archived))
        return loaded

    def _decay(self) -> list[_Decayed]:
        """Archive every expired active entry by rewriting its comment (visible in the file).

        Returns:
            The entries archived; none when the store cannot be written (read-only, over the
            size limit), where expired entries stay active on disk.
        """
        archived: list[_Decayed] = []

        def change(loaded: _Loaded) -> str | None:
            now = self._now()
            archived.clear()
            lines, seps = list(loaded.doc.lines), list(loaded.doc.separators)
            for section in loaded.doc.entries:
                view = _view(loaded.doc, section, False)
                if not self._expired(view, now) or section.meta_index is None:
                    continue
                meta = dict(view.meta)
                meta.update(
                    status="archived",
                    updatedAt=str(now),
                    archivedAt=str(now),
                    archiveReason="decayTtlMs-expired",
                )
                dropped = tuple(token for _, token, _ in section.dropped)
                lines[section.meta_index] = meta_line(meta, dropped, view.meta)
                entry_id = view.entry.id or section.id
                archived.append(_Decayed(entry_id, section.title, section.meta_index, view.meta, now))
            return "".join(a + b for a, b in zip(lines, seps, strict=True)) if archived else None

        try:
            self._mutate(self.path, change, "decay")
        except (ReadOnlyStoreError, StoreLimitError):
            return []
        return archived

    def _decay_notes(self, archived: list[_Decayed]) -> list[Diagnostic]:
        """Return a ``maka.decayed`` warning for each entry :meth:`_decay` archived."""
        out: list[Diagnostic] = []
        for item in archived:
            created = parse_finite_number(item.meta.get("createdAt")) or 0.0
            ttl = parse_finite_number(item.meta.get("decayTtlMs")) or 0.0
            expired = from_ms(created + ttl)
            when = format_utc(expired, milliseconds=True) if expired is not None else f"{created + ttl:.0f} ms"
            now = from_ms(item.now)
            out.append(
                Diagnostic(
                    path=str(self.path),
                    line=item.line + 1,
                    code="maka.decayed",
                    severity=Severity.WARNING,
                    message=(
                        f"entry {item.entry_id!r} ({item.title[:60]!r}) expired at {when} (its decayTtlMs="
                        f"{item.meta.get('decayTtlMs')} ms had run out) and was archived by this read, as Maka "
                        "archives expired entries when it loads the file: its comment now says status=archived "
                        f"archiveReason=decayTtlMs-expired archivedAt={item.now}"
                        + (f" ({format_utc(now, milliseconds=True)})" if now is not None else "")
                        + "; the file before is kept in MEMORY.md.bak (open the store with apply_decay=false "
                        "to keep expired entries active)"
                    ),
                    entry_id=item.entry_id,
                )
            )
        return out

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
                entry = _view(loaded.doc, section, False).entry
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
        out = self._load(self.path).diagnostics
        if os.path.lexists(self.pending_path):
            out.extend(self._load(self.pending_path, pending=True).diagnostics)
        return out + self._folder_diagnostics()

    def _folder_diagnostics(self) -> list[Diagnostic]:
        """What the store's folder holds besides the two files: leftover temp files and links.

        ``maka.leftover-temp`` warnings for temp files of interrupted writes, and ``maka.symlink``
        errors for a symlinked ``<name>.bak`` (every save would be refused).
        """
        out = temp_file_diagnostics(self.path, "maka")
        for path in (self.path, self.pending_path):
            try:
                backup = safe_join(self.folder, path.name + ".bak")
            except UnsafePathError:
                continue
            if backup.is_symlink():
                out.append(
                    Diagnostic(
                        path=backup.name,
                        code="maka.symlink",
                        message=f"{backup.name} is a symlink: every save of {path.name} is refused (memcore never "
                        "writes through or replaces a link); remove the link",
                    )
                )
        return out

    def read_all(self) -> StoreSnapshot:
        """Return every entry and every diagnostic from one read of MEMORY.md (and PENDING.md).

        Equal to ``StoreSnapshot(list(self.iter_entries()), self.validate())``: expired entries
        are archived first, as :meth:`iter_entries` does (then the file is read again), and the
        diagnostics are those of the same parse the entries come from, plus one ``maka.decayed``
        warning per entry this read archived (the entry, its expiry and the rewrite: a read
        that changed the file says so; the next read has nothing to report). Disabled: nothing.
        Reading back bytes this provider just read or wrote reuses their parse and entries.

        Returns:
            ``StoreSnapshot(entries in file order, diagnostics)``.

        Raises:
            IncognitoBlockedError: Incognito is on (nothing was read).
        """
        if not self._gate_read():
            return StoreSnapshot([], [])
        loaded = self._load_entries()
        diagnostics = list(loaded.diagnostics)
        if os.path.lexists(self.pending_path):
            diagnostics.extend(self._load(self.pending_path, pending=True).diagnostics)
        diagnostics.extend(self._folder_diagnostics())
        return StoreSnapshot([v.entry for v in loaded.views], diagnostics)

    # -- writing --------------------------------------------------------------------------
    def _ensure_folder(self) -> None:
        if not self.folder.exists():
            self.folder.mkdir(parents=True, mode=DIR_MODE, exist_ok=True)

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

    def _commit(self, path: Path, old: bytes | None, text: str) -> None:
        self._write(path, old, self._encode_checked(path, text))

    def _write(self, path: Path, old: bytes | None, data: bytes) -> None:
        """Back ``old`` up to ``<name>.bak``, then atomically replace ``path`` with ``data`` (0600)."""
        self._ensure_folder()
        if old is not None:
            backup = self.backup_path if path == self.path else safe_join(self.folder, path.name + ".bak")
            atomic_write(backup, old, mode=FILE_MODE)
        atomic_write(path, data, mode=FILE_MODE)
        self._fix_folder_mode()

    def _mutate(
        self,
        path: Path,
        change: Callable[[_Loaded], str | _Edit | None],
        operation: str,
        *,
        pending: bool = False,
        reread: bool = False,
    ) -> Document | None:
        """Run one read-modify-write of ``path`` under the store lock.

        ``change`` returns the new text, an :class:`_Edit` of the lines, or ``None`` (nothing to
        write). Inside a batch an edit of MEMORY.md is applied to the batch's parsed document in
        place (cost: the lines it changes); otherwise the new text is written (or, in a batch,
        kept in memory).

        Returns:
            With ``reread``: the file as it now reads (the batch's document, or a parse of the
            new text); ``None`` when nothing changed or without ``reread``.
        """
        self._gate_write(operation)
        batch = self._active_batch()
        # An open batch holds the store lock for its whole block.
        with file_lock(self.path) if batch is None else contextlib.nullcontext():
            self._temps.sweep()
            if path != self.path:
                # PENDING.md is written at once; MEMORY.md first, so approve keeps its order.
                self._flush_batch()
            if path != self.path:
                backup = safe_join(self.folder, path.name + ".bak")
            elif batch is not None:
                if batch.backup is None:
                    batch.backup = self.backup_path
                backup = batch.backup
            else:
                backup = self.backup_path
            if batch is None or path != self.path or not batch.checked:
                # in a batch MEMORY.md is checked by its first write and again just before it is saved
                _refuse_symlinks((path, backup), operation)
                if batch is not None and path == self.path:
                    batch.checked = True
            loaded = self._load(path, pending=pending, full=False)
            if not loaded.writable:
                raise ReadOnlyStoreError(
                    f"maka: {path} is in the {loaded.status!r} state ({loaded.reason}); memcore will not "
                    f"rewrite a file it could not parse fully, `{operation}` refused"
                )
            result = change(loaded)
            if result is None:
                return None
            if path != self.path:
                batch = None
            if batch is not None and isinstance(result, _Edit) and batch.doc is loaded.doc:
                if self._splice(batch, result):
                    batch.writes += 1
                    return batch.doc if reread else None
            text = result if isinstance(result, str) else result.apply(loaded.doc)
            data = self._encode_checked(path, text)
            if batch is None:
                self._write(path, loaded.data, data)
            else:
                batch.data, batch.doc, batch.stale, batch.dirty = data, None, False, True
                batch.writes += 1
            if not reread:
                return None
            doc = parse_document(text, size=len(data))
            if batch is None and path == self.path:
                self._parsed = (data, doc)
            return doc

    def _splice(self, batch: _Batch, edit: _Edit) -> bool:
        """Apply ``edit`` to the batch's document in place; False when it must go as text.

        Raises:
            StoreLimitError: The file would go over 128 KiB (nothing changed).
        """
        doc = batch.doc
        assert doc is not None
        try:
            "".join(edit.new).encode("utf-8")
        except UnicodeEncodeError:
            return False  # lone surrogates: written as text, so the file reads as not UTF-8 again
        size = doc.spliced_size(edit.start, edit.end, edit.new, edit.seps)
        if size > MAX_BYTES:
            raise _over_limit(self.path, size)
        doc.splice(edit.start, edit.end, edit.new, edit.seps)
        batch.stale = batch.dirty = True
        return True

    # -- batch ----------------------------------------------------------------------------
    def _active_batch(self) -> _Batch | None:
        """Return the batch this thread has open on this provider, if any."""
        state = self._batch_state
        return state if state is not None and state.thread == threading.get_ident() else None

    def _read_bytes(self, path: Path) -> bytes:
        """Return ``path``'s bytes; MEMORY.md inside a batch: as the batch holds it (read once).

        Raises:
            FileNotFoundError: No such file (nor one written by the batch yet).
            OSError: The file cannot be read.
        """
        batch = self._active_batch() if path == self.path else None
        if batch is None:
            with open(path, "rb") as fh:
                return fh.read()
        if not batch.read:
            try:
                with open(path, "rb") as fh:
                    batch.old = batch.data = fh.read()
            except FileNotFoundError:
                batch.old = batch.data = None
            batch.read = True
        if batch.data is None:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return batch.data

    def _flush_batch(self) -> None:
        """Write the open batch's pending MEMORY.md now (one backup + one atomic write), if any."""
        batch = self._active_batch()
        if batch is None or not batch.dirty:
            return
        data = batch.current()
        if data is None:
            return
        self._save_batch(batch, data)
        batch.old, batch.dirty, batch.writes = data, False, 0

    def _save_batch(self, batch: _Batch, data: bytes) -> None:
        """Write the batch's MEMORY.md: refused when the file changed or became a symlink.

        Raises:
            ConflictError: See :meth:`_check_unchanged`.
            UnsafePathError: MEMORY.md or its backup is now a symlink (nothing written).
        """
        self._check_unchanged(batch)
        _refuse_symlinks((self.path, batch.backup or self.backup_path), "batch")
        self._write(self.path, batch.old, data)

    def _check_unchanged(self, batch: _Batch) -> None:
        """Refuse to save the batch when MEMORY.md changed on disk since the batch read it.

        The batch holds memcore's lock, but a tool that does not take it (an editor, Maka
        itself) or a second provider on the same file in the same thread (the lock is
        re-entrant per thread) may have written meanwhile; saving would silently drop that.

        Raises:
            ConflictError: The file's bytes differ from those the batch read (or last saved);
                nothing is written and the batch's writes are lost (re-run them).
        """
        try:
            with open(self.path, "rb") as fh:
                now: bytes | None = fh.read()
        except FileNotFoundError:
            now = None
        if now != batch.old:
            count = batch.writes
            batch.dirty, batch.writes = False, 0
            raise ConflictError(
                f"maka: {self.path} changed on disk during the batch (another writer); the batch's "
                f"{count} write{'s' if count != 1 else ''} were not saved and the file was left as "
                "it is now; re-run the batch"
            )

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes to MEMORY.md: read it once, write it once when the block ends.

        For the whole block the store lock is held (other processes wait) and MEMORY.md is
        kept in memory: each :meth:`add` / :meth:`update` / :meth:`delete` (and archive,
        supersede, decay) is checked as it would be alone (ids, conflicts, the 128 KiB limit:
        a write over it raises :class:`StoreLimitError` and leaves the block's earlier writes
        in place) and applied to the in-memory file; reads in the block see those writes.
        An add or update edits the parsed file in place (cost: the sections it touches, plus
        moving the line numbers of later sections when an update changes the line count);
        delete and decay replace the whole text, and the next write parses it once again.
        When the outermost block ends, MEMORY.md is written once (the file as it was before
        the block to ``MEMORY.md.bak``, then one 0600 atomic write), also when the block
        raises: what was applied is written, then the exception propagates. A write to
        PENDING.md (``propose``, ``approve``, ``reject``) writes MEMORY.md's pending changes
        first. A nested ``batch()`` is a plain block. Incognito, disabled or read-only: the
        block runs without the lock and nothing is read or written (writes raise as usual).
        The batch belongs to the thread that opened it; other threads use the disk as usual.

        Yields:
            None.

        Raises:
            OSError: Writing MEMORY.md at the end of the block failed.
            ConflictError: MEMORY.md changed on disk during the block (a writer that does not
                take memcore's lock, or another provider on the same file in this thread): the
                block's writes are not saved, the file is left as it is.
            UnsafePathError: MEMORY.md or MEMORY.md.bak was replaced by a symlink during the
                block (checked by the block's first write and again before saving): nothing saved.
        """
        if self._active_batch() is not None or self.incognito or not self.enabled or self.read_only:
            yield
            return
        with file_lock(self.path):
            self._temps.sweep()
            batch = _Batch(thread=threading.get_ident())
            self._batch_state = batch
            try:
                yield
            finally:
                self._batch_state = None
                data = batch.current() if batch.dirty else None
                if data is not None:
                    self._save_batch(batch, data)
                    if batch.doc is not None:
                        self._parsed = (data, batch.doc)  # the batch is over: no more edits

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
        return _view(loaded.doc, found[0], loaded.pending)

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

    @staticmethod
    def _append(doc: Document, header: str, rendered: RenderedSection) -> _Edit | str:
        """Return the write that appends ``rendered`` to ``doc``.

        The text is ``trimEnd(file) + blank line + section + newline``; a blank file becomes
        ``header + blank line + section + newline`` (returned as the whole text). As an edit it
        touches only the file's trailing blank lines and its last line with content.
        """
        newline = doc.newline
        block = [f"## {rendered.title}", rendered.meta_text, *rendered.content_lines]
        last = len(doc.lines) - 1
        while last >= 0 and not js_trim_end(doc.lines[last]):
            last -= 1
        if last < 0:
            return header + newline * 2 + newline.join(block) + newline
        new = [js_trim_end(doc.lines[last]), "", *block, ""]
        return _Edit(last, len(doc.lines), new, [newline] * (len(new) - 1) + [""])

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

        def change(loaded: _Loaded) -> _Edit | str:
            new = self._new_entry(entry, loaded)
            ids.append(new.id or "")
            return self._append(loaded.doc, MEMORY_HEADER, render_section(new))

        doc = self._mutate(self.path, change, "add", reread=True)
        assert doc is not None
        return self._stored(ids[0], doc)

    def _stored(self, entry_id: str, doc: Document) -> MemoryEntry:
        """Return MEMORY.md's entry ``entry_id`` as read back from ``doc`` (what was just written)."""
        return self._find(_Loaded(path=self.path, pending=False, doc=doc), entry_id).entry

    @staticmethod
    def _rewrite(loaded: _Loaded, old: EntryView, entry: MemoryEntry) -> _Edit | None:
        """Return the edit that rewrites ``old``'s section as ``entry`` (``None``: no change).

        The edit covers the section only: all of it when the content changed, else the
        heading up to the comment line.
        """
        doc, section = loaded.doc, old.section
        rendered = render_section(entry, old)
        if _unchanged(rendered):
            return None
        lines, seps = doc.lines, doc.separators
        newline = doc.newline
        if rendered.body_changed:
            keep_from = section.end
            while keep_from - 1 > section.start and not js_trim(lines[keep_from - 1]):
                keep_from -= 1
            shadows = [lines[i] for i in section.shadow_indices]
            heading = f"## {rendered.title}" if rendered.title_changed else lines[section.start]
            new_lines = [heading, rendered.meta_text, *rendered.content_lines, *shadows]
            new_lines += lines[keep_from : section.end]
            new_seps = [newline] * len(new_lines)
            new_seps[-1] = seps[section.end - 1] if section.end == len(lines) else newline
            return _Edit(section.start, section.end, new_lines, new_seps)
        end = section.start + 1
        if rendered.meta_changed and section.meta_index is not None:
            end = section.meta_index + 1
        new_lines, new_seps = lines[section.start : end], seps[section.start : end]
        if rendered.meta_changed:
            if section.meta_index is not None:
                new_lines[-1] = rendered.meta_text
            else:
                new_lines.insert(1, rendered.meta_text)
                new_seps.insert(1, newline)
        if rendered.title_changed:
            new_lines[0] = f"## {rendered.title}"
        return _Edit(section.start, end, new_lines, new_seps)

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
        def change(loaded: _Loaded) -> _Edit | None:
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
            return self._rewrite(loaded, old, new)

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
            return _remove_section(loaded.doc, self._find(loaded, entry_id).section)

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
        for view in loaded.views:
            if view.entry.status is not Status.ACTIVE or self._expired(view, now):
                continue
            if view.meta.get("scope") == "session" and not (session and view.meta.get("sessionId") == session):
                continue
            lines = [f"## {view.section.title}"]
            tags = parse_tags(view.meta.get("tags"))
            if tags:
                lines.append(f"Tags: {', '.join(tags)}")
            lines.append(view.section.content)
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

        def change(loaded: _Loaded) -> _Edit | str:
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
            return self._append(loaded.doc, PENDING_HEADER, render_section(new))

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
        with file_lock(self.path):
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
                lambda loaded: _remove_section(loaded.doc, self._find(loaded, pid, by_proposal=True).section),
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
            view = self._find(loaded, proposal_id, by_proposal=True)
            if view.entry.status not in (Status.DRAFT, Status.REVIEW_REQUIRED):
                raise ConflictError(f"maka: proposal {proposal_id!r} is {view.entry.status.value}, not pending")
            section = view.section
            meta = dict(view.meta)
            assert view.entry.id is not None
            meta.update(id=view.entry.id, proposalId=meta.get("proposalId") or view.entry.id,
                        status="rejected", rejectedAt=str(self._now()))
            found.append(view.entry.id)
            lines, seps = list(loaded.doc.lines), list(loaded.doc.separators)
            text = meta_line(meta, tuple(token for _, token, _ in section.dropped), view.meta)
            if section.meta_index is not None:
                lines[section.meta_index] = text
            else:
                lines.insert(section.start + 1, text)
                seps.insert(section.start + 1, loaded.doc.newline)
            return "".join(a + b for a, b in zip(lines, seps, strict=True))

        self._mutate(self.pending_path, change, "reject", pending=True)
        return self._find(self._load(self.pending_path, pending=True, full=False), found[0]).entry


def _unread_text(doc: Document, shown: str) -> list[Diagnostic]:
    """Return a ``maka.unread-text`` warning for each paragraph before the first ``##`` section.

    Maka reads only ``##`` sections: prose between the ``# Maka Memory`` title and the first
    section belongs to no entry, so no conversion carries it. Blank lines and the file's own
    title (``# Maka Memory`` / ``# Maka Pending Memory``) are not reported.
    """
    end = doc.sections[0].start if doc.sections else len(doc.lines)
    out: list[Diagnostic] = []
    inside = False
    for index in range(end):
        line = doc.lines[index].lstrip("\ufeff") if index == 0 else doc.lines[index]
        text = line.strip()
        if not text or text in (MEMORY_HEADER, PENDING_HEADER):
            inside = False
            continue
        if not inside:
            out.append(
                Diagnostic(
                    path=shown,
                    line=index + 1,
                    code="maka.unread-text",
                    severity=Severity.WARNING,
                    message=f"text before the first `## ` section ({text[:40]!r}) is not part of any entry: "
                    "Maka ignores it and conversions do not carry it",
                )
            )
        inside = True
    return out


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


def _view(doc: Document, section: Section, pending: bool) -> EntryView:
    """Return ``section`` read as an entry: built once per section, then copied.

    A section's text never changes (an edit re-parses what it touches into new sections), so
    the entry built the first time is kept on it (:attr:`Section.views`) and each later read
    gets a copy of it (its own lists and ``extra``), as if built again.
    """
    built: EntryView | None = section.views.get(pending)
    if built is None:
        built = entry_from_section(section, pending=pending, version=_version(doc, section))
        section.views[pending] = built
    return EntryView(
        entry=_fresh(built.entry),
        section=section,
        meta=built.meta,
        applied=built.applied,
        problems=built.problems,
    )


def _fresh(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` sharing nothing a caller can change (lists, ``extra``)."""
    twin = entry.__copy__()
    fields = twin.__dict__
    fields["tags"] = list(entry.tags)
    fields["relations"] = list(entry.relations)  # Relation is frozen
    fields["extra"] = json_copy(entry.extra)
    return twin


def _unchanged(rendered: RenderedSection) -> bool:
    """Return whether a rendered section changes nothing in the file."""
    return not (rendered.title_changed or rendered.meta_changed or rendered.body_changed)


def _remove_section(doc: Document, section: Section) -> str:
    """Return ``doc``'s text without ``section``, blank lines tidied as Maka does."""
    offsets = [0]
    for line, sep in zip(doc.lines, doc.separators, strict=True):
        offsets.append(offsets[-1] + len(line) + len(sep))
    text = doc.text()
    newline = doc.newline
    before = re.sub(r"(?:\r?\n){3,}\Z", newline * 2, text[: offsets[section.start]])
    after = re.sub(r"\A(?:\r?\n){2,}", newline, text[offsets[section.end] :])
    return js_trim_end(before + after) + newline


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
