"""``ContractTests``: the provider is what it declares.

``format_name``, ``capabilities`` and the knobs are well-formed; a fresh store is empty and
valid, and opening it writes nothing; every write whose capability is not declared raises
:class:`~memcore.errors.UnsupportedOperationError` and changes no file; append-only entries refuse
edits; whatever the API wrote validates clean; ``read_all`` equals ``iter_entries`` plus
``validate``; ``reindex`` loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memcore.errors import UnsupportedOperationError
from memcore.models import Diagnostic
from memcore.provider import Capability, MemoryProvider, read_all
from memcore_conformance._base import C, ConformanceBase, requires
from memcore_conformance._checks import CONTENT_FIELDS, assert_entry_matches, changed_files, errors_of
from memcore_conformance.corpus import CORPUS_CASES

__all__ = ["ContractTests"]

_WRITE_OPS = (C.ADD, C.UPDATE, C.DELETE, C.SUPERSEDE, C.ARCHIVE)


class ContractTests(ConformanceBase):
    """Mixin of :class:`~memcore_conformance.ProviderConformance`: declaration, capabilities, validate."""

    # == declaration ==================================================================
    def test_declaration(self, memcore_provider_cls: type[Any], memcore_provider: Any) -> None:
        """format_name, capabilities and the knobs are well-formed; the instance is a MemoryProvider."""
        assert isinstance(memcore_provider_cls.format_name, str) and memcore_provider_cls.format_name
        caps = memcore_provider_cls.capabilities
        assert isinstance(caps, frozenset) and all(isinstance(c, Capability) for c in caps), caps
        assert isinstance(memcore_provider, MemoryProvider)
        unknown = set(self.roundtrip_fields) - set(CONTENT_FIELDS)
        assert not unknown, f"roundtrip_fields names unknown fields {sorted(unknown)}"
        assert {"id", "body"} <= set(self.roundtrip_fields), "id and body must survive a round trip"
        unknown_cases = set(self.rejected_corpus) - set(CORPUS_CASES)
        assert not unknown_cases, f"rejected_corpus names unknown cases {sorted(unknown_cases)}"

    def test_open_close_empty_store(
        self,
        memcore_reopen: Callable[[], Any],
        memcore_raw_files: Callable[[], dict[str, bytes]],
        memcore_file_identity: Callable[[], dict[str, tuple[int, int]]],
    ) -> None:
        """A fresh store has no entries, validates clean, and opening+closing writes nothing."""
        before, ident = memcore_raw_files(), memcore_file_identity()
        provider = memcore_reopen()
        assert list(provider.iter_entries()) == []
        assert provider.search("anything") == []
        assert errors_of(provider.validate()) == []
        provider.close()
        assert changed_files(before, memcore_raw_files(), ident, memcore_file_identity()) == {
            "added": [],
            "removed": [],
            "changed": [],
            "rewritten": [],
        }

    # == forbidden operations =========================================================
    def test_undeclared_operations_raise_unsupported(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_raw_files: Any
    ) -> None:
        """Each write operation whose capability is not declared raises UnsupportedOperationError."""
        caps = memcore_provider.capabilities
        existing = next(iter(memcore_provider.iter_entries()), None)
        target = existing or memcore_make_entry(id="conformance-no-such-entry")
        assert target.id is not None
        calls: dict[Capability, Callable[[], object]] = {
            C.ADD: lambda: memcore_provider.add(memcore_make_entry()),
            C.UPDATE: lambda: memcore_provider.update(target, expected_version=target.version),
            C.DELETE: lambda: memcore_provider.delete(target.id),
            C.SUPERSEDE: lambda: memcore_provider.supersede(target.id, memcore_make_entry()),
            C.ARCHIVE: lambda: memcore_provider.archive(target.id),
        }
        before = memcore_raw_files()
        for cap in _WRITE_OPS:
            if cap in caps:
                continue
            with pytest.raises(UnsupportedOperationError):
                calls[cap]()
            assert memcore_raw_files() == before, f"refused {cap.value} changed files"

    @requires(C.APPEND_ONLY)
    def test_append_only_entries_refuse_edits(
        self, memcore_provider: Any, memcore_make_append_only_entry: Any, memcore_raw_files: Any
    ) -> None:
        """An append-only entry can be added, but update and delete raise UnsupportedOperationError."""
        assert memcore_make_append_only_entry is not None, (
            "the provider declares APPEND_ONLY: override memcore_make_append_only_entry"
        )
        stored = memcore_provider.add(memcore_make_append_only_entry())
        before = memcore_raw_files()
        edited = memcore_provider.get(stored.id).model_copy(deep=True)
        edited.body = "Edited append-only body.\n"
        with pytest.raises(UnsupportedOperationError):
            memcore_provider.update(edited, expected_version=edited.version)
        if C.DELETE in memcore_provider.capabilities:
            with pytest.raises(UnsupportedOperationError):
                memcore_provider.delete(stored.id)
        assert memcore_raw_files() == before, "a refused edit of an append-only entry changed files"
        assert memcore_provider.get(stored.id).body == stored.body

    # == validate / batch / reindex ===================================================
    @requires(C.ADD)
    def test_validate_clean_after_api_writes(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """Whatever the API wrote is a valid store for the provider's own validate()."""
        p = memcore_provider
        stored = [p.add(memcore_make_entry(title=f"Valid {n}", tags=[f"t{n}"])) for n in range(4)]
        caps = p.capabilities
        if C.UPDATE in caps:
            current = p.get(stored[0].id)
            p.update(current.model_copy(update={"title": "Valid 0 edited"}), expected_version=current.version)
        if C.ARCHIVE in caps:
            p.archive(stored[1].id)
        if C.SUPERSEDE in caps:
            p.supersede(stored[2].id, memcore_make_entry(title="Valid 2 replacement"))
        if C.DELETE in caps:
            p.delete(stored[3].id)
        diagnostics = memcore_reopen().validate()
        assert all(isinstance(d, Diagnostic) for d in diagnostics)
        assert errors_of(diagnostics) == []

    @requires(C.ADD)
    def test_read_all_is_iter_entries_plus_validate(
        self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any
    ) -> None:
        """read_all() gives exactly list(iter_entries()) and validate(), in store order."""
        for n in range(4):
            memcore_provider.add(memcore_make_entry(title=f"Snapshot {n}", tags=[f"s{n}"]))
        reader = memcore_reopen()
        entries, diagnostics = read_all(reader)
        assert [e.model_dump() for e in entries] == [e.model_dump() for e in reader.iter_entries()]
        assert diagnostics == reader.validate()

    @requires(C.ADD, C.REINDEX)
    def test_reindex_keeps_entries(self, memcore_provider: Any, memcore_make_entry: Any, memcore_reopen: Any) -> None:
        """Reindex returns diagnostics (no errors on a valid store) and loses no entry."""
        stored = [memcore_provider.add(memcore_make_entry(title=f"Indexed {n}")) for n in range(3)]
        diagnostics = memcore_provider.reindex()
        assert isinstance(diagnostics, list) and errors_of(diagnostics) == []
        other = memcore_reopen()
        for entry in stored:
            assert_entry_matches(other.get(entry.id), entry, self._fields(), "after reindex")
