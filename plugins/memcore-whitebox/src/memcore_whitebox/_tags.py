"""tags.md: the vault's tag registry (spec "Tags").

``## Active`` and ``## Proposed`` sections hold list items ``- `tag` — description``. A tag in
neither list is appended to Proposed as ``- `tag` — <description> (status: proposed)``; nothing
is ever deleted or renamed. Registry items with a ``<placeholder>`` (``relationship:<name>``)
match any value in that position, so ``relationship:alex`` is registered by
``relationship:<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memcore.errors import ParseError
from memcore.storage import TextFile, WriteSession

__all__ = ["register_tags", "stage_tags", "TagRegistry", "append_proposed", "parse_tags"]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*[-*+]\s+`([^`]+)`")
_PLACEHOLDER = re.compile(r"<[^<>]*>")


@dataclass
class TagRegistry:
    """Tags listed in tags.md.

    Attributes:
        active: Tags under ``## Active``, in order.
        proposed: Tags under ``## Proposed``, in order.
        lines: Tag -> 1-based line where it is listed.
    """

    active: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    _patterns: list[re.Pattern[str]] = field(default_factory=list, repr=False)

    def knows(self, tag: str) -> bool:
        """Return whether ``tag`` is listed (as written, or through a ``<placeholder>``)."""
        if tag in self.lines:
            return True
        return any(p.fullmatch(tag) for p in self._patterns)


def parse_tags(text: str) -> TagRegistry:
    """Parse tags.md text. Unknown sections and lines are ignored."""
    reg = TagRegistry()
    section: str | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        h = _HEADING.match(line)
        if h is not None:
            title = h.group(2).strip().lower()
            section = title if len(h.group(1)) == 2 and title in {"active", "proposed"} else None
            continue
        if section is None:
            continue
        m = _ITEM.match(line)
        if m is None:
            continue
        tag = m.group(1).strip()
        (reg.active if section == "active" else reg.proposed).append(tag)
        reg.lines.setdefault(tag, number)
        if _PLACEHOLDER.search(tag):
            parts = _PLACEHOLDER.split(tag)
            reg._patterns.append(re.compile(r"[^\s`]+".join(re.escape(p) for p in parts)))
    return reg


def registrable(tag: str) -> bool:
    """Return whether ``tag`` can be written as a tags.md item (no backtick, no line break)."""
    return bool(tag) and "`" not in tag and "\n" not in tag and "\r" not in tag


def append_proposed(text: str, items: list[tuple[str, str]]) -> str:
    """Return tags.md text with ``items`` (tag, description) appended under ``## Proposed``.

    Lines are added after the last non-blank line of the Proposed section (before the next
    heading), or in a new ``## Proposed`` section at the end. Nothing else changes.
    """
    if not items:
        return text
    new_lines = [f"- `{tag}` \u2014 {desc} (status: proposed)" for tag, desc in items]
    lines = text.split("\n")
    start = None
    for i, line in enumerate(lines):
        h = _HEADING.match(line)
        if h is not None and len(h.group(1)) == 2 and h.group(2).strip().lower() == "proposed":
            start = i
            break
    if start is None:
        body = text.rstrip("\n")
        sep = "\n\n" if body else ""
        return body + sep + "## Proposed\n\n" + "\n".join(new_lines) + "\n"
    end = len(lines)
    for j in range(start + 1, len(lines)):
        h = _HEADING.match(lines[j])
        if h is not None and len(h.group(1)) <= 2:
            end = j
            break
    last = start
    for j in range(start + 1, end):
        if lines[j].strip():
            last = j
    insert = new_lines if last != start else ["", *new_lines]
    return "\n".join([*lines[: last + 1], *insert, *lines[last + 1 :]])


def register_tags(text: str, groups: list[tuple[list[str], str]]) -> tuple[str, TagRegistry]:
    """Return tags.md ``text`` with the tags it does not know listed under Proposed, and its parse.

    Args:
        text: tags.md as it is.
        groups: ``(tags, source)`` of each add, in order; a new tag is described as
            ``first used by <source>`` of the first add that used it, so the text ends as if
            the adds had registered their tags one by one.
    """
    reg = parse_tags(text)
    for tags, source in groups:
        new: list[tuple[str, str]] = []
        for tag in tags:
            if registrable(tag) and not reg.knows(tag) and tag not in {t for t, _ in new}:
                new.append((tag, f"first used by {source.replace(chr(10), ' ')}"))
        if new:
            text = append_proposed(text, new)
            reg = parse_tags(text)
    return text, reg


def stage_tags(
    session: WriteSession, groups: list[tuple[list[str], str]], seen: tuple[bytes, TagRegistry] | None
) -> tuple[bytes, TagRegistry] | None:
    """Stage tags.md with the tags of ``groups`` it does not know (spec "Tags"); see :func:`register_tags`.

    Args:
        session: The write session (tags.md is read from it and staged in it).
        groups: ``(tags, source)`` of each add, in order.
        seen: tags.md as last read and its parse: when unchanged and knowing every tag, nothing
            is parsed or staged.

    Returns:
        tags.md's bytes as staged (or read) and its parse, for ``seen`` next time.
    """
    data = session.read("tags.md") if any(tags for tags, _ in groups) else None
    if data is None:
        return seen
    if (
        seen is not None
        and data == seen[0]
        and all(not registrable(t) or seen[1].knows(t) for tags, _ in groups for t in tags)
    ):
        return seen  # every tag is listed already: nothing to write
    try:
        tf = TextFile.decode(data, path="tags.md")
    except ParseError:
        return seen
    text, reg = register_tags(tf.text, groups)
    if text != tf.text:
        data = tf.encode(text)
        session.write("tags.md", data)
    return data, reg
