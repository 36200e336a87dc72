"""Frontmatter values and body text -> a note's bytes; an existing note changes only where it must.

A new note is written as basic-memory's ``write_note`` writes one (basic-memory.md §2.3, §5.1):
``---\\n<block YAML>---\\n\\n<body>`` (``---\\n<yaml>---\\n`` for an empty body), keys in
``title, type, permalink, tags`` order, block lists, UTF-8 without BOM, LF. An existing note
keeps the text of every frontmatter key whose value did not change (:meth:`YAMLWriter.patch`),
its fences, and its body bytes when the body did not change; its BOM and line endings stay.
"""

from __future__ import annotations

from typing import Any

from memcore.frontmatter import FLUSH, to_plain
from memcore.mapping import parse_iso_time as parse_time
from memcore.storage import TextFile
from memcore_basicmemory._parse import Note, parse_tags
from memcore_basicmemory.mapping import KEY_ORDER

__all__ = ["render", "render_new"]


def render_new(meta: dict[str, Any], body: str) -> bytes:
    """Return the bytes of a new note."""
    yaml_text = FLUSH.dump_mapping(meta)
    return f"---\n{yaml_text}---\n{chr(10) if body else ''}{body}".encode()


def _same(key: str, old: Any, new: Any) -> bool:
    """Whether an old frontmatter value reads as ``new`` (then its written text is kept)."""
    if to_plain(new) == old:
        return True
    if key == "tags":
        return bool(parse_tags(old) == to_plain(new))
    if key in ("created", "modified"):
        return parse_time(old) is not None and bool(parse_time(old) == parse_time(new))
    return False


def render(note: Note, meta: dict[str, Any], body: str, old_body: str) -> bytes:
    """Return ``note`` (writable) rewritten with ``meta`` and ``body``; ``note.raw`` when nothing changed.

    Values equal to the old ones keep their written text; the body keeps its bytes when it equals
    ``old_body`` (the old file's body after the separator line).
    """
    old = note.plain
    merged: dict[str, Any] = {}
    for key, value in meta.items():
        merged[key] = note.fm[key] if key in old and note.fm is not None and _same(key, old[key], value) else value
    if note.state == "absent" and not merged:
        return note.raw if body == old_body else note.file.encode(body)
    if note.state == "present" and note.fm is not None and note.yaml_text is not None:
        if to_plain(merged) == old and list(merged) == list(old):
            head = note.head
        else:
            head = "---\n" + FLUSH.patch(note.yaml_text, note.fm, merged, KEY_ORDER + tuple(meta)) + "---\n"
    else:
        head = "---\n" + FLUSH.dump_mapping(merged) + "---\n"
    rest = note.body if note.state == "present" and body == old_body else (("\n" if body else "") + body)
    return note.file.encode(head + rest) if note.file.text else TextFile(text="").encode(head + rest)
