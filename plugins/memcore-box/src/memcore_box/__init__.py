"""memcore provider for Box-memory workspaces (``box:PATH``).

The provider does all its I/O through a :class:`~memcore_box.storage.Storage`:
:class:`~memcore_box.storage.LocalStorage` for a local folder, the Box cloud storage for Box.
"""

from __future__ import annotations

from memcore_box.provider import CONFIG_FILE, INDEX_FILE, BoxMemoryProvider
from memcore_box.storage import ANY_VERSION, CREATE, Item, LocalStorage, Storage

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
