"""scopes.md: named scopes and which folders each includes (spec "Scopes", reference note 9).

Grammar, as the reference ``parseScopes`` reads it: one list item per scope,
``- `name` — dir1, dir2`` (em dash or hyphen; ``,`` or ``+`` between includes; an optional
``| grants: src1, src2`` tail). Includes are path prefixes; absolute paths and ``..`` are
dropped; a scope left with no include is dropped.

memcore extension (documented in docs/formats/whitebox.md): the spec's own examples say
``root files only`` / ``root + `projects/```; an include ``root`` (or one starting with
``root files``) means the files at the vault root, unless the vault has a ``root/`` folder.

``sensitive/`` is never served unless the active scope's includes name it.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memcore.errors import ConfigError, UnsafePathError
from memcore.storage import TextFile, gate_allows, safe_join
from memcore_whitebox.mapping import SKIPPED_FOLDERS, SPECIAL_ROOT_FILES

__all__ = [
    "OutOfScopeError",
    "Scope",
    "ScopeTable",
    "file_visible",
    "listing",
    "load_scopes",
    "name_allowed",
    "parse_scopes",
    "walk",
]


class OutOfScopeError(UnsafePathError):
    """A read or write names a file outside the session's active WhiteBox scope."""


_ITEM = re.compile(r"^[-*]\s*`([^`]+)`\s*[\u2014\-]\s*(.+)$")
_GRANTS = re.compile(r"^(.*)\|\s*grants:\s*(.+)$", re.I)
ROOT_INCLUDE = "<root>"


@dataclass(frozen=True)
class Scope:
    """One named scope.

    Attributes:
        name: The scope's name.
        includes: Vault-relative path prefixes (``"projects"``), or ``"<root>"`` for the files
            at the vault root.
        grants: Sources allowed to read it, or ``None`` for all (reference ``grants``).
        line: 1-based line in scopes.md.
    """

    name: str
    includes: tuple[str, ...]
    grants: tuple[str, ...] | None = None
    line: int = 1

    def covers(self, rel: str) -> bool:
        """Return whether vault-relative path ``rel`` (``/``-separated) is in this scope."""
        for inc in self.includes:
            if inc == ROOT_INCLUDE:
                if "/" not in rel:
                    return True
                continue
            if rel == inc or rel.startswith(inc + "/"):
                return True
        return False

    def names_sensitive(self) -> bool:
        """Return whether an include of this scope is ``sensitive`` or inside it."""
        return any(inc == "sensitive" or inc.startswith("sensitive/") for inc in self.includes)


def _clean_include(raw: str) -> str | None:
    text = raw.strip().replace("`", "").strip()
    if not text:
        return None
    if text == "root" or text.lower().startswith("root files"):
        return ROOT_INCLUDE
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        return None
    norm = posixpath.normpath(text.replace("\\", "/"))
    if norm == ".." or norm.startswith("../") or "/../" in f"/{norm}/":
        return None
    if norm == ".":
        return None
    return norm.rstrip("/")


def parse_scopes(text: str, *, has_root_folder: bool = False) -> list[Scope]:
    """Parse scopes.md text into scopes, in file order.

    Args:
        text: The file's text.
        has_root_folder: Whether the vault has a ``root/`` folder (then ``root`` is a path).
    """
    out: list[Scope] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        m = _ITEM.match(raw.strip())
        if m is None:
            continue
        name, spec = m.group(1).strip(), m.group(2)
        grants: tuple[str, ...] | None = None
        g = _GRANTS.match(spec)
        if g is not None:
            spec = g.group(1).rstrip()
            grants = tuple(s.strip() for s in re.split(r"[,+]", g.group(2)) if s.strip())
        includes = []
        for part in re.split(r"[,+]", spec):
            inc = _clean_include(part)
            if inc == ROOT_INCLUDE and has_root_folder:
                inc = "root"
            if inc is not None:
                includes.append(inc)
        if includes:
            out.append(Scope(name, tuple(includes), grants or None, number))
    return out


@dataclass
class ScopeTable:
    """The vault's scopes and the session's active scope.

    Attributes:
        scopes: Scope name -> scope (empty when the vault has no scopes.md).
        active: The active scope, or ``None`` for the whole vault (``sensitive/`` excepted).
        present: Whether scopes.md exists.
    """

    scopes: dict[str, Scope] = field(default_factory=dict)
    active: Scope | None = None
    present: bool = False

    def visible(self, rel: str) -> bool:
        """Return whether ``rel`` may be read or written in this session."""
        first = rel.split("/", 1)[0]
        if first == "sensitive" and "/" in rel:
            return self.active is not None and self.active.names_sensitive() and self.active.covers(rel)
        if self.active is None:
            return True
        return self.active.covers(rel)

    def folder_visible(self, rel: str) -> bool:
        """Return whether anything under folder ``rel`` may be visible (for pruning a walk)."""
        if rel == "sensitive" or rel.startswith("sensitive/"):
            if self.active is None or not self.active.names_sensitive():
                return False
        if self.active is None:
            return True
        for inc in self.active.includes:
            if inc == ROOT_INCLUDE:
                continue
            if inc == rel or inc.startswith(rel + "/") or rel.startswith(inc + "/"):
                return True
        return False

    def in_any_scope(self, rel: str) -> bool:
        """Return whether ``rel`` is covered by at least one declared scope."""
        return any(scope.covers(rel) for scope in self.scopes.values())

    def check_entry(self, scope: str | None) -> None:
        """Refuse an entry of another scope than the active one: this session could not read it back."""
        active = self.active.name if self.active is not None else None
        if active is not None and scope not in (None, active):
            raise OutOfScopeError(
                f"whitebox: entry scope {scope!r} is not the active scope {active!r}; it would be "
                "written where this session cannot read it (nothing written)"
            )

    def check_write(self, rel: str, root: Path) -> None:
        """Refuse a write to ``rel`` outside the active scope (:class:`OutOfScopeError`)."""
        if not self.visible(rel):
            name = self.active.name if self.active is not None else None
            raise OutOfScopeError(f"whitebox: {rel} is outside the active scope {name!r} of {root}")


def listing(folder: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """Return ``folder``'s items sorted by name on disk, each with its NFC name; ``[]`` if unreadable."""
    try:
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    return [(unicodedata.normalize("NFC", item.name), item) for item in items]


def walk(root: Path, scopes: ScopeTable) -> Iterator[str]:
    """Yield vault-relative paths of the visible ``.md`` files, in path order."""
    # NFC/NFD twins (``Ünïcödé.md`` spelled both ways) normalise to one path: it is yielded
    # once, never once per spelling (both would read the NFC file). get/update refuse it
    # (AmbiguousIdError) and validate reports the twins.
    seen: set[str] = set()

    def walk(folder: Path, prefix: str) -> Iterator[str]:
        for name, item in listing(folder):
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

    yield from walk(root, "")


def name_allowed(scopes: ScopeTable, rel: str) -> bool:
    """Return whether the vault path ``rel`` may be served, judged on its name alone."""
    first = rel.split("/", 1)[0]
    if "/" not in rel and rel in SPECIAL_ROOT_FILES:
        return False
    if first in SKIPPED_FOLDERS and "/" in rel:
        return False
    return scopes.visible(rel)


def file_visible(root: Path, scopes: ScopeTable, rel: str) -> bool:
    """Return whether ``rel`` is a visible entry file, judged on where the path leads."""
    try:
        path = safe_join(root, rel)
    except UnsafePathError:
        return False
    try:
        is_file = path.is_file()
    except OSError:  # a name too long for the file system, an unreadable folder...
        return False
    # the gate applies to where the path leads: a link into sensitive/ or out of scope is shut
    return rel.endswith(".md") and is_file and gate_allows(root, rel, functools.partial(name_allowed, scopes))


def load_scopes(root: Path, read: Callable[[str], tuple[bytes, str] | None], wanted: object) -> ScopeTable:
    """Read ``root``'s scopes.md (through ``read``) and make ``wanted`` (a name, or ``None``) the active scope.

    Raises:
        ConfigError: ``wanted`` names no scope of scopes.md, or the vault has none.
        UnsafePathError: scopes.md is a symlink (scopes are never read through a link).
    """
    path = root / "scopes.md"
    table = ScopeTable()
    if path.is_symlink():
        # scopes.md decides what a session may see: fail closed rather than read through it
        raise UnsafePathError(
            f"whitebox: {path} is a symlink; memcore does not read scopes through a link "
            "(replace it with the file itself)"
        )
    found = read("scopes.md") if path.is_file() else None
    if found is not None:
        table.present = True
        text = TextFile.decode(found[0], path=str(path)).text
        for scope in parse_scopes(text, has_root_folder=(root / "root").is_dir()):
            table.scopes.setdefault(scope.name, scope)
    if wanted not in (None, ""):
        name = str(wanted)
        if not table.present:
            raise ConfigError(
                f"whitebox: scope {name!r} requested but {root} has no scopes.md; "
                "drop the scope or declare it in scopes.md"
            )
        if name not in table.scopes:
            known = ", ".join(sorted(table.scopes)) or "none"
            raise ConfigError(f"whitebox: unknown scope {name!r} in {path} (declared: {known})")
        table.active = table.scopes[name]
    return table
