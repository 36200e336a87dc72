"""Byte-preserving edits of a parsed Maka file (pure, no I/O).

Every write is a change of lines (:class:`Edit`) or a whole new text computed from the parsed
:class:`~memcore_maka._parse.Document`: the lines a write does not touch keep their bytes and
their line terminators, and Maka's own blank-line rules are followed where lines are added or
removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memcore.errors import InvalidEntryError, StoreLimitError
from memcore.models import MemoryEntry
from memcore_maka._parse import MAX_BYTES, Document, Section, js_trim, js_trim_end
from memcore_maka.codec import EntryView, RenderedSection, meta_line, render_section, view
from memcore_maka.validate import Decayed

__all__ = ["Edit", "append", "decay", "encoded", "joined", "over_limit", "remove_section", "rewrite", "with_meta"]


@dataclass(frozen=True)
class Edit:
    """One write as a change of lines: ``lines[start:end]`` become ``new`` (terminators ``seps``)."""

    start: int
    end: int
    new: list[str]
    seps: list[str]

    def apply(self, doc: Document) -> str:
        """Return ``doc``'s text with the edit applied (``doc`` itself is not changed)."""
        lines = [*doc.lines[: self.start], *self.new, *doc.lines[self.end :]]
        seps = [*doc.separators[: self.start], *self.seps, *doc.separators[self.end :]]
        return joined(lines, seps)


def joined(lines: list[str], seps: list[str]) -> str:
    """Return the text of ``lines`` with their terminators ``seps``."""
    return "".join(a + b for a, b in zip(lines, seps, strict=True))


def append(doc: Document, header: str, rendered: RenderedSection) -> Edit | str:
    """Return the write that appends ``rendered`` to ``doc``.

    The text is ``trimEnd(file) + blank line + section + newline``; a blank file becomes
    ``header + blank line + section + newline`` (returned as the whole text). As an edit it
    touches only the file's trailing blank lines and its last line with content.
    """
    newline = doc.newline
    block = [f"## {rendered.title}", rendered.meta_text, *rendered.content_lines]
    last = len(doc.lines) - 1
    while last >= 0 and not js_trim_end(doc.lines[last]):
        last -= 1
    if last < 0:
        return header + newline * 2 + newline.join(block) + newline
    new = [js_trim_end(doc.lines[last]), "", *block, ""]
    return Edit(last, len(doc.lines), new, [newline] * (len(new) - 1) + [""])


def rewrite(doc: Document, old: EntryView, entry: MemoryEntry) -> Edit | None:
    """Return the edit that rewrites ``old``'s section as ``entry`` (``None``: no change).

    The edit covers the section only: all of it when the content changed, else the
    heading up to the comment line.
    """
    section = old.section
    rendered = render_section(entry, old)
    if not (rendered.title_changed or rendered.meta_changed or rendered.body_changed):
        return None
    lines, seps = doc.lines, doc.separators
    newline = doc.newline
    if rendered.body_changed:
        keep_from = section.end
        while keep_from - 1 > section.start and not js_trim(lines[keep_from - 1]):
            keep_from -= 1
        shadows = [lines[i] for i in section.shadow_indices]
        heading = f"## {rendered.title}" if rendered.title_changed else lines[section.start]
        new_lines = [heading, rendered.meta_text, *rendered.content_lines, *shadows]
        new_lines += lines[keep_from : section.end]
        new_seps = [newline] * len(new_lines)
        new_seps[-1] = seps[section.end - 1] if section.end == len(lines) else newline
        return Edit(section.start, section.end, new_lines, new_seps)
    end = section.start + 1
    if rendered.meta_changed and section.meta_index is not None:
        end = section.meta_index + 1
    new_lines, new_seps = lines[section.start : end], seps[section.start : end]
    if rendered.meta_changed:
        if section.meta_index is not None:
            new_lines[-1] = rendered.meta_text
        else:
            new_lines.insert(1, rendered.meta_text)
            new_seps.insert(1, newline)
    if rendered.title_changed:
        new_lines[0] = f"## {rendered.title}"
    return Edit(section.start, end, new_lines, new_seps)


def remove_section(doc: Document, section: Section) -> str:
    """Return ``doc``'s text without ``section``, blank lines tidied as Maka does."""
    offsets = [0]
    for line, sep in zip(doc.lines, doc.separators, strict=True):
        offsets.append(offsets[-1] + len(line) + len(sep))
    text = doc.text()
    newline = doc.newline
    before = re.sub(r"(?:\r?\n){3,}\Z", newline * 2, text[: offsets[section.start]])
    after = re.sub(r"\A(?:\r?\n){2,}", newline, text[offsets[section.end] :])
    return js_trim_end(before + after) + newline


def with_meta(doc: Document, old: EntryView, meta: dict[str, str]) -> str:
    """Return ``doc``'s text with ``old``'s comment rewritten as ``meta`` (added under the heading if none)."""
    section = old.section
    lines, seps = list(doc.lines), list(doc.separators)
    text = meta_line(meta, tuple(token for _, token, _ in section.dropped), old.meta)
    if section.meta_index is not None:
        lines[section.meta_index] = text
    else:
        lines.insert(section.start + 1, text)
        seps.insert(section.start + 1, doc.newline)
    return joined(lines, seps)


def decay(doc: Document, now: int, expired: Callable[[EntryView], bool]) -> tuple[str | None, list[Decayed]]:
    """Return ``doc``'s text with every ``expired`` entry archived, and those entries.

    Each archived entry's comment says ``status=archived updatedAt=archivedAt=<now>
    archiveReason=decayTtlMs-expired``; the text is ``None`` when nothing expired.
    """
    archived: list[Decayed] = []
    lines = list(doc.lines)
    for section in doc.entries:
        read = view(doc, section, False)
        if not expired(read) or section.meta_index is None:
            continue
        meta = dict(read.meta)
        meta.update(status="archived", updatedAt=str(now), archivedAt=str(now), archiveReason="decayTtlMs-expired")
        dropped = tuple(token for _, token, _ in section.dropped)
        lines[section.meta_index] = meta_line(meta, dropped, read.meta)
        archived.append(Decayed(read.entry.id or section.id, section.title, section.meta_index, read.meta, now))
    return (joined(lines, list(doc.separators)) if archived else None), archived


def encoded(path: Path, text: str) -> bytes:
    """Return ``text`` as UTF-8; raise :class:`StoreLimitError` over 128 KiB (nothing written)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise InvalidEntryError(
            f"maka: the new text of {path} has a lone surrogate (U+{ord(text[exc.start]):04X}) on line "
            f"{line}: not UTF-8, nothing written"
        ) from None
    if len(data) > MAX_BYTES:
        raise over_limit(path, len(data))
    return data


def over_limit(path: Path, size: int) -> StoreLimitError:
    """The error for a write that would make ``path`` ``size`` bytes (over 128 KiB)."""
    return StoreLimitError(
        f"maka: this write would make {path} {size:,} bytes, over Maka's 128 KiB limit "
        f"({MAX_BYTES:,} bytes); nothing was written. Archive or delete entries first"
    )
