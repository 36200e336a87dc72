"""The rules of a JSON Lines store → diagnostics: unreadable lines and dangling relations."""

from __future__ import annotations

from memcore.models import Diagnostic, Severity
from memcore_jsonl._parse import Snapshot

__all__ = ["check"]


def check(snapshot: Snapshot, name: str) -> list[Diagnostic]:
    """Return the findings of the file ``name``: unreadable lines (errors), dangling relations (warnings)."""
    found = [*snapshot.problems, *(line.problem for line in snapshot.lines if line.problem)]
    known = {entry.id for entry in snapshot.entries()}
    for line in snapshot.lines:
        for relation in line.entry.relations if line.entry is not None else []:
            if relation.resolved and relation.target not in known:
                message = f"relation {relation.type!r} points at {relation.target!r}, which is not in the file"
                found.append(
                    Diagnostic(
                        path=name,
                        line=line.number,
                        code="jsonl.dangling-edge",
                        message=message,
                        severity=Severity.WARNING,
                        entry_id=line.entry.id if line.entry else None,
                    )
                )
    return found
