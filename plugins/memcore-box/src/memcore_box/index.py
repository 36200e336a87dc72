"""Per-folder ``_index.json`` and the workspace-root rollup, built from memory frontmatter.

Spec: box-memory-schema.md "Index file"; field order from the authors' example-_index.json:

- top level: ``version``, ``folder_id``, ``folder_path``, ``updated_at``, ``tier``,
  ``entry_count``, ``entries``, ``by_id``, ``by_slug``, ``by_wikilink``, ``by_kind``,
  ``by_tag``, ``by_status``, ``by_companion_for`` (then any key memcore does not know, kept);
- entry: ``id``, ``file_id``, ``filename``, ``title``, ``slug``, ``kind``, ``status``, ``team``,
  ``tags``, ``related``, ``companion_for`` (the binary's file id, flattened, or null),
  ``sha256`` (companion hash or null), ``size_bytes`` (of the memory file), ``created_at``,
  ``updated_at``;
- maps: ``by_id`` id -> position in ``entries``; ``by_slug``/``by_wikilink`` slug/title -> id
  (an active memory wins over an inactive one, else the first); ``by_kind``/``by_tag``/
  ``by_status`` -> ids in entry order; ``by_companion_for`` binary file id -> companion id.

The rollup (box-init step 6) has the same top level with ``folder_path: "/"``, a
``child_indexes`` list (``folder_path``, ``folder_id``, ``index_file_id``) after
``entry_count``, and entries carrying one more key, ``folder_path``, so a file can be found.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from memcore.frontmatter import text_of
from memcore_box._json import IndexWriter

__all__ = [
    "ENTRY_FIELDS",
    "INDEX_FILE",
    "INDEX_MAPS",
    "IndexRow",
    "build_index",
    "build_rollup",
    "index_entry",
    "index_row",
    "row_from_json",
    "row_maps",
]

ENTRY_FIELDS: tuple[str, ...] = (
    "id",
    "file_id",
    "filename",
    "title",
    "slug",
    "kind",
    "status",
    "team",
    "tags",
    "related",
    "companion_for",
    "sha256",
    "size_bytes",
    "created_at",
    "updated_at",
)
#: Every memory folder's index file, and the workspace rollup at the root.
INDEX_FILE = "_index.json"

INDEX_MAPS: tuple[str, ...] = (
    "by_id",
    "by_slug",
    "by_wikilink",
    "by_kind",
    "by_tag",
    "by_status",
    "by_companion_for",
)
_TOP: tuple[str, ...] = ("version", "folder_id", "folder_path", "updated_at", "tier", "entry_count")


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):  # a list, or ruamel's sequence: its items without its per-item lookups
        return [str(v) for v in list.__iter__(value) if v is not None]
    if isinstance(value, tuple):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def _intern(value: str | None) -> str | None:
    return None if value is None else sys.intern(value)


class IndexRow(NamedTuple):
    """One ``_index.json`` entry as the provider holds it in memory: a tuple, not a dict.

    A workspace of 100,000 memories holds 100,000 of these, so they are kept small: fields in
    :data:`ENTRY_FIELDS` order, lists as tuples, ``kind``/``status``/tags interned, the file name
    left out (``fname=None``) when it is the conventional ``<kind>__<slug>.md`` and
    ``updated_at`` sharing ``created_at``'s string when equal. :meth:`as_dict` gives back the
    entry exactly as it is written. An entry read from an index that memcore did not write in
    this exact shape (other keys, another key order, non-list tags) keeps its original dict in
    ``raw``; it is then written back unchanged, and the other fields are that dict's values
    (``None`` when missing), for the lookups and maps.
    """

    id: str
    file_id: Any
    fname: str | None
    title: Any
    slug: Any
    kind: Any
    status: Any
    team: Any
    tags: Any
    related: Any
    companion_for: Any
    sha256: Any
    size_bytes: Any
    created_at: Any
    updated_at: Any
    raw: dict[str, Any] | None = None

    @property
    def filename(self) -> str:
        """The memory file's name in its folder."""
        return self.fname if self.fname is not None else f"{self.kind}__{self.slug}.md"

    def as_dict(self) -> dict[str, Any]:
        """Return the entry as written in ``_index.json`` (a new dict unless ``raw``)."""
        if self.raw is not None:
            return self.raw
        return {
            "id": self.id,
            "file_id": self.file_id,
            "filename": self.filename,
            "title": self.title,
            "slug": self.slug,
            "kind": self.kind,
            "status": self.status,
            "team": self.team,
            "tags": list(self.tags),
            "related": list(self.related),
            "companion_for": self.companion_for,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


_TAG_TUPLES: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _shared(tags: tuple[Any, ...]) -> tuple[Any, ...]:
    """Return one shared tuple per distinct tag list (a workspace repeats a few combinations)."""
    try:
        found = _TAG_TUPLES.get(tags)
    except TypeError:  # an unhashable tag (a list in a foreign index): keep this tuple
        return tags
    if found is not None:
        return found
    if len(_TAG_TUPLES) >= 4096:
        _TAG_TUPLES.clear()
    _TAG_TUPLES[tags] = tags
    return tags


def _compact(values: Mapping[str, Any]) -> IndexRow:
    """Return the row of an entry dict that has exactly :data:`ENTRY_FIELDS` with list tags/related."""
    kind, slug, filename = values["kind"], values["slug"], values["filename"]
    created, updated = values["created_at"], values["updated_at"]
    tags = values["tags"]
    return IndexRow(
        id=values["id"],
        file_id=values["file_id"],
        fname=None if filename == f"{kind}__{slug}.md" else filename,
        title=values["title"],
        slug=slug,
        kind=sys.intern(kind) if isinstance(kind, str) else kind,
        status=sys.intern(values["status"]) if isinstance(values["status"], str) else values["status"],
        team=values["team"],
        tags=_shared(tuple(sys.intern(t) if isinstance(t, str) else t for t in tags)) if tags else (),
        related=tuple(values["related"]) if values["related"] else (),
        companion_for=values["companion_for"],
        sha256=values["sha256"],
        size_bytes=values["size_bytes"],
        created_at=created,
        updated_at=created if updated == created and type(updated) is type(created) else updated,
    )


def row_from_json(entry: dict[str, Any]) -> IndexRow:
    """Return the row of one entry parsed from an ``_index.json`` (``id``/``filename`` are strings).

    Entries in memcore's own shape become compact rows; any other entry keeps its dict in
    :attr:`IndexRow.raw` so that it is written back as it was.
    """
    if tuple(entry) == ENTRY_FIELDS and isinstance(entry["tags"], list) and isinstance(entry["related"], list):
        row = _compact(entry)
        if row.as_dict() == entry:
            return row
    get = entry.get
    return IndexRow(
        id=str(entry["id"]),
        file_id=get("file_id"),
        fname=get("filename"),
        title=get("title"),
        slug=get("slug"),
        kind=get("kind"),
        status=get("status"),
        team=get("team"),
        tags=get("tags"),
        related=get("related"),
        companion_for=get("companion_for"),
        sha256=get("sha256"),
        size_bytes=get("size_bytes"),
        created_at=get("created_at"),
        updated_at=get("updated_at"),
        raw=entry,
    )


def index_row(meta: Mapping[str, Any], *, filename: str, file_id: str | None, size: int) -> IndexRow:
    """Return the index row of one memory file (see :func:`index_entry` for the fields).

    The row :func:`_compact` makes of the entry's dict, built without the dict.
    """
    get = meta.get
    companion = get("companion_for")
    binary_id = sha256 = None
    if isinstance(companion, Mapping):
        binary_id = _str_or_none(companion.get("file_id"))
        sha256 = _str_or_none(companion.get("sha256"))
    kind, slug = _intern(_str_or_none(get("kind"))), text_of(get("slug")) or ""
    status = _intern(_str_or_none(get("status")))
    tags, related = _str_list(get("tags")), _str_list(get("related"))
    created, updated = _str_or_none(get("created_at")), _str_or_none(get("updated_at"))
    return IndexRow(
        id=str(get("id")),
        file_id=file_id,
        fname=None if filename == f"{kind}__{slug}.md" else filename,
        title=text_of(get("title")) or "",
        slug=slug,
        kind=kind,
        status=status,
        team=text_of(get("team")),
        tags=_shared(tuple(sys.intern(t) for t in tags)) if tags else (),
        related=tuple(related),
        companion_for=binary_id,
        sha256=sha256,
        size_bytes=size,
        created_at=created,
        updated_at=created if updated == created and type(updated) is type(created) else updated,
    )


def index_entry(meta: Mapping[str, Any], *, filename: str, file_id: str | None, size: int) -> dict[str, Any]:
    """Return the index entry of one memory file, fields in the schema's order.

    Args:
        meta: The file's frontmatter (plain or ruamel mapping).
        filename: The file's name in its folder.
        file_id: The storage's id of the file (Box file id), or ``None`` on a local folder.
        size: The memory file's size in bytes.
    """
    return index_row(meta, filename=filename, file_id=file_id, size=size).as_dict()


_Keys = tuple[str, Any, Any, Any, Any, Any, Any]  # id, status, slug, title, kind, tags, companion_for


def _build_maps(items: Iterable[_Keys]) -> dict[str, dict[str, Any]]:
    maps: dict[str, dict[str, Any]] = {name: {} for name in INDEX_MAPS}
    status_of: dict[str, str | None] = {}

    def prefer(table: dict[str, Any], key: str, entry_id: str, status: str | None) -> None:
        if key not in table:
            table[key] = entry_id
        elif status == "active" and status_of.get(table[key]) != "active":
            table[key] = entry_id

    for pos, (entry_id, status, slug, title, kind, tags, companion_for) in enumerate(items):
        maps["by_id"].setdefault(entry_id, pos)
        status_of.setdefault(entry_id, status)
        if slug:
            prefer(maps["by_slug"], slug, entry_id, status)
        if title:
            prefer(maps["by_wikilink"], title, entry_id, status)
        if kind:
            maps["by_kind"].setdefault(kind, []).append(entry_id)
        for tag in dict.fromkeys(tags or []):
            maps["by_tag"].setdefault(tag, []).append(entry_id)
        if status:
            maps["by_status"].setdefault(status, []).append(entry_id)
        if companion_for:
            prefer(maps["by_companion_for"], companion_for, entry_id, status)
    return maps


def _maps(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return _build_maps(
        (e["id"], e.get("status"), e.get("slug"), e.get("title"), e.get("kind"), e.get("tags"), e.get("companion_for"))
        for e in entries
    )


def row_maps(rows: Sequence[IndexRow]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(name, map)`` for :data:`INDEX_MAPS` over ``rows``, the maps :func:`build_index` builds.

    Each map is built just before it is handed out and dropped after, so that a writer
    streaming them holds one map (and ``by_id``) at a time, not all seven.
    """
    first: dict[str, int] = {}
    for pos, row in enumerate(rows):
        first.setdefault(row.id, pos)
    yield "by_id", first

    def preferred(key_of: Callable[[IndexRow], Any]) -> dict[str, Any]:
        table: dict[str, Any] = {}
        for row in rows:
            key = key_of(row)
            if not key:
                continue
            held = table.get(key)
            if held is None:
                table[key] = row.id
            elif row.status == "active" and rows[first[held]].status != "active":
                table[key] = row.id
        return table

    def grouped(keys_of: Callable[[IndexRow], Iterable[Any]]) -> dict[str, Any]:
        table: dict[str, Any] = {}
        for row in rows:
            for key in keys_of(row):
                table.setdefault(key, []).append(row.id)
        return table

    yield "by_slug", preferred(lambda r: r.slug)
    yield "by_wikilink", preferred(lambda r: r.title)
    yield "by_kind", grouped(lambda r: (r.kind,) if r.kind else ())
    yield "by_tag", grouped(lambda r: dict.fromkeys(r.tags or []))
    yield "by_status", grouped(lambda r: (r.status,) if r.status else ())
    yield "by_companion_for", preferred(lambda r: r.companion_for)


def build_index(
    entries: Iterable[dict[str, Any]],
    *,
    folder_id: str | None,
    folder_path: str,
    updated_at: str,
    tier: str | None,
    keep: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return a folder's ``_index.json`` content (a dict in the schema's key order).

    Args:
        entries: Index entries (see :func:`index_entry`), in the order to write them.
        folder_id: The folder's storage id (Box folder id) or ``None``.
        folder_path: Workspace-relative folder path ending in ``/`` (``"memories/"``).
        updated_at: ISO-8601 UTC time of this write.
        tier: The workspace tier from ``_box-memory.json``.
        keep: A previous index; its keys memcore does not know are kept, after the schema's.
    """
    items = list(entries)
    out: dict[str, Any] = {
        "version": 1,
        "folder_id": folder_id,
        "folder_path": folder_path,
        "updated_at": updated_at,
        "tier": tier,
        "entry_count": len(items),
        "entries": items,
    }
    out.update(_maps(items))
    for key, value in (keep or {}).items():
        if key not in out and key not in _TOP:
            out[key] = value
    return out


def build_rollup(
    children: Iterable[tuple[str, str | None, str | None, Mapping[str, Any]]],
    *,
    folder_id: str | None,
    updated_at: str,
    tier: str | None,
    keep: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the workspace-root rollup ``_index.json`` aggregating folder indexes.

    Args:
        children: ``(folder_path, folder_id, index_file_id, folder index)`` per folder, in order.
        folder_id: The workspace root's storage id, or ``None``.
        updated_at: ISO-8601 UTC time of this write.
        tier: The workspace tier.
        keep: The previous rollup; unknown keys are kept.
    """
    child_list: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    for folder_path, child_id, index_id, index in children:
        child_list.append({"folder_path": folder_path, "folder_id": child_id, "index_file_id": index_id})
        for entry in index.get("entries") or []:
            if isinstance(entry, Mapping):
                entries.append({**entry, "folder_path": folder_path})
    out: dict[str, Any] = {
        "version": 1,
        "folder_id": folder_id,
        "folder_path": "/",
        "updated_at": updated_at,
        "tier": tier,
        "entry_count": len(entries),
        "child_indexes": child_list,
        "entries": entries,
    }
    out.update(_maps(entries))
    for key, value in (keep or {}).items():
        if key not in out:
            out[key] = value
    return out


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
    #: The version of the index file memcore last read or wrote and the rows its entries are,
    #: in file order: what :mod:`memcore_box._splice` takes unchanged entries' texts from.
    source: tuple[str, tuple[IndexRow, ...]] | None = None
    #: Where the entries and maps are in that file, when memcore wrote it (:mod:`memcore_box._patch`).
    layout: Any = None

    def reposition(self) -> None:
        self.pos = {}
        for i, entry in enumerate(self.entries):
            self.pos.setdefault(entry.id, i)


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

    def add_keys(self, entry_id: str, title: str | None) -> str:
        """Record one file's id and title as :meth:`add` records ``{"id": entry_id, "title": title}``."""
        if not entry_id.isascii() or (title is not None and not title.isascii()):
            return self.add({"id": entry_id, "title": title})
        self.ids.add(entry_id)
        if title is not None:
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
