"""memcore provider for basic-memory projects.

A project is a folder of markdown notes: YAML frontmatter (``title``, ``type``, ``permalink``,
``tags``…), observations ``- [category] text #tag (context)`` and relations
``- relation_type [[Target]]`` in the body. One note is one entry. See docs/formats/basicmemory.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore_basicmemory.provider import BasicMemoryProvider

__version__ = "0.1.0"
__all__ = ["BasicMemoryProvider", "__version__"]

# Imported on first use: loading the plugin entry point (``.plugin``) imports this package, which
# must not import the provider (see memcore._lazy).
__getattr__, __dir__ = lazy_exports(__name__, {"BasicMemoryProvider": "memcore_basicmemory.provider"})
