"""The ``memcore_*`` fixtures: every place where a provider's test setup differs.

The plugin registers these at the lowest precedence, so a provider may override any of them in
its ``ProviderConformance`` subclass (a method decorated with ``@pytest.fixture`` of the same
name) or in a ``conftest.py``. Each fixture below says what it must return.

Defaults read class attributes of the test class (``provider_cls``, ``provider_options``) and
fall back to ``--memcore-provider``/``memcore_provider`` when the class sets no provider.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import pytest

if TYPE_CHECKING:
    from memcore.models import MemoryEntry
    from memcore_conformance._checks import BadFile

# This module is imported by the pytest11 plugin in every pytest run of the environment, so it
# imports memcore (pydantic) and the corpus only inside the fixtures that need them.

__all__ = [
    "MakeEntry",
    "RawFiles",
    "memcore_bad_files",
    "memcore_corpus",
    "memcore_file_identity",
    "memcore_location",
    "memcore_make_append_only_entry",
    "memcore_make_entry",
    "memcore_provider",
    "memcore_provider_cls",
    "memcore_provider_options",
    "memcore_raw_files",
    "memcore_reopen",
    "memcore_reopen_read_only",
    "memcore_store_root",
]

MakeEntry: TypeAlias = "Callable[..., MemoryEntry]"
"""``make(**overrides) -> MemoryEntry``: a new, not-yet-added entry (``id=None``)."""

RawFiles: TypeAlias = Callable[[], dict[str, bytes]]
"""``snapshot() -> {posix relative path: bytes}`` of every file of the store."""


@pytest.fixture
def memcore_provider_cls(request: pytest.FixtureRequest) -> type[Any]:
    """The provider class under test.

    Default: the test class's ``provider_cls`` attribute; else the provider named by
    ``--memcore-provider`` / ini ``memcore_provider``.

    Raises:
        pytest.UsageError: Neither is set.
    """
    cls = getattr(request.cls, "provider_cls", None)
    if cls is not None:
        return cls  # type: ignore[no-any-return]
    from memcore_conformance.plugin import configured_provider

    configured = configured_provider(request.config)
    if configured is None:
        raise pytest.UsageError(
            f"{request.node.nodeid}: no provider to test; set `provider_cls = YourProvider` on the "
            "ProviderConformance subclass or pass --memcore-provider=FORMAT"
        )
    return configured


@pytest.fixture
def memcore_provider_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Keyword options passed to ``init_store`` and to the provider's constructor.

    Default: a copy of the test class's ``provider_options`` attribute (``{}``).
    """
    return dict(getattr(request.cls, "provider_options", None) or {})


@pytest.fixture
def memcore_location(tmp_path: Path, memcore_provider_cls: type[Any], memcore_provider_options: dict[str, Any]) -> str:
    """A fresh, empty store's location (the string given to the provider's constructor).

    Default: ``init_store(str(tmp_path / "store"), **options)`` and return that string. A
    single-file format overrides this to return e.g. ``str(tmp_path / "store" / "MEMORY.md")``.

    Rule: the store must live inside ``tmp_path / "store"`` (a folder, or a file in it); the
    suite treats everything else under ``tmp_path`` as *outside the store* (path-safety tests
    put a sentinel folder there).
    """
    location = str(tmp_path / "store")
    memcore_provider_cls.init_store(location, **memcore_provider_options)
    return location


@pytest.fixture
def memcore_store_root(memcore_location: str) -> Path:
    """The folder whose files are the store: the location if it is a folder, else its folder."""
    path = Path(memcore_location)
    return path if path.is_dir() else path.parent


@pytest.fixture
def memcore_provider(
    memcore_provider_cls: type[Any], memcore_location: str, memcore_provider_options: dict[str, Any]
) -> Iterator[Any]:
    """The provider under test, opened on ``memcore_location``; closed after the test."""
    provider = memcore_provider_cls(memcore_location, **memcore_provider_options)
    provider.open()
    try:
        yield provider
    finally:
        provider.close()


@pytest.fixture
def memcore_reopen(
    memcore_provider_cls: type[Any], memcore_location: str, memcore_provider_options: dict[str, Any]
) -> Iterator[Callable[[], Any]]:
    """``reopen() -> provider``: a new provider instance opened on the same location.

    Every provider it returns is closed after the test (closing twice is harmless).
    """
    opened: list[Any] = []

    def reopen() -> Any:
        provider = memcore_provider_cls(memcore_location, **memcore_provider_options)
        provider.open()
        opened.append(provider)
        return provider

    try:
        yield reopen
    finally:
        for provider in reversed(opened):
            provider.close()


@pytest.fixture
def memcore_reopen_read_only(
    memcore_provider_cls: type[Any], memcore_location: str, memcore_provider_options: dict[str, Any]
) -> Iterator[Callable[[], Any]]:
    """``reopen_read_only() -> provider``: a new instance on the same location, opened read-only.

    Default: ``provider_cls(location, **options, read_only=True)`` (``read_only`` is one of the
    options every :class:`~memcore.provider.BaseProvider` accepts), opened. Every provider it
    returns is closed after the test. Override only for a provider that is not a
    ``BaseProvider`` and spells read-only some other way.
    """
    opened: list[Any] = []

    def reopen_read_only() -> Any:
        provider = memcore_provider_cls(memcore_location, **{**memcore_provider_options, "read_only": True})
        provider.open()
        opened.append(provider)
        return provider

    try:
        yield reopen_read_only
    finally:
        for provider in reversed(opened):
            provider.close()


@pytest.fixture
def memcore_make_entry() -> MakeEntry:
    """``make(**overrides) -> MemoryEntry``: an entry this format can add AND update.

    Default: ``MemoryEntry(kind=Kind.NOTE, title="Conformance entry <n>", body="Body of
    conformance entry <n>.\\n", tags=["conformance"])`` with ``<n>`` counting up; ``overrides``
    replace any field. A format whose notes cannot be updated overrides this to pick an
    updatable kind (and whatever else the format requires). Tests pass ``title``, ``body``,
    ``tags``, ``source``, ``confidence``, ``created_at``, ``extra`` and ``kind`` as overrides.
    """
    from memcore.models import Kind, MemoryEntry

    counter = itertools.count(1)

    def make(**overrides: Any) -> MemoryEntry:
        n = next(counter)
        data: dict[str, Any] = {
            "kind": Kind.NOTE,
            "title": f"Conformance entry {n}",
            "body": f"Body of conformance entry {n}.\n",
            "tags": ["conformance"],
        }
        data.update(overrides)
        return MemoryEntry(**data)

    return make


@pytest.fixture
def memcore_make_append_only_entry(memcore_provider_cls: type[Any]) -> MakeEntry | None:
    """``make(**overrides) -> MemoryEntry`` for an entry the format only appends, or ``None``.

    Needed by providers declaring ``Capability.APPEND_ONLY``: the suite adds one and checks that
    ``update`` and ``delete`` raise ``UnsupportedOperationError`` and change no byte. Default:
    an ``observation`` when the provider declares APPEND_ONLY, else ``None``.
    """
    from memcore.models import Kind, MemoryEntry
    from memcore.provider import Capability

    if Capability.APPEND_ONLY not in memcore_provider_cls.capabilities:
        return None
    counter = itertools.count(1)

    def make(**overrides: Any) -> MemoryEntry:
        n = next(counter)
        data: dict[str, Any] = {"kind": Kind.OBSERVATION, "title": "", "body": f"Observation {n}.\n"}
        data.update(overrides)
        return MemoryEntry(**data)

    return make


@pytest.fixture
def memcore_corpus(memcore_make_entry: MakeEntry, memcore_provider_cls: type[Any]) -> dict[str, MemoryEntry]:
    """The adversarial round-trip corpus: ``{case name: entry}``.

    Default: :func:`memcore_conformance.corpus.build_corpus` over ``memcore_make_entry`` (see
    that module for every case). Override to add cases; remove none — refuse them instead
    (``rejected_corpus``).
    """
    from memcore_conformance.corpus import build_corpus

    return build_corpus(memcore_make_entry, memcore_provider_cls.format_name)


@pytest.fixture
def memcore_raw_files(memcore_store_root: Path) -> RawFiles:
    """``snapshot() -> {relative posix path: bytes}`` of every file under the store root.

    For a single-file store that is the file and its siblings. A remote provider overrides
    this to fetch its objects.
    """
    from memcore_conformance._checks import read_tree

    def snapshot() -> dict[str, bytes]:
        return read_tree(memcore_store_root)

    return snapshot


@pytest.fixture
def memcore_file_identity(memcore_store_root: Path) -> Callable[[], dict[str, tuple[int, int]]]:
    """``identity() -> {relative posix path: (st_ino, st_mtime_ns)}`` of every store file.

    Lets the suite see that a file was rewritten even with the same bytes. A remote provider
    overrides this to return ``{}`` (no check).
    """
    from memcore_conformance._checks import stat_tree

    def identity() -> dict[str, tuple[int, int]]:
        return stat_tree(memcore_store_root)

    return identity


@pytest.fixture
def memcore_bad_files(memcore_raw_files: RawFiles) -> Callable[[str], list[BadFile]]:
    """``bad_files(location) -> [BadFile | (path, bytes)]``: damaged files.

    Called on a store holding exactly one entry added through the API. Each ``BadFile`` is
    written in turn (over ``path``, relative to the store root) into a copy of that store.
    Default (:func:`memcore_conformance._checks.default_bad_files`): the file that holds the
    entry, damaged each way the suite knows: truncated, garbage bytes (not UTF-8), a NUL, a BOM,
    CRLF, mixed line endings, unterminated frontmatter, an unterminated HTML comment. Override
    to add format-specific damage; a plain ``(relative path, bytes)`` pair is a ``BadFile``
    with the defaults (no diagnosis required, reading may drop the entry).
    """
    from memcore_conformance._checks import default_bad_files

    def bad_files(location: str) -> list[BadFile]:
        return default_bad_files(memcore_raw_files())

    return bad_files
