"""memcore-jsonl: a memcore provider for a JSON Lines file, one entry per line.

The finished code of the documentation's "Write your own provider" tutorial. The provider is
:class:`memcore_jsonl.provider.JsonlProvider` (format name ``jsonl``, store URL
``jsonl:path/to/memory.jsonl``); memcore finds it through the ``memcore`` entry-point group.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
