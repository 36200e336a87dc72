"""Writing a body's fenced code so the WhiteBox reference parser reads every block.

The reference parser finds observations with ```` /```\\s*\\n([\\s\\S]*?)\\n```/g ```` (reference
notes 3 and 5): the first line of a body that starts with three backticks ends the observation,
whatever the fence around it, and the rest of the file is then read out of step (the blocks
after it are lost). The reference writer's four-backtick fence does not help.

memcore writes such a body so that no line of it starts with a backtick, and renders the same
in CommonMark ("Fenced code blocks": a fence is three or more backticks *or tildes*; the
closing fence is of the same character and at least as long):

- a backtick fence line of a code block (opening or closing, up to three spaces in) is written
  with tildes of the same length (longer when the block's content holds a tilde fence line
  that would close it early): ```` ```python ```` -> ``~~~python``;
- any other line starting with backticks (a line of inline code; a code line inside a code
  block) is written after one space. Inline code renders the same (a paragraph's leading
  spaces are not shown); a code line inside a code block is shown with that space, which
  the migration report lists (:mod:`memcore_whitebox.reference`).

Each changed line's original text is kept in the block's ``memcore:`` object (``"fences"``:
line index in the trimmed body -> original line), so memcore reads the body back exactly.
"""

from __future__ import annotations

import re

__all__ = ["decode_fences", "encode_fences"]

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


def _fence(line: str) -> tuple[str, str, int, str] | None:
    """Return ``(indent, char, length, info)`` when ``line`` is a CommonMark fence line."""
    m = _FENCE.match(line)
    if m is None:
        return None
    indent, run, info = m.groups()
    if run[0] == "`" and "`" in info:
        return None
    return indent, run[0], len(run), info


def _blocks(lines: list[str]) -> list[tuple[int, int | None, str, int]]:
    """Return the fenced code blocks of ``lines``: ``(open index, close index or None, char, length)``."""
    out: list[tuple[int, int | None, str, int]] = []
    i = 0
    while i < len(lines):
        opened = _fence(lines[i])
        if opened is None:
            i += 1
            continue
        _, char, length, _ = opened
        close: int | None = None
        for j in range(i + 1, len(lines)):
            f = _fence(lines[j])
            if f is not None and f[1] == char and f[2] >= length and not f[3].strip():
                close = j
                break
        out.append((i, close, char, length))
        if close is None:
            break
        i = close + 1
    return out


def encode_fences(body: str) -> tuple[str, dict[str, str]]:
    """Return ``body`` written so no line starts with a backtick, and the lines it changed.

    Args:
        body: The trimmed body.

    Returns:
        ``(encoded body, {line index as text: original line})``; the body itself and ``{}``
        when no line starts with a backtick.
    """
    if "`" not in body:
        return body, {}
    lines = body.split("\n")
    if not any(line.lstrip(" ").startswith("```") for line in lines):
        return body, {}
    changed: dict[str, str] = {}
    content: set[int] = set()
    for start, close, char, length in _blocks(lines):
        end = len(lines) if close is None else close
        content.update(range(start + 1, end))
        if char != "`":
            continue
        tildes = max([length, *(f[2] + 1 for k in range(start + 1, end) if (f := _fence(lines[k])) and f[1] == "~")])
        for k in (start,) if close is None else (start, close):
            indent, _, _, info = _fence(lines[k]) or ("", "`", length, "")
            changed[str(k)] = lines[k]
            lines[k] = f"{indent}{'~' * tildes}{info}"
    for k, line in enumerate(lines):
        if line.startswith("```") and str(k) not in changed:
            changed[str(k)] = line
            lines[k] = " " + line
    return "\n".join(lines), changed


def decode_fences(body: str, changed: object) -> str:
    """Return the body :func:`encode_fences` was given (lines edited since are left as they are).

    Args:
        body: The body as read from the block (trimmed).
        changed: The ``"fences"`` value of the block's ``memcore:`` object.
    """
    if not isinstance(changed, dict) or not changed:
        return body
    lines = body.split("\n")
    for key, original in changed.items():
        if not (isinstance(key, str) and key.isdigit() and isinstance(original, str)):
            continue
        k = int(key)
        if k >= len(lines):
            continue
        line = lines[k]
        fence = _fence(line)
        if line == " " + original or (fence is not None and fence[1] == "~" and _fence(original) is not None):
            lines[k] = original
    return "\n".join(lines)
