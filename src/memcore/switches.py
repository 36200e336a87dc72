"""The environment switches that turn memcore's fast paths off, read one way.

Every hand-written fast path has a switch (``MEMCORE_YAML_FAST``, ``MEMCORE_BOX_BULK``, ...;
the list is in docs/performance.md, "Every fast path's switch") so that a benchmark can
measure it against the general path in the same run, and a user can rule it out. A switch is
on unless its variable is set to ``0``, ``false``, ``no`` or ``off`` (any case, spaces around
ignored).

A switch is read from the environment on every call (a switch set at run time, e.g. by
``monkeypatch.setenv``, takes effect at once), and fast paths read theirs per entry or per file.
``os.environ.get`` costs ~2.4 us for a variable that is not set, the usual case (``Mapping.get``
raises and catches a ``KeyError``); :func:`switch_on` looks the name up in the mapping behind
``os.environ`` instead (~0.15 us), which holds the same values. ``MEMCORE_SWITCH_READ_FAST=0``
(read once, at import) makes it use ``os.environ.get``; ``benchmarks/bench_switches.py``
measures both.
"""

from __future__ import annotations

import os

__all__ = ["OFF", "environment_value", "switch_on"]

#: The values that turn a switch off.
OFF = frozenset({"0", "false", "no", "off"})

#: Whether :func:`environment_value` reads the mapping behind ``os.environ`` directly (see the
#: module's docstring); ``MEMCORE_SWITCH_READ_FAST=0`` at import: ``os.environ.get``. Set below.
FAST_READ = True

#: variable name -> its key in the mapping behind ``os.environ`` (bytes on POSIX)
_KEYS: dict[str, object] = {}


def environment_value(name: str) -> str | None:
    """Return ``os.environ.get(name)``: the variable's value, ``None`` when it is not set.

    The same value ``os.environ`` holds, read from its own mapping and decoded as it decodes
    it; where ``os.environ`` has no such mapping (replaced by a plain ``dict``, e.g. by
    ``unittest.mock.patch``) or with :data:`FAST_READ` off, ``os.environ.get`` itself.

    Args:
        name: The variable, e.g. ``"MEMCORE_BOX_BULK"``.
    """
    environ = os.environ
    data = getattr(environ, "_data", None)
    if not FAST_READ or type(data) is not dict:
        return environ.get(name)
    key = _KEYS.get(name)
    if key is None:
        key = _KEYS[name] = environ.encodekey(name)
    raw = data.get(key)
    return None if raw is None else environ.decodevalue(raw)


def switch_on(name: str) -> bool:
    """Return whether the switch ``name`` (an environment variable) is on.

    Args:
        name: The variable, e.g. ``"MEMCORE_BOX_BULK"``.

    Returns:
        ``False`` when it is set to one of :data:`OFF`, else ``True`` (unset included).
    """
    value = environment_value(name)
    return value is None or value.strip().lower() not in OFF


FAST_READ = switch_on("MEMCORE_SWITCH_READ_FAST")
