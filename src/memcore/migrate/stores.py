"""Store guards and scratch copies: overlap refusal, a target created when missing or empty, dry runs' copies."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.migrate.report import ConversionReport
from memcore.provider import Capability, MemoryProvider
from memcore.storage import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE


def _exists(location: str) -> bool:
    return os.path.exists(location)


def _empty_folder(location: str) -> bool:
    """Whether ``location`` is a folder with nothing in it (a target made ready by hand: initialised)."""
    return os.path.isdir(location) and not os.listdir(location)


def _init_if_missing(
    cls: type[Any], location: str, options: dict[str, Any], like: MemoryProvider | None = None
) -> list[str] | None:
    """Create the store at ``location`` when there is none: nothing there, or an empty folder.

    With ``like`` (the open source, of the same format), the store is created by the
    provider's ``init_store_like`` (:meth:`~memcore.provider.BaseProvider.init_store_like`):
    its store-level files are the source's own.

    Returns:
        ``None`` when a store was there already; else the notes of the creation (``[]``: none).
    """
    if Capability.REMOTE in getattr(cls, "capabilities", frozenset()):
        # A remote location (a Box folder id) always "exists": ask the provider whether it holds
        # a store, and set one up only when opening says it does not.
        probe = cls(location, **options)
        try:
            probe.open()
        except ConfigError:
            cls.init_store(location, **options)
            return []
        probe.close()
        return None
    if _exists(location) and not _empty_folder(location):
        return None
    parent = os.path.dirname(os.path.abspath(location))
    os.makedirs(parent, exist_ok=True)
    init_like = getattr(cls, "init_store_like", None)
    if like is not None and like.format_name == cls.format_name and callable(init_like):
        return [str(note) for note in init_like(location, like, **options)]
    cls.init_store(location, **options)
    return []


def _store_area(location: str) -> tuple[str, bool]:
    """Return ``(resolved real path, is a single-file store)`` for a local store location.

    A location is a single-file store when it is an existing file, or does not exist and its
    name has a suffix (``maka:./m/MEMORY.md``); an existing folder or a suffix-less new name
    is a folder store.
    """
    real = os.path.realpath(location)
    if os.path.isfile(real):
        return real, True
    if os.path.exists(real):
        return real, False
    return real, bool(Path(real).suffix)


def _within(inner: str, outer: str) -> bool:
    return inner != outer and os.path.commonpath([inner, outer]) == outer


def _refuse_overlap(src_cls: type[Any], src_loc: str, dst_cls: type[Any], dst_loc: str) -> None:
    """Refuse a target that is the source, lies inside it, or contains it (findings D1).

    Locations are compared as resolved real paths (symlinks, ``..`` and ``.`` followed). A
    single-file store (``maka:./m/MEMORY.md``) is its file; two single-file stores in one folder
    overlap too (they share the folder's side files, e.g. Maka's ``PENDING.md`` and ``.bak``).
    Remote locations (``REMOTE`` capability) are not paths and are not checked.

    Raises:
        ConfigError: The two locations overlap; nothing has been written.
    """
    for cls in (src_cls, dst_cls):
        if Capability.REMOTE in getattr(cls, "capabilities", frozenset()):
            return
    src, src_file = _store_area(src_loc)
    dst, dst_file = _store_area(dst_loc)
    problem = ""
    if src == dst:
        problem = "are the same location"
    elif not src_file and _within(dst, src):
        problem = "overlap: the target lies inside the source"
    elif not dst_file and _within(src, dst):
        problem = "overlap: the target contains the source"
    elif src_file and dst_file and os.path.dirname(src) == os.path.dirname(dst):
        problem = "overlap: both are single-file stores in the same folder (which holds their side files)"
    if problem:
        raise ConfigError(
            f"source {src_loc} and target {dst_loc} {problem} ({src} / {dst}); writing would change "
            "the source or mix the two stores: pick a target outside the source"
        )


def _refuse_other_format(registry: Any, dst_cls: type[Any], dst_loc: str) -> None:
    """Refuse a target location that holds another format's store.

    A folder (or file) that some installed format recognises as its own (``sniff``) while the
    target's format does not would get the target's files beside the other format's, and its
    files would be read as the target's entries. A location that does not exist, an empty
    folder, one no format recognises and a remote location are not checked.

    Raises:
        ConfigError: The location looks like another format's store; nothing has been written.
    """
    if Capability.REMOTE in getattr(dst_cls, "capabilities", frozenset()) or not _exists(dst_loc):
        return
    if _empty_folder(dst_loc):
        return
    found = registry.sniff(Path(dst_loc))
    if found and dst_cls.format_name not in found:
        others = " or ".join(found)
        raise ConfigError(
            f"{dst_cls.format_name}: target {dst_loc} holds a {others} store, not a {dst_cls.format_name} one; "
            f"migrating into it would mix two formats' files: give a new or empty location, or migrate into "
            f"{found[0]}:{dst_loc}"
        )


def _unscratch(report: ConversionReport, scratch: str, real: str) -> None:
    """Name the real target instead of the scratch copy in ``report``'s texts (N5).

    The "created a new … store" note becomes "would create …" (nothing was created at the real
    target); scratch paths in notes, entry errors and target diagnostics become ``real``, and a
    diagnostic of the scratch copy says that it is one (a Maka read that archived an expired
    entry archived it there, not in the target).
    """

    def fix(text: str) -> str:
        return text.replace(scratch, real)

    notes = []
    for note in report.notes:
        note = fix(note)
        notes.append("would create " + note.removeprefix("created ") if note.startswith("created a new ") else note)
    report.notes = notes
    for entry in report.entries:
        if entry.error is not None:
            entry.error = fix(entry.error)
    report.diagnostics = [
        d.model_copy(
            update={
                "message": _TRIAL + fix(d.message) if _in(d.path, scratch) else fix(d.message),
                "path": None if d.path is None else fix(d.path),
            }
        )
        for d in report.diagnostics
    ]


#: Put before what a diagnostic of the scratch copy says (it says "this read", "now": of the copy).
_TRIAL = "in the trial run's scratch copy (the target is untouched): "


def _in(path: str | None, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it."""
    return path is not None and (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep))


def _private_copy(src: str, dst: str) -> str:
    """Copy ``src`` to ``dst`` as :func:`shutil.copy2` does, then make the copy 0600 (scratch copies)."""
    shutil.copy2(src, dst)
    os.chmod(dst, PRIVATE_FILE_MODE)
    return dst


@contextlib.contextmanager
def _scratch_copy(location: str) -> Iterator[str]:
    """Yield a scratch location in a temporary folder holding a copy of ``location`` (if any).

    The folder and every folder copied are 0700, every file copied 0600 (issue 17: derived
    copies are as private as their source, whatever its own modes).
    """
    tmp = tempfile.mkdtemp(prefix="memcore-migrate-")  # mkdtemp creates it 0700
    try:
        name = Path(location).name or "store"
        dest = os.path.join(tmp, name)
        if os.path.isdir(location):
            shutil.copytree(location, dest, symlinks=True, copy_function=_private_copy)
            for folder, _dirs, _files in os.walk(dest):
                os.chmod(folder, PRIVATE_DIR_MODE)
        elif os.path.isfile(location):
            _private_copy(location, dest)
        yield dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
