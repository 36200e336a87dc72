"""A new RightMemory root: ``MEMORY.md`` and ``PURSUITS.md``, empty or shaped like another root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore_rightmemory._parse import ANCHOR_CANDIDATE_RE
from memcore_rightmemory.validate import FOCUS_PLACEHOLDER

__all__ = ["EMPTY_MEMORY", "EMPTY_PURSUITS", "init_root", "preamble", "root_files_like"]

#: memcore's new MEMORY.md and PURSUITS.md (the reference's bootstrap writes a Focus section)
EMPTY_MEMORY = "# Memory\n"
EMPTY_PURSUITS = f"# Pursuits\n\n## Focus\n\n{FOCUS_PLACEHOLDER}\n"


def preamble(text: str) -> str | None:
    """Return the text of a graph file before its first anchored heading, ``None`` if it holds items.

    The preamble is the file's title and prose (``# Memory``, a starter-template notice). It
    is ``None`` when it holds list items (Focus references, stray nodes), which name graph
    items: those are not copied into a store that does not hold the items yet.
    """
    lines = text.splitlines(keepends=True)
    end = 0
    for line in lines:
        if ANCHOR_CANDIDATE_RE.match(line):
            break
        if line.lstrip().startswith(("- ", "* ", "+ ")):
            return None
        end += len(line)
    head = text[:end].rstrip("\r\n")
    return head + "\n" if head.strip() else None


def root_files_like(source: Path) -> tuple[dict[str, str], list[str]]:
    """Return ``({file name: text}, notes)`` of a new root shaped like the root ``source``.

    Each of MEMORY.md and PURSUITS.md starts with the source file's own :func:`preamble`
    (its title, prose, and a Focus section only where the source has one); a file the source
    lacks, or whose preamble names graph items, starts as memcore's (:data:`EMPTY_MEMORY`,
    :data:`EMPTY_PURSUITS`), and a note says so.
    """
    files: dict[str, str] = {}
    notes: list[str] = []
    for name, default in (("MEMORY.md", EMPTY_MEMORY), ("PURSUITS.md", EMPTY_PURSUITS)):
        path = source / name
        found = None
        if path.is_file() and not path.is_symlink():
            found = preamble(path.read_bytes().decode("utf-8", "replace"))
        if found is None:
            files[name] = default
            why = "has none" if not path.is_file() else "names graph items before its first heading"
            notes.append(f"rightmemory: {name} of the source {why}; it starts as memcore's new {name}")
        else:
            files[name] = found
    return files, notes


def init_root(store: Any, files: dict[str, str], notes: list[str] | None = None) -> list[str]:
    """Create the folder of ``store`` (an unopened provider) and write ``files`` that do not exist yet.

    Returns:
        ``notes`` (``[]`` when not given), for :meth:`~memcore.provider.BaseProvider.init_store_like`.

    Raises:
        OSError: The folder cannot be created or a file written.
    """
    store.storage.make_folder("")
    with store.session("init") as session:
        for name, text in files.items():
            if not session.storage.exists(name):
                session.write(name, text.encode("utf-8"))
    return notes or []
