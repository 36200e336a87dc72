"""memcore-jsonl: a JSON Lines memory file, one entry per line (the provider tutorial's finished code)."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
