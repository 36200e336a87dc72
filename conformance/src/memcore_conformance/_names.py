"""Names and text every store must survive: NFD file names, NUL and other control characters.

Mixed into :class:`~memcore_conformance.ProviderConformance`. Knobs:

- ``entry_file_names`` (default ``True``): the store keeps an entry in a file named from its
  title or id, so a file name can arrive in either Unicode normal form (macOS and rsync write
  NFD). ``False`` for single-file formats (Maka); the NFD tests then skip, naming the knob.
"""

from __future__ import annotations

import unicodedata
from typing import Any, ClassVar

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import Severity
from memcore.provider import Capability

__all__ = ["NamesConformance"]

requires = pytest.mark.memcore_requires
C = Capability

_TITLE = "Café Noël"  # NFC; its NFD spelling differs in bytes
_CONTROL_VALUES = ("\x00", "\x01", "\x1b", "\x7f")


def _nfd_rename(root: Any, before: set[str], after: dict[str, bytes], marker: bytes) -> tuple[str, str] | None:
    """Rename the new file holding ``marker`` whose name has a non-ASCII letter to its NFD spelling."""
    for rel, data in after.items():
        name = rel.rsplit("/", 1)[-1]
        if rel in before or marker not in data or unicodedata.normalize("NFD", name) == name:
            continue
        nfd = rel[: len(rel) - len(name)] + unicodedata.normalize("NFD", name)
        (root / rel).rename(root / nfd)
        return rel, nfd
    return None


class NamesConformance:
    """NFC/NFD file names (issue 17, item 2) and control characters (item 12)."""

    entry_file_names: ClassVar[bool] = True

    # -- helpers ------------------------------------------------------------------------
    def _nfd_store(self, provider: Any, make_entry: Any, raw_files: Any, root: Any) -> tuple[Any, str, str]:
        if not self.entry_file_names:
            pytest.skip("entry_file_names = False: entries do not live in files named after them")
        before = set(raw_files())
        entry = provider.add(make_entry(title=_TITLE, body="nfd-body-marker\n"))
        provider.close()
        renamed = _nfd_rename(root, before, raw_files(), b"nfd-body-marker")
        if renamed is None:
            pytest.skip("no new file carries the non-ASCII title in its name")
        return entry, renamed[0], renamed[1]

    # -- item 2 -------------------------------------------------------------------------
    @requires(C.ADD)
    def test_entry_in_an_nfd_named_file_reads(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any, memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """A file renamed to its NFD spelling (as macOS/rsync write) reads under the same NFC id."""
        entry, _nfc, _nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        store = memcore_reopen()
        assert store.get(entry.id).body == "nfd-body-marker\n"
        assert [e.id for e in store.iter_entries() if e.title == _TITLE] == [entry.id]
        assert [d for d in store.validate() if d.severity is Severity.ERROR] == []

    @requires(C.ADD, C.UPDATE)
    def test_update_of_an_nfd_named_file_rewrites_that_file(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any, memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """Updating an entry read from an NFD-named file changes that file and creates no NFC twin."""
        entry, nfc, nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        store = memcore_reopen()
        current = store.get(entry.id)
        current.body = "nfd-updated-marker\n"
        store.update(current, expected_version=current.version)
        files = memcore_raw_files()
        assert nfc not in files, "the update wrote an NFC twin beside the NFD file"
        assert b"nfd-updated-marker" in files[nfd]
        assert memcore_reopen().get(entry.id).body == "nfd-updated-marker\n"

    @requires(C.ADD, C.DELETE)
    def test_delete_of_an_nfd_named_file_removes_that_file(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any, memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """Deleting an entry read from an NFD-named file removes that file."""
        entry, nfc, nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        memcore_reopen().delete(entry.id)
        files = memcore_raw_files()
        assert nfd not in files and nfc not in files
        assert [e.id for e in memcore_reopen().iter_entries() if e.id == entry.id] == []

    @requires(C.ADD)
    def test_nfc_nfd_twin_files_are_reported_by_validate(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any, memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """Two files whose names normalise equal are an error naming both; neither is hidden."""
        _entry, nfc, nfd = self._nfd_store(memcore_provider, memcore_make_entry, memcore_raw_files, memcore_store_root)
        (memcore_store_root / nfc).write_bytes((memcore_store_root / nfd).read_bytes())
        twins = [d for d in memcore_reopen().validate() if "twin" in d.code]
        assert len(twins) == 1, twins
        assert twins[0].severity is Severity.ERROR
        assert nfc.rsplit("/", 1)[-1] in twins[0].message or twins[0].path in {nfc, nfd}

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
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any, memcore_store_root: Any,
        memcore_reopen: Any,
    ) -> None:
        """A NUL written into a store file by hand is an error at file:line; reading does not crash."""
        memcore_provider.add(memcore_make_entry(body="nul-marker-here\n"))
        memcore_provider.close()
        rel, data = next((r, d) for r, d in memcore_raw_files().items() if b"nul-marker-here" in d)
        (memcore_store_root / rel).write_bytes(data.replace(b"nul-marker", b"nul\x00marker"))
        line = data[: data.index(b"nul-marker-here")].count(b"\n") + 1
        store = memcore_reopen()
        list(store.iter_entries())
        found = [(d.path, d.line) for d in store.validate() if d.severity is Severity.ERROR and "U+0000" in d.message]
        assert (rel, line) in found
        assert (rel, line) in [(d.path, d.line) for d in store.read_all().diagnostics if "U+0000" in d.message]
