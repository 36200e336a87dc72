"""Control characters: refused on write, diagnosed on read, one rule for every format.

NUL and the other C0 controls (U+0000-U+001F except tab, LF and CR) and DEL (U+007F) have no
place in a human-readable memory file: editors show them as garbage, ``grep`` treats the file
as binary, and a NUL truncates the text in many tools. Every provider's ``add``/``update``
passes through :func:`check_entry_text` (enforced by :class:`memcore.provider.BaseProvider`),
and every provider's ``validate`` reports such characters in its files with file:line
(:func:`control_char_diagnostics`). Lone surrogates are handled where text is encoded
(:meth:`memcore.storage.TextFile.encode`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from memcore.errors import InvalidEntryError
from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore.switches import switch_on

__all__ = ["CONTROL_CHARS", "check_entry_text", "check_text", "control_char_diagnostics"]

#: Characters refused in any text memcore writes: C0 controls except tab, LF, CR; and DEL.
CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_BYTES = re.compile(b"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_text(value: str, field: str) -> None:
    """Raise if ``value`` holds a control character memcore never writes.

    Args:
        value: The text about to be written.
        field: Its field's name, for the message (``"title"``, ``"tags[2]"``, ``"extra.box.team"``).

    Raises:
        InvalidEntryError: ``value`` holds NUL, another C0 control (not tab/LF/CR) or DEL; the
            message names the field, the character as ``U+XXXX``, its position and the fix.
    """
    match = CONTROL_CHARS.search(value)
    if match is None:
        return
    pos = match.start()
    line = value.count("\n", 0, pos) + 1
    raise InvalidEntryError(
        f"{field} holds the control character U+{ord(match.group()):04X} at character {pos + 1} "
        f"(line {line} of the {field}); memory files are text and never hold NUL, C0 controls "
        "(other than tab, LF, CR) or DEL: remove it or replace it with a visible character "
        "(e.g. a space or an escape like '\\0'); nothing was written"
    )


def _strings(value: Any, field: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield field, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield f"{field} key", key
            yield from _strings(item, f"{field}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{field}[{i}]")


def check_entry_text(entry: MemoryEntry) -> None:
    """Check every string of ``entry`` that a provider may write (see :func:`check_text`).

    Checked: ``id``, ``title``, ``body``, ``tags``, ``source``, ``scope``, ``parent``, the
    relations' types and targets, and every string in ``extra`` (keys and values).

    Raises:
        InvalidEntryError: A field holds a refused control character.
    """
    if switch_on("MEMCORE_TEXT_CHECK_FAST") and _clean(entry):
        return
    for field in ("id", "title", "body", "source", "scope", "parent"):
        value = getattr(entry, field, None)
        if isinstance(value, str):
            check_text(value, field)
    for i, tag in enumerate(entry.tags):
        check_text(tag, f"tags[{i}]")
    for i, rel in enumerate(entry.relations):
        check_text(rel.type, f"relations[{i}].type")
        check_text(rel.target, f"relations[{i}].target")
    for name, value in _strings(entry.extra, "extra"):
        check_text(value, name)


def _clean(entry: MemoryEntry) -> bool:
    """Whether no string :func:`check_entry_text` checks holds a refused character: one search of them all.

    The strings are joined with LF (allowed), so the joined text holds a refused character
    exactly when one of them does. ``False`` sends the entry through the field-by-field
    check, which names the field (or raises what a value that is not a string raises).
    """
    texts: list[Any] = [
        value
        for value in (entry.id, entry.title, entry.body, entry.source, entry.scope, entry.parent)
        if isinstance(value, str)
    ]
    texts += entry.tags
    for rel in entry.relations:
        texts += (rel.type, rel.target)
    _collect(entry.extra, texts)
    try:
        return CONTROL_CHARS.search("\n".join(texts)) is None
    except TypeError:
        return False


def _collect(value: Any, out: list[Any]) -> None:
    """Append the strings :func:`_strings` yields for ``value`` to ``out`` (without their field names)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                out.append(key)
            _collect(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, out)


def control_char_diagnostics(data: bytes | str, path: str, *, code: str = "control-char") -> list[Diagnostic]:
    """Report each line of a file holding a refused control character.

    The finding is a warning: the file still reads (fail open), and memcore keeps the bytes it
    did not write, so an edit elsewhere in the file neither drops nor multiplies the character;
    memcore itself never writes a new one (:func:`check_entry_text`).

    Args:
        data: The file's bytes (or text).
        path: The file's path as diagnostics name it (relative to the store root).
        code: The diagnostic code.

    Returns:
        One warning per line that holds such a character, with line and column, or ``[]``.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _CONTROL_BYTES.search(raw) is None:
        return []
    out: list[Diagnostic] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        match = _CONTROL_BYTES.search(line.rstrip(b"\r"))
        if match is None:
            continue
        column = len(line[: match.start()].decode("utf-8", "replace")) + 1
        out.append(
            Diagnostic(
                path=path,
                line=number,
                column=column,
                code=code,
                severity=Severity.WARNING,
                message=(
                    f"the file holds the control character U+{match.group()[0]:04X} (line {number}, "
                    f"column {column}); memory files never hold NUL, C0 controls (other than tab, "
                    "LF, CR) or DEL: remove it in an editor, or `tr -d '\\000'` for NULs"
                ),
            )
        )
    return out
