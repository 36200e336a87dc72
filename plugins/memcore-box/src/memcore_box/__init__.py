"""memcore provider for Box-memory workspaces (``box:PATH``).

The provider does all its I/O through a :class:`~memcore.storage.Storage`:
:class:`~memcore.storage.LocalStorage` for a local folder, the Box cloud storage for Box.
"""

from __future__ import annotations

from memcore.storage import ANY_VERSION, CREATE, Item, LocalStorage, Storage
from memcore_box.provider import CONFIG_FILE, INDEX_FILE, BoxMemoryProvider

__all__ = [
    "ANY_VERSION",
    "CONFIG_FILE",
    "CREATE",
    "INDEX_FILE",
    "BoxMemoryProvider",
    "Item",
    "LocalStorage",
    "Storage",
]
