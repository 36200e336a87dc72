"""memcore-conformance: the provider conformance suite, as a pytest plugin and a base class.

Two ways to run it against a provider:

1. Subclass (in your own test module)::

       from memcore_conformance import ProviderConformance

       class TestMyFormat(ProviderConformance):
           provider_cls = MyProvider

2. The installed suite module, against a registered format::

       pytest --pyargs memcore_conformance.suite --memcore-provider=myformat

Public names (imported lazily, so that the pytest plugin can turn on assertion rewriting for the
suite's modules before they are imported):

- :class:`ProviderConformance`: the suite, one mixin per behaviour combined; its class
  docstring lists the mixins and every knob.
- :func:`assert_equivalent`: a fast path gives what the general path gives, on every input
  (for plugins' ``test_equivalence.py``).
- :class:`BadFile`: one damaged file for the ``memcore_bad_files`` fixture.
- :data:`CORPUS_CASES`, :func:`build_corpus`: the adversarial corpus (:mod:`memcore_conformance.corpus`).
- :func:`default_bad_files`: the generic damage the default ``memcore_bad_files`` applies.
- :func:`read_tree`: ``{relative posix path: bytes}`` of every file under a folder (what the
  default ``memcore_raw_files`` returns), for fixtures that snapshot something else.

The fixtures are documented in :mod:`memcore_conformance.fixtures`, the plugin's options in
:mod:`memcore_conformance.plugin`, the reference provider in :mod:`memcore_conformance.reference`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "CORPUS_CASES",
    "BadFile",
    "ProviderConformance",
    "__version__",
    "assert_equivalent",
    "build_corpus",
    "default_bad_files",
    "read_tree",
]

if TYPE_CHECKING:
    from memcore_conformance._checks import BadFile, default_bad_files, read_tree
    from memcore_conformance._conformance import ProviderConformance
    from memcore_conformance._equivalence import assert_equivalent
    from memcore_conformance.corpus import CORPUS_CASES, build_corpus

#: The suite's modules, whose asserts pytest rewrites (one per behaviour mixin, the base, the helpers).
SUITE_MODULES = (
    "memcore_conformance._api",
    "memcore_conformance._base",
    "memcore_conformance._batch",
    "memcore_conformance._checks",
    "memcore_conformance._conformance",
    "memcore_conformance._contract",
    "memcore_conformance._corpus",
    "memcore_conformance._durability",
    "memcore_conformance._equivalence",
    "memcore_conformance._files",
    "memcore_conformance._gates",
    "memcore_conformance._ids",
    "memcore_conformance._names",
    "memcore_conformance._private",
    "memcore_conformance._read_only",
    "memcore_conformance._robustness",
    "memcore_conformance.suite",
)

_LAZY = {
    "ProviderConformance": "memcore_conformance._conformance",
    "BadFile": "memcore_conformance._checks",
    "default_bad_files": "memcore_conformance._checks",
    "read_tree": "memcore_conformance._checks",
    "assert_equivalent": "memcore_conformance._equivalence",
    "CORPUS_CASES": "memcore_conformance.corpus",
    "build_corpus": "memcore_conformance.corpus",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memcore_conformance' has no attribute {name!r}")
    import importlib
    import sys

    fresh = [m for m in SUITE_MODULES if m not in sys.modules]
    if fresh:
        import pytest

        pytest.register_assert_rewrite(*fresh)
    return getattr(importlib.import_module(module), name)
