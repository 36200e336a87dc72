"""memcore-unified-claudecode: Claude Code's memory files (CLAUDE.md files, the auto-memory folder) as a store."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
