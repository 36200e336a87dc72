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

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "ENTRY_FIELDS",
    "INDEX_MAPS",
    "build_index",
    "build_rollup",
    "index_entry",
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
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def index_entry(meta: Mapping[str, Any], *, filename: str, file_id: str | None, size: int) -> dict[str, Any]:
    """Return the index entry of one memory file, fields in the schema's order.

    Args:
        meta: The file's frontmatter (plain or ruamel mapping).
        filename: The file's name in its folder.
        file_id: The storage's id of the file (Box file id), or ``None`` on a local folder.
        size: The memory file's size in bytes.
    """
    companion = meta.get("companion_for")
    binary_id = sha256 = None
    if isinstance(companion, Mapping):
        binary_id = _str_or_none(companion.get("file_id"))
        sha256 = _str_or_none(companion.get("sha256"))
    return {
        "id": str(meta.get("id")),
        "file_id": file_id,
        "filename": filename,
        "title": str(meta.get("title") or ""),
        "slug": str(meta.get("slug") or ""),
        "kind": _str_or_none(meta.get("kind")),
        "status": _str_or_none(meta.get("status")),
        "team": _str_or_none(meta.get("team")),
        "tags": _str_list(meta.get("tags")),
        "related": _str_list(meta.get("related")),
        "companion_for": binary_id,
        "sha256": sha256,
        "size_bytes": size,
        "created_at": _str_or_none(meta.get("created_at")),
        "updated_at": _str_or_none(meta.get("updated_at")),
    }


def _maps(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    maps: dict[str, dict[str, Any]] = {name: {} for name in INDEX_MAPS}
    status_of: dict[str, str | None] = {}

    def prefer(table: dict[str, Any], key: str, entry_id: str, status: str | None) -> None:
        if key not in table:
            table[key] = entry_id
        elif status == "active" and status_of.get(table[key]) != "active":
            table[key] = entry_id

    for pos, entry in enumerate(entries):
        entry_id = entry["id"]
        status = entry.get("status")
        maps["by_id"].setdefault(entry_id, pos)
        status_of.setdefault(entry_id, status)
        if entry.get("slug"):
            prefer(maps["by_slug"], entry["slug"], entry_id, status)
        if entry.get("title"):
            prefer(maps["by_wikilink"], entry["title"], entry_id, status)
        if entry.get("kind"):
            maps["by_kind"].setdefault(entry["kind"], []).append(entry_id)
        for tag in dict.fromkeys(entry.get("tags") or []):
            maps["by_tag"].setdefault(tag, []).append(entry_id)
        if status:
            maps["by_status"].setdefault(status, []).append(entry_id)
        if entry.get("companion_for"):
            prefer(maps["by_companion_for"], entry["companion_for"], entry_id, status)
    return maps


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
