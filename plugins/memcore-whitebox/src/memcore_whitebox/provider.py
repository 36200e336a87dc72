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

Writing many entries: :meth:`WhiteBoxProvider.batch` appends each monthly file's records in one
write and updates tags.md once; :meth:`WhiteBoxProvider.read_all` reads the vault and checks it
in one pass.

Options: ``scope`` (active scope; an unknown one is a :class:`~memcore.errors.ConfigError`),
``as_user`` (edit stable files in place), ``source`` (source written on observations that have
none; default ``memcore``), ``read_only``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import unicodedata
import zlib
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import ValidationError

from memcore.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    InvalidEntryError,
    MemcoreError,
    ParseError,
    ReadOnlyStoreError,
    UnsafePathError,
    UnsupportedOperationError,
)
from memcore.frontmatter import FrontmatterDocument, flow_list, parse_frontmatter, read_frontmatter
from memcore.mapping import CONFIDENCE_LABELS, confidence_from_label, confidence_to_label, format_utc
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Relation, Severity, Status, lf_body, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.storage import (
    TempSweeper,
    TextFile,
    append_record,
    atomic_write,
    check_component,
    file_lock,
    gate_allows,
    list_names,
    on_disk_path,
    resolved_rel,
    safe_join,
    temp_file_diagnostics,
)
from memcore_whitebox._blocks import Fields, RawBlock, parse_fields, parse_inline_list, scan_blocks, to_json_value
from memcore_whitebox._render import json_line, month_header, render_block, render_tags, yaml_scalar
from memcore_whitebox._scopes import Scope, ScopeTable, parse_scopes
from memcore_whitebox._tags import TagRegistry, append_proposed, parse_tags, registrable
from memcore_whitebox.mapping import (
    SKIPPED_FOLDERS,
    SPECIAL_ROOT_FILES,
    STATUS_FROM_WHITEBOX,
    STATUS_TO_WHITEBOX,
    V11_KEYS,
    kind_for_path,
)

__all__ = ["OutOfScopeError", "WhiteBoxProvider"]

FORMAT = "whitebox"
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTH_FILE = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])(?:-part-(\d+))?\.md$")
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
#: Observation keys with a place of their own (never written from ``fields``).
_OBS_OWN_KEYS = frozenset({"date", "source", "tags", "confidence", "title", "scope", "memcore", *V11_KEYS})
#: ``extra["whitebox"]`` keys the observation writer handles itself.
_WB_OBS_HANDLED = frozenset({"confidence_label", "fields", "date", "file", "layout", *V11_KEYS})
#: Frontmatter keys of stable files that memcore manages (and may remove).
_FILE_MANAGED = ("title", "tags", "source", "confidence", "scope", "memcore")
_BASE_KEYS = frozenset({"date", "source", "tags", "confidence"})
_DATE_CACHE: dict[str, datetime] = {}
_OBS_TEMPLATE = MemoryEntry(kind=Kind.OBSERVATION)


class OutOfScopeError(UnsafePathError):
    """A read or write names a file outside the session's active WhiteBox scope."""


@dataclass(slots=True)
class _MonthState:
    """What memcore knows about one monthly observation file, so that an add needs no rescan.

    Attributes:
        path: The file (checked with safe_join).
        size: Bytes on disk (as last read or written by this provider).
        crc: CRC-32 of those bytes; with ``size`` it tells whether the file is still the one
            described (another writer changed it otherwise, and it is scanned again).
        count: Observation blocks of the file's text including ``pending``.
        newline: The file's line ending (records are written with it).
        prefix: What goes before the next block (the month header for an empty file; the
            ``---`` separator with its blank lines otherwise).
        rescan: The file's text when the next record is appended to text memcore did not write
            (then ``count`` is recounted on that text plus the record, exactly as a scan of the
            file would count it); ``None`` when the file ends with a block memcore appended.
        rewrite: The file holds only blank bytes: the first write replaces it whole.
        pending: Records (``\n`` line endings) acknowledged in a batch, not yet on disk.
    """

    path: Path
    size: int
    crc: int
    count: int
    newline: str
    prefix: str
    rescan: str | None
    rewrite: bool
    pending: list[str] = field(default_factory=list)

    def append(self, block: str) -> int:
        """Add ``block`` (a self-contained observation block) as a pending record; return its N."""
        record = self.prefix + block + "\n"
        if self.rescan is not None:
            # The record may complete what the text left open (a bare block's frontmatter
            # closed by the "---" separator): count the blocks of the text as it will be.
            # The new block is the last one.
            number = sum(1 for _ in _numbered(self.rescan + record, "", None, None))
            self.rescan = None
        else:
            number = self.count + 1
        self.count = number
        self.prefix = "\n---\n\n"  # what the reference appendObservation puts after a block
        self.pending.append(record)
        return number


@dataclass
class _Batch:
    """State of an open :meth:`WhiteBoxProvider.batch` block."""

    thread: int
    stack: contextlib.ExitStack
    months: dict[str, _MonthState] = field(default_factory=dict)
    #: tags of each add, in order, with the source that used them (registered at the end)
    tags: list[tuple[list[str], str]] = field(default_factory=list)
    root_locked: bool = False


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _date(text: str) -> datetime | None:
    cached = _DATE_CACHE.get(text)
    if cached is not None:
        return cached
    m = _DATE_RE.match(text)
    if m is None:
        return None
    try:
        value = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    if len(_DATE_CACHE) < 100_000:
        _DATE_CACHE[text] = value
    return value


def _nfc(text: str) -> bool:
    return text.isascii() or unicodedata.is_normalized("NFC", text)


def _version(data: str | bytes) -> str:
    """Return a version token: CRC-32 and length of the UTF-8 bytes (16 hex digits at most).

    Observations cannot be updated, so their token only has to change when a person edits the
    block by hand; stable files get the same token over their whole bytes.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return f"{zlib.crc32(raw):08x}{len(raw):x}"


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json_line(value)


def _as_tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return parse_inline_list(value)
    if isinstance(value, list):
        out = []
        for item in value:
            # a YAML list item is already the exact text (plain ones come trimmed): keep it as is
            text = item if isinstance(item, str) else json_line(item)
            if text.strip():
                out.append(text)
        return out
    return [json_line(value)]


def _derived_title(body: str, rel: str) -> str:
    m = _H1.search(body)
    if m is not None:
        return m.group(1).strip()
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def _slug(text: str) -> str:
    norm = unicodedata.normalize("NFKD", text)
    ascii_text = norm.encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-")
    return slug[:60].strip("-")


def _listing(folder: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """Return ``folder``'s items sorted by name on disk, each with its NFC name; ``[]`` if unreadable."""
    try:
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    return [(unicodedata.normalize("NFC", item.name), item) for item in items]


class WhiteBoxProvider(BaseProvider):
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

    #: what ``-o name=value`` may set (``read_only`` too); anything else is a ConfigError
    option_names = frozenset({"as_user", "scope", "source", "stable_files"})
    #: a migration (run by the person who owns both stores) rewrites the stable files its
    #: earlier runs wrote in place; without it every re-run filed another proposal
    migration_target_options: ClassVar[dict[str, Any]] = {"as_user": True}

    def __init__(self, location: str | os.PathLike[str], *, read_only: bool = False, **options: Any) -> None:
        # ``read_only`` is a named parameter so that a conversion opens a WhiteBox source
        # read-only (memcore.convert.source_options_for looks for it).
        super().__init__(location, read_only=read_only, **options)
        self.root = Path(self.location)
        #: removes temp files of interrupted writes (older than a minute: month logs and stable
        #: files are locked one by one) on the first write of each open, under the vault lock
        self._temps = TempSweeper(self.root)
        self.as_user = _truthy(options.get("as_user", False))
        self.read_only = _truthy(read_only)
        self.default_source = str(options.get("source") or "memcore")
        self._scopes: ScopeTable | None = None
        self._validate_registry: TagRegistry | None = None
        #: Stable files this instance created: it may still amend them in place (it is
        #: completing its own entry, not overwriting one the user curates).
        self._own_files: set[str] = set()
        #: Monthly files this instance appended to: their block count and tail, so that the
        #: next add needs no rescan while the file is unchanged (checked by size and CRC-32).
        self._months: dict[str, _MonthState] = {}
        self._batch: _Batch | None = None
        #: tags.md as last read and its parse (tags already listed need no lock or write)
        self._tags_seen: tuple[bytes, TagRegistry] | None = None

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Return whether ``path`` looks like a WhiteBox vault (cheap, never raises).

        True for a folder with tags.md or AGENTS.md next to an observations/ folder, or with an
        AGENTS.md that names WhiteBox in its first 4 KiB (AGENTS.md alone is a file many agent
        tools use, so it is not enough by itself).
        """
        try:
            if not path.is_dir():
                return False
            agents = path / "AGENTS.md"
            if (path / "observations").is_dir() and ((path / "tags.md").is_file() or agents.is_file()):
                return True
            if agents.is_file():
                with agents.open("rb") as fh:
                    return b"whitebox" in fh.read(4096).lower()
            return False
        except OSError:
            return False

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        """Create a minimal vault (spec "File layout").

        Writes AGENTS.md, tags.md and an empty observations/ folder: a vault that sniffs as
        WhiteBox, validates clean and holds no entry yet. With ``stable_files=True`` it also
        writes the template identity.md and working-style.md the spec's minimal vault lists
        (they are stable facts, i.e. entries).

        Raises:
            ConflictError: ``location`` already holds a vault (AGENTS.md or tags.md).
        """
        from memcore_whitebox._templates import TEMPLATES

        root = Path(location)
        if (root / "AGENTS.md").exists() or (root / "tags.md").exists():
            raise ConflictError(f"whitebox: {root} already holds a vault (AGENTS.md or tags.md exists)")
        root.mkdir(parents=True, exist_ok=True)
        (root / "observations").mkdir(exist_ok=True)
        skip = set() if _truthy(options.get("stable_files", False)) else {"identity.md", "working-style.md"}
        for name, text in TEMPLATES.items():
            if name in skip:
                continue
            atomic_write(safe_join(root, name), text.encode("utf-8"))

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

    def _load_scopes(self) -> ScopeTable:
        path = self.root / "scopes.md"
        table = ScopeTable()
        if path.is_symlink():
            # scopes.md decides what a session may see: fail closed rather than read through it
            raise UnsafePathError(
                f"whitebox: {path} is a symlink; memcore does not read scopes through a link "
                "(replace it with the file itself)"
            )
        if path.is_file():
            table.present = True
            text = TextFile.decode(path.read_bytes(), path=str(path)).text
            for scope in parse_scopes(text, has_root_folder=(self.root / "root").is_dir()):
                table.scopes.setdefault(scope.name, scope)
        wanted = self.options.get("scope")
        if wanted not in (None, ""):
            name = str(wanted)
            if not table.present:
                raise ConfigError(
                    f"whitebox: scope {name!r} requested but {self.root} has no scopes.md; "
                    "drop the scope or declare it in scopes.md"
                )
            if name not in table.scopes:
                known = ", ".join(sorted(table.scopes)) or "none"
                raise ConfigError(f"whitebox: unknown scope {name!r} in {path} (declared: {known})")
            table.active = table.scopes[name]
        self._scopes = table
        return table

    @property
    def scopes(self) -> ScopeTable:
        """The vault's scopes and the active one (loaded on first use)."""
        return self._scopes if self._scopes is not None else self._load_scopes()

    @property
    def active_scope(self) -> str | None:
        """Name of the active scope, or ``None``."""
        active = self.scopes.active
        return active.name if active is not None else None

    # -- walking ----------------------------------------------------------------------
    def _walk(self) -> Iterator[str]:
        """Yield vault-relative paths of the visible ``.md`` files, in path order."""
        scopes = self.scopes
        # NFC/NFD twins (``Ünïcödé.md`` spelled both ways) normalise to one path: it is yielded
        # once, never once per spelling (both would read the NFC file). get/update refuse it
        # (AmbiguousIdError) and validate reports the twins.
        seen: set[str] = set()

        def walk(folder: Path, prefix: str) -> Iterator[str]:
            for name, item in _listing(folder):
                if name.startswith(".") or item.is_symlink():
                    continue
                rel = prefix + name
                if not item.is_dir():
                    if rel in seen:
                        continue
                    seen.add(rel)
                if item.is_dir():
                    if not prefix and name in SKIPPED_FOLDERS:
                        continue
                    if scopes.folder_visible(rel):
                        yield from walk(Path(item.path), rel + "/")
                elif name.endswith(".md") and item.is_file():
                    if not prefix and name in SPECIAL_ROOT_FILES:
                        continue
                    if scopes.visible(rel):
                        yield rel

        yield from walk(self.root, "")

    def _spellings(self, rel: str) -> list[str]:
        """Return every vault-relative path on disk that normalises (NFC) to ``rel``, sorted.

        More than one means NFC/NFD twins somewhere along the path (a file or a folder).
        """
        found = [""]
        for component in unicodedata.normalize("NFC", rel).split("/"):
            if component in {"", ".", ".."}:
                return []
            found = [prefix + name + "/"
                     for prefix in found
                     for name in list_names(self.root / prefix if prefix else self.root).get(component, [])]
            if not found:
                return []
        return sorted(p[:-1] for p in found)

    def _refuse_twins(self, entry_id: str) -> None:
        """Raise :class:`AmbiguousIdError` when the file of ``entry_id`` has NFC/NFD twins.

        Two files whose names differ only in Unicode normalisation read under one id; memcore
        would read one and write one of them, not saying which. Nothing is read or written.
        """
        rel = unicodedata.normalize("NFC", entry_id).split("#", 1)[0]
        if rel.isascii():  # an ASCII name has one spelling
            return
        places = self._spellings(rel)
        if len(places) > 1:
            raise AmbiguousIdError(
                f"whitebox: id {entry_id!a} names {len(places)} files whose names differ only in Unicode "
                f"normalisation (NFC/NFD twins): {', '.join(ascii(p) for p in places)}; memcore will not pick "
                "one. Merge them by hand and delete the other spelling (`memcore validate` reports "
                "whitebox.name-twins)",
                entry_id=entry_id, places=tuple(places))

    def get(self, entry_id: str) -> MemoryEntry:
        """Return the entry with ``entry_id``.

        Raises:
            EntryNotFoundError: No such entry.
            AmbiguousIdError: The id's file has NFC/NFD twins (both spellings named).
        """
        self._refuse_twins(entry_id)
        return super().get(entry_id)

    @staticmethod
    def is_observation_file(rel: str) -> bool:
        """Return whether ``rel`` is a monthly observation file (``observations/<name>.md``)."""
        return rel.startswith("observations/") and rel.count("/") == 1 and rel.endswith(".md")

    # -- reading ----------------------------------------------------------------------
    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        """Yield entries in path order (observations in file order), filtered by ``query``.

        Files are read one at a time, so memory stays flat however large the vault is. Inside
        :meth:`batch`, what the block wrote so far is written out first.
        """
        self._sync()
        query = query or Query()
        files: Iterable[str]
        if query.ids is not None:
            wanted = {unicodedata.normalize("NFC", i) for i in query.ids}
            names = sorted({i.split("#", 1)[0] for i in wanted})
            files = [n for n in names if self._file_visible(n)]
        else:
            files = self._walk()
        if query.model_dump(exclude_defaults=True):
            yield from query.apply(self._entries(files))
        else:
            yield from self._entries(files)

    # memcore.provider.FileBackedProvider: lets memcore.index refresh file by file.
    def source_files(self) -> list[str]:
        """Return every visible entry file (stable facts, proposals, monthly logs), vault-relative."""
        self._sync()
        return list(self._walk())

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        """Yield the entries read from one vault-relative file (nothing if it is not visible)."""
        self._sync()
        if self._file_visible(path):
            yield from self._entries([path])

    def file_of(self, entry: MemoryEntry) -> str:
        """Return the file ``entry`` lives in: its id up to ``#`` (``observations/2026-04.md#3``)."""
        return (entry.id or "").split("#", 1)[0]

    def _name_allowed(self, rel: str) -> bool:
        """Return whether the vault path ``rel`` may be served, judged on its name alone."""
        first = rel.split("/", 1)[0]
        if "/" not in rel and rel in SPECIAL_ROOT_FILES:
            return False
        if first in SKIPPED_FOLDERS and "/" in rel:
            return False
        return self.scopes.visible(rel)

    def _file_visible(self, rel: str) -> bool:
        try:
            path = safe_join(self.root, rel)
        except UnsafePathError:
            return False
        try:
            is_file = path.is_file()
        except OSError:  # a name too long for the file system, an unreadable folder...
            return False
        # the gate applies to where the path leads: a link into sensitive/ or out of scope is shut
        return rel.endswith(".md") and is_file and gate_allows(self.root, rel, self._name_allowed)

    def _symlink_diagnostics(self) -> list[Diagnostic]:
        """``wb.symlink`` for every link the listing skips in the visible part of the vault.

        An error where the link leads outside the vault or past a gate (``sensitive/``, another
        scope: never served), or where writes go through it (``observations/``, a month log);
        a warning otherwise (the link is not listed).
        """
        diags: list[Diagnostic] = []
        scopes = self.scopes

        def walk(folder: Path, prefix: str) -> None:
            for name, item in _listing(folder):
                rel = prefix + name
                if name.startswith(".") or (not prefix and name in {*SKIPPED_FOLDERS, "tags.md", "scopes.md"}):
                    continue  # tags.md has its own wb.symlink; a linked scopes.md refuses to open
                if item.is_symlink():
                    if not (scopes.folder_visible(rel) or scopes.visible(rel)):
                        continue
                    real = resolved_rel(self.root, rel)
                    if real is None:
                        why, severity = "it leads outside the vault; never read", Severity.ERROR
                    elif not gate_allows(self.root, rel, self._name_allowed) and self._name_allowed(rel):
                        why, severity = f"it leads to {real}, past the vault's gates; never served", Severity.ERROR
                    elif rel == "observations" or self.is_observation_file(rel):
                        why, severity = "observation writes fail through a link", Severity.ERROR
                    else:
                        why, severity = f"it leads to {real}; links are not listed", Severity.WARNING
                    diags.append(_diag(rel, None, "wb.symlink", severity,
                                       f"{rel} is a symlink: {why}; put the file or folder itself there"))
                elif item.is_dir() and scopes.folder_visible(rel):
                    walk(Path(item.path), rel + "/")

        walk(self.root, "")
        return diags

    def _entries(self, files: Iterable[str]) -> Iterator[MemoryEntry]:
        for rel in files:
            path = on_disk_path(self.root, rel)
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if self.is_observation_file(rel):
                yield from self._observations(rel, data, None)
            else:
                entry = self._file_entry(rel, data, None)
                if entry is not None:
                    yield entry

    # observations
    def _observations(
        self, rel: str, data: bytes, diags: list[Diagnostic] | None
    ) -> Iterator[MemoryEntry]:
        try:
            text = TextFile.decode(data, path=rel).text
        except ParseError as exc:
            if diags is not None:
                diags.append(_diag(rel, exc.line, "wb.not-utf8", Severity.ERROR, str(exc)))
            return
        active = self.scopes.active
        for number, blk, fields, file_meta in _numbered(text, rel, diags, self._block_problem):
            entry = self._observation_entry(rel, number, text, blk, fields, file_meta, diags, active)
            if entry is not None:
                yield entry

    def _block_problem(self, rel: str, blk: RawBlock, diags: list[Diagnostic]) -> None:
        if blk.problem is not None:
            diags.append(_diag(rel, blk.line, "wb.block-malformed", Severity.ERROR, blk.problem + "; fix the block"))
        elif blk.info and blk.body.lstrip().startswith("---"):
            diags.append(
                _diag(
                    rel, blk.line, "wb.fence-info", Severity.WARNING,
                    f"fenced block with info string {blk.info!r} looks like an observation but is "
                    "not read as one (WhiteBox fences have no info string)",
                )
            )

    def _observation_entry(
        self,
        rel: str,
        number: int,
        text: str,
        blk: RawBlock,
        fields: Fields,
        file_meta: dict[str, Any] | None,
        diags: list[Diagnostic] | None,
        active: Scope | None,
    ) -> MemoryEntry | None:
        values = fields.values
        entry_id = f"{rel}#{number}"
        scope_value = values.get("scope")
        if active is not None and isinstance(scope_value, str) and scope_value != active.name:
            return None
        if diags is not None:
            self._check_observation(rel, entry_id, blk, fields, diags)
        if fields.fast and file_meta is None and blk.layout == "fenced" and _BASE_KEYS.issuperset(values):
            # The reference writer's own shape: plain values, no extra keys. Every value is
            # already what MemoryEntry's validators would make of it, so the entry is built
            # from a validated template without re-validation.
            date_value = values.get("date")
            created = _DATE_CACHE.get(date_value) if isinstance(date_value, str) else None
            if created is None and isinstance(date_value, str):
                created = _date(date_value)
            label = values.get("confidence")
            confidence = CONFIDENCE_LABELS.get(label) if label is not None else None
            tags = values.get("tags") or []
            if created is not None and (label is None or confidence is not None) and (
                "".join(tags).isascii() or all(_nfc(t) for t in tags)
            ):
                return _OBS_TEMPLATE.model_copy(
                    update={
                        "id": entry_id,
                        "body": blk.body.strip(),
                        "tags": tags,
                        "confidence": confidence,
                        "source": values.get("source"),
                        "created_at": created,
                        "date_only": True,
                        "scope": active.name if active is not None else None,
                        "relations": [],
                        "extra": {},
                        "version": _version(text[blk.start : blk.end]),
                    }
                )
        wb: dict[str, Any] = {}
        simple = True
        date_value = values.get("date")
        created = None
        date_only = False
        if isinstance(date_value, str):
            created = _date(date_value)
            date_only = created is not None
        if created is None and date_value is not None:
            wb["date"] = date_value
        source = values.get("source")
        if source is not None and not isinstance(source, str):
            source = json_line(source)
        tags_value = values.get("tags")
        if isinstance(tags_value, list) and all(type(t) is str for t in tags_value):
            tags = tags_value
        else:
            tags = _as_tags(tags_value)
        if not all(_nfc(t) for t in tags):
            simple = False
        label = values.get("confidence")
        confidence, raw_label = _read_confidence(label)
        if raw_label is not None:
            wb["confidence_label"] = raw_label
        title = values.get("title")
        if not isinstance(title, str):
            title = "" if title is None else json_line(title)
        if title and not _nfc(title):
            simple = False
        if not _BASE_KEYS.issuperset(values) or fields.yaml_error is not None:
            for key, value in values.items():
                if key in V11_KEYS:
                    wb[key] = value
                elif key not in _OBS_OWN_KEYS:
                    wb.setdefault("fields", {})[key] = value
        if file_meta is not None:
            wb["file"] = file_meta
        if blk.layout != "fenced":
            wb["layout"] = blk.layout
        kw: dict[str, Any] = {
            "id": entry_id,
            "title": title,
            "body": blk.body.strip(),
            "tags": tags,
            "confidence": confidence,
            "source": source,
            "created_at": created,
            "date_only": date_only,
            "scope": scope_value if isinstance(scope_value, str) else (active.name if active else None),
            "relations": [],
            "extra": {FORMAT: wb} if wb else {},
            "version": _version(text[blk.start : blk.end]),
        }
        memcore = values.get("memcore")
        plain = dict(kw)  # the entry without the memcore: object, if that object cannot be used
        if memcore is not None:
            simple = False
            if isinstance(memcore, dict):
                _apply_memcore(kw, memcore, written_label=label)
            else:
                wb.setdefault("fields", {})["memcore"] = memcore
                kw["extra"] = {FORMAT: wb}
        if simple:
            return _OBS_TEMPLATE.model_copy(update=kw)
        try:
            return MemoryEntry(kind=kw.pop("kind", Kind.OBSERVATION), **kw)
        except ValidationError as exc:
            if diags is not None:
                diags.append(
                    _diag(rel, blk.line, "wb.memcore-field", Severity.WARNING,
                          f"memcore fields ignored: {exc.errors()[0]['msg']}", entry_id)
                )
            # As for a stable file: the block's own fields, none of the memcore: object's.
            plain["extra"] = {FORMAT: wb} if wb else {}
            return MemoryEntry(kind=Kind.OBSERVATION, **plain)

    def _check_observation(
        self, rel: str, entry_id: str, blk: RawBlock, fields: Fields, diags: list[Diagnostic]
    ) -> None:
        values = fields.values

        def at(key: str) -> int:
            return blk.fm_line + fields.lines.get(key, 1) - 1

        if blk.layout == "bare":
            diags.append(
                _diag(rel, blk.line, "wb.bare-block", Severity.INFO,
                      "unfenced observation (as the spec draws it): memcore reads it, the reference "
                      "parser does not", entry_id)
            )
        if fields.yaml_error is not None:
            diags.append(
                _diag(rel, blk.fm_line, "wb.yaml", Severity.WARNING,
                      f"frontmatter is not valid YAML, read line by line: {fields.yaml_error}", entry_id)
            )
        date_value = values.get("date")
        if date_value in (None, ""):
            diags.append(_diag(rel, blk.line, "wb.missing-date", Severity.ERROR,
                               "observation has no date; add `date: YYYY-MM-DD`", entry_id))
        elif not isinstance(date_value, str) or _date(date_value) is None:
            diags.append(_diag(rel, at("date"), "wb.bad-date", Severity.ERROR,
                               f"date {date_value!r} is not a YYYY-MM-DD date", entry_id))
        else:
            m = _MONTH_FILE.match(rel.rsplit("/", 1)[-1])
            if m is not None and date_value[:7] != f"{m.group(1)}-{m.group(2)}":
                diags.append(
                    _diag(rel, at("date"), "wb.wrong-month", Severity.ERROR,
                          f"date {date_value} belongs in observations/{date_value[:7]}.md", entry_id)
                )
        if values.get("source") in (None, ""):
            diags.append(_diag(rel, blk.line, "wb.missing-source", Severity.ERROR,
                               "observation has no source; add `source: <agent or model>`", entry_id))
        label = values.get("confidence")
        if label in (None, ""):
            diags.append(_diag(rel, blk.line, "wb.missing-confidence", Severity.WARNING,
                               "observation has no confidence; add `confidence: <"
                               + " | ".join(CONFIDENCE_LABELS) + ">`", entry_id))
        elif not isinstance(label, str) or confidence_from_label(label) is None:
            diags.append(
                _diag(rel, at("confidence"), "wb.unknown-confidence", Severity.ERROR,
                      f"unknown confidence {label!r}; use one of {', '.join(CONFIDENCE_LABELS)}", entry_id)
            )
        elif label not in CONFIDENCE_LABELS:
            diags.append(
                _diag(rel, at("confidence"), "wb.confidence-spelling", Severity.WARNING,
                      f"confidence {label!r} read as {confidence_from_label(label)}; the reference tools "
                      f"only know {', '.join(CONFIDENCE_LABELS)} exactly", entry_id)
            )
        if "tags" not in values:
            diags.append(_diag(rel, blk.line, "wb.missing-tags", Severity.WARNING,
                               "observation has no tags line", entry_id))
        elif values["tags"] is not None and not isinstance(values["tags"], list):
            diags.append(_diag(rel, at("tags"), "wb.tags-not-list", Severity.WARNING,
                               "tags should be an inline list, e.g. [a, b]", entry_id))
        registry = self._validate_registry
        if registry is not None:
            for tag in _as_tags(values.get("tags")):
                if not registry.knows(tag):
                    diags.append(
                        _diag(rel, at("tags"), "wb.unregistered-tag", Severity.WARNING,
                              f"tag {tag!r} is not in tags.md (Active or Proposed); agents append "
                              "new tags under Proposed", entry_id)
                    )
        if "```" in blk.body and blk.layout == "fenced":
            diags.append(_diag(rel, blk.line, "wb.nested-fence", Severity.INFO,
                               "body holds fenced code: the reference parser truncates it there", entry_id))

    # stable files
    def _file_entry(self, rel: str, data: bytes, diags: list[Diagnostic] | None) -> MemoryEntry | None:
        try:
            tf = TextFile.decode(data, path=rel)
        except ParseError as exc:
            if diags is not None:
                diags.append(_diag(rel, exc.line, "wb.not-utf8", Severity.ERROR, str(exc)))
            return None
        wb: dict[str, Any] = {}
        try:
            # read-only use: the fast reader (same values and errors as parse_frontmatter)
            front = read_frontmatter(tf.text, path=rel)
            meta: dict[str, Any] = to_json_value(front.metadata)
            body = front.body
        except ParseError as exc:
            if diags is not None:
                diags.append(_diag(rel, exc.line, "wb.frontmatter", Severity.ERROR, str(exc)))
            meta, body = {}, tf.text
            wb["unparsed"] = True
        active = self.scopes.active
        scope_value = meta.get("scope")
        if active is not None and isinstance(scope_value, str) and scope_value != active.name:
            return None
        kind = kind_for_path(rel)
        title = meta.get("title")
        title = title if isinstance(title, str) else _derived_title(body, rel)
        status = Status.ACTIVE
        created: Any = None
        relations: list[Relation] = []
        raw_status = meta.get("status")
        if kind is Kind.PROPOSAL:
            status = STATUS_FROM_WHITEBOX.get(str(raw_status), Status.PROPOSED)
            created = meta.get("proposed_at")
            target = meta.get("target")
            if isinstance(target, str) and target:
                relations.append(Relation(type="proposes", target=target))
                wb["target"] = target
            sections = _proposal_sections(body)
            wb.update(sections)
        elif isinstance(raw_status, str) and raw_status in STATUS_FROM_WHITEBOX:
            status = STATUS_FROM_WHITEBOX[raw_status]
        if created is None:
            created = meta.get("synthesized_at") or meta.get("created") or meta.get("date")
        date_only = isinstance(created, str) and _DATE_RE.match(created) is not None
        label = meta.get("confidence")
        confidence, raw_label = _read_confidence(label)
        if raw_label is not None:
            wb["confidence_label"] = raw_label
        for key in ("schema",):
            if key in meta:
                wb[key] = meta[key]
        handled = {"title", "tags", "source", "confidence", "scope", "memcore", "schema"}
        if kind is Kind.PROPOSAL:
            handled |= {"target", "proposed_at", "status"}
        others = {k: v for k, v in meta.items() if k not in handled}
        if others:
            wb["frontmatter"] = others
        if "/" in rel and kind is not Kind.FACT:
            wb["layer"] = rel.split("/", 1)[0]
        derived = meta.get("derived_from")
        if isinstance(derived, list):
            # v1.1 synthesized files (and memcore's promotion proposals) list their sources
            relations.extend(Relation(type="derived_from", target=t) for t in derived if isinstance(t, str) and t)
        kw: dict[str, Any] = {
            "id": rel,
            "kind": kind,
            "title": title,
            "body": body,
            "status": status,
            "tags": _as_tags(meta.get("tags")),
            "confidence": confidence,
            "source": _as_text(meta.get("source")),
            "created_at": None,
            "date_only": date_only,
            "scope": scope_value if isinstance(scope_value, str) else (active.name if active else None),
            "relations": relations,
            "extra": {FORMAT: wb} if wb else {},
            "version": _version(data),
        }
        if isinstance(created, str):
            try:
                kw["created_at"] = MemoryEntry(created_at=created).created_at
            except ValidationError:
                wb["created"] = created
                kw["date_only"] = False
        else:
            kw["date_only"] = False
        memcore = meta.get("memcore")
        if isinstance(memcore, dict):
            _apply_memcore(kw, memcore, written_label=label)
        try:
            return MemoryEntry(**kw)
        except ValidationError as exc:
            if diags is not None:
                diags.append(_diag(rel, 1, "wb.memcore-field", Severity.WARNING,
                                   f"memcore fields ignored: {exc.errors()[0]['msg']}", rel))
            for key in ("relations", "parent", "expires_at", "updated_at"):
                kw.pop(key, None)
            kw["kind"] = kind
            kw["status"] = status
            kw["created_at"] = None
            try:
                return MemoryEntry(**kw)
            except ValidationError as again:  # e.g. a lone surrogate from a "\ud800" YAML escape
                if diags is not None:
                    first = again.errors()[0]
                    where = ".".join(str(p) for p in first["loc"])
                    diags.append(_diag(rel, 1, "wb.invalid", Severity.ERROR,
                                       f"cannot read as an entry ({where}: {first['msg']}); fix the frontmatter",
                                       rel))
                return None

    # -- writing ----------------------------------------------------------------------
    def _check_entry_scope(self, entry: MemoryEntry) -> None:
        """Refuse an entry of another scope than the active one: this session could not read it back."""
        active = self.active_scope
        if active is not None and entry.scope not in (None, active):
            raise OutOfScopeError(
                f"whitebox: entry scope {entry.scope!r} is not the active scope {active!r}; it would be "
                "written where this session cannot read it (nothing written)"
            )

    def _check_writable(self, rel: str) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(f"whitebox: {self.root} was opened read-only")
        if not self.scopes.visible(rel):
            raise OutOfScopeError(
                f"whitebox: {rel} is outside the active scope {self.active_scope!r} of {self.root}"
            )

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Store a new entry.

        ``kind=fact`` writes a stable file (path from ``extra["whitebox"]["path"]``, the id, or
        a slug of the title); ``kind=proposal`` with a target (a ``proposes`` relation or
        ``extra["whitebox"]["target"]``) writes a proposal file; every other entry is appended
        as an observation to ``observations/YYYY-MM.md`` (month of ``created_at``, default
        today UTC). New tags are added to tags.md under Proposed. An add costs the same whatever
        the size of the monthly file: the block count is kept from the previous add while the
        file is unchanged (same size and CRC-32), and inside :meth:`batch` the file is not read
        again at all.

        Returns:
            The entry as stored (id, version, timestamps set).

        Raises:
            OutOfScopeError: The target file is outside the active scope.
            ConflictError: A stable file with that path exists.
            ReadOnlyStoreError: The store was opened read-only.
            UnsafePathError: The entry has tags and tags.md is a symlink (nothing written).
            InvalidEntryError: A tag tags.md cannot hold (backtick, line break), a file name
                over 255 bytes, or an observation body that cannot be one block (it opens a
                fenced code block it does not close).
            ParseError: The monthly file is not UTF-8 or ends inside an unterminated fence.
        """
        self.require(Capability.ADD, "add")
        entry = self._check_new(entry)
        self._sweep_temps()
        if entry.kind is Kind.FACT:
            stored = self._add_file(entry)
        elif entry.kind is Kind.PROPOSAL and _proposal_target(entry):
            stored = self._add_proposal_entry(entry)
        else:
            stored = self._add_observation(entry)
        batch = self._active_batch()
        if batch is not None:
            if stored.tags:
                batch.tags.append((list(stored.tags), stored.source or self.default_source))
        else:
            self._register_tags([(list(stored.tags), stored.source or self.default_source)])
        return stored

    def _check_new(self, entry: MemoryEntry) -> MemoryEntry:
        """Refuse what add() cannot write whatever the kind; return the entry with its kind set."""
        unlisted = [t for t in entry.tags if not registrable(t)]
        if unlisted:
            raise InvalidEntryError(
                f"whitebox: tag(s) {', '.join(map(repr, unlisted))} cannot be listed in tags.md (no backtick "
                "or line break in a tag); nothing was written"
            )
        if entry.tags and not self.read_only and (self.root / "tags.md").is_symlink():
            raise UnsafePathError(
                f"whitebox: {self.root / 'tags.md'} is a symlink; memcore neither reads nor replaces it, so "
                "new tags cannot be registered: replace it with the file itself (nothing was written)"
            )
        if "kind" not in entry.model_fields_set and entry.kind is Kind.NOTE:
            # No kind chosen: WhiteBox's own default is an observation.
            entry = entry.model_copy(update={"kind": Kind.OBSERVATION})
        return entry

    def plan_ids(self, entries: Sequence[MemoryEntry]) -> list[str | None]:
        """Return the ids :meth:`add` would give ``entries``, added in this order now (nothing written).

        An observation's id is its position, ``observations/<YYYY-MM>.md#<N>`` (N counts the
        blocks of the monthly file, spec "Observations"); a stable fact's is its path (a slug
        of the title, ``-2``, ``-3``... when taken). Each entry goes through the checks
        :meth:`add` makes first, so one that add would refuse gets ``None`` and takes no
        number. A proposal gets ``None``: its file name carries the time of the write.

        Args:
            entries: Entries about to be added, in order.

        Returns:
            One id or ``None`` per entry, in order.
        """
        self.require(Capability.ADD, "plan_ids")
        batch = self._active_batch()
        months: dict[str, _MonthState] = {}
        taken: set[str] = set()
        planned: list[str | None] = []
        for entry in entries:
            try:
                entry = self._check_new(entry)
                if entry.kind is Kind.FACT:
                    planned.append(self._plan_fact(entry, taken))
                elif entry.kind is Kind.PROPOSAL and _proposal_target(entry):
                    planned.append(None)
                else:
                    rel, month, block, _blk = self._observation_block(entry)
                    state = months.get(rel)
                    if state is None:
                        known = batch.months.get(rel) if batch is not None else None
                        if known is None:
                            known = self._month_state(rel, month, safe_join(self.root, "observations", f"{month}.md"))
                        state = months[rel] = replace(known, pending=[])  # a copy: append() changes it
                    planned.append(f"{rel}#{state.append(block)}")
            except (MemcoreError, ValueError, OSError):
                planned.append(None)
        return planned

    def _plan_fact(self, entry: MemoryEntry, taken: set[str]) -> str:
        """The path :meth:`_add_file` would write ``entry`` to, given the paths ``taken`` before it.

        Raises:
            MemcoreError: What :meth:`_add_file` would raise before writing.
        """
        rel, explicit = self._fact_place(entry)
        rel = self._free_fact_path(rel, explicit, taken)
        taken.add(rel)
        return rel

    def _fact_place(self, entry: MemoryEntry) -> tuple[str, bool]:
        """Return (vault-relative path, chosen explicitly) for a new stable fact, checked.

        Raises:
            InvalidEntryError: Not a place for a fact, or one the vault reader never reads.
            ReadOnlyStoreError, OutOfScopeError: See :meth:`_check_writable`.
        """
        rel, explicit = self._fact_rel(entry)
        _check_name_lengths(rel)
        if self.is_observation_file(rel) or ("/" not in rel and rel in SPECIAL_ROOT_FILES):
            raise InvalidEntryError(f"whitebox: {rel} is not a place for a stable fact")
        unread = _unread_path(rel)
        if unread is not None:
            raise InvalidEntryError(f"whitebox: {rel}: {unread}, so the fact could not be read back (nothing written)")
        self._check_writable(rel)
        self._check_entry_scope(entry)
        return rel, explicit

    def _free_fact_path(self, rel: str, explicit: bool, taken: Container[str] = frozenset()) -> str:
        """``rel``, or ``<stem>-2.md``, ``-3``... when a file (or a path in ``taken``) holds it.

        Raises:
            ConflictError: ``rel`` was chosen explicitly and is taken.
        """
        if rel not in taken and not safe_join(self.root, rel).exists():
            return rel
        if explicit:
            raise ConflictError(f"whitebox: {rel} already exists in {self.root}; update it instead")
        stem, n = rel.removesuffix(".md"), 2
        while rel in taken or safe_join(self.root, rel).exists():
            rel = f"{stem}-{n}.md"
            n += 1
        return rel

    # batches
    def _active_batch(self) -> _Batch | None:
        batch = self._batch
        return batch if batch is not None and batch.thread == threading.get_ident() else None

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group adds: each monthly file and tags.md are written once, when the block ends.

        Inside the block an add costs the same whatever the size of the file it goes to: each
        monthly file touched is locked and read once (its lock is held until the end), the
        block count and tail are kept in memory, and the new records wait in memory; tags to
        register are collected. When the outermost block ends the records of each file are
        appended in one write (a new file or one holding only blank lines is written whole,
        atomically) and tags.md is updated once, also when the block raises: what an add
        acknowledged is written, then the exception propagates. The bytes are those the same
        adds make one by one. Stable facts and proposals are written at once, as outside a
        batch (the vault lock is then held until the end). Reads in the block (iter_entries,
        get, search, validate, read_all, update) write the pending records first, so they see
        them. A nested block is a plain block; the batch belongs to the thread that opened it.
        Read-only stores: a plain block.

        Yields:
            None.

        Raises:
            OSError: Writing a file at the end of the block failed (the files already written
                stay written).
        """
        if self._batch is not None or self.read_only:
            yield
            return
        with contextlib.ExitStack() as stack:
            self._batch = _Batch(thread=threading.get_ident(), stack=stack)
            try:
                yield
            finally:
                batch, self._batch = self._batch, None
                self._sync(batch)

    def _sync(self, batch: _Batch | None = None) -> None:
        """Write what the batch acknowledged: pending records of each file, then tags.md."""
        batch = batch or self._active_batch()
        if batch is None:
            return
        try:
            for rel, state in list(batch.months.items()):
                if state.pending:
                    try:
                        self._flush_month(rel, state)
                    except BaseException:
                        del batch.months[rel]  # unknown now: a later add scans the file again
                        raise
        finally:
            groups, batch.tags = batch.tags, []
            if groups:
                self._register_tags(groups)

    def _month_state(self, rel: str, month: str, path: Path) -> _MonthState:
        """Return the state of ``observations/<month>.md`` (read under its lock by the caller).

        A state this provider left behind is reused when the file's size and CRC-32 are still
        those it wrote; otherwise the file is scanned once.

        Raises:
            ParseError: The file is not UTF-8, or ends inside an unterminated fence (nothing
                may be appended after it).
        """
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        crc = zlib.crc32(data)
        known = self._months.get(rel)
        if known is not None and not known.pending and known.size == len(data) and known.crc == crc:
            return known
        self._months.pop(rel, None)
        if not data.strip():
            # reference appendObservation: a new file starts with the month header
            return _MonthState(path, len(data), crc, 0, "\n", month_header(month), "", bool(data))
        tf = TextFile.decode(data, path=rel)
        text = tf.text

        def refuse(_rel: str, blk: RawBlock, _diags: list[Diagnostic]) -> None:
            if blk.problem is not None and blk.end >= len(text) and blk.layout == "fenced":
                raise ParseError(
                    f"{blk.problem}; memcore will not append after it (fix the file first)",
                    path=str(path),
                    line=blk.line,
                )

        count = sum(1 for _ in _numbered(text, rel, [], refuse))
        stripped = text.rstrip()
        tail = text[len(stripped) :]
        dangling = stripped == "---" or stripped.endswith("\n---")
        # Target layout (reference appendObservation): <text without trailing whitespace> +
        # blank line + "---" + blank line + block + newline. Only bytes can be appended, so
        # the whitespace already there is counted in.
        lead = "" if tail.endswith("\n\n") else "\n"
        prefix = lead + ("" if dangling else "---\n\n")
        return _MonthState(path, len(data), crc, count, tf.newline, prefix, text, False)

    def _flush_month(self, rel: str, state: _MonthState) -> None:
        """Write ``state.pending`` to the file (one append, or one atomic write) and forget it.

        Raises:
            ConflictError: The file is no longer what its state was read from (another writer,
                e.g. the reference tool, which does not take memcore's lock, appended or
                rewrote it meanwhile): the numbers handed out for the pending records would be
                wrong, so none of them is written.
        """
        try:
            current = state.path.read_bytes()
        except FileNotFoundError:
            current = b""
        if len(current) != state.size or zlib.crc32(current) != state.crc:
            count = len(state.pending)
            state.pending = []
            raise ConflictError(
                f"whitebox: {state.path} changed while memcore was adding to it (another writer?); the "
                f"{count} observation(s) for it were not written, since the ids given to them would be "
                "wrong: run again"
            )
        payload = "".join(state.pending)
        state.pending = []
        if state.newline != "\n":
            payload = payload.replace("\n", state.newline)
        raw = payload.encode("utf-8")
        path = state.path
        self._months.pop(rel, None)  # unknown until written
        if state.rewrite:
            atomic_write(path, raw)
            state.size, state.crc, state.rewrite = len(raw), zlib.crc32(raw), False
        else:
            offset = append_record(path, raw)
            # append_record puts a line break before the record when the file lacked one
            gap = offset - state.size
            if gap not in (0, 1, 2):
                return
            prefix = (b"", b"\n", b"\r\n")[gap]
            state.crc = zlib.crc32(prefix + raw, state.crc)
            state.size = offset + len(raw)
        self._months[rel] = state

    # observations
    def _observation_lines(self, entry: MemoryEntry, date: str) -> list[str]:
        wb: dict[str, Any] = dict(entry.extra.get(FORMAT, {}))
        memcore: dict[str, Any] = {}
        source = entry.source
        if source is None:
            source = self.default_source
            memcore["no_source"] = True
        lines = [f"date: {date}", f"source: {yaml_scalar(source)}", f"tags: {render_tags(entry.tags)}"]
        label = _write_confidence(entry.confidence, wb.get("confidence_label"))
        if label is not None:
            lines.append(f"confidence: {yaml_scalar(label)}")
        if entry.confidence is not None and _label_value(label) != entry.confidence:
            memcore["confidence"] = entry.confidence
        for key in V11_KEYS:
            value = wb.get(key)
            if value is not None:
                lines.append(f"{key}: {_value(value)}")
        if entry.title:
            lines.append(f"title: {yaml_scalar(entry.title)}")
        if entry.scope is not None and entry.scope != self.active_scope:
            lines.append(f"scope: {yaml_scalar(entry.scope)}")
        fields = wb.get("fields")
        if isinstance(fields, dict):
            for key, value in fields.items():
                if _KEY_RE.match(key) and key not in _OBS_OWN_KEYS:
                    lines.append(f"{key}: {_value(value)}")
                else:
                    memcore.setdefault("fields", {})[key] = value
        rest = {k: v for k, v in wb.items() if k not in _WB_OBS_HANDLED}
        if rest:
            memcore["whitebox"] = rest
        if entry.kind is not Kind.OBSERVATION:
            memcore["kind"] = entry.kind.value
        if entry.status is not Status.ACTIVE:
            memcore["status"] = entry.status.value
        if entry.relations:
            memcore["relations"] = [_relation_json(r) for r in entry.relations]
        if entry.parent is not None:
            memcore["parent"] = entry.parent
        if entry.expires_at is not None:
            memcore["expires_at"] = format_utc(entry.expires_at)
        if entry.updated_at is not None:
            memcore["updated_at"] = format_utc(entry.updated_at)
        if entry.created_at is not None and not entry.date_only:
            memcore["created_at"] = format_utc(entry.created_at)
        others = {ns: data for ns, data in entry.extra.items() if ns != FORMAT}
        if others:
            memcore["extra"] = others
        stripped = entry.body.strip()
        if stripped != entry.body:
            # The block holds the body trimmed (as the reference writer trims it); the
            # whitespace around it is kept here so the entry reads back exactly.
            lead = entry.body[: len(entry.body) - len(entry.body.lstrip())]
            trail = entry.body[len(entry.body.rstrip()) :] if stripped else ""
            if lead:
                memcore["body_lead"] = lead
            if trail:
                memcore["body_trail"] = trail
        if memcore:
            lines.append(f"memcore: {json_line(memcore)}")
        return lines

    def _observation_block(self, entry: MemoryEntry) -> tuple[str, str, str, RawBlock]:
        """Return (monthly file, ``YYYY-MM``, block text, its scan) of a new observation; check it.

        Line breaks are the file's own: a CR in the body (CRLF, or alone) is written as LF, as in
        stable files (TextFile); add() returns the body so, and a migration keeps the original.

        Raises:
            ReadOnlyStoreError: The store was opened read-only.
            OutOfScopeError: The monthly file or the entry's scope is outside the active scope.
            InvalidEntryError: The body cannot be one block (an unclosed fenced code block).
        """
        entry = lf_body(entry)
        if entry.created_at is not None:
            date = entry.created_at.astimezone(UTC).date().isoformat()
        else:
            raw = entry.extra.get(FORMAT, {}).get("date")
            date = raw if isinstance(raw, str) and _DATE_RE.match(raw) else utc_now().date().isoformat()
        month = date[:7]
        rel = f"observations/{month}.md"
        self._check_writable(rel)
        self._check_entry_scope(entry)
        block = render_block(self._observation_lines(entry, date), entry.body)
        blocks = list(scan_blocks(block))
        blk = blocks[0]
        if len(blocks) != 1 or not blk.is_observation or blk.problem is not None or blk.end != len(block):
            # e.g. a body opening a fenced code block it never closes: the block's closing
            # fence would close that code block instead, and the file would end unterminated
            raise InvalidEntryError(
                "whitebox: this body cannot be written as one observation block (it opens a fenced "
                "code block it does not close?); close its fences (nothing was written)"
            )
        return rel, month, block, blk

    def _add_observation(self, entry: MemoryEntry) -> MemoryEntry:
        rel, month, block, blk = self._observation_block(entry)
        assert blk.frontmatter is not None
        batch = self._active_batch()
        state = batch.months.get(rel) if batch is not None else None
        if state is not None:  # the file's path was checked, and is locked, for this block
            number = state.append(block)
        elif batch is not None:
            path = safe_join(self.root, "observations", f"{month}.md")
            path.parent.mkdir(parents=True, exist_ok=True)
            batch.stack.enter_context(file_lock(path))  # held until the block ends
            state = batch.months[rel] = self._month_state(rel, month, path)
            number = state.append(block)
        else:
            path = safe_join(self.root, "observations", f"{month}.md")
            path.parent.mkdir(parents=True, exist_ok=True)
            with file_lock(path):
                state = self._month_state(rel, month, path)
                number = state.append(block)
                try:
                    self._flush_month(rel, state)
                except BaseException:
                    self._months.pop(rel, None)
                    raise
        stored = self._observation_entry(
            rel, number, block, blk, parse_fields(blk.frontmatter), None, None, self.scopes.active
        )
        assert stored is not None
        return stored

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

        Args:
            fact_id: The stable fact disputed (vault-relative path).
            body: What contradicts it.
            source: Who disputes it (default: the store's ``source`` option).
            confidence: 0.0-1.0, or ``None``.
            tags: More tags (``conflict`` is always first).

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
    def _fact_rel(self, entry: MemoryEntry) -> tuple[str, bool]:
        """Return (vault-relative path, chosen explicitly) for a new stable file."""
        wb = entry.extra.get(FORMAT, {})
        raw_path = wb.get("path")
        explicit = raw_path if isinstance(raw_path, str) else None
        if explicit is None and entry.id and entry.id.endswith(".md") and "#" not in entry.id:
            explicit = entry.id
        if explicit is not None:
            return unicodedata.normalize("NFC", explicit), True
        slug = _slug(entry.title) or _slug(entry.body[:40]) or "fact"
        try:
            check_component(f"{slug}.md")
        except UnsafePathError:  # a Windows device name (con, nul, com1...): not portable
            slug = f"{slug}-fact"
        if f"{slug}.md" in SPECIAL_ROOT_FILES:  # a fact titled "Tags" is not the vault's tags.md
            slug = f"{slug}-fact"
        return f"{slug}.md", False

    def _add_file(self, entry: MemoryEntry) -> MemoryEntry:
        if entry.created_at is None or entry.updated_at is None:
            now = utc_now()
            created = entry.created_at or now
            entry = entry.model_copy(update={"created_at": created, "updated_at": entry.updated_at or created})
        rel, explicit = self._fact_place(entry)
        batch = self._active_batch()
        if batch is not None and not batch.root_locked:
            batch.stack.enter_context(file_lock(self.root))  # held until the block ends
            batch.root_locked = True
        with file_lock(self.root):
            rel = self._free_fact_path(rel, explicit)
            path = safe_join(self.root, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            meta = self._file_meta(entry, rel, new=True)
            doc = FrontmatterDocument.new(meta, entry.body)
            raw = doc.dumps().encode("utf-8")
            atomic_write(path, raw)
            self._own_files.add(rel)
        return self._written(rel, raw)

    def _file_meta(self, entry: MemoryEntry, rel: str, *, new: bool) -> dict[str, Any]:
        wb = entry.extra.get(FORMAT, {})
        kind = kind_for_path(rel)
        meta: dict[str, Any] = {}
        if new and kind is not Kind.PROPOSAL:
            meta["schema"] = wb.get("schema", "whitebox/1.0")
        if entry.title != _derived_title(entry.body, rel):
            meta["title"] = entry.title  # "" too: an untitled entry must not read back a file name
        if entry.tags:
            meta["tags"] = flow_list(entry.tags)
        if entry.source is not None:
            meta["source"] = entry.source
        label = _write_confidence(entry.confidence, wb.get("confidence_label"))
        if label is not None:
            meta["confidence"] = label
        if entry.scope is not None and entry.scope != self.active_scope:
            meta["scope"] = entry.scope
        front = wb.get("frontmatter")
        if isinstance(front, dict):
            for key, value in front.items():
                if key not in meta and key != "memcore":
                    meta[key] = value
        memcore: dict[str, Any] = {}
        if entry.kind is not kind:
            memcore["kind"] = entry.kind.value
        if entry.status is not Status.ACTIVE and kind is not Kind.PROPOSAL:
            memcore["status"] = entry.status.value
        front_derived = front.get("derived_from") if isinstance(front, dict) else None
        listed = {t for t in front_derived if isinstance(t, str)} if isinstance(front_derived, list) else set()
        relations = [
            r
            for r in entry.relations
            if not (kind is Kind.PROPOSAL and r.type == "proposes")
            and not (r.type == "derived_from" and r.target in listed)
        ]
        if relations:
            memcore["relations"] = [_relation_json(r) for r in relations]
        if entry.parent is not None:
            memcore["parent"] = entry.parent
        if entry.expires_at is not None:
            memcore["expires_at"] = format_utc(entry.expires_at)
        if entry.updated_at is not None:
            memcore["updated_at"] = format_utc(entry.updated_at)
        if entry.created_at is not None:
            memcore["created_at"] = (
                entry.created_at.date().isoformat() if entry.date_only else format_utc(entry.created_at)
            )
        if entry.confidence is not None and _label_value(label) != entry.confidence:
            memcore["confidence"] = entry.confidence
        others = {ns: data for ns, data in entry.extra.items() if ns != FORMAT}
        if others:
            memcore["extra"] = others
        rest = {
            k: v
            for k, v in wb.items()
            if k not in {"confidence_label", "frontmatter", "schema", "layer", "path", "unparsed",
                         "target", "rationale", "proposed_content", "created"}
        }
        if rest:
            memcore["whitebox"] = rest
        if memcore:
            meta["memcore"] = memcore
        return meta

    def _written(self, rel: str, raw: bytes) -> MemoryEntry:
        """Return the entry of the file ``rel`` just written with ``raw`` (what get() reads)."""
        entry = self._file_entry(rel, raw, None)
        if entry is None:  # pragma: no cover - written in scope, so visible
            raise EntryNotFoundError(f"whitebox: {rel} not readable after writing")
        return entry

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        """Change a stable file: a proposal by default, in place with ``as_user=True``.

        Without ``as_user`` the spec's rule holds (agents propose, never silently overwrite):
        a proposal file ``proposed/<timestamp>-<slug>.md`` (``status: proposed``, sections
        ``## Rationale`` and ``## Proposed content``) is written and returned. With
        ``as_user=True`` the file is rewritten in place, touching only the frontmatter keys
        that changed; the rest of the file is kept byte for byte.

        Raises:
            UnsupportedOperationError: ``entry`` is an observation (append-only).
            EntryNotFoundError: No such file.
            ConflictError: ``expected_version`` (or ``entry.version``) is stale.
            ParseError: The file's frontmatter cannot be parsed (it is not rewritten).
        """
        self.require(Capability.UPDATE, "update")
        self._sweep_temps()
        if entry.id is None:
            raise InvalidEntryError("whitebox: update needs the entry's id")
        if "#" in entry.id:
            raise UnsupportedOperationError(
                f"whitebox: observations are append-only; {entry.id} cannot be updated "
                "(add a new observation instead, tagged `conflict` to dispute a fact)"
            )
        rel = unicodedata.normalize("NFC", entry.id)
        self._refuse_twins(entry.id)
        current = self.get(rel)
        expected = expected_version if expected_version is not None else entry.version
        if expected is not None and expected != current.version:
            raise ConflictError(
                f"whitebox: {rel} changed since it was read (version {expected} != {current.version}); "
                "read it again and retry"
            )
        self._check_writable(rel)
        if not self.as_user and rel not in self._own_files:
            raw = entry.extra.get(FORMAT, {}).get("rationale")
            rationale = raw if isinstance(raw, str) else None
            return self._write_proposal(
                rel,
                source=entry.source or self.default_source,
                rationale=rationale or "Edit proposed through memcore; review it and apply it by hand.",
                content=entry.body,
            )
        path = safe_join(self.root, rel)
        with file_lock(path):
            data = path.read_bytes()
            if _version(data) != current.version:
                raise ConflictError(f"whitebox: {rel} changed while updating; read it again and retry")
            tf = TextFile.decode(data, path=rel)
            doc = parse_frontmatter(tf.text, path=rel)
            if current.updated_at is not None and entry.updated_at in (None, current.updated_at):
                # memcore keeps times on the files it manages; a user's own file gets none added.
                entry = entry.model_copy(update={"updated_at": utc_now()})
            desired = self._file_meta(entry, rel, new=False)
            if kind_for_path(rel) is Kind.PROPOSAL:
                desired["status"] = STATUS_TO_WHITEBOX.get(entry.status, entry.status.value)
            for key in _FILE_MANAGED:
                if key in doc.metadata and key not in desired:
                    del doc.metadata[key]
            for key, value in desired.items():
                if key not in doc.metadata or to_json_value(doc.metadata[key]) != to_json_value(value):
                    doc.metadata[key] = value
            doc.body = entry.body
            written = tf.encode(doc.dumps())
            atomic_write(path, written)
        return self._written(rel, written)

    # proposals
    def _add_proposal_entry(self, entry: MemoryEntry) -> MemoryEntry:
        target = _proposal_target(entry)
        assert target is not None
        wb = entry.extra.get(FORMAT, {})
        raw_rationale, raw_content = wb.get("rationale"), wb.get("proposed_content")
        rationale = raw_rationale if isinstance(raw_rationale, str) else None
        content = raw_content if isinstance(raw_content, str) else entry.body
        return self._write_proposal(
            target, source=entry.source or self.default_source, rationale=rationale or entry.title or "",
            content=content,
        )

    def _write_proposal(
        self, target: str, *, source: str, rationale: str, content: str, extra: dict[str, Any] | None = None
    ) -> MemoryEntry:
        """Write ``proposed/<timestamp>-<slug>.md`` as the reference ``proposeStableEdit`` does."""
        self._check_writable(target)
        safe_join(self.root, target)
        now = utc_now()
        stamp = now.strftime("%Y-%m-%dT%H-%M-%S")
        # capped so that the proposal's file name stays well under NAME_MAX (255 bytes)
        slug = target.replace("/", "_").replace("\\", "_").removesuffix(".md")
        slug = slug.encode("utf-8", "surrogatepass")[:150].decode("utf-8", "ignore")
        lines = [
            "---",
            f"target: {yaml_scalar(target)}",
            f"source: {yaml_scalar(source)}",
            f"proposed_at: {format_utc(now, milliseconds=True)}",
            "status: proposed",
        ]
        for key, value in (extra or {}).items():
            lines.append(f"{key}: {_value(value)}")
        lines.append("---")
        text = "\n".join(lines) + (
            f"\n\n## Rationale\n\n{rationale.strip()}\n\n## Proposed content\n\n{content.strip()}\n"
        )
        folder = safe_join(self.root, "proposed")
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder):
            rel = f"proposed/{stamp}-{slug}.md"
            n = 2
            while safe_join(self.root, rel).exists():
                rel = f"proposed/{stamp}-{slug}-{n}.md"
                n += 1
            # As the reference proposeStableEdit: the target must be in scope; proposed/ is
            # where proposals go whatever the scope's folders.
            raw = text.encode("utf-8")
            atomic_write(safe_join(self.root, rel), raw)
        return self._written(rel, raw)

    # tags
    def tag_registry(self) -> TagRegistry | None:
        """Return tags.md parsed, or ``None`` when the vault has none (or it is out of scope)."""
        path = self.root / "tags.md"
        if path.is_symlink() or not path.is_file():  # never read through a link (wb.symlink)
            return None
        try:
            return parse_tags(TextFile.decode(path.read_bytes(), path="tags.md").text)
        except ParseError:
            return None

    def _register_tags(self, groups: list[tuple[list[str], str]]) -> None:
        """List the tags tags.md does not know under Proposed (spec "Tags").

        Args:
            groups: ``(tags, source)`` of each add, in order; a new tag is described as
                ``first used by <source>`` of the first add that used it. tags.md ends as if
                the adds had registered their tags one by one, in one write.
        """
        if not any(tags for tags, _ in groups):
            return
        path = self.root / "tags.md"
        if path.is_symlink() or not path.is_file() or self.read_only:
            return
        seen = self._tags_seen
        if seen is not None:
            try:
                data = path.read_bytes()
            except OSError:
                data = None
            if data == seen[0] and all(
                not registrable(t) or seen[1].knows(t) for tags, _ in groups for t in tags
            ):
                return  # every tag is listed already: nothing to lock or write
        with file_lock(path):
            data = path.read_bytes()
            try:
                tf = TextFile.decode(data, path="tags.md")
            except ParseError:
                return
            text = tf.text
            reg = parse_tags(text)
            changed = False
            for tags, source in groups:
                new: list[tuple[str, str]] = []
                for tag in tags:
                    if registrable(tag) and not reg.knows(tag) and tag not in {t for t, _ in new}:
                        new.append((tag, f"first used by {source.replace(chr(10), ' ')}"))
                if new:
                    text = append_proposed(text, new)
                    reg = parse_tags(text)
                    changed = True
            if changed:
                data = tf.encode(text)
                atomic_write(path, data)
            self._tags_seen = (data, reg)

    # -- checking ---------------------------------------------------------------------
    def validate(self) -> list[Diagnostic]:
        """Check the vault (the part the active scope shows); never raises for bad files.

        Diagnostics (code, severity): ``wb.block-malformed`` error (unterminated fence, block
        without frontmatter), ``wb.missing-date`` / ``wb.bad-date`` / ``wb.wrong-month`` /
        ``wb.missing-source`` / ``wb.unknown-confidence`` errors, ``wb.frontmatter`` error
        (a stable file's YAML), ``wb.not-utf8`` error, ``wb.unregistered-tag`` warning (a tag
        not in tags.md), ``wb.outside-scopes`` warning (a file no scope of scopes.md covers),
        ``wb.missing-confidence`` / ``wb.missing-tags`` / ``wb.yaml`` / ``wb.fence-info`` /
        ``wb.month-file-name`` / ``wb.unread-text`` (prose in a month file outside every block)
        warnings, ``wb.bare-block`` / ``wb.nested-fence`` info.
        Each names the file (vault-relative) and line.
        """
        return [*self._scan(entries=None), *temp_file_diagnostics(self.root, FORMAT)]

    def _sweep_temps(self) -> None:
        """Remove temp files interrupted writes left in the vault (under the vault lock)."""
        with file_lock(self.root):
            self._temps.sweep()

    def read_all(self) -> StoreSnapshot:
        """Read every entry and check the vault in one pass over the files.

        Equals ``StoreSnapshot(list(self.iter_entries()), self.validate())``: each file is
        read and parsed once, its entries and its diagnostics collected together.

        Returns:
            ``StoreSnapshot(entries in path order, diagnostics as validate() orders them)``.
        """
        entries: list[MemoryEntry] = []
        diags = self._scan(entries=entries)
        diags.extend(temp_file_diagnostics(self.root, FORMAT))
        return StoreSnapshot(entries, diags)

    def _scan(self, entries: list[MemoryEntry] | None) -> list[Diagnostic]:
        """validate(), also collecting every entry into ``entries`` when it is a list."""
        self._sync()
        diags: list[Diagnostic] = []
        if (self.root / "tags.md").is_symlink():
            diags.append(_diag("tags.md", None, "wb.symlink", Severity.ERROR,
                               "tags.md is a symlink: not read (it may point outside the vault) and never "
                               "replaced; put the file itself there"))
        diags.extend(self._symlink_diagnostics())
        registry = self.tag_registry()
        scopes = self.scopes
        for rel in self._walk():
            path = on_disk_path(self.root, rel)
            try:
                data = path.read_bytes()
            except OSError as exc:
                diags.append(_diag(rel, None, "wb.unreadable", Severity.ERROR, str(exc)))
                continue
            if scopes.present and not scopes.in_any_scope(rel):
                diags.append(_diag(rel, None, "wb.outside-scopes", Severity.WARNING,
                                   "no scope of scopes.md includes this file"))
            if self.is_observation_file(rel):
                if _MONTH_FILE.match(rel.rsplit("/", 1)[-1]) is None:
                    diags.append(_diag(rel, None, "wb.month-file-name", Severity.WARNING,
                                       "observation files are named YYYY-MM.md (or YYYY-MM-part-N.md)"))
                self._validate_registry = registry
                try:
                    if entries is None:
                        for _ in self._observations(rel, data, diags):
                            pass
                    else:
                        entries.extend(self._observations(rel, data, diags))
                finally:
                    self._validate_registry = None
            else:
                entry = self._file_entry(rel, data, diags)
                if entry is not None and entries is not None:
                    entries.append(entry)
        return diags


# -- helpers ------------------------------------------------------------------------------
_CHUNK_KEYS = frozenset({"group_id", "part", "schema", "total_parts"})


def _numbered(
    text: str,
    rel: str,
    diags: list[Diagnostic] | None,
    on_problem: Any,
) -> Iterator[tuple[int, RawBlock, Fields, dict[str, Any] | None]]:
    """Yield ``(N, block, fields, chunk frontmatter)`` for each observation block of a file.

    N counts observation blocks from 1, in document order, whatever the active scope; a
    chunk file's own frontmatter (a leading bare block with ``group_id``/``part`` and no
    ``date``) is not counted. Other blocks go to ``on_problem(rel, block, diags)`` when
    ``diags`` is given.
    """
    number = 0
    file_meta: dict[str, Any] | None = None
    gaps = _Gaps(text, rel) if diags is not None else None
    for blk in scan_blocks(text):
        if gaps is not None:
            assert diags is not None
            gaps.before(blk, diags)
        if not blk.is_observation:
            if diags is not None and on_problem is not None:
                on_problem(rel, blk, diags)
            continue
        assert blk.frontmatter is not None
        fields = parse_fields(blk.frontmatter)
        if number == 0 and file_meta is None and blk.start == 0 and blk.layout == "bare":
            if "date" not in fields.values and not _CHUNK_KEYS.isdisjoint(fields.values):
                file_meta = fields.values
                continue
        number += 1
        yield number, blk, fields, file_meta
    if gaps is not None:
        assert diags is not None
        gaps.finish(diags)


#: Month-file text that is the format's own: the ``# Observations — <Month YYYY>`` header, its
#: ``Append-only. ...`` sentence (the writer's and the reference vault's wording) and ``---``.
_MONTH_FORMAT_LINE = re.compile(r"^(?:# Observations\b.*|Append-only\..*|---[ \t]*)$")


class _Gaps:
    """Report text between and after a month file's blocks as ``wb.unread-text`` warnings.

    Only fenced or bare blocks are read; prose outside them (an agent appending a paragraph
    by hand) is in no entry and no conversion carries it. One warning per run of such lines
    (blank lines and the month header, its sentence and ``---`` separators end a run and are
    never reported), at its first line. Non-observation fenced code is reported as well,
    unless it already has a ``wb.block-malformed`` / ``wb.fence-info`` diagnostic.
    """

    __slots__ = ("_line", "_pos", "_prev", "_rel", "_text")

    def __init__(self, text: str, rel: str) -> None:
        self._text, self._rel = text, rel
        self._prev = 0  # end of the last block seen
        self._pos, self._line = 0, 1  # line-number cursor

    def _line_at(self, pos: int) -> int:
        if pos >= self._pos:
            self._line += self._text.count("\n", self._pos, pos)
            self._pos = pos
            return self._line
        return self._text.count("\n", 0, pos) + 1

    def _report(self, start: int, end: int, diags: list[Diagnostic]) -> None:
        if start >= end or not self._text[start:end].strip():
            return
        first = self._line_at(start)
        inside = False
        for offset, line in enumerate(self._text[start:end].split("\n")):
            stripped = line.strip()
            if not stripped or _MONTH_FORMAT_LINE.match(stripped):
                inside = False
                continue
            if not inside:
                diags.append(
                    _diag(
                        self._rel, first + offset, "wb.unread-text", Severity.WARNING,
                        f"text {stripped[:40]!r} outside every observation block is not part of any entry: "
                        "conversions do not carry it (put it in a block of its own)",
                    )
                )
            inside = True

    def before(self, blk: RawBlock, diags: list[Diagnostic]) -> None:
        """Report the gap before ``blk``, and ``blk`` itself when it is plain fenced code."""
        self._report(self._prev, blk.start, diags)
        self._prev = max(self._prev, blk.end)
        plain_code = blk.frontmatter is None and blk.problem is None and blk.info
        if plain_code and not blk.body.lstrip().startswith("---"):
            diags.append(
                _diag(
                    self._rel, self._line_at(blk.start), "wb.unread-text", Severity.WARNING,
                    f"fenced code ({blk.info!r}) outside every observation block is not part of any entry: "
                    "conversions do not carry it",
                )
            )

    def finish(self, diags: list[Diagnostic]) -> None:
        """Report the text after the last block."""
        self._report(self._prev, len(self._text), diags)


#: Longest file or folder name most file systems take (NAME_MAX), in UTF-8 bytes.
_NAME_MAX = 255


def _unread_path(rel: str) -> str | None:
    """Why the vault reader would never read a file at ``rel`` (``None``: it would)."""
    parts = rel.split("/")
    if not rel.endswith(".md"):
        return "a stable fact is a .md file"
    if any(part.startswith(".") for part in parts):
        return "the reader skips hidden files and folders"
    if len(parts) > 1 and parts[0] in SKIPPED_FOLDERS:
        return f"the reader skips the {parts[0]}/ folder"
    return None


def _check_name_lengths(rel: str) -> None:
    """Raise :class:`InvalidEntryError` when a component of ``rel`` is over 255 UTF-8 bytes."""
    for part in rel.split("/"):
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > _NAME_MAX:
            raise InvalidEntryError(
                f"whitebox: the name {part[:40]!r}... is {size} bytes; file names are at most "
                f"{_NAME_MAX} bytes (choose a shorter path or title)"
            )


def _diag(
    path: str, line: int | None, code: str, severity: Severity, message: str, entry_id: str | None = None
) -> Diagnostic:
    return Diagnostic(path=path, line=line, code=code, severity=severity, message=message, entry_id=entry_id)


def _read_confidence(label: Any) -> tuple[float | None, str | None]:
    """Return (number, label to keep in ``extra``) for a ``confidence`` value as written.

    The number comes from :func:`memcore.mapping.confidence_from_label` (case and ``_``
    tolerated); the written text is kept when it is not exactly a canonical label, so it is
    written back as it was.
    """
    if label is None:
        return None, None
    if not isinstance(label, str):
        return None, json_line(label)
    number = confidence_from_label(label)
    return number, (None if label in CONFIDENCE_LABELS else label)


def _label_value(label: Any) -> float | None:
    return confidence_from_label(label) if isinstance(label, str) else None


def _write_confidence(confidence: float | None, kept: Any) -> str | None:
    """Return the label to write: the kept spelling when it still says the same, else the nearest."""
    if isinstance(kept, str) and (confidence is None or confidence_from_label(kept) == confidence):
        return kept
    if confidence is None:
        return None
    return confidence_to_label(confidence)


def _value(value: Any) -> str:
    return yaml_scalar(value) if isinstance(value, str) else json_line(value)


def _relation_json(rel: Relation) -> dict[str, Any]:
    data: dict[str, Any] = {"type": rel.type, "target": rel.target}
    if not rel.resolved:
        data["resolved"] = False
    return data


def _proposal_target(entry: MemoryEntry) -> str | None:
    wb = entry.extra.get(FORMAT, {})
    target = wb.get("target")
    if isinstance(target, str) and target:
        return target
    for rel in entry.relations:
        if rel.type == "proposes":
            return rel.target
    return None


def _proposal_sections(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    parts = re.split(r"^## (Rationale|Proposed content)[ \t]*$", body, flags=re.M)
    for i in range(1, len(parts) - 1, 2):
        key = "rationale" if parts[i] == "Rationale" else "proposed_content"
        out[key] = parts[i + 1].strip()
    return out


def _apply_memcore(kw: dict[str, Any], memcore: dict[str, Any], *, written_label: Any) -> None:
    """Apply the ``memcore:`` object (fields WhiteBox has no slot for) to entry keywords."""
    if isinstance(memcore.get("kind"), str) and memcore["kind"] in Kind.__members__.values():
        kw["kind"] = Kind(memcore["kind"])
    if isinstance(memcore.get("status"), str) and memcore["status"] in Status.__members__.values():
        kw["status"] = Status(memcore["status"])
    relations = memcore.get("relations")
    if isinstance(relations, list):
        kw["relations"] = list(kw.get("relations") or []) + [
            Relation(type=r["type"], target=r["target"], resolved=bool(r.get("resolved", True)))
            for r in relations
            if isinstance(r, dict) and isinstance(r.get("type"), str) and isinstance(r.get("target"), str)
            and r["type"] and r["target"]
        ]
    for key in ("parent", "expires_at", "updated_at"):
        if isinstance(memcore.get(key), str):
            kw[key] = memcore[key]
    created = memcore.get("created_at")
    if isinstance(created, str):
        if _DATE_RE.match(created):
            kw["created_at"] = _date(created)
            kw["date_only"] = True
        elif kw.get("created_at") is None or created[:10] == kw["created_at"].date().isoformat():
            kw["created_at"] = created
            kw["date_only"] = False
    exact = memcore.get("confidence")
    if isinstance(exact, (int, float)) and not isinstance(exact, bool) and 0 <= exact <= 1:
        if _label_value(written_label) == CONFIDENCE_LABELS[confidence_to_label(float(exact))]:
            kw["confidence"] = float(exact)
    if memcore.get("no_source") is True:
        kw["source"] = None
    extra = memcore.get("extra")
    merged: dict[str, Any] = dict(kw.get("extra") or {})
    if isinstance(extra, dict):
        for ns, data in extra.items():
            if ns != FORMAT and isinstance(data, dict):
                merged[ns] = data
    wb_rest = memcore.get("whitebox")
    if isinstance(wb_rest, dict):
        wb = dict(merged.get(FORMAT, {}))
        for key, value in wb_rest.items():
            wb.setdefault(key, value)
        merged[FORMAT] = wb
    fields = memcore.get("fields")
    if isinstance(fields, dict):
        wb = dict(merged.get(FORMAT, {}))
        wb.setdefault("fields", {}).update(fields)
        merged[FORMAT] = wb
    kw["extra"] = merged
    body = kw.get("body", "")
    if isinstance(memcore.get("body_lead"), str):
        body = memcore["body_lead"] + body
    if isinstance(memcore.get("body_trail"), str):
        body = body + memcore["body_trail"]
    kw["body"] = body
