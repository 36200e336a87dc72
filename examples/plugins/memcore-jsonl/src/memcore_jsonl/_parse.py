"""Bytes → the file as lines: fail-open, every problem named with its line number."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import ValidationError

from memcore.errors import EntryNotFoundError
from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore_jsonl.codec import decode_line

__all__ = ["Line", "Snapshot", "parse"]

_BOM = b"\xef\xbb\xbf"


@dataclass
class Line:
    """One non-blank line: its 1-based ``number`` (0: not written yet), ``text`` without the line
    ending, and the ``entry`` it holds or the ``problem`` that kept it from being read."""

    number: int
    text: str
    entry: MemoryEntry | None = None
    problem: Diagnostic | None = None


@dataclass
class Snapshot:
    """The file as read: its ``raw`` bytes, its non-blank ``lines`` in order, file-level ``problems``,
    and ``dirty``: the lines changed in a write session and are not staged yet."""

    raw: bytes
    lines: list[Line] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    dirty: bool = False

    def entries(self) -> list[MemoryEntry]:
        """Return the entries of the readable lines, in line order."""
        return [line.entry for line in self.lines if line.entry is not None]

    def errors(self) -> list[Diagnostic]:
        """Return every error: file-level ones, then one per unreadable line."""
        line_problems = [line.problem for line in self.lines if line.problem is not None]
        return [d for d in [*self.problems, *line_problems] if d.severity == Severity.ERROR]

    def index_of(self, entry_id: str) -> int:
        """Return the position in :attr:`lines` of the entry ``entry_id``.

        Raises:
            EntryNotFoundError: No readable line holds that id.
        """
        for index, line in enumerate(self.lines):
            if line.entry is not None and line.entry.id == entry_id:
                return index
        raise EntryNotFoundError(f"jsonl: no entry {entry_id!r}")


def parse(raw: bytes, name: str) -> Snapshot:
    """Split ``raw`` into lines and read each; never raises for a bad file.

    A line that is not UTF-8, JSON or an entry, or repeats an earlier id, gets a ``problem``.

    Args:
        raw: The file's bytes.
        name: The file's name (in each diagnostic).
    """
    snapshot = Snapshot(raw=raw)
    seen: set[str] = set()
    for number, chunk in enumerate(raw.removeprefix(_BOM).split(b"\n"), start=1):
        chunk = chunk.removesuffix(b"\r")
        if not chunk.strip():
            continue
        line = _read_line(number, chunk, name)
        if line.entry is not None and line.entry.id in seen:
            message = f"id {line.entry.id!r} is already used by an earlier line"
            line.problem = Diagnostic(path=name, line=number, code="jsonl.duplicate-id", message=message)
            line.entry = None
        elif line.entry is not None:
            seen.add(str(line.entry.id))
        snapshot.lines.append(line)
    return snapshot


def _read_line(number: int, chunk: bytes, name: str) -> Line:
    """Read one non-blank line into an entry, or a line with a problem."""
    line = Line(number=number, text=chunk.decode("utf-8", errors="replace"))
    code, message, column = "", "", None
    try:
        line.text = chunk.decode("utf-8")
        line.entry = decode_line(line.text)
    except UnicodeDecodeError as exc:
        code, message, column = "jsonl.encoding", "not UTF-8; re-save the file as UTF-8", exc.start + 1
    except json.JSONDecodeError as exc:
        code, message, column = "jsonl.json", f"not JSON: {exc.msg}", exc.colno
    except (ValueError, ValidationError) as exc:
        code, message = "jsonl.entry", f"not a memcore entry: {str(exc).splitlines()[0]}"
    if code:
        line.problem = Diagnostic(path=name, line=number, column=column, code=code, message=message)
    return line
