"""NFC/NFD twin files (one name spelled both ways) are never read as one entry silently.

``Ünïcödé.md`` written NFD (as macOS and rsync write names) beside the NFC spelling: two files
that read under one id. Listing yields the id once (never the NFC file's content twice); get,
and update (WhiteBox's only writes to a file) refuse the id with AmbiguousIdError naming both spellings.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from memcore.errors import AmbiguousIdError, ConflictError
from memcore.models import Kind, MemoryEntry, Severity
from memcore.provider import Capability
from memcore_whitebox.provider import WhiteBoxProvider

NFC = unicodedata.normalize("NFC", "Ünïcödé.md")
NFD = unicodedata.normalize("NFD", "Ünïcödé.md")


def _note(title: str, body: str) -> str:
    return f"---\ntitle: {title}\n---\n{body}\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    WhiteBoxProvider.init_store(str(root))
    (root / "plain.md").write_text(_note("Plain", "plain body"), encoding="utf-8")
    (root / NFC).write_text(_note("Composed", "NFC body"), encoding="utf-8")
    (root / NFD).write_text(_note("Decomposed", "NFD body"), encoding="utf-8")
    names = os.listdir(root)
    if NFC not in names or NFD not in names:  # pragma: no cover - a normalising file system
        pytest.skip("this file system keeps one spelling of a name")
    return root


def test_listing_yields_a_twin_id_once_never_the_same_content_twice(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        entries = [e for e in store.iter_entries() if e.id == NFC]
        assert len(entries) == 1
        assert len(store.source_files()) == len(set(store.source_files()))
        bodies = [e.body for e in store.iter_entries()]
        assert len(bodies) == len(set(bodies))


def test_get_of_a_twin_id_raises_ambiguous_id_naming_both_spellings(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        with pytest.raises(AmbiguousIdError) as info:
            store.get(NFC)
        with pytest.raises(AmbiguousIdError):
            store.get(NFD)
    err = info.value
    assert isinstance(err, ConflictError)
    assert err.entry_id == NFC
    assert set(err.places) == {NFC, NFD}
    message = str(err)
    assert ascii(NFC) in message and ascii(NFD) in message and "name-twins" in message


@pytest.mark.parametrize("as_user", [True, False])
def test_update_of_a_twin_id_is_refused_and_writes_nothing(vault: Path, as_user: bool) -> None:
    before = {p.name: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    with WhiteBoxProvider(str(vault), as_user=as_user) as store:
        with pytest.raises(AmbiguousIdError):
            store.update(MemoryEntry(id=NFC, kind=Kind.NOTE, title="Changed", body="changed\n"))
        with pytest.raises(AmbiguousIdError):
            store.update(MemoryEntry(id=NFD, kind=Kind.NOTE, title="Changed", body="changed\n"))
        # WhiteBox has no delete, archive or supersede (update is its only change of a file)
        assert not {Capability.DELETE, Capability.ARCHIVE, Capability.SUPERSEDE} & store.capabilities
    after = {p.name: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    assert after == before


def test_ids_without_twins_still_read_and_validate_reports_the_twins(vault: Path) -> None:
    with WhiteBoxProvider(str(vault)) as store:
        assert store.get("plain.md").body.strip() == "plain body"
        codes = {(d.code, d.severity) for d in store.validate()}
    assert ("whitebox.name-twins", Severity.ERROR) in codes
