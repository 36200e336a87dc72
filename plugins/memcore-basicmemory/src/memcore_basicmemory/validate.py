"""basic-memory's rules -> :class:`~memcore.models.Diagnostic` (file:line), beyond what the reader reports.

``duplicate-permalink`` (warning: basic-memory gives the later note ``-1``, §4.3), ``no-permalink``
(info: its indexer will rewrite the file, §5.2), ``path-permalink`` (warning: absolute or with a ``..``
segment), ``prose-tail`` (warning: ``- type [[T]] more text``
reads as ``links_to``, §3.2), ``unresolved`` (info: a forward reference). Table: docs/formats/basicmemory.md.
"""

from __future__ import annotations

import re

from memcore.models import Diagnostic, Severity
from memcore_basicmemory._parse import Note, problem

__all__ = ["note_diagnostics"]

_PROSE_TAIL = re.compile(r"^\s*[-*+] (?:[^\s\[\]]+|\"[^\"]+\"|'[^']+') \[\[[^\]]+\]\]\s*(?!\(|$)\S")


def note_diagnostics(note: Note, *, duplicate_of: str | None, unresolved: list[tuple[int, str]]) -> list[Diagnostic]:
    """Return the diagnostics of one note.

    Args:
        note: The parsed note (its reader problems come first).
        duplicate_of: The path of the note that owns this one's ``permalink:``, if another does.
        unresolved: ``(line, target)`` of each relation no note answers to.
    """
    out = list(note.problems)
    warn, info = Severity.WARNING, Severity.INFO
    if duplicate_of is not None:
        why = f"permalink {note.bm_metadata.get('permalink')!r} is also {duplicate_of}'s; basic-memory gives this note"
        out.append(problem(note.path, note.key_line("permalink"), "duplicate-permalink", why + " a '-1' suffix", warn))
    permalink = note.bm_metadata.get("permalink")
    if isinstance(permalink, str) and (permalink.startswith(("/", "~")) or ".." in re.split(r"[/\\]", permalink)):
        why = f"permalink {permalink!r} reads as a path outside the project; kept as the id, never used as a path"
        out.append(problem(note.path, note.key_line("permalink"), "path-permalink", why + ": use a slug", warn))
    if note.state == "present" and "permalink" not in note.bm_metadata:
        why = "no permalink: basic-memory's indexer will rewrite this file to add one"
        out.append(problem(note.path, 1, "no-permalink", why, info))
    in_code = False
    for number, line in enumerate(note.body.split("\n"), start=note.body_line):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        if not in_code and _PROSE_TAIL.match(line):
            why = "text after ']]' makes basic-memory read a links_to link, not a typed relation; use '(context)'"
            out.append(problem(note.path, number, "prose-tail", why, warn))
    for number, target in unresolved:
        why = f"no note has the permalink, title or path {target!r} (a forward reference)"
        out.append(problem(note.path, number, "unresolved", why, info))
    return out
