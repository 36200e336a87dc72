"""Maka's ``local-memory.ts`` parser (HEAD f19eede) as reference-notes/maka.md describes it.

Fail-open rules: more than 131072 UTF-8 bytes → safe mode, no entries; lines split on
``\\r?\\n``; only ``^##\\s+(.+?)\\s*$`` starts an entry (text before the first is ignored); a line
whose trimmed text fully matches ``^<!--\\s*maka-memory:\\s*(.*?)\\s*-->$`` is metadata (the
first in a section is authoritative, later ones are still removed from the content); the
comment's whitespace-separated ``k=v`` tokens with key ``^[a-zA-Z][a-zA-Z0-9_-]*$`` and value
≤ 128 characters; an entry whose trimmed content is empty is dropped. Shown fields: id (else the
title's slug), origin (manual / extracted / imported, else unknown), status (missing → active,
else one of five or unknown), scope (missing → workspace), tags (``parseTags``), createdAt /
updatedAt (finite numbers ≥ 0, unix milliseconds).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

MAX_BYTES = 131072
_HEADING = re.compile(r"^##\s+(.+?)\s*$")
_META = re.compile(r"^<!--\s*maka-memory:\s*(.*?)\s*-->$")
_KEY = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")
_TAG_OTHER = re.compile(r"[^a-z0-9\u4e00-\u9fa5_-]")
_SLUG_OTHER = re.compile(r"[^a-z0-9\u4e00-\u9fa5]+")
ORIGINS = ("manual", "extracted", "imported")
STATUSES = ("draft", "review_required", "active", "archived", "rejected")


@dataclass
class MakaEntry:
    """One entry as Maka's parser shows it.

    Attributes:
        title: The heading text.
        meta: The authoritative comment's ``key -> value`` pairs (``None``: no comment).
        content: The section's lines without metadata comments, joined and trimmed.
    """

    title: str
    meta: dict[str, str] | None = None
    content: str = ""
    lines: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        """``id=``, else the title's slug (≤ 48 characters, ``memory-entry`` when empty)."""
        given = (self.meta or {}).get("id")
        return given if given else slug(self.title)

    @property
    def origin(self) -> str:
        """``origin=`` when manual / extracted / imported, else ``unknown``."""
        value = (self.meta or {}).get("origin")
        return value if value in ORIGINS else "unknown"

    @property
    def status(self) -> str:
        """``status=``: missing → active; one of the five statuses, else unknown."""
        value = (self.meta or {}).get("status")
        if value is None:
            return "active"
        return value if value in STATUSES else "unknown"

    @property
    def scope(self) -> str:
        """``scope=`` as written; missing → ``workspace``."""
        return (self.meta or {}).get("scope") or "workspace"

    @property
    def tags(self) -> list[str]:
        """``tags=`` through ``parseTags``."""
        return parse_tags((self.meta or {}).get("tags"))

    def time(self, key: str) -> float | None:
        """``createdAt=`` / ``updatedAt=`` in unix milliseconds when a finite number ≥ 0."""
        raw = (self.meta or {}).get(key)
        if raw is None:
            return None
        try:
            number = float(raw)
        except ValueError:
            return None
        return number if math.isfinite(number) and number >= 0 else None


def slug(title: str) -> str:
    """The id fallback: lowercase, other runs → ``-``, trimmed, ≤ 48 characters, ``memory-entry`` if empty."""
    value = _SLUG_OTHER.sub("-", title.lower()).strip("-")[:48]
    return value or "memory-entry"


def parse_tags(raw: str | None) -> list[str]:
    """``parseTags``: CSV, lowercased, other characters → ``-``, ≤ 32 characters each, ≤ 8, deduplicated."""
    out: list[str] = []
    for item in (raw or "").split(","):
        tag = _TAG_OTHER.sub("-", item.strip().lower())[:32]
        if tag and tag not in out:
            out.append(tag)
    return out[:8]


def parse_meta(body: str) -> dict[str, str]:
    """The pairs of one comment: tokens with ``=`` not first, a valid key, a value ≤ 128 characters."""
    out: dict[str, str] = {}
    for token in body.split():
        key, sep, value = token.partition("=")
        if sep and key and _KEY.match(key) and len(value) <= 128:
            out[key] = value
    return out


def parse(text: str) -> list[MakaEntry]:
    """Return the entries Maka shows for a memory file's text (``[]`` in safe mode or when empty)."""
    if len(text.encode("utf-8")) > MAX_BYTES or not text.strip():
        return []
    entries: list[MakaEntry] = []
    current: MakaEntry | None = None
    for line in re.split(r"\r?\n", text):
        heading = _HEADING.match(line)
        if heading is not None:
            current = MakaEntry(title=heading.group(1))
            entries.append(current)
            continue
        if current is None:
            continue
        meta = _META.match(line.strip())
        if meta is not None:
            if current.meta is None:
                current.meta = parse_meta(meta.group(1))
            continue
        current.lines.append(line)
    for entry in entries:
        entry.content = "\n".join(entry.lines).strip()
    return [e for e in entries if e.content]
