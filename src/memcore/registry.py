"""Format name -> provider class, built from the plugins' ``memcore_register_providers``."""

from __future__ import annotations

import difflib
import functools
from pathlib import Path
from typing import Any, cast

import pluggy

from memcore.errors import DuplicateFormatError, UnknownFormatError
from memcore.plugins import get_plugin_manager, plugin_infos

__all__ = ["BUILTIN_DISTRIBUTIONS", "ProviderRegistry", "get_registry"]

#: The formats memcore's own plugins serve and the distribution (and core extra) for each. Core
#: knows these names only to say what to install; it never imports the plugins by name. The
#: distributions are the ``memcore-unified`` family (``memcore`` on PyPI is another project);
#: in a checkout each lives in ``plugins/memcore-<format>``.
BUILTIN_DISTRIBUTIONS: dict[str, tuple[str, str]] = {
    "whitebox": ("memcore-unified-whitebox", "whitebox"),
    "box": ("memcore-unified-box", "box"),
    "box+cloud": ("memcore-unified-box[cloud]", "box"),
    "rightmemory": ("memcore-unified-rightmemory", "rightmemory"),
    "maka": ("memcore-unified-maka", "maka"),
    "basicmemory": ("memcore-unified-basicmemory", "basicmemory"),
}


class ProviderRegistry:
    """The provider classes registered on one plugin manager, by format name.

    Args:
        pm: The plugin manager to collect from (default: the process-wide one).

    Raises:
        DuplicateFormatError: Two plugins register the same ``format_name``; names both.
    """

    def __init__(self, pm: pluggy.PluginManager | None = None) -> None:
        self.pm = pm or get_plugin_manager()
        self._providers: dict[str, type[Any]] = {}
        self._owner: dict[str, str] = {}
        dists = {info.name: info for info in plugin_infos(self.pm)}
        for impl in self.pm.hook.memcore_register_providers.get_hookimpls():
            plugin_name = impl.plugin_name
            classes = cast("list[type[Any]]", impl.function() or [])
            for cls in classes:
                name = getattr(cls, "format_name", None)
                if not isinstance(name, str) or not name:
                    raise DuplicateFormatError(f"plugin {plugin_name!r} registered {cls!r} without a format_name")
                if name in self._providers:
                    first = self._owner[name]
                    raise DuplicateFormatError(
                        f"format {name!r} is registered twice: by plugin {first!r} "
                        f"({self._providers[name].__module__}.{self._providers[name].__qualname__}) "
                        f"and by plugin {plugin_name!r} ({cls.__module__}.{cls.__qualname__}); "
                        "uninstall one, or block it with MEMCORE_DISABLE_PLUGINS"
                    )
                info = dists.get(plugin_name)
                if info is not None and info.distribution and getattr(cls, "distribution", None) is None:
                    cls.distribution = info.distribution
                self._providers[name] = cls
                self._owner[name] = plugin_name

    def names(self) -> list[str]:
        """Return the registered format names, sorted."""
        return sorted(self._providers)

    def owner(self, format_name: str) -> str:
        """Return the name of the plugin that registered ``format_name``."""
        self.get(format_name)
        return self._owner[format_name]

    def get(self, format_name: str) -> type[Any]:
        """Return the provider class for ``format_name``.

        Raises:
            UnknownFormatError: No such format; names the distribution to install for a
                built-in one, or the closest registered names otherwise.
        """
        try:
            return self._providers[format_name]
        except KeyError:
            pass
        if format_name in BUILTIN_DISTRIBUTIONS:
            dist, extra = BUILTIN_DISTRIBUTIONS[format_name]
            folder = f"plugins/memcore-{extra}" + ("[cloud]" if dist.endswith("[cloud]") else "")
            raise UnknownFormatError(
                f"format {format_name!r} needs the {dist.removesuffix('[cloud]')!r} distribution, which is "
                f"not installed (or is blocked by MEMCORE_DISABLE_PLUGINS); install it from a memcore "
                f"checkout with `pip install -e '{folder}'`, or, once published on PyPI, with "
                f"`pip install '{dist}'`"
            )
        close = difflib.get_close_matches(format_name, self.names(), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        known = ", ".join(self.names()) or "none"
        raise UnknownFormatError(f"unknown format {format_name!r} (installed formats: {known}){hint}")

    def sniff(self, path: Path) -> list[str]:
        """Return the names of every format whose provider says ``path`` looks like its own."""
        found = []
        for name, cls in sorted(self._providers.items()):
            try:
                if cls.sniff(path):
                    found.append(name)
            except Exception:  # noqa: BLE001 - a plugin's sniff must never break detection
                continue
        return found

    def items(self) -> list[tuple[str, type[Any]]]:
        """Return ``(format name, provider class)`` pairs, sorted by name."""
        return sorted(self._providers.items())


@functools.cache
def _default_registry() -> ProviderRegistry:
    return ProviderRegistry(get_plugin_manager())


def get_registry(pm: pluggy.PluginManager | None = None) -> ProviderRegistry:
    """Return the registry for ``pm``; the process-wide one is built once and cached."""
    if pm is None:
        return _default_registry()
    return ProviderRegistry(pm)


def _reset() -> None:
    """Forget the cached registry (tests)."""
    _default_registry.cache_clear()
