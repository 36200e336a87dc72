"""The search index's freshness stamp: what lets a new process trust the index without a provider.

An index refresh (:meth:`memcore.index.SearchIndex.refresh`) lists the store's files through
its provider, fingerprints each and re-reads what changed; a new process must do all of that
before it may answer from the index, and so import the provider and the models. The stamp
records, in the database and in the refresh's own transaction, what the folders the refresh
looked at held: for each folder its own status, and name, type, mode, size, mtime, ctime and
inode of every entry in it (hidden ones too; a sub-folder by name and type only, since the
folders of a folder store are stamped themselves, symlinked ones included). A process whose
stamp of the same folders is the same knows that no file was added, removed, renamed, edited,
re-permissioned or replaced there since, so the refresh would find nothing to do
(:mod:`memcore.cli._fast_search` answers from the rows then, and runs the whole path
otherwise).

A stamp is only written when it is settled: every time it holds (each ``ctime``, the time of
the last change to an entry) lies at least :data:`SETTLE_NS` before the refresh started
listing. A change made while the refresh ran, or just before it in the file system's coarse
clock, leaves no stamp, so it can never be covered by one; the next refresh writes it.

The stamp also holds :func:`plugin_stamp` (the interpreter's import path, each folder's status,
and the plugin allow and block lists): a plugin installed, removed or upgraded, or another
allow list, changes it, so the registry's answer for the format is the one it was.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Iterable

__all__ = ["SETTLE_NS", "STAMP_KEY", "folder_stamp", "plugin_stamp", "stamp_dirs"]

#: How long before a refresh starts every change a stamp records must be (nanoseconds): more
#: than the coarse clock of the file systems' timestamps (FAT keeps 2 s).
SETTLE_NS = 2_000_000_000
#: The ``meta`` key the stamp is kept under (JSON: ``dirs``, ``digest``, ``plugins``, ``format``).
STAMP_KEY = "fresh_stamp"


def stamp_dirs(root: str, files: Iterable[str], folder_store: bool) -> list[str]:
    """Return the folders a stamp covers, sorted.

    Args:
        root: The store's root folder (a single-file store's parent folder).
        files: The source files, relative to ``root``.
        folder_store: Whether the store is a folder: then every folder in it that is not
            hidden, through symbolic links too (each real folder once), is covered.
    """
    dirs = {root}
    dirs.update(os.path.dirname(os.path.join(root, rel)) for rel in files)
    if folder_store:
        seen: set[str] = set()
        for here, subdirs, _files in os.walk(root, followlinks=True):
            real = os.path.realpath(here)
            if real in seen:
                subdirs[:] = []
                continue
            seen.add(real)
            subdirs[:] = [d for d in subdirs if not d.startswith(".")]
            dirs.update(os.path.join(here, d) for d in subdirs)
    return sorted(dirs)


def folder_stamp(dirs: Iterable[str]) -> tuple[str, int]:
    """Return ``(digest, newest ctime in ns)`` of what ``dirs`` hold now.

    Never raises: a folder or entry that cannot be read is recorded as such.
    """
    digest = hashlib.sha256()
    newest = 0
    for folder in dirs:
        try:
            st = os.stat(folder)
        except OSError as exc:
            digest.update(f"D {folder!r} ! {exc.errno}\n".encode())
            continue
        newest = max(newest, st.st_ctime_ns)
        digest.update(f"D {folder!r} {st.st_mode} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}\n".encode())
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            digest.update(f"L ! {exc.errno}\n".encode())
            continue
        for entry in entries:
            try:
                est = entry.stat()
            except OSError:
                try:
                    est = entry.stat(follow_symlinks=False)
                except OSError as exc:
                    digest.update(f"E {entry.name!r} ! {exc.errno}\n".encode())
                    continue
            if stat.S_ISDIR(est.st_mode):
                digest.update(f"E {entry.name!r} dir\n".encode())
                continue
            newest = max(newest, est.st_ctime_ns)
            shown = f"{est.st_mode} {est.st_size} {est.st_mtime_ns} {est.st_ctime_ns} {est.st_ino}"
            digest.update(f"E {entry.name!r} {shown}\n".encode())
    return digest.hexdigest(), newest


def plugin_stamp() -> str:
    """Return a digest of what decides which plugins load: ``sys.path``, its folders, the lists.

    Installing, removing or upgrading a distribution adds or removes a ``.dist-info`` folder in
    one of the import path's folders (changing that folder's status); ``MEMCORE_LOAD_PLUGINS``
    and ``MEMCORE_DISABLE_PLUGINS`` choose among them.
    """
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    for var in ("MEMCORE_LOAD_PLUGINS", "MEMCORE_DISABLE_PLUGINS"):
        digest.update(f"\n{var}={os.environ.get(var)!r}".encode())
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
            shown = f"{st.st_mode} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"
        except OSError:
            shown = "-"
        digest.update(f"\n{entry!r} {shown}".encode())
    return digest.hexdigest()
