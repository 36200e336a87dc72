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

Writes: one memory file per entry (``<kind>__<slug>.md``, atomic, conditional on the version
read), then its folder's ``_index.json`` and the rollup, all under :meth:`Storage.lock`. Inside
``with store.batch():`` every index is written once, when the outermost batch ends.

Ids are ``mem_`` + a ULID. An id is never reused: a deleted id goes into the tombstone list
``_box-memory.json`` -> ``memcore.deleted_ids`` and ``add`` refuses it afterwards.
"""

from __future__ import annotations

import mimetypes
import posixpath
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from ulid import ULID

from memcore.errors import (
    ConfigError,
    ConflictError,
    EntryNotFoundError,
    ImmutableEntryError,
    InvalidEntryError,
    MemcoreError,
    ParseError,
    UnsafePathError,
)
from memcore.frontmatter import FrontmatterDocument, parse_frontmatter, split_frontmatter
from memcore.models import Diagnostic, Kind, MemoryEntry, Query, Severity, json_copy, lf_body, utc_now
from memcore.provider import BaseProvider, Capability, StoreSnapshot
from memcore.storage import (
    ANY_VERSION,
    CREATE,
    Item,
    LocalStorage,
    Storage,
    TempSweeper,
    TextFile,
    WriteSession,
    check_component,
    join,
    temp_file_diagnostics,
)
from memcore_box._json import IndexWriter, dumps_json, loads_json
from memcore_box._yaml import dump_mapping, load_fast, load_own, patch_yaml, plain, text_of
from memcore_box.index import (
    ENTRY_FIELDS,
    INDEX_MAPS,
    IndexRow,
    build_index,
    build_rollup,
    index_row,
    row_from_json,
    row_maps,
)
from memcore_box.mapping import FIELD_ORDER, box_kind, format_timestamp, parse_timestamp, slugify
from memcore_box.record import entry_from_meta, meta_from_entry

__all__ = ["CONFIG_FILE", "INDEX_FILE", "BoxMemoryProvider"]

CONFIG_FILE = "_box-memory.json"
INDEX_FILE = "_index.json"
_MAX_SLUG_TRIES = 1000
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_INDEX_KEYS = frozenset({"version", "folder_id", "folder_path", "updated_at", "tier", "entry_count", "entries",
                         *INDEX_MAPS})
_ROLLUP_KEYS = _INDEX_KEYS | {"child_indexes"}
_RECENT_PATHS = 1024
# Line breaks str.splitlines() knows besides "\n" (patch_yaml numbers lines with it).
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def _fold(text: str) -> str:
    """Return ``text.casefold()``, sharing ``text`` itself when folding changes nothing."""
    folded = text.casefold()
    return text if folded == text else folded


@dataclass
class _Folder:
    """One memory folder and its ``_index.json`` as memcore holds it in memory.

    ``loaded`` is false until something needs the index (a get, a write, validate): opening a
    workspace and iterating it never reads the indexes.
    """

    path: str
    entries: list[IndexRow] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    keep: dict[str, Any] = field(default_factory=dict)
    folder_id: str | None = None
    version: str | None = None
    index_id: str | None = None
    problem: str | None = None
    stale: bool = True
    dirty: bool = False
    writer: IndexWriter = field(default_factory=IndexWriter)
    repaired: str | None = "never"
    loaded: bool = False

    def reposition(self) -> None:
        self.pos = {}
        for i, entry in enumerate(self.entries):
            self.pos.setdefault(entry.id, i)


@dataclass
class _File:
    """One parsed memory file.

    ``meta`` is the frontmatter. Files parsed with ``_parse(..., fast=True)`` (the checking
    path, and ``_read_file`` for get/update/delete) hold, where it is exact, the plain dict
    :func:`~memcore_box._yaml.load_own` or :func:`~memcore_box._yaml.load_fast` gave, equal
    to ``plain(doc.metadata)``, as a :class:`_PlainMeta` knowing its keys' lines, and parse
    ``doc`` only if something asks for it (``update()`` does when it cannot patch the text from
    the plain values). Other files hold the round-trip ``CommentedMap`` of ``doc`` (line
    information for :func:`~memcore_box._yaml.patch_yaml`).
    """

    path: str
    version: str
    size: int
    text: TextFile
    yaml_text: str
    meta: Any
    body: str
    file_id: str | None = None
    _doc: FrontmatterDocument | None = field(default=None, repr=False)

    @property
    def doc(self) -> FrontmatterDocument:
        """The round-trip document (parsed on first use for files of the checking path)."""
        if self._doc is None:
            self._doc = parse_frontmatter(self.text.text, path=self.path)
        return self._doc

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class _KeyLines:
    """``lc`` of a :class:`_PlainMeta`: ``key(k)`` gives ``(line, column)`` like ruamel's maps."""

    __slots__ = ("lines",)

    def __init__(self, lines: dict[str, int]) -> None:
        self.lines = lines

    def key(self, key: str) -> tuple[int, int]:
        """Return the 0-based line in the YAML text and the column (0) of top-level ``key``.

        Raises:
            KeyError: No such key.
        """
        return self.lines[key], 0


class _PlainMeta(dict[Any, Any]):
    """Plain frontmatter (from :func:`load_fast`) that knows its top-level keys' lines.

    Diagnostics name the line of the field they are about (``record._line_of`` asks
    ``meta.lc.key(k)``); this gives the line ruamel's round-trip map gives.
    """

    __slots__ = ("lc",)

    def __init__(self, meta: dict[Any, Any], lines: dict[str, int]) -> None:
        super().__init__(meta)
        self.lc = _KeyLines(lines)


# A top-level key at column 0 in the form ``key:`` (plain key, followed by a blank or the end).
_TOP_KEY = re.compile(r"([A-Za-z0-9_][^:#\n]*?):(?:[ ]|\Z)")


def _key_lines(yaml_text: str, keys: list[Any]) -> dict[str, int] | None:
    """Return each top-level key's 0-based line in ``yaml_text``, or ``None`` when unsure.

    Sure only for a block mapping at column 0 whose every column-0 line (other than comments
    and ``- `` items of a key's sequence) is ``key:`` for the next key of ``keys`` in order,
    and without carriage returns (another line break for YAML). Anything else: ``None``.
    """
    if "\r" in yaml_text:
        return None
    lines: dict[str, int] = {}
    expected = iter(keys)
    for number, line in enumerate(yaml_text.split("\n")):
        if not line or line[0] in " \t#" or (line[0] == "-" and line[1:2] in ("", " ")):
            continue
        found = _TOP_KEY.match(line)
        if found is None or found.group(1) != next(expected, None):
            return None
        lines[found.group(1)] = number
    return lines if len(lines) == len(keys) else None


class _Where:
    """Id -> folder path through the folders' ``pos`` maps (no id -> path dict of its own).

    The first folder in path order holding the id wins. A workspace has a few folders, so a
    lookup is a few dict probes; a dict of every id would cost ~50 bytes per memory.
    """

    __slots__ = ("folders",)

    def __init__(self, folders: list[_Folder]) -> None:
        self.folders = folders

    def get(self, entry_id: str) -> str | None:
        """Return the path of the folder holding ``entry_id``, or ``None``."""
        for folder in self.folders:
            if entry_id in folder.pos:
                return folder.path
        return None

    def __contains__(self, entry_id: object) -> bool:
        return any(entry_id in folder.pos for folder in self.folders)


def _is_memory_name(name: str) -> bool:
    # The authors' rebuild reads every *.md except README.md (and never _*.json); dot files are
    # hidden or the temp files of interrupted atomic writes.
    return name.lower().endswith(".md") and name.lower() != "readme.md" and not name.startswith(".")


class _Titles:
    """Title -> id and id lookups over a workspace's memory files, for ``related`` wikilinks.

    Files are added in scan order (folders sorted, each folder in listing order); the first
    file with a title (exact, then case-folded) wins, an id-looking target resolves to itself
    when some file has that id. Holds two small dicts and a set: no file content.
    """

    def __init__(self) -> None:
        self.exact: dict[str, str] = {}
        self._folded: dict[str, str] | None = None
        self.ids: set[str] = set()

    def add(self, meta: Mapping[str, Any]) -> str:
        """Record one (non-orphan) file's frontmatter; return its NFC id."""
        entry_id = unicodedata.normalize("NFC", str(meta["id"]))
        self.ids.add(entry_id)
        title = text_of(meta.get("title"))
        if title is not None:
            title = unicodedata.normalize("NFC", title)
            self.exact.setdefault(title, entry_id)
            if self._folded is not None:
                self._folded.setdefault(_fold(title), entry_id)
        return entry_id

    @property
    def folded(self) -> dict[str, str]:
        """Case-folded title -> id, built at the first lookup the exact titles miss.

        Built from :attr:`exact` in its insertion order (each title's first file), which gives
        every folded title the first file that has it, as building it file by file would.
        """
        if self._folded is None:
            self._folded = {}
            for title, entry_id in self.exact.items():
                self._folded.setdefault(_fold(title), entry_id)
        return self._folded

    def resolve(self, title: str) -> str | None:
        """Return the id a wikilink title names, or ``None``."""
        return self.exact.get(title) or self.folded.get(title.casefold()) or (title if title in self.ids else None)

    def known(self, entry_id: str) -> bool:
        """Return whether some memory file has ``entry_id``."""
        return entry_id in self.ids


def check_team(team: str, known: Any) -> str:
    """Return ``team`` if it can name a team folder (``teams/<team>/``) beside ``known``, else raise.

    Refused besides what :func:`~memcore.storage.check_component` refuses (``.``, ``..``,
    separators…): names starting with a dot (``.git``; dot folders are hidden, and the workspace
    scan skips them, so its memories would vanish) and a name that differs from a known team
    only in case (``Eng`` beside ``eng``), or in Unicode spelling (NFC ``t\u00e9am`` beside NFD
    ``te\u0301am``, fullwidth ``\uff44efault`` beside ``default``; compared NFKC + casefold):
    Box and most desktop file systems fold case and normalise names, so both would share one
    folder. A name of the workspace's own files and folders (``_index.json``, ``memories``…) is
    refused too.

    Args:
        team: The team name.
        known: The workspace's ``teams`` list (anything else counts as none).

    Raises:
        UnsafePathError: The name is refused; the message names the team and the fix.
    """
    check_component(team)
    if team.startswith("."):
        raise UnsafePathError(
            f"box: team name {team!r} is reserved (a dot name is hidden, and the workspace scan skips "
            "dot folders); choose a name that does not start with '.'")
    folded = fold_team(team)
    if folded in _RESERVED_TEAMS:
        raise UnsafePathError(
            f"box: team name {team!a} is reserved: it names one of the workspace's own files or folders "
            f"({', '.join(_WORKSPACE_NAMES)}), compared after Unicode normalisation (NFKC) and case folding; "
            "choose another team name")
    for other in known if isinstance(known, list) else []:
        if not isinstance(other, str) or other == team:
            continue
        if other.casefold() == team.casefold():
            raise UnsafePathError(
                f"box: team name {team!r} differs from the existing team {other!r} only in case; Box and "
                f"case-insensitive file systems would put both in one folder; use {other!r}")
        if fold_team(other) == folded:
            raise UnsafePathError(
                f"box: team name {team!a} is the existing team {other!a} spelled differently (the same "
                "name after Unicode normalisation, NFKC, and case folding); file systems that normalise names "
                f"(macOS, Box) would put both in one folder; use {other!a}")
    return team


def fold_team(team: str) -> str:
    """Return ``team`` as compared with other team names: NFKC-normalised and case-folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", team).casefold())


#: The workspace's own files and folders (at its root and in each team folder): no team is named so.
_WORKSPACE_NAMES: tuple[str, ...] = ("_box-memory.json", "_index.json", "memories", "files", "companions", "teams")
_RESERVED_TEAMS: frozenset[str] = frozenset(fold_team(name) for name in _WORKSPACE_NAMES)


def companion_for_problem(companion: Any) -> tuple[str, str] | None:
    """Return ``(code, message)`` when ``companion_for`` does not hold what the schema requires, else ``None``.

    The schema (box-memory-schema.md, "Companion file") makes ``companion_for`` a mapping whose
    ``file_id`` names the binary: a Box file id (digits) or, on a local folder, the binary's
    workspace-relative path (``files/report.pdf``). So ``file_id`` must be one non-empty text
    value; a path must be relative, without ``..``, empty parts, backslashes or control
    characters (``../../etc/passwd`` names nothing in the workspace).
    """
    fix = ("write companions with add_companion(<binary>), or give extra['box']['companion_for'] = "
           "{file_id: <Box file id or workspace path such as files/report.pdf>, filename, sha256, ...}")
    if not isinstance(companion, Mapping):
        return "box.companion-block", f"kind: companion needs a companion_for block (file_id, filename, sha256…); {fix}"
    if not companion:
        return "box.companion-block", f"companion_for is empty; it needs at least file_id; {fix}"
    if "file_id" not in companion or companion.get("file_id") is None:
        return "box.companion-block", f"companion_for has no file_id; {fix}"
    file_id = companion.get("file_id")
    if isinstance(file_id, bool) or not isinstance(file_id, (str, int)):
        shape = "a mapping" if isinstance(file_id, Mapping) else "a list" if isinstance(file_id, (list, tuple)) else (
            type(file_id).__name__)
        return "box.companion-file-id", (f"companion_for.file_id must be a single text value, not {shape} "
                                         f"({plain(file_id)!r}); {fix}")
    text = str(file_id)
    if not text.strip():
        return "box.companion-file-id", f"companion_for.file_id is empty; {fix}"
    if text.isdigit():
        return None
    parts = text.split("/")
    if (text != text.strip() or text.startswith("/") or "\\" in text or ":" in parts[0]
            or any(part in {"", ".", ".."} for part in parts)
            or any(unicodedata.category(c) in {"Cc", "Zl", "Zp"} for c in text)):
        return "box.companion-file-id", (f"companion_for.file_id {text!a} is neither a Box file id (digits) "
                                         f"nor a workspace-relative path without '..', empty parts or "
                                         f"control characters; {fix}")
    return None


def _drift_key(row: IndexRow) -> IndexRow:
    """Return ``row`` without the fields validate's drift check does not compare (file id, size).

    Two compact rows (``raw`` None) with equal keys give equal ``as_dict()`` values in every
    compared field, so no field differs; any other pair is compared field by field.
    """
    return row._replace(file_id=None, size_bytes=None)


def _working_copy(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` that a write may change without touching the caller's.

    Field assignments change only the copy; ``extra`` is copied deeply, the only nested data a
    write changes in place (a companion's checksums, quoting while dumping). ``tags`` and
    ``relations`` are shared: writes only read them. Cheaper than a deep copy of everything.
    """
    update: dict[str, Any] = {"extra": json_copy(entry.extra)}
    if "\r" in entry.body:  # the file has its own line breaks: a read gives LF (models.lf_body)
        update["body"] = lf_body(entry).body
    return entry.model_copy(update=update)


def _sort_key(created_at: Any, entry_id: str) -> tuple[datetime, str]:
    try:
        return parse_timestamp(str(created_at)), entry_id
    except (ValueError, TypeError):
        return _EPOCH, entry_id


class BoxMemoryProvider(BaseProvider):
    """Box-memory workspace provider on a :class:`~memcore.storage.Storage`.

    Args:
        location: The workspace: a folder path for ``box``.
        storage: The storage to use; default: :meth:`make_storage` (a :class:`LocalStorage`).
        **options: Provider options (``agent``: default ``agent`` for new memories).

    Subclass for another backend by setting ``format_name`` and overriding
    :meth:`make_storage` (and :meth:`binary_path` when binaries are found differently).
    """

    format_name: ClassVar[str] = "box"
    #: Whether reads and checks take plain frontmatter from libyaml (:func:`load_fast`) where
    #: it is exact; ``False`` parses every file round-trip (same results, slower; tests
    #: compare both).
    fast_yaml: ClassVar[bool] = True
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

    def __init__(self, location: str | Any, *, storage: Storage | None = None, **options: Any) -> None:
        super().__init__(location, **options)
        if storage is not None:
            self.storage = storage
        #: removes temp files of interrupted writes on the first write holding the lock (local folders)
        self._temps = TempSweeper(self.storage.root) if isinstance(self.storage, LocalStorage) else None
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
        # Mutating storage calls started (memory files, indexes, config): a failed operation
        # that started none left the workspace as it was.
        self._mutations = 0
        self._started = 0  # _mutations when the write session began
        self._outside: BaseException | None = None  # the exception being handled when it began
        # Set by a failed write: the next write re-lists every folder and repairs its index from
        # the files, whatever settings.rebuild_index_on_drift says (it completes our own write).
        self._force_repair = False
        self._titles: tuple[dict[str, str], dict[str, str]] | None = None
        self._slugs: set[str] | None = None
        # id -> path of the memories iteration yielded last (bounded): file_of() answers from it
        # without reading every folder index.
        self._recent: dict[str, str] = {}

    # -- construction -----------------------------------------------------------------
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

    @classmethod
    def initialize(cls, storage: Storage, *, location: str = "", **options: Any) -> None:
        """Create the workspace on ``storage`` (see :meth:`init_store`)."""

        def as_list(value: Any, default: list[str]) -> list[str]:
            if value is None:
                return default
            if isinstance(value, str):
                return [v.strip() for v in value.split(",") if v.strip()]
            return [str(v) for v in value]

        default_team = str(options.get("default_team") or "default")
        teams = as_list(options.get("teams"), [default_team])
        if default_team not in teams:
            teams.insert(0, default_team)
        for number, team in enumerate(teams):
            check_team(team, teams[:number])
        layout = str(options.get("companion_layout") or "sibling")
        if layout not in {"sibling", "folder"}:
            raise ConfigError(f"box: companion_layout must be 'sibling' or 'folder', not {layout!r}")
        root = storage.make_folder("")
        folder_ids: dict[str, Any] = {"root": root.id}
        for name in ("memories", "files", "companions", "teams"):
            folder_ids[name] = storage.make_folder(name).id
        for team in teams:
            for sub in ("root", "memories", "files", "companions"):
                path = join("teams", team) if sub == "root" else join("teams", team, sub)
                folder_ids[f"team_{team}_{sub}"] = storage.make_folder(path).id
        now = format_timestamp(utc_now())
        tier = str(options.get("tier") or "unknown")
        if not storage.exists(CONFIG_FILE):
            name = str(options.get("workspace_name") or Path(location).name or "box-memory")
            config: dict[str, Any] = {
                "version": 1,
                "schema_version": 1,
                "workspace_name": name,
                "workspace_root_id": root.id,
                "workspace_type": "folder",
                "created_at": now,
                "updated_at": now,
                "tier": tier,
                "tier_detected_at": now,
                "capabilities": {
                    "custom_metadata_templates": False,
                    "template_create_permission": False,
                    "body_search": False,
                    "max_file_size_mb": None,
                    "storage_unlimited": False,
                    "box_sign": False,
                    "retention_policies": False,
                    "legal_holds": False,
                    "keysafe": False,
                    "compliance": [],
                },
                "metadata_template_key": None,
                "metadata_template_created_at": None,
                "teams": teams,
                "agents": as_list(options.get("agents"), []),
                "settings": {
                    "default_team": default_team,
                    "companion_layout": layout,
                    "include_superseded_in_recall": False,
                    "rebuild_index_on_drift": True,
                    "ai_recall_enabled": False,
                    "ai_extract_enabled": False,
                    "ai_studio_agent_enabled": False,
                    "ai_model": None,
                    "compliance_target": None,
                },
                "folder_ids": folder_ids,
            }
            storage.write(CONFIG_FILE, dumps_json(config), expected_version=CREATE)
        seeded: list[tuple[str, str | None, str | None, dict[str, Any]]] = []
        for path in ["memories", *(join("teams", t, "memories") for t in teams)]:
            index_path = join(path, INDEX_FILE)
            if storage.exists(index_path):
                continue
            data = build_index([], folder_id=storage.stat(path).id, folder_path=path + "/", updated_at=now, tier=tier)
            item = storage.write(index_path, dumps_json(data), expected_version=CREATE)
            seeded.append((path + "/", data["folder_id"], item.id, data))
        if not storage.exists(INDEX_FILE):
            rollup = build_rollup(seeded, folder_id=root.id, updated_at=now, tier=tier)
            storage.write(INDEX_FILE, dumps_json(rollup), expected_version=CREATE)

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
        self._discover()
        # The rollup is read at the first write or validate (``_sync``), not here: only its
        # unknown keys and version are kept, and parsing it (as large as all folder indexes
        # together) would double a reader's peak memory for nothing.
        self._is_open = True
        return self

    def close(self) -> None:
        """Forget cached state; everything was written already."""
        self._folders.clear()
        self._invalidate()
        self._is_open = False

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
    def _walk(self, folder: str = "") -> Iterator[tuple[str, list[Any]]]:
        try:
            items = self.storage.list(folder)
        except FileNotFoundError:
            return
        yield folder, items
        for item in items:
            if item.is_folder and not item.name.startswith("."):
                yield from self._walk(join(folder, item.name))

    def _discover(self) -> dict[str, list[Any]]:
        """Find every memory folder (one holding ``_index.json`` or memory files); return listings."""
        listings: dict[str, list[Any]] = {}
        for folder, items in self._walk(""):
            if not folder:
                continue
            if any(not i.is_folder and (i.name == INDEX_FILE or _is_memory_name(i.name)) for i in items):
                listings[folder] = items
                if folder not in self._folders:
                    self._folders[folder] = _Folder(path=folder)  # its index is read when needed
        for path in [p for p in self._folders if p not in listings]:
            if not self.storage.exists(path):
                del self._folders[path]
                self._invalidate()
        return listings

    def _loaded(self, folder: _Folder) -> _Folder:
        """Return ``folder`` with its index read (once; :meth:`_sync` re-reads changed ones)."""
        if not folder.loaded:
            self._load_index(folder)
        return folder

    def _load_index(self, folder: _Folder) -> None:
        folder.loaded = True
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
        try:
            parsed = loads_json(data)
            if not isinstance(parsed, dict) or not isinstance(parsed.get("entries"), list):
                raise ValueError("not an object with an 'entries' list")
            if not all(isinstance(e, dict) for e in parsed["entries"]):
                raise ValueError("an entry is not an object")
            if not all(isinstance(e.get("id"), str) and isinstance(e.get("filename"), str)
                       for e in parsed["entries"]):
                raise ValueError("an entry lacks a string 'id' or 'filename'")
            entries = [row_from_json(e) for e in parsed["entries"]]
            parsed["entries"] = None
        except ValueError as exc:
            folder.entries, folder.stale, folder.problem = [], True, f"malformed: {exc}"
            folder.reposition()
            return
        folder.entries, folder.stale, folder.problem = entries, False, None
        folder.folder_id = parsed.get("folder_id") if isinstance(parsed.get("folder_id"), str) else folder.folder_id
        known = {"version", "folder_id", "folder_path", "updated_at", "tier", "entry_count", "entries"}
        known.update(("by_id", "by_slug", "by_wikilink", "by_kind", "by_tag", "by_status", "by_companion_for"))
        folder.keep = {k: v for k, v in parsed.items() if k not in known}
        folder.reposition()

    def _load_rollup(self) -> None:
        try:
            if self._rollup_version is not None and self.storage.stat(INDEX_FILE).version == self._rollup_version:
                return
            data, version = self.storage.read(INDEX_FILE)
        except FileNotFoundError:
            self._rollup_version, self._rollup_keep, self._rollup_problem = None, {}, "missing"
            return
        if version == self._rollup_version:
            return
        self._rollup_version = version
        try:
            parsed = loads_json(data)
            if not isinstance(parsed, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            self._rollup_keep, self._rollup_problem = {}, f"malformed: {exc}"
            return
        known = {"version", "folder_id", "folder_path", "updated_at", "tier", "entry_count", "child_indexes"}
        known.update(("entries", "by_id", "by_slug", "by_wikilink", "by_kind", "by_tag", "by_status"))
        known.add("by_companion_for")
        self._rollup_keep = {k: v for k, v in parsed.items() if k not in known}
        self._rollup_problem = None

    def _sync(self, *, repair: bool = False) -> None:
        """Re-read config and indexes that changed in storage (another process wrote).

        Args:
            repair: Also bring each folder index in line with the folder's files when
                ``settings.rebuild_index_on_drift`` is true (the default): index files nobody
                indexed (e.g. a writer killed between the memory file and the index) and drop
                entries whose file is gone. Done at the first write after opening and whenever
                a folder's index changed under us (another process wrote), not on every write.
        """
        self._load_config()
        forced = repair and self._force_repair
        for folder in list(self._folders.values()):
            self._load_index(folder)
            if (repair and folder.repaired != folder.version and not folder.stale
                    and (forced or self._settings().get("rebuild_index_on_drift", True))):
                self._repair(folder)
                folder.repaired = folder.version
        if forced:
            self._discover()  # a folder the failed write created is repaired on its first use
            self._force_repair = False
        self._load_rollup()

    def _repair(self, folder: _Folder) -> None:
        try:
            items = self.storage.list(folder.path)
        except FileNotFoundError:
            return
        present = {i.name: i for i in items if not i.is_folder and _is_memory_name(i.name)}
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
                self._index_put(folder, index_row(parsed.meta, filename=name, file_id=parsed.file_id,
                                                  size=parsed.size))
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
        for path in sorted(self._folders):
            folder = self._folders[path]
            if not folder.dirty:
                continue
            expected = folder.version if folder.version is not None else CREATE
            payload = folder.writer.dumps(self._index_items(folder, now), groups=[(folder.entries, None)])
            item = self._put(session, join(path, INDEX_FILE), payload, expected)
            del payload
            if folder.repaired == folder.version:
                folder.repaired = item.version  # our own write keeps files and index in step
            folder.version, folder.dirty, folder.problem = item.version, False, None
            folder.index_id = item.id or folder.index_id
            wrote = True
        if wrote or self._rollup_dirty:
            self._write_rollup(session, now)
        if self._config_dirty:
            self._config["updated_at"] = now
            expected = self._config_version if self._config_version is not None else CREATE
            item = self._put(session, CONFIG_FILE, dumps_json(self._config), expected)
            self._config_version, self._config_dirty = item.version, False

    def _index_items(self, folder: _Folder, now: str) -> Iterator[tuple[str, Any]]:
        """Yield a folder index's keys and values in the schema's order, maps one at a time."""
        yield from (("version", 1), ("folder_id", folder.folder_id), ("folder_path", folder.path + "/"),
                    ("updated_at", now), ("tier", self.tier), ("entry_count", len(folder.entries)), ("entries", None))
        yield from row_maps(folder.entries)
        for key, value in folder.keep.items():
            if key not in _INDEX_KEYS:
                yield key, value

    def _rollup_folders(self) -> list[_Folder]:
        return [f for _, f in sorted(self._folders.items())
                if not (self._loaded(f).version is None and not f.entries)]

    def _rollup_items(self, folders: list[_Folder], rows: list[IndexRow], now: str) -> Iterator[tuple[str, Any]]:
        """Yield the rollup's keys and values in order (see :func:`memcore_box.index.build_rollup`)."""
        ids = self._config.get("folder_ids")
        root_id = ids.get("root") if isinstance(ids, dict) else None
        children = [{"folder_path": f.path + "/", "folder_id": f.folder_id, "index_file_id": f.index_id}
                    for f in folders]
        yield from (("version", 1), ("folder_id", root_id if isinstance(root_id, str) else None),
                    ("folder_path", "/"), ("updated_at", now), ("tier", self.tier), ("entry_count", len(rows)),
                    ("child_indexes", children), ("entries", None))
        yield from row_maps(rows)
        for key, value in self._rollup_keep.items():
            if key not in _ROLLUP_KEYS:
                yield key, value

    def _rollup_entries(self) -> Iterator[dict[str, Any]]:
        """Yield the rollup's entries as dicts (each folder's entries plus ``folder_path``)."""
        for folder in self._rollup_folders():
            for row in folder.entries:
                yield {**row.as_dict(), "folder_path": folder.path + "/"}

    def _write_rollup(self, session: WriteSession, now: str) -> None:
        expected = self._rollup_version if self._rollup_version is not None else CREATE
        if self._rollup_problem not in (None, "missing"):
            expected = ANY_VERSION  # derived state: a malformed rollup is rebuilt from the folder indexes
        folders = self._rollup_folders()
        rows = [row for f in folders for row in f.entries]  # one reference per entry, for the maps
        groups: list[tuple[list[IndexRow], str | None]] = [(f.entries, f.path + "/") for f in folders]
        payload = self._rollup_writer.dumps(self._rollup_items(folders, rows, now), groups=groups,
                                            borrow=[f.writer for f in folders])
        del rows
        item = self._put(session, INDEX_FILE, payload, expected)
        self._rollup_version, self._rollup_problem, self._rollup_dirty = item.version, None, False

    # -- the write session (memcore.provider.BaseProvider.session) -----------------------
    # Every write runs in the core session: it holds the lock; each operation flushes its own
    # memory files when it returns (so a batch's files are on disk as it goes), and the indexes,
    # the rollup and the config are written once, when the outermost block ends.
    def _session_started(self, session: WriteSession) -> None:
        """Sync with storage (repairing drift) and sweep temp files before the first write."""
        self._started = self._mutations
        self._outside = sys.exc_info()[1]
        self._ensure_open()
        if self._temps is not None:
            self._temps.sweep()
        self._sync(repair=True)

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
        note = (f"the workspace {self.storage.description} may hold part of this write (a memory file written "
                "or deleted, its _index.json not updated); the next write to it completes that by re-indexing "
                "every folder from its files, or run `memcore reindex`")
        exc.add_note(note)
        if isinstance(exc, MemcoreError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
            exc.args = (f"{exc.args[0]} [{note}]",)

    # -- reading ----------------------------------------------------------------------
    def _plain_meta(self, yaml_text: str | None) -> dict[Any, Any] | None:
        """Return frontmatter YAML as plain Python from libyaml, or ``None``: parse it round-trip.

        :func:`load_fast` where it is exact (it says ``None`` for a text that may hold an
        anchor, ``&name``, too); ``None`` also for no frontmatter and when :attr:`fast_yaml` is
        off.
        """
        if yaml_text is None or not self.fast_yaml:
            return None
        return load_fast(yaml_text)

    def _parse_fast(self, path: str, data: bytes, version: str, file_id: str | None) -> _File | None:
        """Return the memory file with plain frontmatter (``doc`` left unparsed), or ``None``.

        ``None`` whenever :meth:`_parse`'s round-trip parse must decide: undecodable bytes, no
        frontmatter or unclosed frontmatter, YAML outside :func:`load_fast`'s exact subset or
        malformed, no ``id`` or ``kind`` (the orphans, whose diagnostics come from there), a
        layout whose key lines :func:`_key_lines` cannot tell.
        """
        try:
            text = TextFile.decode(data, path=path)
            yaml_text, body, _ = split_frontmatter(text.text)
        except ParseError:
            return None
        if yaml_text is None or not self.fast_yaml:
            return None
        own = load_own(yaml_text)  # memcore's own layout: the keys' lines come with it
        if own is not None:
            meta, lines = own
        else:
            found = self._plain_meta(yaml_text)
            if found is None:
                return None
            meta, key_lines = found, _key_lines(yaml_text, list(found))
            if key_lines is None:
                return None
            lines = key_lines
        for key in ("id", "kind"):
            if meta.get(key) is None or not str(meta.get(key)).strip():
                return None
        return _File(path=path, version=version, size=len(data), text=text, yaml_text=yaml_text,
                     meta=_PlainMeta(meta, lines), body=body, file_id=file_id)

    def _parse(self, path: str, data: bytes, version: str, file_id: str | None = None, *,
               fast: bool = False) -> _File | Diagnostic:
        """Return the parsed memory file, or the ``box.orphan`` diagnostic of a file that is none.

        Args:
            path: Workspace-relative path (for the diagnostic and messages).
            data: The file's bytes.
            version: The storage's version token of those bytes.
            file_id: The storage's id of the file, if any.
            fast: Read-only use (checking): take plain frontmatter from :meth:`_parse_fast`
                when it can; the file's ``doc`` is then parsed only if asked for. Writes keep
                the default (round-trip ``meta`` with line information).
        """
        if fast:
            quick = self._parse_fast(path, data, version, file_id)
            if quick is not None:
                return quick

        def orphan(message: str, line: int | None = None) -> Diagnostic:
            return Diagnostic(
                path=path, line=line, code="box.orphan", severity=Severity.ERROR,
                message=f"{message}; the file is left as it is (fix it, then `memcore reindex`)",
            )

        try:
            text = TextFile.decode(data, path=path)
            doc = parse_frontmatter(text.text, path=path)
            yaml_text = split_frontmatter(text.text)[0] or ""
        except ParseError as exc:
            return orphan(str(exc).removeprefix(f"{path}:{exc.line}: ").removeprefix(f"{path}: "), exc.line)
        if not doc.has_frontmatter:
            return orphan("no frontmatter (the file must start with a '---' line)", 1)
        meta = doc.metadata
        if meta.get("id") is None or not str(meta.get("id")).strip():
            return orphan("frontmatter has no 'id'", 1)
        if meta.get("kind") is None or not str(meta.get("kind")).strip():
            return orphan("frontmatter has no 'kind'", 1)
        return _File(path=path, version=version, size=len(data), text=text, yaml_text=yaml_text, meta=meta,
                     body=doc.body, file_id=file_id, _doc=doc)

    def _read_meta(self, path: str, data: bytes) -> tuple[Mapping[str, Any], str] | None:
        """Return ``(frontmatter, body)`` of a memory file for reading, or ``None`` for an orphan.

        The read path: frontmatter comes back as plain Python from :func:`load_fast` (libyaml)
        when the YAML is in the subset it reads exactly, else from the round-trip parse that
        :meth:`_parse` (writes, validate) uses; both give the same values, so the same entry.
        Orphan decisions are :meth:`_parse`'s.
        """
        try:
            text = TextFile.decode(data, path=path).text
            yaml_text, body, _ = split_frontmatter(text)
        except ParseError:
            return None
        meta = self._plain_meta(yaml_text)
        if meta is None:
            parsed = self._parse(path, data, "")
            return (parsed.meta, parsed.body) if isinstance(parsed, _File) else None
        for key in ("id", "kind"):
            if meta.get(key) is None or not str(meta.get(key)).strip():
                return None
        return meta, body

    def _scan_folder(self, folder: str, items: list[Any] | None = None, *,
                     fast: bool = False) -> tuple[list[_File], list[Diagnostic]]:
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
        for item in items:
            if item.is_folder or not _is_memory_name(item.name):
                continue
            path = join(folder, item.name)
            try:
                data, version = self.storage.read(path)
            except FileNotFoundError:
                continue
            parsed = self._parse(path, data, version, item.id, fast=fast)
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

    @staticmethod
    def _file_resolver(files: list[_File]) -> tuple[Callable[[str], str | None], Callable[[str], bool]]:
        titles = _Titles()
        for f in files:
            titles.add(f.meta)
        return titles.resolve, titles.known

    def _entry_of(self, f: _File, resolve: Callable[[str], str | None] | None = None,
                  known: Callable[[str], bool] | None = None) -> tuple[MemoryEntry, list[Diagnostic]]:
        return entry_from_meta(
            f.meta, f.body, path=f.path, version=f.version,
            resolve=resolve or self._resolve, is_known_id=known or self._is_known,
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
        """Return every memory file, workspace-relative (``memories/decision__x.md``)."""
        self._ensure_open()
        return sorted(
            join(folder, item.name)
            for folder, items in self._discover().items()
            for item in items
            if not item.is_folder and _is_memory_name(item.name)
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
            entry = entry_from_meta(found[0], found[1], path=path, version=version,
                                    resolve=self._resolve, is_known_id=self._is_known)[0]
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
        """Yield every memory in ``(created_at, id)`` order, holding one parsed file at a time.

        Pass 1 reads each memory file and keeps ``(created_at, id, scan position, path)`` plus
        the title/id lookups for wikilinks; pass 2 reads the files again in that order and maps
        each one. Orphans are skipped; of files sharing an id only the first in order is read.
        A file that became an orphan between the passes (a concurrent writer) is skipped.
        """
        titles = _Titles()
        # (created_at, id, scan position, folder number, file name): one flat tuple per file,
        # the name shared with the listing; the path is joined again in pass 2.
        order: list[tuple[datetime, str, int, int, str]] = []
        folders = sorted(self._discover().items())
        for number, (folder, items) in enumerate(folders):
            for item in items:
                if item.is_folder or not _is_memory_name(item.name):
                    continue
                path = join(folder, item.name)
                try:
                    data, _ = self.storage.read(path)
                except FileNotFoundError:
                    continue
                found = self._read_meta(path, data)
                if found is None:
                    continue
                entry_id = titles.add(found[0])
                created, _ = _sort_key(found[0].get("created_at"), entry_id)
                order.append((created, entry_id, len(order), number, item.name))
        names = [folder for folder, _ in folders]
        del folders  # the listings
        order.sort()
        seen: set[str] = set()
        for _, entry_id, _, number, name in order:
            if entry_id in seen:
                continue
            seen.add(entry_id)
            path = join(names[number], name)
            try:
                data, version = self.storage.read(path)
            except (FileNotFoundError, UnsafePathError):
                continue
            found = self._read_meta(path, data)
            if found is not None:
                self._remember_path(entry_id, path)
                yield entry_from_meta(found[0], found[1], path=path, version=version,
                                      resolve=titles.resolve, is_known_id=titles.known)[0]

    def _remember_path(self, entry_id: str, path: str) -> None:
        if len(self._recent) >= _RECENT_PATHS:
            del self._recent[next(iter(self._recent))]
        self._recent[entry_id] = path

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

    @staticmethod
    def _render(meta: dict[str, Any], body: str) -> bytes:
        return TextFile(text="").encode(f"---\n{dump_mapping(meta)}---\n{body}")

    def _check_new_id(self, entry_id: str) -> str:
        entry_id = unicodedata.normalize("NFC", entry_id)
        if entry_id != entry_id.strip() or any(c in entry_id for c in "\r\n"):
            raise InvalidEntryError(f"box: id {entry_id!r} has surrounding blanks or a line break")
        if entry_id in self._tombstones():
            raise ConflictError(f"box: id {entry_id!r} belonged to a deleted memory; Box-memory never reuses ids")
        if self._is_known(entry_id):
            raise ConflictError(f"box: a memory with id {entry_id!r} already exists; use update()")
        return entry_id

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Write a new memory file and index it.

        A missing id gets ``mem_`` + a new ULID; missing ``created_at``/``updated_at`` get now
        (given ones are kept, so an imported memory keeps its history). The slug comes from
        ``extra["box"]["slug"]`` or the title, made unique with ``-2``, ``-3``…
        (case-insensitively, across the workspace).

        Raises:
            ConflictError: The id exists, or belonged to a deleted memory.
            InvalidEntryError: The id is not usable.
        """
        entry = _working_copy(entry)
        with self.session("add") as session:
            entry.id = self._new_id() if entry.id is None else self._check_new_id(entry.id)
            now = utc_now()
            entry.created_at = entry.created_at or now
            entry.updated_at = entry.updated_at or now
            if entry.source is None and self.options.get("agent"):
                entry.source = str(self.options["agent"])
            if entry.kind == Kind.COMPANION:
                self._fill_companion(entry)
            folder_path = self._target_folder(entry)
            folder = self._folder(folder_path, create=True)
            self._ensure_fresh(folder)
            requested = (entry.extra.get("box") or {}).get("slug")
            if requested:
                base = slugify(str(requested))
            elif entry.title.strip():
                base = slugify(entry.title)
            else:
                # An untitled memory (an observation from WhiteBox or Maka): name the file after
                # the body's first words, or its id, so thousands of them never share one slug.
                words = " ".join(entry.body.split()[:8])
                base = slugify(words) if re.search(r"[A-Za-z0-9]", words) else f"memo-{entry.id[-10:].lower()}"
            kind_name = box_kind(entry.kind)
            raw_kind = (entry.extra.get("box") or {}).get("kind")
            if raw_kind is not None and entry.kind == Kind.NOTE:
                kind_name = slugify(str(raw_kind))
            for skip in range(_MAX_SLUG_TRIES):
                slug = self._unique_slug(base, skip=skip)
                meta = meta_from_entry(entry, slug=slug, title_of=self._title_of)
                filename = f"{kind_name}__{slug}.md"
                self._refuse_errors(join(folder_path, filename), meta, entry.body)
                data = self._render(meta, entry.body)
                path = join(folder_path, filename)
                try:
                    if session.version(path) is not None:
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
            stored, _ = entry_from_meta(  # after indexing: its own title and id resolve
                meta, entry.body, path=join(folder_path, filename), version=item.version,
                resolve=self._resolve, is_known_id=self._is_known,
            )
        return stored

    def _file_errors(self, path: str, meta: Mapping[str, Any], body: str,
                     version: str | None) -> tuple[MemoryEntry, list[Diagnostic]]:
        """Return the entry a memory file reads as and the errors ``validate`` gives that file alone.

        The per-file rules of :meth:`validate` (:func:`entry_from_meta`'s field checks and the
        companion block); the cross-file ones (duplicate ids, slug conflicts) are the writers'.
        """
        entry, diags = entry_from_meta(meta, body, path=path, version=version, resolve=self._resolve,
                                       is_known_id=self._is_known)
        errors = [d for d in diags if d.severity is Severity.ERROR]
        if str(meta.get("kind")) == "companion":
            problem = companion_for_problem(meta.get("companion_for"))
            if problem is not None:
                errors.append(Diagnostic(path=path, line=1, code=problem[0], severity=Severity.ERROR,
                                         entry_id=str(meta.get("id")), message=problem[1]))
        return entry, errors

    def _refuse_errors(self, path: str, meta: Mapping[str, Any], body: str, *,
                       current: _File | None = None) -> None:
        """Refuse a write of ``meta`` + ``body`` that ``validate`` would call an error.

        Issue 17, item 9: a write never makes a file its own ``validate`` reports as an error.
        An error the file being updated (``current``) already had (a hand-written
        ``title: [a, b]`` kept as it is by an update of the body) is not the write's and does not
        stop it; ``current`` is checked only when the new file has errors.

        Raises:
            InvalidEntryError: The file would hold an error; the message names the file, the
                rule (its diagnostic code) and the fix. Nothing is written.
        """
        errors = self._file_errors(path, meta, body, None)[1]
        if errors and current is not None:
            had = {d.code for d in self._file_errors(current.path, current.meta, current.body, None)[1]}
            errors = [d for d in errors if d.code not in had]
        if errors:
            first = errors[0]
            where = f"{path}:{first.line}" if first.line else path
            raise InvalidEntryError(
                f"box: refusing to write {where}: {first.message} ({first.code}; `memcore validate` would "
                f"report it as an error){'; and ' + str(len(errors) - 1) + ' more' if len(errors) > 1 else ''}. "
                "Nothing was written")

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

    def _patched(self, current: _File, entry: MemoryEntry, slug: str) -> tuple[dict[str, Any], str]:
        """Return the frontmatter mapping for ``entry`` and the file's YAML text patched to it.

        From the plain frontmatter of the read path (``current.meta`` a :class:`_PlainMeta`,
        its keys' lines known) when the patch works on it: unchanged keys keep their lines
        byte for byte either way. When it does not (:func:`patch_yaml` would dump the whole
        mapping, where values kept from the file keep their quoting only as ruamel's
        round-trip objects), and for any text with a line break other than ``\n``, both are
        made again from the round-trip parse, as before.
        """
        if isinstance(current.meta, _PlainMeta) and not _OTHER_BREAKS.search(current.yaml_text):
            meta = meta_from_entry(entry, slug=slug, title_of=self._title_of, existing=current.meta,
                                   resolve=self._resolve)
            patched = patch_yaml(current.yaml_text, current.meta, meta, FIELD_ORDER, fallback=False)
            if patched is not None:
                return meta, patched
        old = current.doc.metadata
        meta = meta_from_entry(entry, slug=slug, title_of=self._title_of, existing=old, resolve=self._resolve)
        patched = patch_yaml(current.yaml_text, old, meta, FIELD_ORDER)
        assert patched is not None
        return meta, patched

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
        with self.session("update") as session:
            current = self._read_file(entry_id)
            self._refuse_held(current, "update")
            token = expected_version or entry.version
            if token is not None and token != current.version:
                raise ConflictError(
                    f"box: memory {entry.id} ({current.path}) changed since version {token} was read; "
                    "get() it again and retry"
                )
            if entry.created_at is None:
                entry.created_at = self._entry_of(current)[0].created_at or utc_now()
            entry.updated_at = utc_now()
            slug = text_of(current.meta.get("slug")) or self._unique_slug(slugify(entry.title))
            meta, yaml_text = self._patched(current, entry, slug)
            self._refuse_errors(current.path, meta, entry.body, current=current)
            if str(meta.get("status")) == "active" and str(current.meta.get("status")) != "active":
                holder = self._active_slug_holder(slug, entry_id)
                if holder is not None:
                    raise InvalidEntryError(
                        f"box: refusing to make {current.path} active: its slug {slug!r} is on the active memory "
                        f"{holder} (box.slug-conflict; `memcore validate` would report it as an error); "
                        "supersede or archive that one first. Nothing was written")
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
            self._index_put(new_folder, index_row(meta, filename=posixpath.basename(path), file_id=file_id,
                                                  size=len(data)))
            stored, _ = entry_from_meta(meta, entry.body, path=path, version=item.version,
                                        resolve=self._resolve, is_known_id=self._is_known)
        return stored

    def delete(self, entry_id: str) -> None:
        """Delete a memory file, un-index it and tombstone its id (never reused).

        Raises:
            EntryNotFoundError: No such memory.
            ImmutableEntryError: The memory is ``held``.
        """
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

    def add_companion(self, binary: str, entry: MemoryEntry | None = None, *, reviewed_by: str | None = None,
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

    # -- checking ---------------------------------------------------------------------
    def _companion_diags(self, f: _File) -> list[Diagnostic]:
        entry_id = str(f.meta["id"])
        companion = f.meta.get("companion_for")
        problem = companion_for_problem(companion)
        if problem is not None:
            return [Diagnostic(path=f.path, line=1, code=problem[0], severity=Severity.ERROR, entry_id=entry_id,
                               message=problem[1])]
        assert isinstance(companion, Mapping)
        file_id = str(companion.get("file_id") or "")
        binary = self.binary_path(file_id, f.folder)
        if binary is None:
            if file_id and not file_id.isdigit():
                return [Diagnostic(path=f.path, code="box.companion-vanished", severity=Severity.WARNING,
                                   entry_id=entry_id,
                                   message=f"the binary {file_id!r} this companion describes is gone")]
            return [Diagnostic(path=f.path, code="box.companion-unchecked", severity=Severity.INFO,
                               entry_id=entry_id,
                               message=f"binary {file_id or '?'} is not in this workspace; its hash was not checked")]
        algo = str(companion.get("hash_algo") or "sha256")
        stored = companion.get(algo)
        got_algo, digest, size = self.storage.checksum(binary)
        changed = (got_algo == algo and stored is not None and str(stored) != digest) or (
            companion.get("size_bytes") is not None and str(companion.get("size_bytes")) != str(size)
        )
        if changed:
            return [Diagnostic(path=f.path, code="box.companion-stale", severity=Severity.WARNING,
                               entry_id=entry_id,
                               message=f"{binary} changed since review ({algo} {stored} -> {digest}, "
                                       f"{companion.get('size_bytes')} -> {size} bytes); regenerate the companion")]
        return []

    def _content_diags(self, files: list[_File], entries: list[MemoryEntry] | None = None) -> list[Diagnostic]:
        """Return the per-file and cross-file diagnostics of ``files``.

        Args:
            files: The parsed memory files, in scan order.
            entries: When given, receives every memory in :meth:`iter_entries` order
                (``created_at``, id, scan position; of files sharing an id the first), mapped
                from the same parse.
        """
        diags: list[Diagnostic] = []
        by_id: dict[str, list[_File]] = {}
        by_slug: dict[str, list[_File]] = {}
        resolve, known = self._file_resolver(files)
        keyed: list[tuple[tuple[datetime, str], int, MemoryEntry]] = []
        for position, f in enumerate(files):
            entry_id = unicodedata.normalize("NFC", str(f.meta["id"]))
            by_id.setdefault(entry_id, []).append(f)
            if str(f.meta.get("status")) == "active" and text_of(f.meta.get("slug")):
                by_slug.setdefault(str(text_of(f.meta["slug"])).casefold(), []).append(f)
            entry, found = self._entry_of(f, resolve, known)
            diags += found
            if entries is not None:
                keyed.append((_sort_key(f.meta.get("created_at"), entry_id), position, entry))
            kind, slug = str(f.meta.get("kind")), str(f.meta.get("slug") or "")
            if f.name != f"{kind}__{slug}.md" and not (kind == "companion" and f.name.endswith(".md")):
                diags.append(Diagnostic(path=f.path, code="box.filename", severity=Severity.WARNING, entry_id=entry_id,
                                        message=f"file name should be {kind}__{slug}.md (<kind>__<slug>.md)"))
            if kind == "companion":
                diags += self._companion_diags(f)
        for entry_id, group in by_id.items():
            if len(group) > 1:
                for f in group:
                    diags.append(Diagnostic(path=f.path, line=1, code="box.duplicate-id", severity=Severity.ERROR,
                                            entry_id=entry_id,
                                            message=f"id {entry_id} is used by {len(group)} files: "
                                                    + ", ".join(g.path for g in group)))
        for slug, group in by_slug.items():
            if len(group) > 1:
                for f in group:
                    diags.append(Diagnostic(path=f.path, code="box.slug-conflict", severity=Severity.ERROR,
                                            entry_id=str(f.meta["id"]),
                                            message=f"slug {slug!r} is on {len(group)} active memories: "
                                                    + ", ".join(g.path for g in group)))
        if entries is not None:
            keyed.sort(key=lambda k: (k[0], k[1]))
            seen: set[str] = set()
            for (_, entry_id), _, entry in keyed:
                if entry_id not in seen:
                    seen.add(entry_id)
                    entries.append(entry)
        return diags

    def _drift_diags(self, files: list[_File]) -> list[Diagnostic]:
        diags: list[Diagnostic] = []
        by_folder: dict[str, list[_File]] = {}
        for f in files:
            by_folder.setdefault(f.folder, []).append(f)
        compare = [k for k in ENTRY_FIELDS if k not in {"file_id", "size_bytes"}]
        # Issue 17, item 17: drift the next write repairs on its own (a file missing from its
        # index, a row whose file is gone, with settings.rebuild_index_on_drift on) is a warning;
        # drift no write repairs (that setting off; a row that differs from its file) is an error.
        repairs = self._settings().get("rebuild_index_on_drift", True) is not False
        listing = Severity.WARNING if repairs else Severity.ERROR
        listing_fix = ("the next write repairs it, or run `memcore reindex`" if repairs else
                       "settings.rebuild_index_on_drift is off, so no write repairs it: run `memcore reindex`")
        for path in sorted(set(self._folders) | set(by_folder)):
            folder = self._folder(path)
            self._load_index(folder)
            index_path = join(path, INDEX_FILE)
            present = {f.name: f for f in by_folder.get(path, [])}
            if folder.problem is not None:
                if present or folder.problem != "missing":
                    diags.append(Diagnostic(path=index_path, code="box.index-missing", severity=Severity.WARNING,
                                            message=f"index is {folder.problem}; run `memcore reindex`"))
                continue
            indexed = {e.filename: e for e in folder.entries}
            for name, row in indexed.items():
                if name not in present:
                    diags.append(Diagnostic(path=index_path, code="box.index-missing-file", severity=listing,
                                            entry_id=row.id,
                                            message=f"index lists {name} ({row.id}) but the file is gone; "
                                                    f"{listing_fix}"))
            for name, f in present.items():
                want_row = index_row(f.meta, filename=name, file_id=None, size=f.size)
                have_row = indexed.get(name)
                if have_row is None:
                    diags.append(Diagnostic(path=f.path, code="box.index-unindexed", severity=listing,
                                            entry_id=want_row.id,
                                            message=f"{name} is not in {index_path}; {listing_fix}"))
                    continue
                if have_row.raw is None and _drift_key(have_row) == _drift_key(want_row):
                    continue  # memcore's own row shape, equal in every compared field
                want, have = want_row.as_dict(), have_row.as_dict()
                fields = [k for k in compare if plain(have.get(k)) != want[k]]
                if fields:
                    diags.append(Diagnostic(path=f.path, code="box.index-stale-entry", severity=Severity.ERROR,
                                            entry_id=want_row.id,
                                            message=f"{index_path} entry differs from the file in "
                                                    f"{', '.join(fields)}, and no write repairs that on its own "
                                                    "(searches through the index see the old values): run "
                                                    "`memcore reindex`"))
        self._load_rollup()
        if self._rollup_problem is not None:
            diags.append(Diagnostic(path=INDEX_FILE, code="box.rollup-missing", severity=Severity.INFO,
                                    message=f"workspace rollup index is {self._rollup_problem} (the authors update it "
                                            "lazily); `memcore reindex` writes it"))
        return diags

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
        self._sync()
        diags: list[Diagnostic] = []
        if self._config_problem is not None:
            diags.append(Diagnostic(path=CONFIG_FILE, code="box.config", severity=Severity.ERROR,
                                    message=self._config_problem))
        files, orphans = self._scan(fast=True)
        diags += orphans
        diags += self._content_diags(files, entries)
        diags += self._drift_diags(files)
        # Symbolic links the local storage left out (loops, broken, leading outside the workspace).
        for path, reason in getattr(self.storage, "skipped", ()):
            diags.append(Diagnostic(path=path, code="box.skipped-link", severity=Severity.WARNING,
                                    message=f"{reason}; left out of the workspace"))
        if isinstance(self.storage, LocalStorage):
            diags += temp_file_diagnostics(self.storage.root, "box")
        return diags

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
                        plain(e.as_dict()) for e in folder.entries]:
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
            content = [d for d in self._content_diags(files) if d.code in {
                "box.duplicate-id", "box.slug-conflict", "box.companion-stale", "box.companion-vanished"}]
        return orphans + content

