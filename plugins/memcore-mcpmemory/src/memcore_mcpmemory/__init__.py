"""memcore-mcpmemory: the MCP reference memory server's ``memory.jsonl`` knowledge graph as a memcore store.

Open it with ``memcore.open("mcpmemory:./memory.jsonl")``; see docs/formats/mcpmemory.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore_mcpmemory._parse import parse
    from memcore_mcpmemory.codec import observations_of, render_observations
    from memcore_mcpmemory.provider import McpMemoryProvider

__version__ = "0.1.0"
__all__ = ["McpMemoryProvider", "__version__", "observations_of", "parse", "render_observations"]

# Each name is imported on first use: loading the plugin entry point (``.plugin``) imports this
# package, which must not import the provider (see memcore._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "McpMemoryProvider": "memcore_mcpmemory.provider",
        "observations_of": "memcore_mcpmemory.codec",
        "parse": "memcore_mcpmemory._parse",
        "render_observations": "memcore_mcpmemory.codec",
    },
)
