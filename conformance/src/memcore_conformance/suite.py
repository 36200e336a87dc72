"""The whole suite as a test module: ``pytest --pyargs memcore_conformance.suite --memcore-provider=X``.

``TestConformance`` here is a placeholder: at collection the plugin replaces it with a subclass
whose ``provider_cls`` is the provider named by ``--memcore-provider`` (or the ini key
``memcore_provider``), built on that format's knobs class when its distribution declares one in
the ``memcore_conformance`` entry-point group. Without a provider, collection stops with one
usage error.
"""

from __future__ import annotations

from typing import ClassVar

from memcore_conformance._conformance import ProviderConformance

__all__ = ["TestConformance"]


class TestConformance(ProviderConformance):
    """The conformance suite for the provider given by ``--memcore-provider``."""

    __memcore_suite__: ClassVar[bool] = True
