"""basic-memory's rules -> :class:`~memcore.models.Diagnostic` (file:line), beyond what the reader reports.

- ``basicmemory.duplicate-permalink`` (warning): two notes claim one ``permalink:``; basic-memory
  gives the later one ``<permalink>-1`` on its next index (§4.3), memcore reads it so.
- ``basicmemory.no-permalink`` (info): a note without ``permalink:``; basic-memory's indexer will
  rewrite the file to add one (§5.2).
- ``basicmemory.prose-tail`` (warning): ``- type [[Target]] more text`` — basic-memory reads it
  as a ``links_to`` link, not a ``type`` relation (§3.2, #1260); move the prose into a context
  ``(…)`` or another line.
- ``basicmemory.unresolved`` (info): a relation whose target no note answers to (a forward
  reference; it resolves when the note appears).
"""

from __future__ import annotations

import re

from memcore.models import Diagnostic, Severity
from memcore_basicmemory._parse import Note

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
    if duplicate_of is not None:
        out.append(
            Diagnostic(
                path=note.path,
                line=_key_line(note, "permalink"),
                code="basicmemory.duplicate-permalink",
                severity=Severity.WARNING,
                message=f"permalink {note.bm_metadata.get('permalink')!r} is also {duplicate_of}'s; basic-memory "
                "gives this note a '-1' suffix; give it its own permalink",
            )
        )
    if note.state == "present" and "permalink" not in note.bm_metadata:
        out.append(
            Diagnostic(
                path=note.path,
                line=1,
                code="basicmemory.no-permalink",
                severity=Severity.INFO,
                message="no permalink: basic-memory's indexer will rewrite this file to add one",
            )
        )
    in_code = False
    for number, line in enumerate(note.body.split("\n"), start=note.body_line):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        if in_code:
            continue
        if _PROSE_TAIL.match(line):
            out.append(
                Diagnostic(
                    path=note.path,
                    line=number,
                    code="basicmemory.prose-tail",
                    severity=Severity.WARNING,
                    message="text after ']]' makes basic-memory read this as a links_to link, not a typed "
                    "relation; put it in '(context)' or on its own line",
                )
            )
    for number, target in unresolved:
        out.append(
            Diagnostic(
                path=note.path,
                line=number,
                code="basicmemory.unresolved",
                severity=Severity.INFO,
                message=f"no note has the permalink, title or path {target!r} (a forward reference)",
            )
        )
    return out


def _key_line(note: Note, key: str) -> int:
    if note.fm is not None:
        try:
            return int(note.fm.lc.key(key)[0]) + 2
        except (KeyError, TypeError, AttributeError):
            pass
    return 1
