"""The Maka store's folder as a :class:`~memcore.storage.Storage` (memcore's local folder, one exception)."""

from __future__ import annotations

import os
from pathlib import Path

from memcore.errors import UnsafePathError
from memcore.storage import LocalStorage, version_token

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
