"""WhiteBox's ``observation-parser.ts`` as reference-notes/whitebox.md describes it (notes 3-5, 11).

Observations: the blocks are the matches of ```` /```\\s*\\n([\\s\\S]*?)\\n```/g ```` over the
month file (text outside them is ignored, fence length is not tracked); a block must be
``^---\\n<frontmatter>\\n---\\n<body>$`` or it is skipped; frontmatter is line based: ``key: value``
with key ``[a-zA-Z_]+``, value trimmed with its quotes kept; ``tags`` is an inline list whose
items lose their quotes and control characters (empties dropped); ``kind`` is kept only as
``quote`` / ``inference``; the body is trimmed.

Stable files (identity.md, projects/…): plain markdown with optional YAML frontmatter (the
spec's vault model); the notes name no parser beyond that, so the reading is YAML frontmatter
between the first two ``---`` lines and the markdown after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

_BLOCK = re.compile(r"```\s*\n([\s\S]*?)\n```")
_INNER = re.compile(r"^---\n([\s\S]*?)\n---\n([\s\S]*)$")
_LINE = re.compile(r"^([a-zA-Z_]+):(.*)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_KINDS = ("quote", "inference")
_FRONTMATTER = re.compile(r"\A---\n([\s\S]*?)\n---\n?")


@dataclass
class Observation:
    """One observation as the reference parser returns it.

    Attributes:
        fields: ``key -> value`` of every frontmatter line (trimmed, quotes kept).
        tags: The ``tags`` inline list's items.
        body: The trimmed body.
    """

    fields: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    body: str = ""

    @property
    def kind(self) -> str | None:
        """``quote`` or ``inference``; anything else reads as undefined (``None``)."""
        value = self.fields.get("kind")
        return value if value in _KINDS else None


def parse_tags(value: str) -> list[str]:
    """Read a ``tags`` value: an inline list only (``[a, b]``, ``["a","b"]``, ``['a','b']``)."""
    value = value.strip()
    if not (value.startswith("[") and value.endswith("]")):
        return []
    tags = (_CONTROL.sub("", item.strip().strip("\"'")).strip() for item in value[1:-1].split(","))
    return [tag for tag in tags if tag]


def parse_observations(text: str) -> list[Observation]:
    """Return the observations ``parseObservationsFromFile`` reads from a month file's text, in order."""
    out: list[Observation] = []
    for match in _BLOCK.finditer(text):
        inner = _INNER.match(match.group(1))
        if inner is None:
            continue  # "skips malformed blocks gracefully"
        obs = Observation(body=inner.group(2).strip())
        for line in inner.group(1).split("\n"):
            kv = _LINE.match(line)
            if kv is not None:
                obs.fields[kv.group(1)] = kv.group(2).strip()
        obs.tags = parse_tags(obs.fields.get("tags", ""))
        out.append(obs)
    return out


def parse_stable(text: str) -> tuple[dict[str, Any], str]:
    """Return a stable file's ``(frontmatter, body)``: YAML between the ``---`` lines, the markdown after.

    A file without frontmatter is all body; frontmatter that is not a YAML mapping reads as none.
    """
    text = text.replace("\r\n", "\n").removeprefix("\ufeff")
    found = _FRONTMATTER.match(text)
    if found is None:
        return {}, text
    try:
        data = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return {}, text
    return (data if isinstance(data, dict) else {}), text[found.end() :]
