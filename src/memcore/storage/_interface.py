"""The storage interface every provider does its file I/O through.

A store is a tree of folders and files. A provider never touches the file system (or a remote
API) itself: it calls a :class:`Storage` object. This module defines that small interface;
:class:`memcore.storage.LocalStorage` implements it on a local folder, and a remote backend
(the Box cloud provider's ``BoxStorage``) implements the same protocol on its API.

Conventions every implementation follows:

- **Paths** are store-relative POSIX strings: ``"memories/fact__x.md"``,
  ``"teams/core/memories"``. ``""`` is the store's root. No leading ``/``, no ``..``.
- **Versions** are opaque strings that change whenever a file's bytes change (local:
  :func:`version_token` of the bytes; Box: the file's etag). They never equal :data:`ANY_VERSION`.
- **Conditional writes**: ``write(path, data, expected_version=...)`` takes

  - :data:`CREATE` (``None``): the file must not exist yet (Box: upload a new file, a name clash
    is a conflict);
  - a version string: the file must exist with exactly that version (Box: ``If-Match``);
  - :data:`ANY_VERSION` (``"*"``): write unconditionally, creating or replacing (used for derived
    files such as an index that are written under :meth:`Storage.lock`).

  A failed precondition raises :class:`memcore.errors.ConflictError`.
- **Locking**: :meth:`Storage.lock` guards a multi-file read-modify-write. Locally it is the
  cross-process :func:`memcore.storage.file_lock` (re-entrant in one thread); a remote backend
  may make it a no-op and rely on conditional writes to catch concurrent changes.
- **Errors**: a missing file or folder raises :class:`FileNotFoundError`; a path that would
  leave the store (including through a symbolic link) or that is a symbolic-link loop raises
  :class:`memcore.errors.UnsafePathError`.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

__all__ = ["ANY_VERSION", "CREATE", "Item", "Storage", "join", "version_token"]

#: ``expected_version`` meaning "the file must not exist yet".
CREATE: Final = None
#: ``expected_version`` meaning "write whatever is there" (create or replace).
ANY_VERSION: Final = "*"


@dataclass(frozen=True, slots=True)
class Item:
    """One file or folder as the storage sees it.

    Attributes:
        name: The entry's name inside its folder (no ``/``), e.g. ``"fact__x.md"``.
        is_folder: Whether it is a folder.
        version: The file's version token (see the module docstring); ``None`` for folders, and
            from :meth:`Storage.list` when the backend cannot give it without reading the file
            (local folders).
        size: Size in bytes (files), or ``None``.
        id: The backend's id for the item: a Box file or folder id; ``None`` on a local folder.
    """

    name: str
    is_folder: bool
    version: str | None = None
    size: int | None = None
    id: str | None = None


def join(*parts: str) -> str:
    """Join store-relative path pieces with ``/``, skipping empty ones.

    Example: ``join("teams/core", "memories", "fact__x.md")`` is
    ``"teams/core/memories/fact__x.md"``; ``join("", "x.md")`` is ``"x.md"``.
    """
    if len(parts) == 2:  # a folder and a name, neither with an edge "/": the common case, cheaply
        head, tail = parts
        if head and tail and head[0] != "/" and head[-1] != "/" and tail[0] != "/" and tail[-1] != "/":
            return f"{head}/{tail}"
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))


@runtime_checkable
class Storage(Protocol):
    """What a provider needs from where its store lives.

    Attributes:
        description: Human-readable location for messages (a folder path, ``box:folder/123``).
    """

    description: str

    def list(self, folder: str = "") -> builtins.list[Item]:
        """Return the files and folders directly inside ``folder``, sorted by name.

        Raises:
            FileNotFoundError: ``folder`` does not exist.
        """
        ...

    def stat(self, path: str) -> Item:
        """Return the :class:`Item` for ``path`` with ``version`` and ``size`` filled in for files.

        Raises:
            FileNotFoundError: Nothing at ``path``.
        """
        ...

    def exists(self, path: str) -> bool:
        """Return whether a file or folder exists at ``path``."""
        ...

    def read(self, path: str) -> tuple[bytes, str]:
        """Return ``(content bytes, version)`` of the file at ``path``.

        Raises:
            FileNotFoundError: No file at ``path``.
        """
        ...

    def write(self, path: str, data: bytes, *, expected_version: str | None) -> Item:
        """Write ``data`` as the whole content of ``path``, atomically, if the precondition holds.

        Args:
            path: The file; its folder must exist (see :meth:`make_folder`).
            data: The complete new content.
            expected_version: :data:`CREATE`, a version string, or :data:`ANY_VERSION`.

        Returns:
            The file's new :class:`Item` (``version`` and ``size`` set).

        Raises:
            ConflictError: The precondition failed (exists on create; missing or another
                version on update).
            FileNotFoundError: The folder does not exist.
        """
        ...

    def delete(self, path: str, *, expected_version: str | None = None) -> None:
        """Delete the file at ``path``.

        Args:
            path: The file.
            expected_version: When given, delete only if the file has this version.

        Raises:
            FileNotFoundError: No file at ``path``.
            ConflictError: The file has another version than ``expected_version``.
        """
        ...

    def make_folder(self, path: str) -> Item:
        """Create the folder ``path`` and any missing parents; existing folders are fine.

        Returns:
            The folder's :class:`Item` (``id`` set on Box).
        """
        ...

    def checksum(self, path: str) -> tuple[str, str, int]:
        """Return ``(algorithm, hex digest, size in bytes)`` of a (possibly large, binary) file.

        Local folders give ``"sha256"``; a backend that can only give another algorithm
        cheaply (Box: ``"sha1"``) returns that name instead.

        Raises:
            FileNotFoundError: No file at ``path``.
        """
        ...

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Return a context manager guarding a multi-file read-modify-write of the store."""
        ...


def version_token(*parts: bytes | str) -> str:
    """Return memcore's one version token: ``"sha256:"`` and the hex digest of ``parts``.

    A file's version is ``version_token(its bytes)``; a provider whose entries are parts of a
    file (a section, a node) hashes the parts that make the entry, e.g.
    ``version_token(rel, section_text)``. Parts are joined with NUL (which no stored text
    holds) and ``str`` parts encoded UTF-8 (lone surrogates kept), so the token changes exactly
    when one of the parts does, and is the same in every process and after a restart.

    Args:
        *parts: The bytes or text the version covers; one ``bytes`` part is hashed as it is.

    Returns:
        ``"sha256:<64 hex digits>"``.
    """
    if len(parts) == 1 and isinstance(parts[0], bytes):
        return "sha256:" + hashlib.sha256(parts[0]).hexdigest()
    h = hashlib.sha256()
    for index, part in enumerate(parts):
        if index:
            h.update(b"\0")
        h.update(part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part)
    return "sha256:" + h.hexdigest()
