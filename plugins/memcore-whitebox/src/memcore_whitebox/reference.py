"""The WhiteBox reference parser's reading of an observation file, and how it differs from memcore's.

:func:`reference_observations` applies ``parseObservationsFromFile``'s rules as the reference
notes describe them (notes 3-5): blocks are the matches of ```` /```\\s*\\n([\\s\\S]*?)\\n```/g ````;
a block must be ``---``, ``key: value`` lines, ``---`` and the body, else it is skipped; a line's
key is ``[a-zA-Z_]+`` and its value is trimmed with its quotes kept; ``tags`` is an inline list
whose items lose their quotes and control characters; ``kind`` is kept only as ``quote`` or
``inference``; the body is trimmed.

:func:`reference_notes` compares that reading with the entry memcore reads from the same block
(which applies its ``memcore:`` object: the quoted values' text, the fence lines of
:mod:`memcore_whitebox._fences`) and lists every field the reference shows otherwise.
:func:`kind_note` adds the entry type: WhiteBox's is the file's layer (an observation in
``observations/``, a stable fact at the root, …), so a kind memcore keeps in ``memcore:`` is
one the reference does not show.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, cast

from memcore.errors import ParseError
from memcore.models import FidelityNote, Kind, MemoryEntry
from memcore.storage import TextFile
from memcore.switches import switch_on
from memcore_whitebox._parse import numbered_blocks
from memcore_whitebox.mapping import V11_KEYS, kind_for_path

if TYPE_CHECKING:
    from memcore_whitebox.provider import WhiteBoxProvider

__all__ = [
    "READER",
    "MonthReading",
    "ReferenceObservation",
    "WhiteBoxReference",
    "kind_note",
    "reference_notes",
    "reference_observations",
]

#: The reference reader, as WhiteBox's sources name it.
READER = "observation-parser.ts"
_BLOCK = re.compile(r"```\s*\n([\s\S]*?)\n```")
_INNER = re.compile(r"^---\n([\s\S]*?)\n---\n([\s\S]*)$")
_LINE = re.compile(r"^([a-zA-Z_]+):(.*)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_KINDS = frozenset({"quote", "inference"})


@dataclass
class ReferenceObservation:
    """One observation as the reference parser reads it.

    Attributes:
        start: Offset of the match (its three backticks) in the file text.
        fields: ``key -> value`` as the reference keeps them (trimmed, quotes kept).
        tags: The ``tags`` inline list's items.
        body: The trimmed body.
    """

    start: int
    fields: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    body: str = ""


def _tags(value: str) -> list[str]:
    value = value.strip()
    if not (value.startswith("[") and value.endswith("]")):
        return []
    out = []
    for item in value[1:-1].split(","):
        tag = _CONTROL.sub("", item.strip().strip("\"'")).strip()
        if tag:
            out.append(tag)
    return out


def reference_observations(text: str) -> list[ReferenceObservation]:
    """Return the observations the reference parser reads from ``text``, in file order.

    :func:`_matches` finds the blocks and :func:`_observation` reads each (the same answers as
    the reference's regular expressions, in fewer steps); ``MEMCORE_WHITEBOX_REFERENCE_SCAN=0``
    applies the expressions themselves (:func:`_regex_observations`).
    """
    if not switch_on("MEMCORE_WHITEBOX_REFERENCE_SCAN"):
        return _regex_observations(text)
    out: list[ReferenceObservation] = []
    for start, inner in _matches(text):
        obs = _observation(start, inner)
        if obs is not None:
            out.append(obs)
    return out


def _regex_observations(text: str) -> list[ReferenceObservation]:
    """:func:`reference_observations` by the reference's regular expressions, line by line."""
    out: list[ReferenceObservation] = []
    for match in _BLOCK.finditer(text):
        inner = _INNER.match(match.group(1))
        if inner is None:
            continue
        obs = ReferenceObservation(start=match.start(), body=inner.group(2).strip())
        for line in inner.group(1).split("\n"):
            kv = _LINE.match(line)
            if kv is not None:
                obs.fields[kv.group(1)] = kv.group(2).strip()
        obs.tags = _tags(obs.fields.get("tags", ""))
        if obs.fields.get("kind") not in _KINDS:
            obs.fields.pop("kind", None)
        out.append(obs)
    return out


_SPACE = re.compile(r"\s*")
_LINES = re.compile(r"^([a-zA-Z_]+):(.*)$", re.M)


def _matches(text: str) -> Iterator[tuple[int, str]]:
    r"""Yield ``(start, group 1)`` of each match of :data:`_BLOCK` in ``text``, as ``finditer`` finds them.

    A match starts at three backticks; ``\s*\n`` takes the whitespace after them up to its last
    line break (the greedy ``\s*`` gives back the least it must); the lazy group then ends at
    the first line break followed by three backticks after that. Only when there is none can an
    earlier line break of the whitespace start the group: the one before its last, when three
    backticks follow the last (the group then ends at the last). The next search starts where
    the match ended, or one character on when no match starts here.
    """
    at = text.find("```")
    while at >= 0:
        space = _SPACE.match(text, at + 3)
        assert space is not None  # \s* matches anywhere
        white_end = space.end()
        last = text.rfind("\n", at + 3, white_end)
        found = -1
        if last >= 0:
            group = last + 1
            end = text.find("\n```", group)
            if end >= 0:
                found = end
            elif text.startswith("```", last + 1):
                before = text.rfind("\n", at + 3, last)
                if before >= 0:
                    group, found = before + 1, last
        if found >= 0:
            yield at, text[group:found]
            at = text.find("```", found + 4)
        else:
            at = text.find("```", at + 1)


def _observation(start: int, inner: str) -> ReferenceObservation | None:
    r"""The reference's reading of one block's text ``inner`` (:data:`_INNER`, :data:`_LINE`), or ``None``.

    :data:`_INNER`'s lazy frontmatter ends at the first ``\n---\n`` after the opening ``---\n``;
    the body is the rest. A frontmatter line's key and value are :data:`_LINE`'s, a later line
    of a key replacing an earlier one.
    """
    if not inner.startswith("---\n"):
        return None
    close = inner.find("\n---\n", 4)
    if close < 0:
        return None
    fields = {key: value.strip() for key, value in _LINES.findall(inner, 4, close)}
    tags = fields.get("tags")
    if fields.get("kind") not in _KINDS:
        fields.pop("kind", None)
    return ReferenceObservation(
        start=start,
        fields=fields,
        tags=_tags(tags) if tags else [],
        body=inner[close + 5 :].strip(),
    )


def _note(name: str, kept: object, shown: object, why: str) -> FidelityNote:
    return FidelityNote(field=name, kept=kept, shown=shown, reader=READER, why=why)


def _body_why(kept: str, shown: str) -> str:
    if len(shown) < len(kept) and kept.startswith(shown):
        return "the reference parser ends the block at the first line starting with three backticks"
    if any(line.startswith(" ```") for line in shown.split("\n")):
        return "a line starting with three backticks is written after one space"
    if "~~~" in shown and "```" in kept:
        return "a backtick code fence is written with tildes (the same code block in CommonMark)"
    return "the reference parser reads the block's text as written"


#: The ``kind`` note of each (kind kept, kind shown): a copy of it is each entry's note.
_KIND_NOTES: dict[tuple[Kind, Kind], FidelityNote] = {}


def kind_note(entry: MemoryEntry, rel: str) -> list[FidelityNote]:
    """Return a ``kind`` note when ``entry``'s kind is not the one the layer of file ``rel`` gives."""
    shown = Kind.OBSERVATION if rel.startswith("observations/") else kind_for_path(rel)
    if entry.kind is shown:
        return []
    note = _KIND_NOTES.get((entry.kind, shown))
    if note is None:
        why = f"WhiteBox's entry type is the file's layer ({shown.value}); memcore keeps {entry.kind.value} in memcore:"
        note = _KIND_NOTES[(entry.kind, shown)] = _note("kind", entry.kind.value, shown.value, why)
    return [note.model_copy()]  # its fields are strings: a shallow copy is the entry's own note


def reference_notes(entry: MemoryEntry, text: str, rel: str, number: int) -> list[FidelityNote]:
    """Return each field the reference parser reads otherwise than memcore for observation ``number``.

    Args:
        entry: The entry as memcore reads it (``<rel>#<number>``).
        text: The month file's text.
        rel: The file's path in the vault.
        number: The observation's number in the file (from 1).

    Returns:
        Notes for ``body``, ``source``, ``tags`` and ``created_at`` (the ``date`` line) and the
        v1.1 ``extra.whitebox`` keys; one ``"*"`` note when the reference reads no observation
        at this block (a block before it swallowed it).
    """
    del rel  # the block is found by its number in the text
    return MonthReading(text).notes(entry, number)


class MonthReading:
    """One month file read both ways once: memcore's numbered blocks and the reference's matches.

    :meth:`notes` then answers for any observation of the file without parsing it again, so
    that the notes of a whole file cost one parse of each kind (a migration asks for every
    observation it wrote).

    Args:
        text: The month file's text.
    """

    __slots__ = ("_blocks", "_found", "_starts")

    def __init__(self, text: str) -> None:
        self._blocks = dict(numbered_blocks(text))
        self._found = reference_observations(text)
        self._starts = [o.start for o in self._found]

    def notes(self, entry: MemoryEntry, number: int) -> list[FidelityNote]:
        """Return :func:`reference_notes` of ``entry``, observation ``number`` of this file."""
        block = self._blocks.get(number)
        if block is None or block.layout != "fenced":
            return []
        # the reference's first match from the block's opening fence to its last three characters
        at = bisect.bisect_left(self._starts, block.start)
        inside = at < len(self._starts) and self._starts[at] - block.start <= len(block.fence) - 3
        if not inside:
            why = "the reference parser's block regex reads no observation here (an earlier body ends it out of step)"
            return [_note("*", entry.id, None, why)]
        return _field_notes(entry, self._found[at])


def _field_notes(entry: MemoryEntry, found: ReferenceObservation) -> list[FidelityNote]:
    """The notes of ``entry`` against the reference's reading ``found`` of its block."""
    notes: list[FidelityNote] = []
    if entry.body.strip() != found.body:
        notes.append(_note("body", entry.body.strip(), found.body, _body_why(entry.body.strip(), found.body)))
    quoted = "the reference parser keeps the quotes YAML needs around this value"
    if entry.source is not None and found.fields.get("source") != entry.source:
        notes.append(_note("source", entry.source, found.fields.get("source"), quoted))
    if found.tags != entry.tags:
        notes.append(_note("tags", entry.tags, found.tags, "the reference reads tags as an inline list of strings"))
    if entry.created_at is not None and entry.date_only:
        date = entry.created_at.date().isoformat()
        if found.fields.get("date") != date:
            notes.append(_note("created_at", date, found.fields.get("date"), "the reference reads date as written"))
    wb = entry.extra.get("whitebox", {})
    for key in V11_KEYS:
        value = wb.get(key)
        if isinstance(value, str) and found.fields.get(key) != value:
            why = quoted if key != "kind" else "the reference keeps kind only as quote or inference"
            notes.append(_note(f"extra.whitebox.{key}", value, found.fields.get(key), why))
    return notes


class WhiteBoxReference:
    """:class:`memcore.provider.ManyReferenceReading` for :class:`~memcore_whitebox.provider.WhiteBoxProvider`."""

    def reference_reads_differently(self, entry: MemoryEntry) -> list[FidelityNote]:
        """Return what the reference parser reads differently for observation ``entry.id`` (:func:`reference_notes`).

        For a stable file (which the reference parser does not read) only the entry type
        (:func:`kind_note`); empty for an id naming no readable observation file.
        """
        return self.reference_reads_differently_many([entry])[0]

    def reference_reads_differently_many(self, entries: Sequence[MemoryEntry]) -> list[list[FidelityNote]]:
        """Return :meth:`reference_reads_differently` of each entry, reading each month file once."""
        out: list[list[FidelityNote]] = []
        readings: dict[str, MonthReading | None] = {}  # each month file read once per call
        for entry in entries:
            rel, sep, number = (entry.id or "").rpartition("#")
            if not sep or not number.isdigit():
                out.append(kind_note(entry, entry.id) if entry.id else [])
                continue
            if rel in readings:
                reading = readings[rel]
            else:
                found = cast("WhiteBoxProvider", self)._read(rel)
                reading = None
                if found is not None:
                    memo = switch_on("MEMCORE_REFERENCE_MEMO")
                    reading = (_month_reading if memo else _month_reading.__wrapped__)(found[0], rel)
                readings[rel] = reading
            out.append(kind_note(entry, rel) + reading.notes(entry, int(number)) if reading is not None else [])
        return out


@lru_cache(maxsize=2)
def _month_reading(data: bytes, rel: str) -> MonthReading | None:
    """The :class:`MonthReading` of a month file's bytes, kept for the next entry of the same bytes.

    A caller asking about every observation in turn (one entry per call) pays one parse per
    file, not one per entry (``benchmarks/bench_reference_reading.py``;
    ``MEMCORE_REFERENCE_MEMO=0`` turns the memo off). ``None`` when the bytes are not text.
    """
    try:
        text = TextFile.decode(data, path=rel).text
    except ParseError:
        return None
    return MonthReading(text)
