"""Conformance mixin: store files keep their mode; temp files of interrupted writes are cleaned up.

Issue 17 items 5 and 10, for every provider:

- a store file made 0600 by its owner is still 0600 after ``add`` and ``update`` (an atomic write
  replaces the file; the replacement must keep the mode of the file it replaces);
- a temp file named as :func:`memcore.storage.atomic_write` names them (``.<name>.<12 hex>.tmp``),
  left by a writer killed between writing it and renaming it, is reported by ``validate`` and
  removed by the next ``add``, which holds the store lock.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memcore.provider import Capability

__all__ = ["PrivateFilesTests"]

requires = pytest.mark.memcore_requires
_POSIX = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
_AGE_S = 3600  # a temp file a crash left an hour ago


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


class PrivateFilesTests:
    """File modes and leftover temp files; knobs as class attributes.

    Attributes:
        private_files_writable: ``False`` for a provider whose files are not on the local disk
            (the raw-file checks are skipped; also skipped for ``Capability.REMOTE``).
    """

    private_files_writable: ClassVar[bool] = True

    def _store_files(self, root: Path) -> list[Path]:
        return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())

    @_POSIX
    @requires(Capability.ADD)
    def test_store_file_mode_0600_survives_add_and_update(
        self, memcore_provider: Any, memcore_make_entry: Callable[..., Any], memcore_store_root: Path
    ) -> None:
        """Every store file chmod-ed 0600 is still 0600 after an add (and an update where supported)."""
        if not self.private_files_writable or Capability.REMOTE in memcore_provider.capabilities:
            pytest.skip("store files are not local")
        first = memcore_provider.add(memcore_make_entry(title="Private one", body="first secret\n"))
        files = self._store_files(memcore_store_root)
        assert files, "the store has no files after an add"
        for path in files:
            os.chmod(path, 0o600)
        second = memcore_provider.add(memcore_make_entry(title="Private two", body="second secret\n"))
        if Capability.UPDATE in memcore_provider.capabilities:
            current = memcore_provider.get(first.id)
            try:
                memcore_provider.update(current.model_copy(update={"body": "first secret, changed\n"}))
            except NotImplementedError:  # an append-only kind: its add is the check
                pass
        assert second.id
        wider = {
            p.relative_to(memcore_store_root).as_posix(): oct(_mode(p))
            for p in files
            if p.exists() and _mode(p) != 0o600
        }
        assert wider == {}, f"files made 0600 lost their mode on a write: {wider}"

    @requires(Capability.ADD)
    def test_leftover_temp_file_is_reported_then_removed_by_next_add(
        self,
        memcore_provider: Any,
        memcore_make_entry: Callable[..., Any],
        memcore_store_root: Path,
        memcore_reopen: Callable[[], Any],
    ) -> None:
        """A temp file named as atomic_write names them is a validate() warning until the next add removes it."""
        if not self.private_files_writable or Capability.REMOTE in memcore_provider.capabilities:
            pytest.skip("store files are not local")
        memcore_provider.add(memcore_make_entry(title="Before the crash", body="kept\n"))
        victim = next(p for p in self._store_files(memcore_store_root) if not p.name.startswith("."))
        temp = victim.parent / f".{victim.name}.0123456789ab.tmp"
        temp.write_bytes(b"torn half of a write\n")
        old = time.time() - _AGE_S
        os.utime(temp, (old, old))
        other = victim.parent / f".{victim.name}.not-ours.tmp"  # not memcore's pattern: left alone
        other.write_bytes(b"someone else's\n")
        provider = memcore_reopen()
        rel = temp.relative_to(memcore_store_root).as_posix()
        reported = [d for d in provider.validate() if d.path == rel or (d.path or "").endswith(temp.name)]
        assert reported, f"validate() does not report the leftover temp file {rel}"
        assert all(d.severity.value in {"warning", "error"} for d in reported)
        assert temp.exists(), "validate() must not change the store"
        provider.add(memcore_make_entry(title="After the crash", body="next write\n"))
        assert not temp.exists(), f"the next add left the temp file {rel} of an interrupted write"
        assert other.read_bytes() == b"someone else's\n", "a file not named as memcore's temp files was touched"
        assert not [d for d in provider.validate() if (d.path or "").endswith(temp.name)]
