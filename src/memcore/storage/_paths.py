"""Safe joins: every path built from an id, slug, title or tag must stay inside the store."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from memcore.errors import UnsafePathError
from memcore.models import Diagnostic, Severity

__all__ = [
    "check_component",
    "gate_allows",
    "list_names",
    "name_twin_diagnostics",
    "name_twins",
    "on_disk_name",
    "on_disk_path",
    "resolved_rel",
    "safe_join",
]

_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.IGNORECASE)
_FORBIDDEN_CHARS = set('\x00\\:*?"<>|') | {chr(c) for c in range(1, 32)}


#: The longest file or folder name, in bytes (``NAME_MAX`` of Linux and macOS file systems).
NAME_MAX_BYTES = 255


def check_component(name: str) -> str:
    """Return ``name`` if it is one safe, portable path component, else raise.

    Refused: empty, ``.``/``..``, separators (``/`` and ``\\``), NUL and control characters,
    characters Windows forbids (``:*?"<>|``), Windows-reserved device names (``CON``,
    ``nul.txt``, ``COM1``…), names ending in a dot or a space, and names longer than
    :data:`NAME_MAX_BYTES` (255) bytes in UTF-8, which Linux and macOS file systems cannot hold.

    Raises:
        UnsafePathError: The name is not safe; the message says why.
    """
    if not name or name in {".", ".."}:
        raise UnsafePathError(f"unsafe path component {name!r}: empty or a dot name")
    if "/" in name:
        raise UnsafePathError(f"unsafe path component {name!r}: contains '/'")
    bad = sorted({c for c in name if c in _FORBIDDEN_CHARS})
    if bad:
        raise UnsafePathError(f"unsafe path component {name!r}: contains {''.join(bad)!r}")
    if _WINDOWS_RESERVED.match(name.rstrip(" .")):
        raise UnsafePathError(f"unsafe path component {name!r}: a Windows-reserved device name")
    if name[-1] in " .":
        raise UnsafePathError(f"unsafe path component {name!r}: ends in a dot or space")
    if len(name) > NAME_MAX_BYTES // 4 and len(name.encode("utf-8", "surrogatepass")) > NAME_MAX_BYTES:
        size = len(name.encode("utf-8", "surrogatepass"))
        raise UnsafePathError(
            f"unsafe path component {name[:40]!r}…: {size} bytes in UTF-8,"
            f" over the {NAME_MAX_BYTES} a file name can hold"
        )
    return name


def safe_join(root: str | os.PathLike[str], *parts: str) -> Path:
    """Join ``parts`` under ``root``, refusing anything that could leave the store.

    Each part may hold ``/``-separated components; every component goes through
    :func:`check_component`. Absolute parts, drive letters and symlinks (existing ones, at any
    depth) resolving outside ``root`` are refused. Components are compared NFC-normalised: where
    a file or folder exists under another spelling of the same name (NFD, as macOS and rsync
    write names), the path uses the spelling on disk, so a read opens that file and a write
    replaces it instead of creating an NFC twin beside it (see :func:`on_disk_name`).

    Args:
        root: The store's root folder.
        *parts: Relative path pieces, e.g. ``"observations", "2026-04.md"``.

    Returns:
        The joined path (not resolved, so it keeps the store's spelling).

    Raises:
        UnsafePathError: The path would escape ``root`` or is not portable.
    """
    base = Path(root)
    out = base
    for part in parts:
        if "\x00" in part:
            raise UnsafePathError(f"unsafe path {part!r}: contains NUL")
        if part.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", part) or os.path.isabs(part):
            raise UnsafePathError(f"unsafe path {part!r}: absolute paths are not allowed in a store")
        for component in part.split("/"):
            out = out / on_disk_name(out, check_component(unicodedata.normalize("NFC", component)))
    real_root = base.resolve()
    real = out.resolve()
    if real != real_root and real_root not in real.parents:
        raise UnsafePathError(f"unsafe path {out}: resolves to {real}, outside the store {real_root}")
    return out


def list_names(folder: str | os.PathLike[str]) -> dict[str, list[str]]:
    """List ``folder`` as ``{NFC name: [names on disk, sorted]}``.

    Two names on disk under one key are NFC/NFD twins (see :func:`name_twins`). A folder that
    cannot be listed gives ``{}``.
    """
    out: dict[str, list[str]] = {}
    try:
        with os.scandir(folder) as it:
            for item in it:
                out.setdefault(unicodedata.normalize("NFC", item.name), []).append(item.name)
    except OSError:
        return {}
    for names in out.values():
        names.sort()
    return out


def on_disk_name(folder: str | os.PathLike[str], name: str) -> str:
    """Return how ``name`` (NFC) is spelled on disk in ``folder``; ``name`` itself if absent.

    The exact spelling wins when it exists; otherwise the first name on disk (sorted) that
    normalises to the same NFC text. An ASCII name has one spelling, so no folder is listed.
    """
    if name.isascii() or os.path.lexists(os.path.join(folder, name)):
        return name
    wanted = unicodedata.normalize("NFC", name)
    return list_names(folder).get(wanted, [name])[0]


def name_twins(root: str | os.PathLike[str]) -> list[list[str]]:
    """Find NFC/NFD twins under ``root``: names on disk, in one folder, that normalise equal.

    Walks ``root`` without following symlinks, skipping dot-folders (``.git``…).

    Returns:
        One list per group of twins, of root-relative POSIX paths (sorted), in path order.
    """
    found: list[list[str]] = []
    base = os.fspath(root)
    for folder, dirs, files in os.walk(base):
        groups = _twin_groups([*dirs, *files])
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if groups:
            rel = os.path.relpath(folder, base).replace(os.sep, "/")
            prefix = "" if rel == "." else rel + "/"
            found.extend([prefix + n for n in names] for names in groups)
    return found


def _twin_groups(names: list[str]) -> list[list[str]]:
    """The groups of ``names`` (one folder's) that normalise to the same NFC name, each sorted, in order.

    Only a name with a non-ASCII character can have a twin (an ASCII name is its own NFC form,
    though a non-ASCII one may normalise to it, as the Kelvin sign does to ``K``), so a folder of
    ASCII names costs one ``isascii`` per name.
    """
    odd = [n for n in names if not n.isascii()]
    if not odd:
        return []
    plain = set(names).difference(odd)
    by_nfc: dict[str, list[str]] = {}
    for name in odd:
        by_nfc.setdefault(unicodedata.normalize("NFC", name), []).append(name)
    groups = []
    for nfc, spelled in by_nfc.items():
        if nfc in plain:
            spelled.append(nfc)
        if len(spelled) > 1:
            groups.append(sorted(spelled))
    return sorted(groups)


def on_disk_path(root: str | os.PathLike[str], rel: str) -> Path:
    """Return ``root / rel`` with each ``/``-separated component spelled as it is on disk.

    For a path already known to be inside the store (found by walking it); unlike
    :func:`safe_join` it checks nothing and resolves nothing. See :func:`on_disk_name`.
    """
    out = Path(root)
    for component in rel.split("/"):
        out = out / on_disk_name(out, component)
    return out


def name_twin_diagnostics(root: str | os.PathLike[str], *, code: str = "name-twins") -> list[Diagnostic]:
    """One error per group of NFC/NFD twins under ``root`` (see :func:`name_twins`).

    The diagnostic's path is the NFC spelling; the message names every spelling (ASCII-escaped,
    since they look alike) and the fix. memcore reads and writes the NFC one where it exists.
    """
    out: list[Diagnostic] = []
    for group in name_twins(root):
        nfc = unicodedata.normalize("NFC", group[0])
        spellings = ", ".join(ascii(p) for p in group)
        out.append(
            Diagnostic(
                path=nfc,
                code=code,
                severity=Severity.ERROR,
                message=(
                    f"{len(group)} names on disk normalise to the same name ({spellings}): NFC/NFD "
                    "twins, which look identical but are different files (a copy from macOS or rsync "
                    "next to the original); memcore uses the NFC spelling. Merge them by hand and "
                    "delete the other spelling"
                ),
            )
        )
    return out


def resolved_rel(root: str | os.PathLike[str], rel: str) -> str | None:
    """Return the store-relative path ``rel`` really leads to, after every symlink.

    Args:
        root: The store's root folder.
        rel: A ``/``-separated path relative to ``root``, as the store names it.

    Returns:
        The ``/``-separated path of the target relative to the resolved root, NFC-normalised,
        or ``None`` when it resolves outside the store (or cannot be resolved).
    """
    try:
        real_root = Path(root).resolve()
        real = (Path(root) / rel).resolve()
    except (OSError, RuntimeError):  # a symlink loop, a name too long...
        return None
    if real == real_root:
        return ""
    if real_root not in real.parents:
        return None
    return unicodedata.normalize("NFC", real.relative_to(real_root).as_posix())


def gate_allows(root: str | os.PathLike[str], rel: str, allowed: Callable[[str], bool]) -> bool:
    """Return whether a store's gate lets ``rel`` out, judged by its name *and* where it leads.

    Every provider with gates (scopes, a ``sensitive/`` folder...) calls this before content
    leaves the store: a symlink named inside the active scope that resolves into a gated
    place, or outside the store, is refused like the place it leads to.

    Args:
        root: The store's root folder.
        rel: The store-relative path asked for.
        allowed: The provider's gate on a store-relative path (e.g. ``ScopeTable.visible``).
    """
    if not allowed(rel):
        return False
    real = resolved_rel(root, rel)
    return real is not None and (real == unicodedata.normalize("NFC", rel) or allowed(real))
