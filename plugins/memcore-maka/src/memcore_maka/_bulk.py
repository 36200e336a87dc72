"""Maka's bulk add (:class:`memcore.provider.BulkAdding`): many appended sections, one splice, one parse.

An ``add`` appends one section to MEMORY.md: it prepares the entry (secrets redacted, times
and a free id set), renders the section, splices the session's parsed document (the section
before it is parsed again with the new one) and reads the new section back for the entry it
returns. :meth:`BulkAdd.add_many` prepares and renders a run of entries as consecutive adds
would (each new id chosen against the file's ids and those of the run before it), builds the
lines those appends leave (the same trailing-blank and line-terminator rules as
:func:`memcore_maka._render.append`), splices them in as one range (parsed once), checks every
new section against what was rendered (heading, comment line, id, ``proposalId``) and returns
each entry as a read gives it. Anything the run cannot decide with certainty (an entry add
would refuse, an id that is not NFC, a section with no content, a file that would go over
128 KiB, a store whose session document is not parsed yet, a check that fails) ends the run
before that entry, or undoes the splice, and those entries go one ``add`` each, which raises
add's own error. An entry holding no hint of a secret is prepared without the redacted copy
(:func:`memcore_maka._lean.lean_new_entry`, ``MEMCORE_MAKA_LEAN_PREPARE``). So the bytes, ids,
returned entries and errors are those of one ``add`` each.
``MEMCORE_MAKA_BULK=0`` turns the run path off (one ``add`` each, in one session).

:meth:`BulkAdd.plan_ids` tells the ids those adds will give, before anything is written (a
migration then writes a relation to an entry added later with the entry itself).
"""

from __future__ import annotations

import contextlib
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memcore.errors import MemcoreError
from memcore.models import MemoryEntry
from memcore.provider import Capability, add_in_turn, checked_for_write
from memcore.redact import holds_secret
from memcore.switches import switch_on
from memcore_maka._lean import lean_new_entry, lean_switches_on
from memcore_maka._parse import Document, Section, dominant_newline, js_trim, js_trim_end
from memcore_maka.codec import RenderedSection, is_safe_value, render_section, view
from memcore_maka.mapping import FORMAT

if TYPE_CHECKING:
    from memcore_maka.provider import MakaProvider

#: Entries spliced in one range at most.
RUN_LIMIT = 1000
_MAX_BYTES = 128 * 1024


def bulk_runs_enabled() -> bool:
    """Whether Maka's many-entry paths are on (default: yes); ``MEMCORE_MAKA_BULK=0`` turns them off.

    Off, :meth:`BulkAdd.add_many` adds one ``add`` each (in one session) and
    ``reference_reads_differently_many`` asks once per entry.
    """
    return switch_on("MEMCORE_MAKA_BULK")


def plans_enabled() -> bool:
    """Whether Maka plans ids (:meth:`BulkAdd.plan_ids`; default: yes); ``MEMCORE_MAKA_PLAN_IDS=0``: it plans none."""
    return switch_on("MEMCORE_MAKA_PLAN_IDS")


class BulkAdd:
    """``plan_ids`` and ``add_many`` for :class:`~memcore_maka.provider.MakaProvider`."""

    def plan_ids(self, entries: Sequence[MemoryEntry]) -> list[str | None] | None:
        """Return the ids :meth:`add` would give ``entries``, added in this order now (nothing written).

        A new id is Maka's hash of the redacted content and ``createdAt``: told in advance for
        an entry that has its time (one without takes the time of its add: ``None``), against
        the file's ids and those planned before it, as :meth:`add` chooses it; a given id is
        kept. An entry add would refuse (its checks, an id taken or not comment-safe) gets
        ``None`` and takes no id. An entry with a ``proposalId`` of its own ends the plan (its
        rendering decides what that id takes): ``None`` for it and every entry after it.
        ``None`` for all when no id could be told, or with ``MEMCORE_MAKA_PLAN_IDS=0``.

        Args:
            entries: Entries about to be added, in order.

        Returns:
            One id or ``None`` per entry, or ``None`` for all.
        """
        provider: MakaProvider = self  # type: ignore[assignment]
        if not plans_enabled():
            return None
        provider.require(Capability.ADD, "plan_ids")
        loaded = provider._load(provider.path, full=False)
        if not loaded.writable:
            return None  # add refuses to write the file (or reads it otherwise): nothing to tell
        index = loaded.doc.index()
        ids = _Ids()
        taken, known = _Seen(index.taken, ids.taken), _Seen(index.entries, ids.entries)
        lean = lean_switches_on()
        planned: list[str | None] = []
        for entry in entries:
            if not isinstance(entry, MemoryEntry):
                planned.append(None)
                continue
            maka = entry.extra.get(FORMAT)
            if isinstance(maka, dict) and "proposalId" in maka:
                break  # the rest: None
            if entry.id is None and entry.created_at is None:
                planned.append(None)  # its id hashes the time of its add
                continue
            try:
                checked = checked_for_write(provider, entry)
                new = lean_new_entry(checked, taken, known, provider.path, provider._now(), lean=lean)
            except Exception:  # noqa: BLE001 - whatever it is, add raises it: no id
                planned.append(None)
                continue
            ident = new.id
            if (
                ident is None
                or unicodedata.normalize("NFC", ident) != ident
                or not is_safe_value(ident)
                or holds_secret(ident)  # sent with it, the add would refuse it (an id is never rewritten)
            ):
                planned.append(None)
                continue
            ids.taken.add(ident)
            ids.entries.add(ident)
            planned.append(ident)
        out = planned + [None] * (len(entries) - len(planned))
        return out if any(p is not None for p in out) else None

    def add_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
        """Add ``entries`` as consecutive :meth:`add` calls would, in one write session.

        The contract of :meth:`memcore.contract.BulkAdding.add_many`: the same stops (after a
        refusal, after an entry stored under another id than its own) and the same items returned.
        """
        provider: MakaProvider = self  # type: ignore[assignment]
        out: list[MemoryEntry | Exception] = []
        writable = Capability.ADD in provider.capabilities and not (
            provider.read_only or provider.incognito or not provider.enabled
        )
        stack = contextlib.ExitStack()
        if writable:  # gated off: each add raises before touching the disk (no session, no lock)
            try:
                stack.enter_context(provider.session("add"))
            except (MemcoreError, ValueError, OSError):
                writable = False  # the first add raises it again, as its error
        fast = writable and bulk_runs_enabled()
        with stack:
            i = 0
            one_by_one = 0  # entries to add one by one before trying a run again
            while i < len(entries):
                if fast and i >= one_by_one:
                    run = _Run(provider)
                    stored = run.add(entries, i)
                    if stored:
                        out.extend(stored)
                        i += len(stored)
                        continue
                    one_by_one = i + max(run.tried, 1)
                if not add_in_turn(provider.add, entries[i], out):
                    break
                i += 1
        return out


@dataclass
class _Ids:
    """The ids a run's new sections add to the file's (what the next entry's id must avoid)."""

    taken: set[str] = field(default_factory=set)
    entries: set[str] = field(default_factory=set)


class _Seen:
    """``key in`` the file's ids or the run's (a read-only union, nothing copied)."""

    def __init__(self, base: Counter[str] | dict[str, list[Section]], extra: set[str]) -> None:
        self.base, self.extra = base, extra

    def __contains__(self, key: object) -> bool:
        return key in self.extra or key in self.base


class _Run:
    """One run of appends: prepared, rendered, spliced in one range, checked."""

    def __init__(self, provider: MakaProvider) -> None:
        self.provider = provider
        self.tried = 0  # entries rendered for the run (those a failed check sends one by one)

    def _document(self) -> Document | None:
        """The session's parsed MEMORY.md, when an append can edit it in place; else ``None``."""
        provider = self.provider
        work = provider._working()
        if work is None or provider.path.name not in work.checked:
            return None  # the first write of a session checks the files (add does it)
        loaded = provider._load(provider.path, full=False)
        if not loaded.writable or work.doc is None or work.doc is not loaded.doc:
            return None
        return work.doc

    def add(self, entries: Sequence[MemoryEntry], start: int) -> list[MemoryEntry]:
        """Append the entries from ``start`` on that one splice can take; return them as read back.

        Empty: not one could be decided here (the caller adds ``entries[start]`` with ``add``).
        """
        doc = self._document()
        if doc is None:
            return []
        lines = doc.lines
        last = len(lines) - 1
        while last >= 0 and not js_trim_end(lines[last]):
            last -= 1
        if last < 0:
            return []  # a blank file: add writes the header first
        prepared = self._prepare(doc, entries[start : start + RUN_LIMIT], last)
        if not prepared:
            return []
        rendered, tail, seps, size = prepared
        self.tried = len(rendered)
        old_lines, old_seps = lines[last:], doc.separators[last:]
        if doc.spliced_size(last, len(lines), tail, seps) != size:
            return []
        fresh = doc.splice(last, len(lines), tail, seps)
        sections = fresh[len(fresh) - len(rendered) :] if len(fresh) >= len(rendered) else []
        if not self._check(doc, sections, rendered):
            doc.splice(last, last + len(tail), old_lines, old_seps)
            return []
        work = self.provider._working()
        assert work is not None
        work.stale = True
        session = self.provider.active_session()
        assert session is not None
        for _ in rendered:
            session.count()
        return [view(doc, section, False).entry for section in sections]

    def _prepare(
        self, doc: Document, entries: Sequence[MemoryEntry], last: int
    ) -> tuple[list[tuple[MemoryEntry, RenderedSection]], list[str], list[str], int] | None:
        """Prepare and render the run; return it with the lines from ``last`` on and the new size.

        The lines are those consecutive :func:`~memcore_maka._render.append` calls leave: each
        append trims the blank lines (and trailing whitespace) at the end of the file, then adds
        a blank line, the section and a final newline, with the file's dominant terminator.
        """
        provider = self.provider
        index = doc.index()
        ids = _Ids()
        taken, known = _Seen(index.taken, ids.taken), _Seen(index.entries, ids.entries)
        counts = Counter(doc.terminators())
        tail, seps = doc.lines[last:], doc.separators[last:]
        size = doc.size
        lean = lean_switches_on()
        out: list[tuple[MemoryEntry, RenderedSection]] = []
        for entry in entries:
            try:
                if not isinstance(entry, MemoryEntry):
                    break
                checked = checked_for_write(provider, entry)
                new = lean_new_entry(checked, taken, known, provider.path, provider._now(), lean=lean)
                rendered = render_section(new)
            except Exception:  # noqa: BLE001 - whatever it is, add raises it (after the run is written)
                break
            ident = new.id
            if ident is None or unicodedata.normalize("NFC", ident) != ident:
                break  # an id the index files under another spelling: add decides
            if not js_trim("\n".join(rendered.content_lines)):
                break  # not an entry once written: add reports it
            proposal = rendered.meta.get("proposalId")
            block = [f"## {rendered.title}", rendered.meta_text, *rendered.content_lines]
            newline = dominant_newline(counts)
            end = len(tail) - 1
            while end >= 0 and not js_trim_end(tail[end]):
                end -= 1
            new_lines = [js_trim_end(tail[end]), "", *block, ""]
            new_seps = [newline] * (len(new_lines) - 1) + [""]
            try:
                added = len("".join(new_lines).encode("utf-8")) + len(newline) * (len(new_lines) - 1)
            except UnicodeEncodeError:
                break  # add writes such text whole (and refuses it)
            removed = len("".join(tail[end:]).encode("utf-8", "surrogatepass")) + sum(map(len, seps[end:]))
            if size - removed + added > _MAX_BYTES:
                break  # add raises StoreLimitError for it
            size += added - removed
            counts.subtract(seps[end:])
            counts.update(new_seps)
            del tail[end:], seps[end:]
            tail += new_lines
            seps += new_seps
            ids.taken.add(ident)
            ids.entries.add(ident)
            if proposal is not None:
                ids.taken.add(proposal)
            out.append((new, rendered))
        if not out:
            return None
        return out, tail, seps, size

    @staticmethod
    def _check(doc: Document, sections: list[Section], rendered: list[tuple[MemoryEntry, RenderedSection]]) -> bool:
        """Whether each new section reads as rendered: heading, comment line, id, ``proposalId``, content."""
        if len(sections) != len(rendered):
            return False
        index = doc.index().entries
        for section, (new, shown) in zip(sections, rendered, strict=True):
            meta = section.meta or {}
            if (
                section.title != shown.title
                or section.meta_index != section.start + 1
                or doc.lines[section.start + 1] != shown.meta_text
                or section.dropped
                or section.shadow_indices
                or section.id != new.id
                or meta.get("proposalId") != shown.meta.get("proposalId")
                or not section.is_entry
                or len(index.get(section.id, ())) != 1
            ):
                return False
        return True
