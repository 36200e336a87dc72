"""The WhiteBox vault provider (spec whitebox-v1.md; reference notes whitebox.md).

A vault is a folder of markdown files:

- **stable facts**: files at the root (``identity.md``, ``working-style.md``…) and in
  ``relationships/``, ``projects/`` (and ``sensitive/``), optional YAML frontmatter. Agents
  propose, users edit: :meth:`WhiteBoxProvider.update` writes a proposal file
  (``proposed/<timestamp>-<slug>.md``) unless the store was opened with ``as_user=True``.
- **observations**: append-only blocks in ``observations/YYYY-MM.md``, id
  ``observations/YYYY-MM.md#N``. Update and delete raise
  :class:`~memcore.errors.UnsupportedOperationError`.
- ``tags.md`` (registry), ``scopes.md`` (named scopes), ``AGENTS.md``/``README.md`` (for
  agents and people) are the vault's machinery and are not entries.

Every write runs in core's write session (:meth:`~memcore.provider.BaseProvider.session`;
``batch()`` is one session): a monthly file's new records are kept in memory
(:class:`~memcore_whitebox._parse.MonthState`) and the file is staged once, when the session
ends, with tags.md; stable files and proposals are staged as they are written. The codec is
:mod:`memcore_whitebox.codec`, the rules :mod:`memcore_whitebox.validate`.

Options: ``scope`` (active scope; an unknown one is a :class:`~memcore.errors.ConfigError`),
``as_user`` (edit stable files in place), ``source`` (source written on observations that have
none; default ``memcore``), ``read_only`` (core's).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Self

from memcore.errors import (
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    ParseError,
    UnsafePathError,
    UnsupportedOperationError,
)
from memcore.frontmatter import FrontmatterDocument
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Relation, Severity, lf_body, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot, unchanged_by
from memcore.storage import (
    LocalStorage,
    Storage,
    TextFile,
    WriteSession,
    version_token,
)
from memcore_whitebox import _templates
from memcore_whitebox._blocks import parse_fields
from memcore_whitebox._bulk import BulkAdd, Memo, rendered
from memcore_whitebox._parse import MonthState, diag, looks_like_vault, month_state, numbered
from memcore_whitebox._readback import Built
from memcore_whitebox._scopes import OutOfScopeError, ScopeTable, file_visible, load_scopes, walk
from memcore_whitebox._tags import TagRegistry, parse_tags, stage_tags
from memcore_whitebox.codec import (
    FORMAT,
    edited_file,
    fact_place,
    file_meta,
    new_entry,
    observation_block,
    observation_date,
    other_scope,
    proposal_name,
    proposal_target,
    proposal_text,
    truthy,
)
from memcore_whitebox.mapping import STATUS_TO_WHITEBOX, kind_for_path
from memcore_whitebox.reference import WhiteBoxReference
from memcore_whitebox.validate import (
    block_problem,
    check_observation,
    is_observation_file,
    refuse_twins,
    scan,
)

__all__ = ["OutOfScopeError", "WhiteBoxProvider"]


class WhiteBoxProvider(BulkAdd, WhiteBoxReference, BaseProvider):
    """Read and write a WhiteBox vault.

    Args:
        location: The vault folder.
        **options: ``scope`` (active scope name), ``as_user`` (bool: edit stable files in
            place), ``source`` (default source for observations without one), ``read_only``.

    Raises:
        ConfigError: (on :meth:`open`) the folder is missing, or ``scope`` names no scope of
            the vault's scopes.md.
    """

    format_name: ClassVar[str] = FORMAT
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.APPEND_ONLY,
            Capability.SCOPES,
            Capability.CONCURRENT,
            Capability.BATCH,
        }
    )
    #: the format's own writes, refused on a read-only store as add and update are
    write_operations: ClassVar[frozenset[str]] = BaseProvider.write_operations | {
        "dispute",
        "propose_stable_edit",
        "promote",
    }

    #: what ``-o name=value`` may set (``read_only`` too); anything else is a ConfigError
    option_names = frozenset({"as_user", "scope", "source", "stable_files"})
    #: a migration (run by the person who owns both stores) rewrites the stable files its
    #: earlier runs wrote in place; without it every re-run filed another proposal
    migration_target_options: ClassVar[dict[str, Any]] = {"as_user": True}

    def __init__(self, location: str | os.PathLike[str], **options: Any) -> None:
        super().__init__(location, **options)
        self.root = Path(self.location)
        self.as_user = truthy(options.get("as_user", False))
        self.default_source = str(options.get("source") or "memcore")
        self._scopes: ScopeTable | None = None
        #: Stable files this instance created: it may amend them in place (not the user's).
        self._own_files: set[str] = set()
        #: Monthly files as the last session left them (no rescan while a file keeps that version).
        self._months: dict[str, MonthState] = {}
        #: The open session's monthly files (records pending) and tags of its adds, in order.
        self._open_months: dict[str, MonthState] = {}
        self._tag_groups: list[tuple[list[str], str]] = []
        #: tags.md as last read and its parse (tags already listed need no write)
        self._tags_seen: tuple[bytes, TagRegistry] | None = None
        #: observation blocks plan_ids rendered, for add_many (cleared when a session ends)
        self._rendered: Memo = {}
        self._built = Built()  # entries built from what this instance wrote, for a read of those bytes

    def make_storage(self) -> Storage:
        """The vault folder (messages call it the vault)."""
        return LocalStorage(self.root, label=FORMAT, noun="vault")

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` looks like a WhiteBox vault (:func:`~memcore_whitebox._parse.looks_like_vault`)."""
        return looks_like_vault(path)

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create a minimal vault (spec "File layout"): AGENTS.md, tags.md, observations/.

        ``stable_files=True`` adds the template identity.md and working-style.md.

        Raises:
            ConflictError: ``location`` already holds a vault (AGENTS.md or tags.md).
        """
        _templates.write_vault(Path(location), stable_files=truthy(options.get("stable_files", False)))

    @classmethod
    def init_store_like(cls, location: str, source: Any, **options: Any) -> list[str]:
        """A vault with ``source``'s AGENTS.md, tags.md… and month headers (``_templates.write_vault_like``)."""
        return _templates.write_vault_like(Path(location), Path(os.fspath(source.location)))

    def _load_scopes(self) -> ScopeTable:
        self._scopes = load_scopes(self.root, self._read, self.options.get("scope"))
        return self._scopes

    def open(self) -> Self:
        """Check the vault folder exists and load scopes.md; return ``self``.

        Raises:
            ConfigError: Missing folder, or unknown active scope.
            UnsafePathError: scopes.md is a symlink (scopes are never read through a link).
        """
        if not self.root.is_dir():
            raise ConfigError(
                f"whitebox: {self.root} is not a folder; create a vault with "
                f"`memcore init --store whitebox:{self.root}`"
            )
        self._load_scopes()
        return super().open()

    @property
    def scopes(self) -> ScopeTable:
        """The vault's scopes and the active one (loaded on first use)."""
        return self._scopes if self._scopes is not None else self._load_scopes()

    @property
    def active_scope(self) -> str | None:
        """Name of the active scope, or ``None``."""
        active = self.scopes.active
        return active.name if active is not None else None

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry with ``entry_id``.

        Raises:
            EntryNotFoundError: No such entry.
            AmbiguousIdError: The id's file has NFC/NFD twins (both spellings named).
        """
        refuse_twins(self.root, entry_id)
        return super().get(entry_id)

    #: Whether ``rel`` is a monthly observation file (``observations/<name>.md``).
    is_observation_file = staticmethod(is_observation_file)

    # -- reading ----------------------------------------------------------------------
    def _read(self, rel: str) -> tuple[bytes, str] | None:
        """Return ``(bytes, version)`` of the vault file ``rel``; ``None`` if unreadable."""
        try:
            return self.storage.read(rel)
        except (OSError, UnsafePathError):
            return None

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield entries in path order (observations in file order), filtered by ``query``.

        Files are read one at a time, so memory stays flat however large the vault is. Inside
        a write session (:meth:`batch`), what it staged so far is written out first.
        """
        self._sync()
        query = query or Query()
        files: Iterable[str]
        if query.ids is not None:
            wanted = {unicodedata.normalize("NFC", i) for i in query.ids}
            names = sorted({i.split("#", 1)[0] for i in wanted})
            files = [n for n in names if self._visible(n)]
        else:
            files = walk(self.root, self.scopes)
        if query.model_dump(exclude_defaults=True):
            yield from query.apply(self._entries(files))
        else:
            yield from self._entries(files)

    # memcore.provider.FileBackedProvider: lets memcore.index refresh file by file.
    def source_files(self) -> list[str]:
        """Return every visible entry file (stable facts, proposals, monthly logs), vault-relative."""
        self._sync()
        return list(walk(self.root, self.scopes))

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the entries read from one vault-relative file (nothing if it is not visible)."""
        self._sync()
        if self._visible(path):
            yield from self._entries([path])

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the file ``entry`` lives in: its id up to ``#`` (``observations/2026-04.md#3``)."""
        return (entry.id or "").split("#", 1)[0]

    def check_in_scope(self, rel: str) -> None:
        """Refuse a write to ``rel`` outside the active scope (:class:`OutOfScopeError`)."""
        self.scopes.check_write(rel, self.root)

    def _visible(self, rel: str) -> bool:
        return file_visible(self.root, self.scopes, rel)

    def _entries(self, files: Iterable[str]) -> Iterator[MemoryEntry]:
        for rel in files:
            found = self._read(rel)
            if found is None:
                continue
            if is_observation_file(rel):
                yield from self._observations(rel, found[0], None, None)
            else:
                entry = self._built.file_entry(rel, found[0], found[1], None, self.scopes.active)
                if entry is not None:
                    yield entry

    def _observations(
        self, rel: str, data: bytes, diags: list[Diagnostic] | None, registry: TagRegistry | None
    ) -> Iterator[MemoryEntry]:
        try:
            text = TextFile.decode(data, path=rel).text
        except ParseError as exc:
            if diags is not None:
                diags.append(diag(rel, exc.line, "wb.not-utf8", Severity.ERROR, str(exc)))
            return
        active = self.scopes.active
        for number, blk, fields, file_meta_ in numbered(text, rel, diags, block_problem):
            if other_scope(fields.values, active):
                continue
            if diags is not None:
                check_observation(rel, f"{rel}#{number}", blk, fields, registry, diags)
            yield self._built.observation_entry(rel, number, text, blk, fields, file_meta_, diags, active)

    # -- writing ----------------------------------------------------------------------
    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Store a new entry.

        ``kind=fact``: a stable file (path from ``extra["whitebox"]["path"]``, the id, or a slug
        of the title); ``kind=proposal`` with a target: a proposal file; any other: an
        observation appended to ``observations/YYYY-MM.md`` (month of ``created_at``, default
        today UTC). New tags go to tags.md under Proposed when the session ends. The block
        count of a monthly file is kept while the file keeps its version (no rescan).

        Returns:
            The entry as stored (id, version, timestamps set).

        Raises:
            OutOfScopeError: The target file is outside the active scope.
            ConflictError: A stable file with that path exists; a monthly file changed on disk
                while the session was adding to it.
            ReadOnlyStoreError: The store was opened read-only.
            UnsafePathError: The entry has tags and tags.md is a symlink (nothing written).
            InvalidEntryError: A tag tags.md cannot hold, a file name over 255 bytes, or a body
                that cannot be one block (an unclosed fenced code block).
            ParseError: The monthly file is not UTF-8 or ends inside an unterminated fence.
        """
        self.require(Capability.ADD, "add")
        entry = self._check_new(entry)
        with self.session("add") as session:
            return self._add_new(entry, session)

    def _add_new(self, entry: MemoryEntry, session: WriteSession, *, bulk: bool = False) -> MemoryEntry:
        """Write ``entry`` (:meth:`_check_new` passed) in ``session``; ``bulk``: :meth:`add_many`'s (its memo)."""
        session.count()
        if entry.kind is Kind.FACT:
            stored = self._add_file(entry, session)
        elif entry.kind is Kind.PROPOSAL and proposal_target(entry):
            stored = self._add_proposal_entry(entry)
        else:
            stored = self._add_observation(entry, session, bulk=bulk)
        if stored.tags:
            self._tag_groups.append((list(stored.tags), stored.source or self.default_source))
        return stored

    def _check_new(self, entry: MemoryEntry, link: Callable[[], bool] | None = None) -> MemoryEntry:
        """Refuse what add() cannot write whatever the kind; return the entry with its kind set.

        ``link``: tells whether tags.md is a symlink (:meth:`add_many` asks the disk once per call).
        """
        entry = new_entry(entry)
        if entry.tags and (link() if link is not None else (self.root / "tags.md").is_symlink()):
            raise UnsafePathError(
                f"whitebox: {self.root / 'tags.md'} is a symlink; memcore neither reads nor replaces it, so "
                "new tags cannot be registered: replace it with the file itself (nothing was written)"
            )
        return entry

    def _fact_place(self, entry: MemoryEntry) -> tuple[str, bool]:
        """Return (vault-relative path, chosen explicitly) for a new stable fact, checked.

        Raises:
            InvalidEntryError: Not a place for a fact, or one the vault reader never reads.
            OutOfScopeError: See :meth:`check_in_scope` and :meth:`_check_entry_scope`.
        """
        rel, explicit = fact_place(entry)
        self.check_in_scope(rel)
        self.scopes.check_entry(entry.scope)
        return rel, explicit

    def _taken(self, rel: str) -> bool:
        """Return whether a file is at ``rel``, as the open session will leave it."""
        session = self.active_session()
        if session is not None and rel in session.staged:
            return session.staged[rel] is not None
        return self.storage.exists(rel)

    def _free_fact_path(self, rel: str, explicit: bool, taken: Container[str] = frozenset()) -> str:
        """``rel``, or ``<stem>-2.md``, ``-3``... when a file (or a path in ``taken``) holds it.

        Raises:
            ConflictError: ``rel`` was chosen explicitly and is taken.
        """
        if rel not in taken and not self._taken(rel):
            return rel
        if explicit:
            raise ConflictError(f"whitebox: {rel} already exists in {self.root}; update it instead")
        stem, n = rel.removesuffix(".md"), 2
        while rel in taken or self._taken(rel):
            rel = f"{stem}-{n}.md"
            n += 1
        return rel

    # the write session's hooks
    def _session_started(self, session: WriteSession) -> None:
        self._open_months, self._tag_groups, self._built = {}, [], Built()

    def _session_ending(self, session: WriteSession) -> None:
        self._stage(session)

    def _session_ended(self, session: WriteSession, ok: bool) -> None:
        self._rendered = {}
        for rel, state in self._open_months.items():
            if ok:
                state.version = session.version(rel)
                self._months[rel] = state
            else:
                self._months.pop(rel, None)  # unknown now: the next add scans the file again
        if not ok:  # a fact staged but never written is not this instance's to amend
            self._own_files = {rel for rel in self._own_files if self.storage.exists(rel)}
        self._open_months, self._tag_groups = {}, []

    def _sync(self) -> None:
        """Inside a session: stage and flush what it holds, so that a read of the files sees it."""
        session = self.active_session()
        if session is not None:
            self._stage(session)
            session.flush()

    def _stage(self, session: WriteSession) -> None:
        """Stage the pending records of each monthly file, then the new tags in tags.md.

        Raises:
            ConflictError: A monthly file changed since the session read it (the reference tool
                takes no lock): the ids given to its pending records would be wrong, so none is
                written.
        """
        for rel, state in list(self._open_months.items()):
            if not state.pending:
                continue
            try:
                now = self.storage.stat(rel).version
            except FileNotFoundError:
                now = None
            if now != session.version(rel):
                count = len(state.pending)
                del self._open_months[rel]
                self._months.pop(rel, None)
                raise ConflictError(
                    f"whitebox: {self.root / rel} changed while memcore was adding to it (another writer?); the "
                    f"{count} observation(s) for it were not written, since the ids given to them would be "
                    "wrong: run again"
                )
            session.write(rel, state.appended(session.read(rel) or b""))
        groups, self._tag_groups = self._tag_groups, []
        if groups and not (self.root / "tags.md").is_symlink():  # never replaced through a link
            self._tags_seen = stage_tags(session, groups, self._tags_seen)

    def _month_state(self, rel: str, month: str, data: bytes, version: str | None) -> MonthState:
        """The state of a monthly file: the one the last session left while the version holds, else scanned."""
        known = self._months.get(rel)
        if known is not None and not known.pending and known.version == version:
            return known
        self._months.pop(rel, None)
        return month_state(rel, month, data, version)

    # observations
    def _observation_block(self, entry: MemoryEntry, *, memo: Memo | None = None) -> tuple[str, str, str, Any]:
        """Return (monthly file, ``YYYY-MM``, block text, its scan) of a new observation; check it.

        Line breaks are the file's own: a CR in the body (CRLF, or alone) is written as LF, as in
        stable files (TextFile); add() returns the body so, and a migration keeps the original.
        ``memo``: blocks already rendered and checked (:func:`~memcore_whitebox._bulk.rendered`).

        Raises:
            OutOfScopeError: The monthly file or the entry's scope is outside the active scope.
            InvalidEntryError: The body cannot be one block (an unclosed fenced code block).
        """
        entry = lf_body(entry)
        date = observation_date(entry)
        rel = f"observations/{date[:7]}.md"
        self.check_in_scope(rel)
        self.scopes.check_entry(entry.scope)
        if memo is not None:
            block, blk = rendered(memo, entry, date, self.default_source, self.active_scope)
        else:
            block, blk = observation_block(entry, date, self.default_source, self.active_scope)
        return rel, date[:7], block, blk

    def _add_observation(self, entry: MemoryEntry, session: WriteSession, *, bulk: bool = False) -> MemoryEntry:
        rel, month, block, blk = self._observation_block(entry, memo=self._rendered if bulk else None)
        assert blk.frontmatter is not None
        state = self._open_months.get(rel)
        if state is None:  # read once per session; its path is checked by the storage
            data = session.read(rel)
            state = self._month_state(rel, month, data or b"", session.version(rel))
            self._open_months[rel] = state
        number = state.append(block)
        fields = parse_fields(blk.frontmatter)
        return self._built.written_observation(rel, number, block, blk, fields, self.scopes.active)

    def dispute(
        self,
        fact_id: str,
        body: str,
        *,
        source: str | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
    ) -> MemoryEntry:
        """Dispute a stable fact the spec's way: append an observation tagged ``conflict``.

        Returns:
            The observation as stored, with a ``disputes`` relation to ``fact_id``.

        Raises:
            EntryNotFoundError: No such fact.
        """
        fact = self.get(fact_id)
        entry = MemoryEntry(
            kind=Kind.OBSERVATION,
            body=body,
            tags=["conflict", *[t for t in tags if t != "conflict"]],
            source=source or self.default_source,
            confidence=confidence,
            relations=[Relation(type="disputes", target=fact.id or fact_id)],
        )
        return self.add(entry)

    # stable files
    def _add_file(self, entry: MemoryEntry, session: WriteSession) -> MemoryEntry:
        # Stable files have no timestamps in WhiteBox 1.0: none is invented (a time the entry
        # carries is kept under memcore:, like every field the format cannot hold).
        rel, explicit = self._fact_place(entry)
        rel = self._free_fact_path(rel, explicit)
        meta = file_meta(entry, rel, new=True, active_scope=self.active_scope)
        doc = FrontmatterDocument.new(meta, entry.body)
        raw = doc.dumps().encode("utf-8")
        session.write(rel, raw)
        self._own_files.add(rel)
        return self._written(rel, raw)

    def _written(self, rel: str, raw: bytes) -> MemoryEntry:
        """Return the entry of the file ``rel`` just written with ``raw`` (what get() reads)."""
        entry = self._built.written_file(rel, raw, version_token(raw), self.scopes.active)
        if entry is None:  # pragma: no cover - written in scope, so visible
            raise EntryNotFoundError(f"whitebox: {rel} not readable after writing")
        return entry

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Change a stable file: a proposal by default, in place with ``as_user=True``.

        Without ``as_user`` (agents propose, never overwrite) :meth:`propose` writes and returns
        a proposal. With it the file is rewritten in place, touching only the frontmatter keys
        that changed; the rest of the file is kept byte for byte.

        Raises:
            UnsupportedOperationError: ``entry`` is an observation (append-only).
            EntryNotFoundError: No such file.
            ConflictError: ``expected_version`` (or ``entry.version``) is stale.
            ParseError: The file's frontmatter cannot be parsed (it is not rewritten).
        """
        self.require(Capability.UPDATE, "update")
        if entry.id is None:
            raise InvalidEntryError("whitebox: update needs the entry's id")
        if "#" in entry.id:
            raise UnsupportedOperationError(
                f"whitebox: observations are append-only; {entry.id} cannot be updated "
                "(add a new observation instead, tagged `conflict` to dispute a fact)"
            )
        rel = unicodedata.normalize("NFC", entry.id)
        refuse_twins(self.root, entry.id)
        with self.session("update") as session:
            session.count()
            current = self.get(rel)
            expected = expected_version if expected_version is not None else entry.version
            if expected is not None and expected != current.version:
                raise ConflictError(
                    f"whitebox: {rel} changed since it was read (version {expected} != {current.version}); "
                    "read it again and retry"
                )
            self.check_in_scope(rel)
            if unchanged_by(current, entry):
                return current  # a no-change update writes no byte, and proposes nothing
            if not self.as_user and rel not in self._own_files:
                raw = entry.extra.get(FORMAT, {}).get("rationale")
                rationale = raw if isinstance(raw, str) else None
                return self.propose_stable_edit(
                    rel,
                    source=entry.source or self.default_source,
                    rationale=rationale or "Edit proposed through memcore; review it and apply it by hand.",
                    content=self._proposed_content(session.read(rel), rel, current, entry),
                )
            data = session.read(rel)
            if data is None or session.version(rel) != current.version:
                raise ConflictError(f"whitebox: {rel} changed while updating; read it again and retry")
            if current.updated_at is not None and entry.updated_at in (None, current.updated_at):
                # memcore keeps times on the files it manages; a user's own file gets none added.
                entry = entry.model_copy(update={"updated_at": utc_now()})
            desired = file_meta(entry, rel, new=False, active_scope=self.active_scope)
            if kind_for_path(rel) is Kind.PROPOSAL:
                desired["status"] = STATUS_TO_WHITEBOX.get(entry.status, entry.status.value)
            written = edited_file(data, rel, desired, entry.body)
            session.write(rel, written)
        return self._written(rel, written)

    # proposals and promotion
    def _proposed_content(self, data: bytes | None, rel: str, current: MemoryEntry, entry: MemoryEntry) -> str:
        """What a proposal for ``rel`` offers: the new body, or the whole edited file when metadata changed.

        A change of the body alone proposes the body, as the reference ``proposeStableEdit``
        callers do. A change of the title, tags or any other frontmatter key proposes the file
        as the edit would leave it, so that the proposal holds every change it was asked for.
        A file whose frontmatter cannot be parsed proposes the body after a list of the new field
        values.
        """
        if data is None:
            return entry.body
        # the time of the edit is the proposal's own (proposed_at), not a change it proposes
        entry = entry.model_copy(update={"updated_at": current.updated_at})
        desired = file_meta(entry, rel, new=False, active_scope=self.active_scope)
        if desired == file_meta(current, rel, new=False, active_scope=self.active_scope):
            return entry.body
        try:
            return TextFile.decode(edited_file(data, rel, desired, entry.body), path=rel).text
        except ParseError:
            changed = [
                f"- {name}: {getattr(entry, name)!r}"
                for name in ("title", "tags", "source", "confidence", "status", "scope")
                if getattr(entry, name) != getattr(current, name)
            ]
            return "Proposed fields:\n\n" + "\n".join(changed) + "\n\n" + entry.body if changed else entry.body

    def _add_proposal_entry(self, entry: MemoryEntry) -> MemoryEntry:
        target = proposal_target(entry)
        assert target is not None
        wb = entry.extra.get(FORMAT, {})
        raw_rationale, raw_content = wb.get("rationale"), wb.get("proposed_content")
        rationale = raw_rationale if isinstance(raw_rationale, str) else None
        content = raw_content if isinstance(raw_content, str) else entry.body
        return self.propose_stable_edit(
            target,
            source=entry.source or self.default_source,
            rationale=rationale or entry.title or "",
            content=content,
        )

    def propose_stable_edit(
        self, target: str, *, source: str, rationale: str, content: str, extra: dict[str, Any] | None = None
    ) -> MemoryEntry:
        """Write ``proposed/<timestamp>-<slug>.md`` proposing a change of ``target``, as ``proposeStableEdit``.

        Not named ``propose``: that name is the review-queue write of an entry (Maka's
        ``propose(entry)``), which ``memcore serve --propose`` looks for; a WhiteBox proposal is
        a stable-file edit, made through :meth:`update` of a stable fact.

        As the reference tool: the target must be in scope; proposed/ is where proposals go
        whatever the scope's folders. ``extra`` adds frontmatter keys (``derived_from``).

        Returns:
            The proposal as stored.

        Raises:
            OutOfScopeError: ``target`` is outside the active scope.
            UnsafePathError: ``target`` leaves the vault.
        """
        self.check_in_scope(target)
        self.storage.exists(target)  # refuses a target that leaves the vault
        now = utc_now()
        stem = proposal_name(target, now)
        text = proposal_text(target, source=source, rationale=rationale, content=content, extra=extra or {}, now=now)
        raw = text.encode("utf-8")
        with self.session("propose_stable_edit") as session:
            rel, n = f"{stem}.md", 2
            while self._taken(rel):
                rel, n = f"{stem}-{n}.md", n + 1
            session.write(rel, raw)
        return self._written(rel, raw)

    def promote(self, target: str, edit: Callable[[bytes | None], bytes]) -> str:
        """Rewrite the stable file ``target`` as ``edit(its bytes, or None when missing)`` (auto-promotion).

        Returns:
            ``target``.

        Raises:
            OutOfScopeError: ``target`` is outside the active scope.
        """
        self.check_in_scope(target)
        with self.session("promote") as session:
            session.write(target, edit(session.read(target)))
        return target

    # tags
    def tag_registry(self) -> TagRegistry | None:
        """Return tags.md parsed, or ``None`` when the vault has none (or it is out of scope)."""
        if (self.root / "tags.md").is_symlink():  # never read through a link (wb.symlink)
            return None
        found = self._read("tags.md")
        try:
            return parse_tags(TextFile.decode(found[0], path="tags.md").text) if found is not None else None
        except ParseError:
            return None

    # -- checking ---------------------------------------------------------------------
    def validate(self) -> list[Diagnostic]:
        """Check the vault (the part the active scope shows); never raises for bad files.

        The ``wb.*`` diagnostics are listed in :mod:`memcore_whitebox.validate`; each names the
        file (vault-relative) and line.
        """
        return scan(self, entries=None)  # core adds the temp files of interrupted writes

    def read_all(self) -> StoreSnapshot:
        """Read every entry and check the vault in one pass over the files.

        Equals ``StoreSnapshot(list(self.iter_entries()), self.validate())``: each file is
        read and parsed once, its entries and its diagnostics collected together.
        """
        entries: list[MemoryEntry] = []
        diags = scan(self, entries=entries)
        return StoreSnapshot(entries, diags)
