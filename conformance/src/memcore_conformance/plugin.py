"""The pytest plugin (entry point ``pytest11: memcore_conformance``); inert until used.

Installing ``memcore-conformance`` loads this module into every pytest run in the environment.
It only *adds* things; nothing runs unless a test asks for it:

- the option ``--memcore-provider=FORMAT`` and the ini key ``memcore_provider``: which provider
  the ``--pyargs memcore_conformance.suite`` route tests. ``FORMAT`` is a format name looked up
  through :func:`memcore.registry.get_registry`, or an import path ``module:attr`` naming a
  provider class or a :class:`~memcore_conformance.ProviderConformance` subclass (its knobs are
  then used too);
- the option ``--memcore-hypothesis-profile`` / ini ``memcore_hypothesis_profile`` (default
  ``memcore-ci``: 200 examples; ``memcore-dev``: 25);
- the option ``--memcore-seed`` / ini ``memcore_seed``: seed of the random kill points of the
  crash test (default: a fresh one, printed in failures);
- the markers ``memcore_requires(*capabilities)`` (skip, naming the missing capabilities, when the
  provider under test lacks one) and ``slow``;
- the overridable ``memcore_*`` fixtures, defined in :mod:`memcore_conformance.fixtures`.

With ``pytest --pyargs memcore_conformance.suite`` and no provider given, collection stops with
one :class:`pytest.UsageError`. For a format name, the knobs (a ``ProviderConformance``
subclass) come from the ``memcore_conformance`` entry-point group, entry named after the format,
when the provider's distribution declares one; otherwise the defaults apply.

Assertion rewriting is registered here for the suite's modules before anything imports them.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
from typing import Any

import pytest

from memcore_conformance import SUITE_MODULES

pytest.register_assert_rewrite(*SUITE_MODULES)

from memcore_conformance.fixtures import (  # noqa: E402 - after register_assert_rewrite
    memcore_bad_files,
    memcore_corpus,
    memcore_file_identity,
    memcore_location,
    memcore_make_append_only_entry,
    memcore_make_entry,
    memcore_provider,
    memcore_provider_cls,
    memcore_provider_options,
    memcore_raw_files,
    memcore_reopen,
    memcore_reopen_read_only,
    memcore_store_root,
)

__all__ = [
    "CONFORMANCE_ENTRY_POINT_GROUP",
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
    "resolve_provider",
]

#: Entry-point group where a distribution names its ``ProviderConformance`` subclass (its knobs)
#: for a format: ``[project.entry-points.memcore_conformance] maka = "memcore_maka.conformance:MakaConformance"``.
CONFORMANCE_ENTRY_POINT_GROUP = "memcore_conformance"

_RESOLVED = pytest.StashKey[tuple[type[Any] | None, type[Any] | None, str | None]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--memcore-provider``, ``--memcore-hypothesis-profile``, ``--memcore-seed`` and ini keys."""
    group = parser.getgroup("memcore", "memcore provider conformance suite")
    group.addoption(
        "--memcore-provider",
        dest="memcore_provider",
        default=None,
        metavar="FORMAT",
        help="provider for `--pyargs memcore_conformance.suite`: a registered format name "
        "or module:attr (a provider class or a ProviderConformance subclass)",
    )
    group.addoption(
        "--memcore-hypothesis-profile",
        dest="memcore_hypothesis_profile",
        default=None,
        metavar="NAME",
        help="hypothesis settings profile of the property test (memcore-ci: 200 examples, memcore-dev: 25)",
    )
    group.addoption(
        "--memcore-seed",
        dest="memcore_seed",
        default=None,
        metavar="INT",
        help="seed of the crash test's random kill points (default: random, printed on failure)",
    )
    parser.addini("memcore_provider", "default for --memcore-provider", default=None)
    parser.addini("memcore_hypothesis_profile", "default for --memcore-hypothesis-profile", default=None)
    parser.addini("memcore_seed", "default for --memcore-seed", default=None)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``memcore_requires`` and ``slow`` markers."""
    config.addinivalue_line(
        "markers",
        "memcore_requires(*capabilities): run only if the provider under test declares every "
        "listed memcore.provider.Capability; otherwise skip naming the missing ones",
    )
    config.addinivalue_line("markers", "slow: takes more than a few seconds (multi-process, crash, large corpora)")


def option(config: pytest.Config, name: str) -> str | None:
    """Return command-line option ``name`` or, when unset, the ini key of the same name."""
    value = config.getoption(name, default=None)
    if value is None:
        ini = config.getini(name)
        value = ini if isinstance(ini, str) and ini.strip() else None
    return None if value is None else str(value)


def resolve_provider(spec: str) -> tuple[type[Any], type[Any] | None]:
    """Resolve ``--memcore-provider``'s value.

    Args:
        spec: A registered format name, or ``module:attr`` naming a provider class or a
            ``ProviderConformance`` subclass.

    Returns:
        ``(provider class, knobs class or None)``.

    Raises:
        pytest.UsageError: Unknown format, import failure, or not a provider.
    """
    from memcore_conformance._conformance import ProviderConformance

    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise pytest.UsageError(f"--memcore-provider={spec}: cannot import it: {exc}") from exc
        if isinstance(obj, type) and issubclass(obj, ProviderConformance):
            if obj.provider_cls is None:
                raise pytest.UsageError(f"--memcore-provider={spec}: {attr} sets no provider_cls")
            return obj.provider_cls, obj
        if not isinstance(obj, type) or not getattr(obj, "format_name", None):
            raise pytest.UsageError(f"--memcore-provider={spec}: {attr} is not a provider class")
        return obj, None
    from memcore.errors import MemcoreError
    from memcore.registry import get_registry

    try:
        cls = get_registry().get(spec)
    except MemcoreError as exc:
        raise pytest.UsageError(f"--memcore-provider={spec}: {exc}") from exc
    except Exception as exc:
        raise pytest.UsageError(
            f"--memcore-provider={spec}: loading the installed memcore plugins failed: {exc!r}"
        ) from exc
    knobs: type[Any] | None = None
    for ep in md.entry_points(group=CONFORMANCE_ENTRY_POINT_GROUP):
        if ep.name == spec:
            try:
                loaded = ep.load()
            except Exception as exc:
                raise pytest.UsageError(
                    f"--memcore-provider={spec}: cannot load its conformance knobs {ep.value}: {exc!r}"
                ) from exc
            if not (isinstance(loaded, type) and issubclass(loaded, ProviderConformance)):
                raise pytest.UsageError(
                    f"--memcore-provider={spec}: entry point {ep.value} is not a ProviderConformance subclass"
                )
            knobs = loaded
            break
    return cls, knobs


def _resolved(config: pytest.Config) -> tuple[type[Any] | None, type[Any] | None, str | None]:
    """Return ``(provider class, knobs class, error message)`` for the configured provider, cached."""
    if _RESOLVED not in config.stash:
        spec = option(config, "memcore_provider")
        if spec is None:
            config.stash[_RESOLVED] = (None, None, None)
        else:
            try:
                cls, knobs = resolve_provider(spec)
                config.stash[_RESOLVED] = (cls, knobs, None)
            except pytest.UsageError as exc:
                config.stash[_RESOLVED] = (None, None, str(exc))
    return config.stash[_RESOLVED]


def configured_provider(config: pytest.Config) -> type[Any] | None:
    """Return the provider class named by ``--memcore-provider``/``memcore_provider``, or ``None``.

    Raises:
        pytest.UsageError: The option names nothing usable.
    """
    cls, _, error = _resolved(config)
    if error:
        raise pytest.UsageError(error)
    return cls


def _is_suite_placeholder(obj: object) -> bool:
    return isinstance(obj, type) and bool(obj.__dict__.get("__memcore_suite__", False))


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    """Swap ``memcore_conformance.suite.TestConformance`` for the configured provider's class.

    The placeholder class becomes ``type("TestConformance", (knobs or placeholder,),
    {"provider_cls": provider})`` so that the knobs of the provider's ``memcore_conformance``
    entry point apply. Nothing happens for any other class.
    """
    if not _is_suite_placeholder(obj):
        return None
    cls, knobs, error = _resolved(collector.config)
    if cls is None or error:
        return None  # the usage error is raised once, in pytest_collection_modifyitems
    assert isinstance(obj, type)
    base = knobs if knobs is not None else obj
    concrete = type(name, (base,), {"provider_cls": cls, "__module__": obj.__module__, "__doc__": obj.__doc__})
    node = _SuiteClass.from_parent(collector, name=name)
    node.memcore_concrete = concrete
    return node


class _SuiteClass(pytest.Class):
    """Collector of the suite module's placeholder class, collecting the concrete class instead."""

    memcore_concrete: type[Any]

    def _getobj(self) -> Any:
        return self.memcore_concrete


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Stop with one usage error when the suite module was collected without a provider."""
    needs_provider = [
        item
        for item in items
        if (cls := getattr(item, "cls", None)) is not None
        and _is_suite_placeholder(cls)
        and getattr(cls, "provider_cls", None) is None
    ]
    if not needs_provider:
        return
    _, _, error = _resolved(config)
    if error:
        raise pytest.UsageError(error)
    raise pytest.UsageError(
        "memcore_conformance.suite needs a provider to test: pass --memcore-provider=FORMAT "
        "(a registered format name, e.g. `--memcore-provider=maka`, or module:ProviderClass) "
        "or set `memcore_provider = FORMAT` in your pytest ini; or subclass "
        "memcore_conformance.ProviderConformance with provider_cls = YourProvider"
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip tests marked ``memcore_requires`` outside ``ProviderConformance`` when a capability is missing.

    Inside ``ProviderConformance`` subclasses (and classes built on its behaviour mixins) the
    class's own autouse fixture does this with the (possibly overridden) ``memcore_provider_cls``
    fixture.
    """
    marks = list(item.iter_markers("memcore_requires"))
    if not marks:
        return
    from memcore_conformance._base import ConformanceBase

    cls = getattr(item, "cls", None)
    if isinstance(cls, type) and issubclass(cls, ConformanceBase):
        return  # ProviderConformance, or a class built on some of its behaviour mixins
    provider = getattr(cls, "provider_cls", None) or configured_provider(item.config)
    if provider is None:
        return
    from memcore_conformance._checks import missing_capabilities

    missing = missing_capabilities(provider, marks)
    if missing:
        pytest.skip(f"{provider.format_name}: provider lacks capability {', '.join(missing)}")
