"""``python -m memcore``: the ``memcore`` command."""

from __future__ import annotations

from memcore.cli import main

if __name__ == "__main__":
    main()
