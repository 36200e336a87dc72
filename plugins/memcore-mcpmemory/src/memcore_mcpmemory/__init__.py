"""memcore-mcpmemory: the MCP reference memory server's ``memory.jsonl`` knowledge graph as a memcore store.

Open it with ``memcore.open("mcpmemory:./memory.jsonl")``; see docs/formats/mcpmemory.md.
"""

from __future__ import annotations

from memcore_mcpmemory._parse import parse
from memcore_mcpmemory.codec import observations_of, render_observations
from memcore_mcpmemory.provider import McpMemoryProvider

__version__ = "0.1.0"
__all__ = ["McpMemoryProvider", "__version__", "observations_of", "parse", "render_observations"]
