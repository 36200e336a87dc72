"""Format name -> provider class, built from the plugins' ``memcore_register_providers``."""

from __future__ import annotations

import difflib
import functools
from pathlib import Path
from typing import Any, cast

import pluggy

from memcore.errors import DuplicateFormatError, UnknownFormatError
from memcore.plugins import declared_formats, get_plugin_manager, plugin_infos

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
    "mcpmemory": ("memcore-unified-mcpmemory", "mcpmemory"),
    "claudecode": ("memcore-unified-claudecode", "claudecode"),
    "basicmemory": ("memcore-unified-basicmemory", "basicmemory"),
}


class ProviderRegistry:
    """The provider classes registered on one plugin manager, by format name.

    A plugin whose distribution declares its formats (``memcore.formats`` entry points, see
    :func:`memcore.plugins.declared_formats`) is asked for its providers, and so imports them,
    only when one of those formats is looked up; every other plugin is asked at once. Any
    lookup that needs the full list (:meth:`names`, :meth:`items`, :meth:`sniff`, an unknown
    name) asks every plugin first. A name two plugins claim fails as soon as it can be seen:
    at once when two declare it, or a plugin asked at once registers a name another declares.

    Args:
        pm: The plugin manager to collect from (default: the process-wide one).

    Raises:
        DuplicateFormatError: Two plugins register the same ``format_name``; names both.
    """

    def __init__(self, pm: pluggy.PluginManager | None = None) -> None:
        self.pm = pm or get_plugin_manager()
        self._providers: dict[str, type[Any]] = {}
        self._owner: dict[str, str] = {}
        self._dists = {info.name: info for info in plugin_infos(self.pm)}
        self._impls = list(self.pm.hook.memcore_register_providers.get_hookimpls())
        self._classes: dict[str, list[type[Any]]] = {}  # plugin name -> what its hook returned
        declared = declared_formats(self.pm)
        self._declared = {
            impl.plugin_name: declared[impl.plugin_name] for impl in self._impls if impl.plugin_name in declared
        }
        self._declarer: dict[str, list[str]] = {}  # format name -> the plugins declaring it
        for plugin_name, formats in self._declared.items():
            for name in formats:
                self._declarer.setdefault(name, []).append(plugin_name)
        now = {impl.plugin_name for impl in self._impls if impl.plugin_name not in self._declared}
        now |= {plugin for owners in self._declarer.values() if len(owners) > 1 for plugin in owners}
        self._ask(now)
        self._ask({plugin for name in self._providers for plugin in self._declarer.get(name, [])})

    def _ask(self, plugin_names: set[str] | None) -> None:
        """Call the ``memcore_register_providers`` hook of these plugins (``None``: all) not yet asked.

        The table is then rebuilt in the hook's own order, so a duplicate is reported naming the
        plugins as when every plugin is asked at once.
        """
        asked = False
        wanted = plugin_names
        again = True
        while again:
            again = False
            for impl in self._impls:
                plugin_name = impl.plugin_name
                if plugin_name in self._classes or (wanted is not None and plugin_name not in wanted):
                    continue
                classes = cast("list[type[Any]]", impl.function() or [])
                self._classes[plugin_name] = classes
                asked = True
                declared = self._declared.get(plugin_name)
                if declared is not None and {getattr(cls, "format_name", None) for cls in classes} - set(declared):
                    # It registers a name it did not declare: only the full table can tell
                    # whether another plugin claims that name too.
                    again = wanted is not None
                    wanted = None
        if asked:
            self._rebuild()

    def _rebuild(self) -> None:
        providers: dict[str, type[Any]] = {}
        owner: dict[str, str] = {}
        for impl in self._impls:
            plugin_name = impl.plugin_name
            for cls in self._classes.get(plugin_name, ()):
                name = getattr(cls, "format_name", None)
                if not isinstance(name, str) or not name:
                    raise DuplicateFormatError(f"plugin {plugin_name!r} registered {cls!r} without a format_name")
                if name in providers:
                    first = owner[name]
                    raise DuplicateFormatError(
                        f"format {name!r} is registered twice: by plugin {first!r} "
                        f"({providers[name].__module__}.{providers[name].__qualname__}) "
                        f"and by plugin {plugin_name!r} ({cls.__module__}.{cls.__qualname__}); "
                        "uninstall one, or block it with MEMCORE_DISABLE_PLUGINS"
                    )
                info = self._dists.get(plugin_name)
                if info is not None and info.distribution and getattr(cls, "distribution", None) is None:
                    cls.distribution = info.distribution
                providers[name] = cls
                owner[name] = plugin_name
        self._providers, self._owner = providers, owner

    def _all(self) -> dict[str, type[Any]]:
        self._ask(None)
        return self._providers

    def names(self) -> list[str]:
        """Return the registered format names, sorted."""
        return sorted(self._all())

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
        if format_name not in self._providers:
            self._ask(set(self._declarer.get(format_name, [])))
        if format_name not in self._providers:
            self._all()
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
        for name, cls in sorted(self._all().items()):
            try:
                if cls.sniff(path):
                    found.append(name)
            except Exception:  # noqa: BLE001 - a plugin's sniff must never break detection
                continue
        return found

    def items(self) -> list[tuple[str, type[Any]]]:
        """Return ``(format name, provider class)`` pairs, sorted by name."""
        return sorted(self._all().items())


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
