"""The codec: a :class:`~memcore.models.MemoryEntry` ⇄ one line, its ``content_dict()`` as JSON."""

from __future__ import annotations

import json

from memcore.models import MemoryEntry
from memcore.storage import version_token

__all__ = ["decode_line", "encode_entry"]

#: Characters JSON allows raw inside a string that some line splitters treat as line breaks.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def encode_entry(entry: MemoryEntry) -> str:
    """Return ``entry`` as one line of JSON (no newline, no ``version``).

    Non-ASCII text stays readable; U+2028, U+2029 and U+0085 are escaped so that no line
    splitter can cut the line in two.
    """
    text = json.dumps(entry.content_dict(), ensure_ascii=False, separators=(", ", ": "))
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def decode_line(text: str) -> MemoryEntry:
    """Return the entry one line holds, its version the line's :func:`~memcore.storage.version_token`.

    Raises:
        ValueError: Not JSON (``json.JSONDecodeError``), not an object with an ``id``, or not a
            valid entry (``pydantic.ValidationError``).
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not data.get("id"):
        raise ValueError("expected a JSON object with an 'id'")
    entry = MemoryEntry.model_validate(data)
    entry.version = version_token(text)
    return entry
