"""Files of a new, minimal vault (``memcore init --store whitebox:<folder>``)."""

from __future__ import annotations

from pathlib import Path

from memcore.errors import ConflictError
from memcore.storage import ANY_VERSION, LocalStorage

__all__ = ["TEMPLATES", "write_vault"]

TEMPLATES: dict[str, str] = {
    "AGENTS.md": (
        "# WhiteBox vault\n\n"
        "A user-memory vault in WhiteBox 1.0 format, created by memcore.\n\n"
        "- Stable facts: `identity.md`, `working-style.md`, `relationships/`, `projects/`. "
        "Propose edits; do not overwrite.\n"
        "- Observations: append one fenced block per observation to `observations/YYYY-MM.md` "
        "(date, source, tags, confidence, then a one-paragraph body). Never edit existing blocks.\n"
        "- Tags: prefer the Active list in `tags.md`; append new tags under Proposed.\n"
        "- Respect the active scope when `scopes.md` exists.\n"
    ),
    "identity.md": "---\nschema: whitebox/1.0\n---\n\n# Identity\n\n",
    "working-style.md": "---\nschema: whitebox/1.0\n---\n\n# Working style\n\n",
    "tags.md": (
        "---\nschema: whitebox/1.0\n---\n\n# Tags\n\n"
        "## Active\n\n"
        "- `preference` \u2014 likes and dislikes the user stated\n"
        "- `correction` \u2014 the user corrected the agent\n"
        "- `working-style` \u2014 how the user wants to be worked with\n"
        "- `conflict` \u2014 contradicts a stable fact or another observation\n"
        "- `project:<slug>` \u2014 tied to a named project\n"
        "- `relationship:<name>` \u2014 about a named person\n\n"
        "## Proposed\n\n"
    ),
}


def write_vault(root: Path, *, stable_files: bool) -> None:
    """Write a new vault's files into ``root`` (identity.md and working-style.md with ``stable_files``).

    Raises:
        ConflictError: ``root`` already holds a vault (AGENTS.md or tags.md).
    """
    if (root / "AGENTS.md").exists() or (root / "tags.md").exists():
        raise ConflictError(f"whitebox: {root} already holds a vault (AGENTS.md or tags.md exists)")
    storage = LocalStorage(root, label="whitebox", noun="vault")
    storage.make_folder("observations")  # and the vault folder
    skip = set() if stable_files else {"identity.md", "working-style.md"}
    for name, text in TEMPLATES.items():
        if name not in skip:
            storage.write(name, text.encode("utf-8"), expected_version=ANY_VERSION)
