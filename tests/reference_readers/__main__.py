"""Print the reference-reader fidelity table of docs/mapping.md: ``cd tests && python -m reference_readers``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from reference_readers.figures import FORMATS, measure_pair, table


def main() -> None:
    """Measure the 16 source → target pairs in a scratch folder and print the table."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMCORE_STATE_DIR"] = str(Path(tmp) / "state")
        figures = [measure_pair(s, t, Path(tmp) / f"{s}-{t}") for t in FORMATS for s in FORMATS]
    print(table(figures))


main()
