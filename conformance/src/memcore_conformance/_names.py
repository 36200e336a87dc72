"""Names and text every store must survive: NFD file names, NUL and other control characters.

Mixed into :class:`~memcore_conformance.ProviderConformance`. Knobs:

- ``entry_file_names`` (default ``True``): the store keeps each entry in a file of its own that
  may be renamed (its name is found by listing a folder), so a file name can arrive in either
  Unicode normal form (macOS and rsync write NFD). The tests add an entry, rename its new file
  to ``<stem>-é.md`` with the ``é`` spelled NFD, reopen, and check the entry reads, updates and
  deletes that file, and that an NFC copy beside it is reported as a twin by ``validate``.
  ``False`` for single-file formats (Maka) and formats whose file names are always ASCII
  (RightMemory: ``MEMORY_<id>.md`` with ids ``[A-Za-z0-9_.-]``); the tests then skip.
"""

from __future__ import annotations

import unicodedata
from typing import Any, ClassVar

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import Query, Severity
from memcore.provider import Capability

__all__ = ["NamesConformance"]

requires = pytest.mark.memcore_requires
C = Capability

_TITLE = "Cafe Noel"
_CONTROL_VALUES = ("\x00", "\x01", "\x1b", "\x7f")


def _nfd_rename(root: Any, before: set[str], after: dict[str, bytes], marker: bytes) -> tuple[str, str] | None:
    """Rename the new file holding ``marker`` to a name with ``é`` spelled NFD; return (NFC, NFD) names."""
    for rel, data in sorted(after.items()):
        if rel in before or marker not in data or not rel.endswith(".md"):
            continue
        stem = rel[: -len(".md")]
        nfc, nfd = f"{stem}-\u00e9.md", f"{stem}-e\u0301.md"
        if not (root / rel).is_file():
            pytest.skip("the raw files are not local files (set entry_file_names = False)")
        (root / rel).rename(root / nfd)
        return nfc, nfd
    return None


class NamesConformance:
    """NFC/NFD file names (issue 17, item 2) and control characters (item 12)."""

    entry_file_names: ClassVar[bool] = True

    # -- helpers ------------------------------------------------------------------------
    def _nfd_store(self, provider: Any, make_entry: Any, raw_files: Any, root: Any) -> tuple[str, str]:
        if not self.entry_file_names:
            pytest.skip("entry_file_names = False: entries do not live in files named after them")
        before = set(raw_files())
        provider.add(make_entry(title=_TITLE, body="nfd-body-marker\n"))
        provider.close()
        renamed = _nfd_rename(root, before, raw_files(), b"nfd-body-marker")
        if renamed is None:
            pytest.skip("the add created no new .md file holding the entry")
        return renamed[0], renamed[1]

    def _renamed_entry(self, store: Any) -> Any:
        """The one entry with the marker body, read after the rename (its id may follow the name)."""
        found = [e for e in store.iter_entries() if e.body == "nfd-body-marker\n"]
        assert len(found) == 1, f"the entry in the NFD-named file read {len(found)} times"
        assert unicodedata.is_normalized("NFC", found[0].id), f"id {found[0].id!r} is not NFC"
        return found[0]

    # -- item 2 -------------------------------------------------------------------------
    @requires(C.ADD)
    def test_entry_in_an_nfd_named_file_reads(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """A file whose name is NFD on disk (as macOS/rsync write) is read, once, under an NFC id."""
        self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        store = memcore_reopen()
        entry = self._renamed_entry(store)
        assert store.get(entry.id).body == "nfd-body-marker\n"
        assert [e.id for e in store.iter_entries(Query(ids=[entry.id]))] == [entry.id]
        assert [str(d) for d in store.validate() if d.severity is Severity.ERROR] == []

    @requires(C.ADD, C.UPDATE)
    def test_update_of_an_nfd_named_file_rewrites_that_file(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """Updating an entry read from an NFD-named file changes that file and creates no NFC twin."""
        nfc, nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        store = memcore_reopen()
        current = self._renamed_entry(store)
        current.body = "nfd-updated-marker\n"
        store.update(current, expected_version=current.version)
        files = memcore_raw_files()
        assert nfc not in files, "the update wrote an NFC twin beside the NFD file"
        assert b"nfd-updated-marker" in files[nfd]
        assert memcore_reopen().get(current.id).body == "nfd-updated-marker\n"

    @requires(C.ADD, C.DELETE)
    def test_delete_of_an_nfd_named_file_removes_that_file(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """Deleting an entry read from an NFD-named file removes that file."""
        nfc, nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        store = memcore_reopen()
        entry = self._renamed_entry(store)
        store.delete(entry.id)
        files = memcore_raw_files()
        assert nfd not in files and nfc not in files
        assert [e.id for e in memcore_reopen().iter_entries() if e.body == "nfd-body-marker\n"] == []

    @requires(C.ADD)
    def test_nfc_nfd_twin_files_are_reported_by_validate(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """Two files whose names normalise equal are one error naming both spellings."""
        nfc, nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        (memcore_store_root / nfc).write_bytes((memcore_store_root / nfd).read_bytes())
        twins = [d for d in memcore_reopen().validate() if d.code.endswith("name-twins")]
        assert [(d.severity, d.path) for d in twins] == [(Severity.ERROR, nfc)]
        assert ascii(nfc) in twins[0].message and ascii(nfd) in twins[0].message

    # -- item 12 ------------------------------------------------------------------------
    @requires(C.ADD)
    @pytest.mark.parametrize("field", ["title", "body", "tags"])
    @pytest.mark.parametrize("char", _CONTROL_VALUES, ids=lambda c: f"U+{ord(c):04X}")
    def test_add_refuses_control_characters(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any, field: str, char: str
    ) -> None:
        """NUL, C0 controls and DEL in title, body or a tag are refused naming field and U+XXXX; nothing written."""
        value: Any = {"title": f"Bad{char}title", "body": f"bad{char}body\n", "tags": [f"bad{char}tag"]}[field]
        before = memcore_raw_files()
        with pytest.raises(InvalidEntryError) as info:
            memcore_provider.add(memcore_make_entry(**{field: value}))
        assert field in str(info.value) and f"U+{ord(char):04X}" in str(info.value)
        assert memcore_raw_files() == before

    @requires(C.ADD)
    def test_tab_and_line_breaks_are_still_accepted(self, memcore_provider: Any, memcore_make_entry: Any) -> None:
        """Tab, LF and CR are text, not controls: a body holding them is stored."""
        stored = memcore_provider.add(memcore_make_entry(body="a\tb\nc\n"))
        assert memcore_provider.get(stored.id).body == "a\tb\nc\n"

    @requires(C.ADD)
    def test_nul_in_a_raw_file_is_diagnosed_with_file_and_line(
        self,
        memcore_provider: Any,
        memcore_make_entry: Any,
        memcore_raw_files: Any,
        memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """A NUL written into a store file by hand is reported at file:line (U+0000); reading does not crash."""
        memcore_provider.add(memcore_make_entry(body="nul-marker-here\n"))
        memcore_provider.close()
        rel, data = next((r, d) for r, d in memcore_raw_files().items() if b"nul-marker-here" in d)
        if not (memcore_store_root / rel).is_file():
            pytest.skip("the raw files are not local files")
        (memcore_store_root / rel).write_bytes(data.replace(b"nul-marker", b"nul\x00marker"))
        line = data[: data.index(b"nul-marker-here")].count(b"\n") + 1
        store = memcore_reopen()
        list(store.iter_entries())
        found = [(d.path, d.line) for d in store.validate() if "U+0000" in d.message]
        assert (rel, line) in found
        assert (rel, line) in [(d.path, d.line) for d in store.read_all().diagnostics if "U+0000" in d.message]
