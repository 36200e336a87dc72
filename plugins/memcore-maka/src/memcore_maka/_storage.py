"""The Maka store's folder as a :class:`~memcore.storage.Storage` (memcore's local folder, one exception)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memcore.errors import ConfigError, UnsafePathError
from memcore.storage import TEMP_NAME, LocalStorage, version_token

__all__ = ["MakaStorage", "refuse_symlinks"]


class MakaStorage(LocalStorage):
    """:class:`~memcore.storage.LocalStorage` that also reads the store file under any name.

    The store file's name is the user's (``maka:./nul.md``), not one memcore makes up, so a name
    memcore would never create (a Windows device name) can still be read; every write still
    refuses it (the write builds ``<name>.bak``, which :func:`~memcore.storage.safe_join` refuses).

    Args:
        root: The store's folder.
        **options: As :class:`~memcore.storage.LocalStorage`; ``lock_target`` is the store file.
    """

    def __init__(self, root: str | os.PathLike[str], **options: object) -> None:
        super().__init__(root, **options)  # type: ignore[arg-type]
        self._own_name = Path(self.lock_target).name
        self._files: dict[str, Path] = {}  # store-relative path -> local path, checked by ``_path``

    def read_bytes(self, path: str) -> bytes:
        """Return the bytes of ``path`` without its version (a read outside a write session needs none).

        Raises:
            FileNotFoundError: No file at ``path`` (also when it is a folder).
            UnsafePathError: ``path`` leaves the store (the store file's own name is always read).
        """
        local = self._files.get(path)
        if local is None or os.path.islink(local):
            try:
                local = self._path(path)
            except UnsafePathError:
                if path != self._own_name or (self.root / path).is_symlink():
                    raise
                local = self.root / path
            if local == self.root / path:  # no link on the way: checked once (a link is checked each time)
                self._files[path] = local
        try:
            with open(local, "rb") as fh:
                return fh.read()
        except IsADirectoryError as exc:
            raise FileNotFoundError(f"{local}: is a folder, not a file") from exc

    def read(self, path: str) -> tuple[bytes, str]:
        """Return ``(bytes, version)`` of ``path`` (the store file even under a refused name)."""
        try:
            return super().read(path)
        except UnsafePathError:
            if path != self._own_name:
                raise
        data = self.read_bytes(path)
        return data, version_token(data)


def refuse_symlinks(targets: tuple[Path, ...], operation: str) -> None:
    """Raise :class:`UnsafePathError` when one of ``targets`` is a symlink (a write would replace it)."""
    for target in targets:
        if target.is_symlink():
            raise UnsafePathError(
                f"maka: {target} is a symlink; memcore never writes through or replaces one, `{operation}` refused"
            )


def refuse_foreign_folder(folder: Path, path: Path, pending_path: Path, is_maka: Callable[[Path], bool]) -> None:
    """Refuse a folder location that holds another store's (or anyone's) files, not a Maka store.

    A folder location means ``<folder>/MEMORY.md``. It is taken when the folder is empty, or holds
    only Maka's own files (MEMORY.md, PENDING.md, their ``.bak`` copies and temp files), or its
    MEMORY.md is a Maka memory file (a Maka workspace with other files in it). Otherwise the
    first write would drop a MEMORY.md among files it does not belong to (a WhiteBox vault would
    then read it as a fact, a RightMemory store's MEMORY.md is its graph).

    Args:
        folder: The location given, when it is a folder.
        path: The memory file (``folder/MEMORY.md``).
        pending_path: The proposals file beside it.
        is_maka: Whether a file is a Maka memory file (the provider's ``sniff``).

    Raises:
        ConfigError: Names the folder, some of what it holds, and the fix.
    """
    if not folder.is_dir() or is_maka(path):
        return
    own = {path.name, pending_path.name}
    own |= {f"{name}.bak" for name in tuple(own)}
    foreign = sorted(name for name in os.listdir(folder) if name not in own and not _temp_of(name, own))
    if not foreign and not path.exists():
        return
    held = ", ".join(repr(n) for n in (foreign or [path.name])[:3]) + (", …" if len(foreign) > 3 else "")
    raise ConfigError(
        f"maka: {folder} is a folder that holds no Maka store (it holds {held}); a Maka store is one "
        f"MEMORY.md file: name that file (`maka:{folder / path.name}`) to create or use it there, "
        "or point at an empty folder (or at a folder holding only a Maka store)"
    )


def _temp_of(name: str, targets: set[str]) -> bool:
    """Whether ``name`` is the temp file of an interrupted atomic write of one of ``targets``."""
    match = TEMP_NAME.match(name)
    return match is not None and match.group("target") in targets
