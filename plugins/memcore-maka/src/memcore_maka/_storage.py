"""The Maka store's folder as a :class:`~memcore.storage.Storage` (memcore's local folder, one exception)."""

from __future__ import annotations

import os
from pathlib import Path

from memcore.errors import ConflictError, UnsafePathError
from memcore.storage import LocalStorage, WriteSession, version_token

__all__ = ["MakaStorage", "check_unchanged", "refuse_symlinks"]


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


def check_unchanged(session: WriteSession, path: Path) -> None:
    """Refuse to save ``path`` when it changed on disk since the session read it (Maka's message).

    The session's flush checks the same; this names the batch and its writes, as Maka's
    users know the error.

    Raises:
        ConflictError: The file changed (another writer): nothing of the batch is saved.
    """
    try:
        now: str | None = session.storage.stat(path.name).version
    except FileNotFoundError:
        now = None
    if now != session.version(path.name):
        count = session.writes
        raise ConflictError(
            f"maka: {path} changed on disk during the batch (another writer); the batch's "
            f"{count} write{'s' if count != 1 else ''} were not saved and the file was left as "
            "it is now; re-run the batch"
        )
