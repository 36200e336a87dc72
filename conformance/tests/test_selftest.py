"""Self-tests of the conformance suite: the reference passes, each broken provider is caught.

The suite runs inside pytester (in-process with ``inline_run`` where reports are needed, in a
subprocess for the ``--pyargs`` route so the registry and plugin manager start fresh).
"""

from __future__ import annotations

import textwrap

import pytest

MUTANTS = textwrap.dedent(
    '''
    """Deliberately broken providers, each a subclass of the reference with one bug."""
    import contextlib
    import os
    import time

    from memcore.errors import ConflictError
    from memcore.models import Query
    from memcore.provider import BaseProvider
    from memcore.storage import atomic_write
    from memcore_conformance.reference import ReferenceProvider


    class DropsEmptyBodies(ReferenceProvider):
        """Silently skips writing entries whose body is blank, yet reports success."""

        def add(self, entry):
            if not entry.body.strip():
                stored = entry.model_copy(deep=True)
                stored.id = self._new_id()
                return stored
            return super().add(entry)


    class LosesExtra(ReferenceProvider):
        """Does not write `extra`."""

        def _encode(self, entry, seq, like):
            return super()._encode(entry.model_copy(update={"extra": {}}), seq, like)


    class ReordersEntries(ReferenceProvider):
        """Yields entries newest first."""

        def iter_entries(self, query=None):
            entries = list(super().iter_entries())
            entries.reverse()
            yield from (query or Query()).apply(entries)


    class ClaimsDeleteWithoutDeleting(ReferenceProvider):
        """Declares DELETE, but delete() does nothing."""

        def delete(self, entry_id):
            self.require(self.capabilities and next(iter(c for c in self.capabilities if c.value == "delete")), "delete")


    class CrashesOnBadInput(ReferenceProvider):
        """Decodes files without catching errors: a bare UnicodeDecodeError escapes."""

        def _load(self, path):
            path.read_bytes().decode("utf-8")
            return super()._load(path)


    class RewritesUntouchedFiles(ReferenceProvider):
        """After each add, saves every other entry file again (same bytes, new file)."""

        def add(self, entry):
            stored = super().add(entry)
            folder = self.root / "entries"
            for name in sorted(os.listdir(folder)):
                if name != stored.id + ".json" and name.endswith(".json"):
                    atomic_write(folder / name, (folder / name).read_bytes())
            return stored


    class IgnoresVersion(ReferenceProvider):
        """Never raises ConflictError: last writer wins."""

        def update(self, entry, *, expected_version=None):
            return super().update(entry, expected_version=None)


    class EscapesStore(ReferenceProvider):
        """Builds entry paths with os.path.join: `../` in an id leaves the store."""

        def _path_for(self, entry_id):
            from pathlib import Path
            return Path(os.path.join(self.root, "entries", entry_id + ".json"))


    class TornWrites(ReferenceProvider):
        """Writes entry files in place, in two halves with a pause between them."""

        def add(self, entry):
            stored = super().add(entry)
            path = self._path_for(stored.id)
            data = path.read_bytes()
            with open(path, "wb") as fh:
                fh.write(data[: len(data) // 2])
                fh.flush()
                time.sleep(0.1)  # most of each write's time: a random kill lands in the torn window
                fh.write(data[len(data) // 2 :])
            return stored


    class ClaimsGraphWithoutChecking(ReferenceProvider):
        """Declares GRAPH but never looks at edges."""

        def _dangling(self, item, known):
            return []


    class ForgetsScopeAndParent(ReferenceProvider):
        """Writes neither `scope` nor `parent` (yet declares every field round-trips)."""

        def _encode(self, entry, seq, like):
            return super()._encode(entry.model_copy(update={"scope": None, "parent": None}), seq, like)


    class DeletesWithoutDeclaring(ReferenceProvider):
        """Does not declare DELETE, yet delete() removes the entry."""

        capabilities = ReferenceProvider.capabilities - {
            c for c in ReferenceProvider.capabilities if c.value == "delete"
        }

        def delete(self, entry_id):
            os.unlink(self._path_for(entry_id))


    class IgnoresReadOnly(ReferenceProvider):
        """Drops the read_only option: a read-only store writes like any other."""

        def __init__(self, location, **options):
            options.pop("read_only", None)
            super().__init__(location, **options)


    class TouchesTheStoreBeforeRefusing(ReferenceProvider):
        """Raises ReadOnlyStoreError, but only after writing a file into the store."""

        def check_writable(self, operation):
            if self.read_only:
                (self.root / "refused.log").write_text(operation)
            super().check_writable(operation)


    class UnlockedBatch(ReferenceProvider):
        """batch() is a plain block: another thread's writes land in the middle of it."""

        def batch(self):
            return contextlib.nullcontext()


    class HidesBatchedWrites(ReferenceProvider):
        """Queues the adds made in batch() and writes them when it ends: reads in the block miss them."""

        _queue = None

        @contextlib.contextmanager
        def batch(self):
            self._queue = []
            try:
                yield
            finally:
                queued, self._queue = self._queue, None
                for entry in queued:
                    ReferenceProvider.add(self, entry)

        def add(self, entry):
            if self._queue is None:
                return super().add(entry)
            stored = entry.model_copy(deep=True)
            stored.id = stored.id or self._new_id()
            self._queue.append(stored)
            return stored


    class OnlyDecisions(ReferenceProvider):
        """Honest: stores decisions only and says so."""

        def add(self, entry):
            from memcore.errors import InvalidEntryError
            if entry.kind.value != "decision":
                raise InvalidEntryError("this format stores decisions only")
            return super().add(entry)


    class SilentlyDropsButDeclaresRejection(DropsEmptyBodies):
        """Declared (by its test class) to refuse empty bodies, but drops them instead."""


    class RefusesEmptyBodies(ReferenceProvider):
        """Honest: refuses what it cannot store."""

        def add(self, entry):
            from memcore.errors import InvalidEntryError
            if not entry.body.strip():
                raise InvalidEntryError("refusing a blank body: this format cannot store it")
            return super().add(entry)
    '''
)

# mutant class -> the conformance test that must fail for it
CAUGHT_BY = {
    "DropsEmptyBodies": "test_corpus_roundtrip[empty-body]",
    "LosesExtra": "test_corpus_roundtrip[extra-hostile-keys]",
    "ReordersEntries": "test_iteration_order_is_stable",
    "ClaimsDeleteWithoutDeleting": "test_delete_removes_entry",
    "CrashesOnBadInput": "test_bad_input_fails_open_and_closed",
    "RewritesUntouchedFiles": "test_add_leaves_other_files_alone",
    "IgnoresVersion": "test_stale_version_raises_conflict",
    "EscapesStore": "test_hostile_names_stay_inside_the_store",
    "TornWrites": "test_sigkill_loses_no_acknowledged_write",
    "DeletesWithoutDeclaring": "test_undeclared_operations_raise_unsupported",
    "ForgetsScopeAndParent": "test_every_roundtrip_field_survives",
    "ClaimsGraphWithoutChecking": "test_dangling_relation_is_refused_or_reported",
    "IgnoresReadOnly": "test_read_only_store_refuses_each_write[add]",
    "TouchesTheStoreBeforeRefusing": "test_read_only_store_refuses_each_write[delete]",
    "UnlockedBatch": "test_a_second_threads_batch_waits_for_the_first[own-instance]",
    "HidesBatchedWrites": "test_batch_writes_are_read_inside_the_block_and_on_disk_after",
}


NODE = "test_under_test.py::TestUnderTest"

#: The writes ReadOnlyTests tries; the reference declares the capability of each.
READ_ONLY_OPERATIONS = ("add", "update", "delete", "archive", "supersede", "batch-add")


def _suite_module(pytester: pytest.Pytester, provider: str, **knobs: str) -> None:
    lines = [
        "from memcore_conformance import ProviderConformance",
        f"from mutants import {provider}"
        if provider != "ReferenceProvider"
        else "from memcore_conformance.reference import ReferenceProvider",
        "",
        "class TestUnderTest(ProviderConformance):",
        f"    provider_cls = {provider}",
        *(f"    {name} = {value}" for name, value in knobs.items()),
    ]
    pytester.makepyfile(mutants=MUTANTS, test_under_test="\n".join(lines) + "\n")
    pytester.syspathinsert()


def _names(reports: list[pytest.TestReport]) -> set[str]:
    return {r.nodeid.split("::")[-1] for r in reports}


@pytest.mark.slow
def test_reference_passes_the_whole_suite(pytester: pytest.Pytester) -> None:
    _suite_module(pytester, "ReferenceProvider")
    reprec = pytester.inline_run("-p", "no:cacheprovider")
    passed, skipped, failed = reprec.listoutcomes()
    assert failed == [], [r.longreprtext for r in failed]
    # The reference names its files entries/<random ASCII id>.json and has no scopes: only the
    # tests of derived ids, of non-ASCII file names and of gates skip (by knob or capability),
    # and the check of the optional add_many (the reference has none).
    assert _names(skipped) == {
        "test_add_many_returns_each_entry_as_a_read_gives_it",
        "test_ambiguous_id_is_refused_naming_every_place",
        "test_colliding_ids_migrate_each_entry_or_fail",
        "test_a_link_past_a_gate_is_never_served_and_validate_reports_it",
        "test_entry_in_an_nfd_named_file_reads",
        "test_update_of_an_nfd_named_file_rewrites_that_file",
        "test_delete_of_an_nfd_named_file_removes_that_file",
        "test_nfc_nfd_twin_files_are_reported_by_validate",
    }
    names = _names(passed)
    for expected in (
        "test_generated_entries_roundtrip",
        "test_concurrent_processes_lose_nothing",
        "test_sigkill_loses_no_acknowledged_write",
        "test_bad_input_fails_open_and_closed",
        "test_hostile_names_stay_inside_the_store",
        "test_corpus_roundtrip[large-body]",
        *(f"test_read_only_store_refuses_each_write[{op}]" for op in READ_ONLY_OPERATIONS),
        "test_read_only_store_reads_as_usual",
        "test_batch_writes_are_read_inside_the_block_and_on_disk_after",
        "test_a_second_threads_batch_waits_for_the_first[shared-instance]",
        "test_a_second_threads_batch_waits_for_the_first[own-instance]",
    ):
        assert expected in names
    assert len(passed) >= 60


@pytest.mark.parametrize("mutant", sorted(CAUGHT_BY))
def test_broken_provider_fails_the_test_meant_to_catch_it(pytester: pytest.Pytester, mutant: str) -> None:
    target = CAUGHT_BY[mutant]
    # 12 kills, each landing in a torn window with p >= ~0.5 even on a loaded machine: missed ~1 in 4,000
    knobs = {"crash_writes": "40", "crash_kills": "12"} if "sigkill" in target else {}
    _suite_module(pytester, mutant, **knobs)
    reprec = pytester.inline_run("-p", "no:cacheprovider", f"{NODE}::{target}")
    passed, _skipped, failed = reprec.listoutcomes()
    assert target in _names(failed), f"{mutant} was not caught by {target}; passed: {sorted(_names(passed))}"


def test_reference_passes_the_tests_the_mutants_fail(pytester: pytest.Pytester) -> None:
    _suite_module(pytester, "ReferenceProvider")
    targets = [f"{NODE}::{t}" for t in sorted(set(CAUGHT_BY.values())) if "sigkill" not in t]
    reprec = pytester.inline_run("-p", "no:cacheprovider", *targets)
    passed, skipped, failed = reprec.listoutcomes()
    assert failed == [] and skipped == []
    assert {t for t in CAUGHT_BY.values() if "sigkill" not in t} <= _names(passed)


def test_declared_rejection_must_raise_not_drop(pytester: pytest.Pytester) -> None:
    rejected = 'frozenset({"empty-body", "whitespace-body"})'
    _suite_module(pytester, "SilentlyDropsButDeclaresRejection", rejected_corpus=rejected)
    reprec = pytester.inline_run("-p", "no:cacheprovider", "-k", "corpus_roundtrip and body")
    _, _, failed = reprec.listoutcomes()
    assert {"test_corpus_roundtrip[empty-body]", "test_corpus_roundtrip[whitespace-body]"} <= _names(failed)


def test_honest_rejection_passes(pytester: pytest.Pytester) -> None:
    rejected = 'frozenset({"empty-body", "whitespace-body"})'
    _suite_module(pytester, "RefusesEmptyBodies", rejected_corpus=rejected)
    reprec = pytester.inline_run("-p", "no:cacheprovider", "-k", "corpus")
    passed, skipped, failed = reprec.listoutcomes()
    assert failed == [] and skipped == []
    assert {"test_corpus_roundtrip[empty-body]", "test_corpus_in_one_store"} <= _names(passed)


def test_undeclared_rejection_fails(pytester: pytest.Pytester) -> None:
    _suite_module(pytester, "RefusesEmptyBodies")
    reprec = pytester.inline_run("-p", "no:cacheprovider", "-k", "corpus_roundtrip and body")
    _, _, failed = reprec.listoutcomes()
    assert "test_corpus_roundtrip[empty-body]" in _names(failed)


def test_missing_capability_skips_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_gated=textwrap.dedent(
            """
            from memcore.provider import Capability
            from memcore_conformance import ProviderConformance
            from memcore_conformance.reference import ReferenceProvider

            class Gated(ReferenceProvider):
                capabilities = ReferenceProvider.capabilities - {Capability.DELETE}

            class TestGated(ProviderConformance):
                provider_cls = Gated
            """
        )
    )
    reprec = pytester.inline_run("-p", "no:cacheprovider", "-k", "delete or undeclared")
    passed, skipped, failed = reprec.listoutcomes()
    assert failed == []
    assert {
        "test_delete_removes_entry",
        "test_delete_leaves_other_files_alone",
        "test_delete_of_an_nfd_named_file_removes_that_file",
        "test_read_only_store_refuses_each_write[delete]",
    } == _names(skipped)
    for report in skipped:
        assert "lacks capability delete" in str(report.longrepr)
    assert "test_undeclared_operations_raise_unsupported" in _names(passed)


def test_marker_on_a_plain_test_uses_the_configured_provider(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain=textwrap.dedent(
            """
            import pytest

            @pytest.mark.memcore_requires("remote")
            def test_needs_remote():
                raise AssertionError("must be skipped: the reference is not remote")

            @pytest.mark.memcore_requires("add", "delete")
            def test_needs_add_delete():
                pass

            def test_untouched():
                pass
            """
        )
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--strict-markers",
        "-rs",
        "--memcore-provider=memcore_conformance.reference:ReferenceProvider",
    )
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*reference: provider lacks capability remote*"])


def test_plugin_is_inert_for_other_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_other=textwrap.dedent(
            """
            import sys

            def test_one():
                # the plugin is loaded, but memcore (pydantic) is not imported until a test needs it
                assert "memcore_conformance.plugin" in sys.modules
                assert "memcore" not in sys.modules
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers", "-W", "error")
    result.assert_outcomes(passed=1)
    body = [line for line in result.stdout.lines if not line.startswith("plugins:")]
    assert not any("memcore" in line for line in body), body


def test_no_provider_is_one_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--pyargs", "memcore_conformance.suite")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: memcore_conformance.suite needs a provider to test: pass --memcore-provider=*"]
    )
    assert "FAILED" not in result.stdout.str() and "passed" not in result.stdout.str()


def test_unknown_provider_is_one_usage_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_LOAD_PLUGINS", "no-plugin-by-this-name")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--pyargs", "memcore_conformance.suite", "--memcore-provider=no-such-format"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --memcore-provider=no-such-format: unknown format 'no-such-format'*"])


REGISTER_REFERENCE = textwrap.dedent(
    """
    # A pytest plugin (-p) that registers the reference provider as a memcore plugin on the fly.
    import memcore.registry
    from memcore import hookimpl
    from memcore.plugins import get_plugin_manager
    from memcore_conformance.reference import ReferenceProvider


    class ReferencePlugin:
        @hookimpl
        def memcore_register_providers(self):
            return [ReferenceProvider]


    get_plugin_manager().register(ReferencePlugin(), name="reference-on-the-fly")
    memcore.registry._reset()
    """
)


def test_pyargs_route_with_a_registered_format(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_LOAD_PLUGINS", "no-plugin-by-this-name")  # only the on-the-fly plugin
    pytester.makepyfile(register_reference=REGISTER_REFERENCE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "register_reference",
        "-v",
        "-k",
        "declaration or add_then_get or delete_removes or every_roundtrip or bad_input or hostile",
        "--pyargs",
        "memcore_conformance.suite",
        "--memcore-provider=reference",
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=7)  # "hostile" also matches the corpus case extra-hostile-keys
    result.stdout.fnmatch_lines(["*::TestConformance::test_declaration PASSED*"])


def test_ini_key_names_the_provider(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmemcore_provider = memcore_conformance.reference:ReferenceProvider\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--pyargs", "memcore_conformance.suite", "-k", "add_then_get or declaration"
    )
    result.assert_outcomes(passed=2)


def test_knobs_class_route(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        mutants=MUTANTS,
        knobs=textwrap.dedent(
            """
            from memcore_conformance import ProviderConformance
            from mutants import RefusesEmptyBodies

            class RefusingKnobs(ProviderConformance):
                provider_cls = RefusesEmptyBodies
                rejected_corpus = frozenset({"empty-body", "whitespace-body"})
            """
        ),
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--pyargs",
        "memcore_conformance.suite",
        "--memcore-provider=knobs:RefusingKnobs",
        "-k",
        "empty-body or whitespace-body",
        "-v",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_corpus_roundtrip?empty-body? PASSED*"])


def test_suite_failure_messages_are_rewritten(pytester: pytest.Pytester) -> None:
    _suite_module(pytester, "LosesExtra")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "extra-hostile-keys")
    result.assert_outcomes(failed=1)
    # assertion rewriting shows the compared values, not just "AssertionError"
    result.stdout.fnmatch_lines(["*extra lost or changed*", "*Differing items*", "*'content': '<missing>'*"])


def test_fixture_overrides_in_the_subclass_and_conftest_are_used(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture
            def memcore_provider_options():
                return {"flavour": "set-by-conftest"}
            """
        )
    )
    pytester.makepyfile(
        mutants=MUTANTS,
        test_overrides=textwrap.dedent(
            """
            import itertools
            import pytest
            from memcore.models import Kind, MemoryEntry
            from memcore_conformance import ProviderConformance
            from mutants import OnlyDecisions

            class TestOverrides(ProviderConformance):
                provider_cls = OnlyDecisions

                @pytest.fixture
                def memcore_location(self, tmp_path, memcore_provider_options):
                    assert memcore_provider_options == {"flavour": "set-by-conftest"}
                    location = str(tmp_path / "store" / "nested")
                    OnlyDecisions.init_store(location)
                    return location

                @pytest.fixture
                def memcore_make_entry(self):
                    counter = itertools.count()
                    def make(**overrides):
                        data = {"kind": Kind.DECISION, "title": f"Decision {next(counter)}", "body": "Why.\\n"}
                        data.update(overrides)
                        return MemoryEntry(**data)
                    return make

                @pytest.fixture
                def memcore_bad_files(self):
                    return lambda location: [("entries/zz-stray.json", b"\\xff\\xfe not json")]

                def test_location_was_overridden(self, memcore_provider, memcore_store_root):
                    assert memcore_provider.location.endswith("nested")
                    assert memcore_provider.options == {"flavour": "set-by-conftest"}
            """
        ),
    )
    pytester.syspathinsert()
    reprec = pytester.inline_run(
        "-p", "no:cacheprovider", "-k", "add_then_get or corpus_roundtrip or overridden or bad_input"
    )
    passed, _skipped, failed = reprec.listoutcomes()
    assert failed == [], [r.longreprtext[-2000:] for r in failed]
    assert {
        "test_add_then_get",
        "test_location_was_overridden",
        "test_corpus_roundtrip[cjk]",
        "test_bad_input_fails_open_and_closed",
    } <= _names(passed)
