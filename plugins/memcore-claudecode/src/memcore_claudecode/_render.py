"""Byte-preserving edits of ``MEMORY.md``: one index line set, added or removed; every other line kept.

Claude Code keeps the index in step with its topic files (B.3, B.5 rule 4): a new topic gets a
``- [Title](file.md) — hook`` line at the end, a removed one loses its line, a changed title or
hook rewrites its line in the line's own layout (list marker, separator). Lines that are not
index lines (headings, notes) and lines of other files are left as they are.
"""

from __future__ import annotations

import re
import urllib.parse

from memcore_claudecode._parse import Index, IndexLine

__all__ = ["index_bytes", "remove_line", "set_line"]

_DEFAULT_SEP = " — "


def _link(title: str, target: str) -> str:
    text = re.sub(r"([\[\]\\])", r"\\\1", " ".join(title.split()))
    where = urllib.parse.quote(target, safe="/._-~") if re.search(r"[\s()<>]", target) else target
    return f"[{text}]({where})"


def _render(line: IndexLine) -> str:
    hook = " ".join(line.hook.split())
    sep = (line.sep or _DEFAULT_SEP) if hook else ""
    return f"{line.lead}{_link(line.title, line.target)}{sep}{hook}"


def set_line(index: Index, target: str, title: str, hook: str) -> bool:
    """Give ``target`` the line ``- [title](target) — hook`` (rewritten or appended); return whether it changed."""
    hook = " ".join(hook.split())
    current = index.links.get(target)
    if current is not None:
        if (current.title, current.hook) == (title, hook):
            return False
        line = IndexLine(current.number, current.lead, title, target, current.sep, hook)
        index.lines[current.number - 1] = _render(line)
    else:
        line = IndexLine(len(index.lines) + 1, "- ", title, target, _DEFAULT_SEP, hook)
        index.lines.append(_render(line))
    index.links[target] = line
    index.changed = True
    return True


def remove_line(index: Index, target: str) -> None:
    """Drop the index line of ``target`` (if any); the numbers of later lines move up."""
    current = index.links.pop(target, None)
    if current is None:
        return
    del index.lines[current.number - 1]
    for line in index.links.values():
        if line.number > current.number:
            line.number -= 1
    index.changed = True


def index_bytes(index: Index) -> bytes:
    """Return ``MEMORY.md``'s new bytes (its BOM and line endings kept; a new file gets ``\\n``)."""
    text = "".join(f"{line}\n" for line in index.lines)
    return index.file.encode(text) if index.file is not None else text.encode("utf-8")
