"""Safe joins: every path built from an id, slug, title or tag must stay inside the store."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from memcore.errors import UnsafePathError

__all__ = ["check_component", "safe_join"]

_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.IGNORECASE)
_FORBIDDEN_CHARS = set('\x00\\:*?"<>|') | {chr(c) for c in range(1, 32)}


def check_component(name: str) -> str:
    """Return ``name`` if it is one safe, portable path component, else raise.

    Refused: empty, ``.``/``..``, separators (``/`` and ``\\``), NUL and control characters,
    characters Windows forbids (``:*?"<>|``), Windows-reserved device names (``CON``,
    ``nul.txt``, ``COM1``…), and names ending in a dot or a space.

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
    return name


def safe_join(root: str | os.PathLike[str], *parts: str) -> Path:
    """Join ``parts`` under ``root``, refusing anything that could leave the store.

    Each part may hold ``/``-separated components; every component goes through
    :func:`check_component`. Absolute parts, drive letters and symlinks (existing ones, at any
    depth) resolving outside ``root`` are refused. Components are NFC-normalised.

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
            out = out / check_component(unicodedata.normalize("NFC", component))
    real_root = base.resolve()
    real = out.resolve()
    if real != real_root and real_root not in real.parents:
        raise UnsafePathError(f"unsafe path {out}: resolves to {real}, outside the store {real_root}")
    return out
