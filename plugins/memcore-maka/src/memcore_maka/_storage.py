"""The Maka store's folder as a :class:`~memcore.storage.Storage` (memcore's local folder, one exception)."""

from __future__ import annotations

import os
from pathlib import Path

from memcore.errors import UnsafePathError
from memcore.storage import LocalStorage, version_token

__all__ = ["MakaStorage"]


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

    def read(self, path: str) -> tuple[bytes, str]:
        """Return ``(bytes, version)`` of ``path`` (the store file even under a refused name)."""
        try:
            return super().read(path)
        except UnsafePathError:
            if path != self._own_name or (self.root / path).is_symlink():
                raise
        with open(self.root / path, "rb") as fh:
            data = fh.read()
        return data, version_token(data)
