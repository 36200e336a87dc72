"""Run the real ``memcore`` CLI with the test-only ``jsonl-test`` provider registered.

Used as ``python tests/mcp_fixtures/launch.py serve --store jsonl-test:<file> ...``: the
provider is registered on the process-wide plugin manager before the CLI builds its registry,
exactly as an installed plugin's entry point would be.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jsonl_provider

from memcore.cli import main
from memcore.plugins import get_plugin_manager

if __name__ == "__main__":
    get_plugin_manager().register(jsonl_provider, name="jsonl-test")
    main()
