"""``ProviderConformance``: the suite, every behaviour mixin combined into one base class.

Subclass it in a test module with ``provider_cls`` set::

    from memcore_conformance import ProviderConformance
    from memcore_maka.provider import MakaProvider

    class TestMakaConformance(ProviderConformance):
        provider_cls = MakaProvider
        rejected_corpus = frozenset({"empty-body", "whitespace-body", "large-body"})

See the class docstring for every knob and mixin, :mod:`memcore_conformance.fixtures` for the
fixtures, and docs/conformance.md for the rules.
"""

from __future__ import annotations

from memcore_conformance._api import ApiTests
from memcore_conformance._base import ConformanceBase
from memcore_conformance._batch import BatchTests
from memcore_conformance._contract import ContractTests
from memcore_conformance._corpus import CorpusTests
from memcore_conformance._durability import DurabilityTests
from memcore_conformance._files import FileDisciplineTests
from memcore_conformance._gates import GateTests
from memcore_conformance._ids import IdCollisionTests
from memcore_conformance._names import NamesConformance
from memcore_conformance._no_change import NoChangeUpdateTests
from memcore_conformance._private import PrivateFilesTests
from memcore_conformance._read_only import ReadOnlyTests
from memcore_conformance._robustness import RobustnessTests

__all__ = ["ProviderConformance"]


class ProviderConformance(
    ContractTests,
    ApiTests,
    BatchTests,
    NoChangeUpdateTests,
    ReadOnlyTests,
    CorpusTests,
    FileDisciplineTests,
    RobustnessTests,
    DurabilityTests,
    IdCollisionTests,
    NamesConformance,
    PrivateFilesTests,
    GateTests,
    ConformanceBase,
):
    """The memcore conformance suite; subclass it with ``provider_cls = YourProvider``.

    Every ``test_*`` method is a check of the provider contract (src/memcore/provider.py) run
    through the API and, separately, through the raw files. Tests needing a capability carry
    ``@pytest.mark.memcore_requires(...)`` and are skipped, naming what is missing, when the
    provider does not declare it; an operation whose capability is *not* declared must raise
    :class:`~memcore.errors.UnsupportedOperationError`.

    The tests come from one mixin per behaviour, each in its own module:

    - :class:`~memcore_conformance._contract.ContractTests`: declaration, empty store,
      undeclared operations, append-only entries, validate, read_all, reindex;
    - :class:`~memcore_conformance._api.ApiTests`: add/get/iterate/query, update and version
      tokens, delete, archive, supersede;
    - :class:`~memcore_conformance._batch.BatchTests`: ``batch()`` and ``plan_ids``;
    - :class:`~memcore_conformance._no_change.NoChangeUpdateTests`: updating every entry with
      itself writes no byte (indexes included);
    - :class:`~memcore_conformance._read_only.ReadOnlyTests`: ``read_only=True`` refuses every
      write and changes no byte;
    - :class:`~memcore_conformance._corpus.CorpusTests`: the adversarial corpus, generated entries;
    - :class:`~memcore_conformance._files.FileDisciplineTests`: which raw files reads and writes touch;
    - :class:`~memcore_conformance._robustness.RobustnessTests`: damaged files, hostile names;
    - :class:`~memcore_conformance._durability.DurabilityTests`: concurrent processes, SIGKILL;
    - :class:`~memcore_conformance._ids.IdCollisionTests`,
      :class:`~memcore_conformance._names.NamesConformance`,
      :class:`~memcore_conformance._private.PrivateFilesTests`,
      :class:`~memcore_conformance._gates.GateTests`: colliding derived ids, NFC/NFD names and
      control characters, file modes and leftover temp files, links past a gate.

    A mixin's own knobs are documented on the mixin; the shared ones follow.

    Knobs (class attributes; all optional except ``provider_cls``):

    Attributes:
        provider_cls: The provider class under test. ``None`` only on the ``--pyargs`` route,
            where ``--memcore-provider`` supplies it.
        provider_options: Options for ``init_store`` and the constructor (``memcore_provider_options``).
        roundtrip_fields: ``MemoryEntry`` fields that survive a write and a reopen exactly (after
            :meth:`normalize_expected`). Default: every content field. Must include ``id`` and
            ``body``. ``extra`` is compared as a subset (the provider may add keys).
        stamps_times: ``add`` sets ``created_at`` and ``updated_at`` when they are in
            ``roundtrip_fields`` and the entry has none (default ``True``). ``False`` for a
            format with no timestamps of its own (RightMemory): a time given is kept, none is
            invented, so a plain add writes nothing but the format's own syntax.
        rejected_corpus: Corpus case names (:data:`memcore_conformance.corpus.CORPUS_CASES`)
            the format cannot store; ``add`` must raise ``InvalidEntryError`` for each and write
            nothing. Every other case must round-trip. E.g. Maka drops empty sections, so it
            lists ``empty-body`` and ``whitespace-body`` and must refuse them, not drop them.
        insertion_ordered: ``iter_entries`` yields entries in the order they were added
            (default ``True``). ``False`` for formats with their own order (e.g. by file path);
            the order must still be the same on every call and after a reopen.
        index_files: Glob patterns (``fnmatch``, relative posix paths) of derived files any
            write may rewrite, e.g. ``("**/_index.json", "_index.json")``. Every other file a
            write does not need must keep its bytes, inode and mtime.
        provider_import_path: ``"module:QualName"`` a spawned process imports to get the
            provider class (default: from ``provider_cls``). Needed when the class lives in a
            module a fresh interpreter cannot import by its ``__module__``.
        concurrent_processes: Processes in the concurrency test (16).
        concurrent_adds: Adds per process in the concurrency test (25).
        crash_writes: Writes in the crash test (100).
        crash_kills: SIGKILLs during those writes (4).
        field_values: Values :meth:`test_every_roundtrip_field_survives` uses instead of its
            defaults, by field name (e.g. ``{"status": Status.DRAFT, "scope": "work"}``;
            ``"relation_type"`` picks the edge type, default ``"related"``).
    """
