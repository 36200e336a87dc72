"""Files of a new, minimal vault (``memcore init --store whitebox:<folder>``)."""

from __future__ import annotations

from pathlib import Path

from memcore.errors import ConflictError
from memcore.storage import ANY_VERSION, LocalStorage
from memcore_whitebox._parse import _MONTH_FORMAT_LINE, MONTH_FILE
from memcore_whitebox.mapping import SPECIAL_ROOT_FILES

__all__ = ["TEMPLATES", "write_vault", "write_vault_like"]

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


#: The files of a minimal vault (spec "File layout") that hold no entry: a new vault has them.
_REQUIRED_MACHINERY = ("AGENTS.md", "tags.md")


def _month_header(text: str) -> str:
    """Return the lines of a month file before its first observation (title, format line, ``---``)."""
    end = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not _MONTH_FORMAT_LINE.match(stripped):
            break
        end += len(line)
    return text[:end]


def write_vault_like(root: Path, source: Path) -> list[str]:
    """Write a new vault into ``root`` whose machinery files are those of the vault ``source``.

    The root files that hold no entry (:data:`~memcore_whitebox.mapping.SPECIAL_ROOT_FILES`:
    AGENTS.md, README.md, tags.md, scopes.md…) are copied byte for byte, and each monthly
    log of ``source`` starts with the source's own header (title, format line, ``---``), so
    that the observations appended after it are laid out as in the source. A file the
    minimal vault needs (AGENTS.md, tags.md) that ``source`` lacks is memcore's template.
    Only regular files are copied (a symlink is not followed).

    Returns:
        One sentence per template written because ``source`` had no such file.

    Raises:
        ConflictError: ``root`` already holds a vault (AGENTS.md or tags.md).
        OSError: A file cannot be read or written.
    """
    if (root / "AGENTS.md").exists() or (root / "tags.md").exists():
        raise ConflictError(f"whitebox: {root} already holds a vault (AGENTS.md or tags.md exists)")
    storage = LocalStorage(root, label="whitebox", noun="vault")
    storage.make_folder("observations")
    notes: list[str] = []
    for name in sorted(SPECIAL_ROOT_FILES | set(_REQUIRED_MACHINERY)):
        path = source / name
        if path.is_file() and not path.is_symlink():
            storage.write(name, path.read_bytes(), expected_version=ANY_VERSION)
        elif name in _REQUIRED_MACHINERY:
            storage.write(name, TEMPLATES[name].encode("utf-8"), expected_version=ANY_VERSION)
            notes.append(f"whitebox: the source vault has no {name}; memcore's template was written (a vault has one)")
    logs = source / "observations"
    if logs.is_dir() and not logs.is_symlink():
        for path in sorted(logs.iterdir()):
            if MONTH_FILE.match(path.name) and path.is_file() and not path.is_symlink():
                header = _month_header(path.read_bytes().decode("utf-8", "surrogateescape"))
                if header.strip():
                    data = header.encode("utf-8", "surrogateescape")
                    storage.write(f"observations/{path.name}", data, expected_version=ANY_VERSION)
    return notes
