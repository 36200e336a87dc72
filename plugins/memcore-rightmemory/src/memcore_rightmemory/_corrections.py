"""Validators for the two Agent Corrections collections and root ``corrections.md``.

Spec: rightmemory-schema.md "Modules"; reference: reference-notes/rightmemory.md "Corrections
files" (RightMemory's ``corrections.py``): a collection holds at most 15 ``###`` entries, 180
non-empty lines, 16 non-empty lines per entry and 200 characters per line; ``corrections.md``
holds at most 15 ``##`` entries, each with exactly ``### Candidate``, ``### Proposed edit`` and
``### Accepted edit``, in that order, none empty. Fenced lines never count as headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memcore_rightmemory._parse import fenced_lines

__all__ = [
    "CorrectionEntry",
    "agent_correction_entries",
    "validate_agent_corrections",
    "validate_edit_feedback",
]

SECTIONS = ("Candidate", "Proposed edit", "Accepted edit")
MAX_ENTRIES = 15
MAX_ENTRY_LINES = 16
MAX_COLLECTION_LINES = 180
MAX_LINE_LENGTH = 200

_H3 = re.compile(r"^ {0,3}###[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_H23 = re.compile(r"^ {0,3}(#{2,3})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")

Finding = tuple[str, int | None, str]
"""``(code, 1-based line or None, message)``."""

CorrectionEntry = tuple[str, int, int]
"""``(title, first line, last line)`` of one Agent Corrections entry."""


def _unfenced(lines: list[str]) -> Iterator[tuple[int, str]]:
    for number, line, in_code in fenced_lines(lines):
        if not in_code:
            yield number, line


def agent_correction_entries(lines: list[str]) -> list[CorrectionEntry]:
    """Return the entries (``###`` headings outside fences) of one collection."""
    heads = [(m.group(1).strip(), n) for n, line in _unfenced(lines) if (m := _H3.match(line))]
    out: list[CorrectionEntry] = []
    for index, (title, start) in enumerate(heads):
        end = heads[index + 1][1] - 1 if index + 1 < len(heads) else len(lines)
        out.append((title, start, end))
    return out


def validate_agent_corrections(lines: list[str], name: str) -> list[Finding]:
    """Check one Agent Corrections collection against its limits.

    Args:
        lines: The file's lines without terminators.
        name: The file name, for messages.
    """
    found: list[Finding] = []
    entries = agent_correction_entries(lines)
    if len(entries) > MAX_ENTRIES:
        found.append(
            (
                "rm.corrections-entries",
                None,
                f"{name} contains {len(entries)} entries; at most {MAX_ENTRIES} are allowed",
            )
        )
    non_empty = sum(1 for line in lines if line.strip())
    if non_empty > MAX_COLLECTION_LINES:
        found.append(
            (
                "rm.corrections-lines",
                None,
                f"{name} contains {non_empty} non-empty lines; at most {MAX_COLLECTION_LINES} are allowed",
            )
        )
    for title, start, end in entries:
        count = sum(1 for line in lines[start - 1 : end] if line.strip())
        if count > MAX_ENTRY_LINES:
            found.append(
                (
                    "rm.corrections-entry-lines",
                    start,
                    f"correction entry `{title}` contains {count} non-empty lines; "
                    f"at most {MAX_ENTRY_LINES} are allowed",
                )
            )
    long_lines = [(n, len(line)) for n, line in enumerate(lines, start=1) if len(line) > MAX_LINE_LENGTH]
    if long_lines:
        first, length = long_lines[0]
        found.append(
            (
                "rm.corrections-line-length",
                first,
                f"{name} has {len(long_lines)} lines over {MAX_LINE_LENGTH} characters; "
                f"line {first} has {length} characters",
            )
        )
    return found


def validate_edit_feedback(lines: list[str]) -> list[Finding]:
    """Check root ``corrections.md`` (RightMemory Edit Feedback) against its shape.

    Args:
        lines: The file's lines without terminators.
    """
    found: list[Finding] = []
    entries: list[tuple[str, int, list[tuple[str, int]]]] = []
    current: tuple[str, int, list[tuple[str, int]]] | None = None
    for number, line in _unfenced(lines):
        match = _H23.match(line)
        if match is None:
            continue
        title = match.group(2).strip()
        if len(match.group(1)) == 2:
            current = (title, number, [])
            entries.append(current)
        elif current is None:
            found.append(
                ("rm.feedback-orphan-section", number, f"correction section `{title}` appears before any `##` entry")
            )
        else:
            current[2].append((title, number))
    if len(entries) > MAX_ENTRIES:
        found.append(
            ("rm.feedback-entries", None, f"corrections.md contains {len(entries)} entries; at most 15 are allowed")
        )
    for index, (title, first, sections) in enumerate(entries):
        names = [name for name, _ in sections]
        for name, sline in sections:
            if name not in SECTIONS:
                found.append(
                    ("rm.feedback-unexpected-section", sline, f"correction entry `{title}` has unexpected `### {name}`")
                )
        for name in SECTIONS:
            count = names.count(name)
            if count == 0:
                found.append(
                    ("rm.feedback-missing-section", first, f"correction entry `{title}` is missing `### {name}`")
                )
            elif count > 1:
                found.append(
                    ("rm.feedback-repeated-section", first, f"correction entry `{title}` repeats `### {name}`")
                )
        recognized = [name for name in names if name in SECTIONS]
        if all(names.count(name) == 1 for name in SECTIONS) and recognized != list(SECTIONS):
            found.append(
                (
                    "rm.feedback-order",
                    first,
                    f"correction entry `{title}` sections must be ordered as Candidate, Proposed edit, Accepted edit",
                )
            )
        entry_end = entries[index + 1][1] - 1 if index + 1 < len(entries) else len(lines)
        ordered = sorted(sections, key=lambda item: item[1])
        for pos, (name, sline) in enumerate(ordered):
            if name not in SECTIONS or names.count(name) != 1:
                continue
            end = ordered[pos + 1][1] - 1 if pos + 1 < len(ordered) else entry_end
            if not "\n".join(lines[sline:end]).strip():
                found.append(
                    ("rm.feedback-empty-section", sline, f"correction entry `{title}` has empty `### {name}` content")
                )
    return found
