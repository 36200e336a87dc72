"""memcore provider for Box-memory workspaces (``box:PATH``).

The provider does all its I/O through a :class:`~memcore.storage.Storage`:
:class:`~memcore.storage.LocalStorage` for a local folder, the Box cloud storage for Box.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
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

# Each name is imported on first use: loading the plugin entry point (``.plugin``) imports this
# package, which must not import the provider (see memcore._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ANY_VERSION": "memcore.storage",
        "CREATE": "memcore.storage",
        "Item": "memcore.storage",
        "LocalStorage": "memcore.storage",
        "Storage": "memcore.storage",
        "CONFIG_FILE": "memcore_box.provider",
        "INDEX_FILE": "memcore_box.provider",
        "BoxMemoryProvider": "memcore_box.provider",
    },
)
