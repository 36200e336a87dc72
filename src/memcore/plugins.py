"""The plugin manager: entry-point loading, allow and block lists.

Plugins are found through the ``memcore`` entry-point group, loaded lazily and once. Two
environment variables choose among them, each a comma-separated list of entry-point names or
distribution names:

- ``MEMCORE_LOAD_PLUGINS``: load only these (allow list).
- ``MEMCORE_DISABLE_PLUGINS``: never load these (block list; wins over the allow list).

A distribution may also name the formats its plugin serves, in the ``memcore.formats``
entry-point group (``<format name> = <the plugin's own entry-point value>``), so that the
registry imports a plugin's providers only when one of its formats is used (see
:func:`declared_formats`).
"""

from __future__ import annotations

import importlib.metadata as md
import os
import threading
from dataclasses import dataclass, field

import pluggy

from memcore import hookspecs
from memcore.errors import PluginLoadError

__all__ = [
    "ENTRY_POINT_GROUP",
    "FORMATS_ENTRY_POINT_GROUP",
    "PluginInfo",
    "declared_formats",
    "get_plugin_manager",
    "plugin_infos",
    "reset_plugin_manager",
]

ENTRY_POINT_GROUP = "memcore"
#: Entry points ``<format name> = <plugin entry-point value>``: the formats a plugin declares.
FORMATS_ENTRY_POINT_GROUP = "memcore.formats"

_lock = threading.Lock()
_default: pluggy.PluginManager | None = None
_infos: dict[int, list[PluginInfo]] = {}
_declared: dict[int, dict[str, tuple[str, ...]]] = {}


@dataclass(frozen=True)
class PluginInfo:
    """One loaded plugin.

    Attributes:
        name: Entry-point name (or the name it was registered under).
        distribution: Distribution that ships it, or ``None`` when registered by hand.
        version: That distribution's version, or ``None``.
        module: The plugin object's module name.
        hooks: The ``memcore_*`` hooks it implements, sorted.
    """

    name: str
    distribution: str | None
    version: str | None
    module: str
    hooks: tuple[str, ...] = field(default=())


def _names(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return None
    return {n.strip().lower() for n in raw.split(",") if n.strip()}


def _load_entrypoints(pm: pluggy.PluginManager) -> tuple[list[PluginInfo], dict[str, tuple[str, ...]]]:
    allow = _names("MEMCORE_LOAD_PLUGINS")
    block = _names("MEMCORE_DISABLE_PLUGINS") or set()
    infos: list[PluginInfo] = []
    declared: dict[str, tuple[str, ...]] = {}
    everything = md.entry_points()  # one scan of the installed distributions for both groups
    formats: dict[tuple[str | None, str], list[str]] = {}
    for fep in everything.select(group=FORMATS_ENTRY_POINT_GROUP):
        formats.setdefault((fep.dist.name if fep.dist is not None else None, fep.value.strip()), []).append(fep.name)
    for ep in sorted(everything.select(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = ep.dist.name if ep.dist is not None else None
        keys = {ep.name.lower()} | ({dist.lower(), dist.lower().replace("_", "-")} if dist else set())
        if keys & block or (allow is not None and not keys & allow):
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # any error of a third party's import or registration is reported as one
            raise PluginLoadError(ep.name, dist, exc) from exc
        infos.append(
            PluginInfo(
                name=ep.name,
                distribution=dist,
                version=ep.dist.version if ep.dist is not None else None,
                module=getattr(plugin, "__name__", type(plugin).__module__),
                hooks=_hooks_of(pm, plugin),
            )
        )
        names = formats.get((dist, ep.value.strip()))
        if names:
            declared[ep.name] = tuple(sorted(names))
    return infos, declared


def _hooks_of(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or []))


def get_plugin_manager(load_entrypoints: bool = True) -> pluggy.PluginManager:
    """Return memcore's plugin manager.

    Args:
        load_entrypoints: ``True`` (default): the process-wide manager, with the ``memcore``
            entry points loaded on first use. ``False``: a fresh manager with only the hook
            specs, for tests that register fakes on it.

    Returns:
        A :class:`pluggy.PluginManager` named ``"memcore"``.
    """
    global _default
    if not load_entrypoints:
        pm = pluggy.PluginManager("memcore")
        pm.add_hookspecs(hookspecs)
        return pm
    with _lock:
        if _default is None:
            pm = pluggy.PluginManager("memcore")
            pm.add_hookspecs(hookspecs)
            _infos[id(pm)], _declared[id(pm)] = _load_entrypoints(pm)
            _default = pm
        return _default


def plugin_infos(pm: pluggy.PluginManager | None = None) -> list[PluginInfo]:
    """Return what is known of each plugin registered on ``pm`` (default: the global one)."""
    pm = pm or get_plugin_manager()
    known = {info.name: info for info in _infos.get(id(pm), [])}
    out = []
    for name, plugin in pm.list_name_plugin():
        if name in known:
            out.append(known[name])
            continue
        out.append(
            PluginInfo(
                name=name,
                distribution=None,
                version=None,
                module=getattr(plugin, "__name__", type(plugin).__module__),
                hooks=_hooks_of(pm, plugin),
            )
        )
    return out


def declared_formats(pm: pluggy.PluginManager) -> dict[str, tuple[str, ...]]:
    """Return, for each plugin loaded from an entry point, the formats its distribution declares.

    A declaration is a ``memcore.formats`` entry point of the plugin's distribution whose value
    is the plugin's own ``memcore`` entry-point value, e.g. for ``memcore-unified-box``::

        [project.entry-points."memcore.formats"]
        box = "memcore_box.plugin"
        "box+cloud" = "memcore_box.plugin"

    Args:
        pm: A plugin manager from :func:`get_plugin_manager`.

    Returns:
        Plugin (entry-point) name -> its declared format names, sorted; plugins that declare
        none, and plugins registered by hand, are absent.
    """
    return dict(_declared.get(id(pm), {}))


def reset_plugin_manager() -> None:
    """Forget the process-wide manager so the next call reloads entry points (for tests)."""
    global _default
    with _lock:
        if _default is not None:
            _infos.pop(id(_default), None)
            _declared.pop(id(_default), None)
        _default = None
