"""The environment switches that turn memcore's fast paths off, read one way.

Every hand-written fast path has a switch (``MEMCORE_YAML_FAST``, ``MEMCORE_BOX_BULK``, ...;
the list is in docs/performance.md, "Every fast path's switch") so that a benchmark can
measure it against the general path in the same run, and a user can rule it out. A switch is
on unless its variable is set to ``0``, ``false``, ``no`` or ``off`` (any case, spaces around
ignored).
"""

from __future__ import annotations

import os

__all__ = ["OFF", "switch_on"]

#: The values that turn a switch off.
OFF = frozenset({"0", "false", "no", "off"})


def switch_on(name: str) -> bool:
    """Return whether the switch ``name`` (an environment variable) is on.

    Args:
        name: The variable, e.g. ``"MEMCORE_BOX_BULK"``.

    Returns:
        ``False`` when it is set to one of :data:`OFF`, else ``True`` (unset included).
    """
    return os.environ.get(name, "1").strip().lower() not in OFF
