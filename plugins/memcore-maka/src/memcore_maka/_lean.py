"""An appended entry prepared without a copy when there is nothing to redact (Maka's ``add_many``, ``plan_ids``).

:func:`memcore_maka.codec.new_entry_among` prepares an entry for appending: a copy with every
secret redacted (:func:`memcore_maka.codec.prepare`), then ``createdAt``/``updatedAt`` and a free
id set on that copy by validated assignments. For an entry whose strings hold no hint of a
secret (the one joined check :func:`~memcore_maka.codec.prepare` makes), the copy holds the
entry's own values: :func:`lean_new_entry` decides the same times and id without it, and returns
the entry itself when it already holds them (a migration's entries come with their id and
times), or a shallow copy with them set. The section rendered from either is the same, and the
same errors are raised: anything else (a hint word, a string that is not UTF-8, the redaction's
fast check off) goes through :func:`~memcore_maka.codec.new_entry_among` as before.

The entry returned may share its lists and ``extra`` with the one given: it is for rendering and
for its id, never changed or handed to a caller. ``MEMCORE_MAKA_LEAN_PREPARE=0`` turns this off.
"""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path

from memcore.errors import ConflictError
from memcore.models import MemoryEntry
from memcore.redact import may_hold_secret
from memcore.switches import switch_on
from memcore_maka.codec import (
    entry_texts,
    fast_redaction_enabled,
    from_ms,
    new_entry_among,
    only_text,
    stable_entry_id,
    to_ms,
)

__all__ = ["lean_new_entry", "lean_prepare_enabled", "lean_switches_on"]


def lean_prepare_enabled() -> bool:
    """Whether Maka's ``add_many`` and ``plan_ids`` prepare an entry without a copy when nothing is redacted.

    Default: yes; ``MEMCORE_MAKA_LEAN_PREPARE=0`` (or ``false``, ``no``, ``off``) makes them call
    :func:`~memcore_maka.codec.new_entry_among` for every entry.
    """
    return switch_on("MEMCORE_MAKA_LEAN_PREPARE")


def lean_switches_on() -> bool:
    """Whether :func:`lean_new_entry` may skip its copy (``MEMCORE_MAKA_LEAN_PREPARE``, ``MEMCORE_MAKA_FAST_REDACT``).

    Read once per run of entries by its callers (an environment read costs a few microseconds,
    as much as the rest of the check).
    """
    return lean_prepare_enabled() and fast_redaction_enabled()


def lean_new_entry(
    entry: MemoryEntry,
    taken: Container[str],
    entries: Container[str],
    where: Path,
    now: int,
    *,
    lean: bool | None = None,
) -> MemoryEntry:
    """Return what :func:`~memcore_maka.codec.new_entry_among` returns for a MEMORY.md append, for rendering.

    The same title, body, times, id and every other value (so the same section), the same
    errors; without the redacted copy when no string of ``entry`` holds a hint of a secret.

    Args:
        entry: The entry to append, as ``add`` receives it (checked for writing).
        taken: Every NFC id and ``proposalId`` of the file (and those added before it in a run):
            a new id avoids them.
        entries: The NFC ids of the file's entries: a given id must not be one.
        where: The file, for the conflict's message.
        now: Unix milliseconds now (the default ``createdAt``).
        lean: :func:`lean_switches_on`, read by the caller once for many entries (``None``: read here).

    Returns:
        ``entry`` itself when it holds the id and times it is written with, else a copy holding
        them; the general path's entry when a string may hold a secret. Not to be changed: it may
        share lists and ``extra`` with ``entry``.

    Raises:
        ConflictError: The entry's id is taken.
        InvalidEntryError: As :func:`~memcore_maka.codec.new_entry_among`.
    """
    if not (lean_switches_on() if lean is None else lean):
        return new_entry_among(entry, taken, entries, where, now)
    texts = entry_texts(entry)
    if not only_text(texts) or may_hold_secret("\n".join(texts)):
        return new_entry_among(entry, taken, entries, where, now)
    # what new_entry_among sets on its copy, decided from the entry's own values (the copy
    # prepare makes of an entry without a hint holds them unchanged)
    given = entry.model_fields_set
    created, updated, ident = entry.created_at, entry.updated_at, entry.id
    if created is None and "created_at" not in given:
        created = from_ms(now)
    if updated is None and "updated_at" not in given:
        updated = created
    if ident is None:
        ms = to_ms(created) if created is not None else now
        base = stable_entry_id(entry.body, ms)
        ident, n = base, 1
        while ident in taken:
            n += 1
            ident = f"{base}-{n}"
    elif ident in entries:
        raise ConflictError(f"maka: an entry with id {ident!r} already exists in {where}")
    if created is entry.created_at and updated is entry.updated_at and ident is entry.id:
        return entry
    twin = entry.__copy__()
    # values the model's validation keeps as they are: datetimes in UTC (read or from_ms) or None,
    # and an id made of "mem-", hex digits and a counter
    twin.__dict__.update(created_at=created, updated_at=updated, id=ident)
    return twin
