"""memcore provider for basic-memory projects.

A project is a folder of markdown notes: YAML frontmatter (``title``, ``type``, ``permalink``,
``tags``…), observations ``- [category] text #tag (context)`` and relations
``- relation_type [[Target]]`` in the body. One note is one entry. See docs/formats/basicmemory.md.
"""

from __future__ import annotations

from memcore_basicmemory.provider import BasicMemoryProvider

__version__ = "0.1.0"
__all__ = ["BasicMemoryProvider", "__version__"]
