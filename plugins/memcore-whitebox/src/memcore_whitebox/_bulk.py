"""WhiteBox's bulk add (:class:`memcore.provider.BulkAdding`): many entries in one call, as one ``add`` each.

An observation's ``add`` renders its block, scans it (a body that cannot be one block is
refused), appends it to the month file's state (written once, when the session ends), reads
its fields back and builds the returned entry from them (validated: the ``memcore:`` object of
a block is untrusted text when read). :meth:`BulkAdd.add_many` does the same for every entry,
in one write session, and shares what it can:

- the blocks :meth:`BulkAdd.plan_ids` (here, beside it) rendered and
  checked are kept (keyed by everything a block is rendered from, :func:`render_key`) and
  an entry built the same way is not rendered and scanned a second time;
- ``tags.md`` is checked for a symbolic link once per call (of either), not once per entry.

Building the returned entry without validating it again when every field read back holds
the value sent was tried and measured: comparing the fields cost as much as the validation
(19 µs each per observation), so the entry is built as ``add`` builds it (as a read does:
validated, or checked as validation would check it, ``codec._as_validated``).

Facts and proposals go through ``add``'s own steps. The bytes, ids, returned entries and errors
are those of one ``add`` each (``tests/test_whitebox_bulk_add.py``). ``MEMCORE_WHITEBOX_BULK=0``
turns both off: one ``add`` each, in one session.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memcore.errors import MemcoreError
from memcore.models import Kind, MemoryEntry
from memcore.provider import Capability, add_in_turn, checked_for_write
from memcore.switches import switch_on
from memcore_whitebox._blocks import RawBlock
from memcore_whitebox._parse import MonthState
from memcore_whitebox.codec import observation_block, proposal_target

if TYPE_CHECKING:
    from memcore_whitebox.provider import WhiteBoxProvider

__all__ = ["MEMO_LIMIT", "BulkAdd", "Memo", "bulk_enabled", "render_key", "rendered"]

#: Blocks kept from plan_ids at most (a migration plans every entry it writes).
MEMO_LIMIT = 100_000

#: Observation blocks rendered and checked (text, scan), by :func:`render_key`.
Memo = dict[tuple[Any, ...], tuple[str, RawBlock]]


def bulk_enabled() -> bool:
    """Whether :meth:`BulkAdd.add_many` shares work between entries (default: yes; ``MEMCORE_WHITEBOX_BULK=0``: no)."""
    return switch_on("MEMCORE_WHITEBOX_BULK")


def render_key(entry: MemoryEntry, date: str, active_scope: str | None) -> tuple[Any, ...] | None:
    """Everything an observation block is rendered from (besides the vault's default source), or ``None``.

    Two entries with equal keys render the same block: the key holds every field
    :func:`~memcore_whitebox.codec.observation_lines` and the body's rendering read, ``extra``
    as its JSON in its own key order (the order fields are written in), the confidence by its
    ``repr`` (``-0.0`` is written otherwise than ``0.0``), and the block's date and the active
    scope. ``None`` when ``extra`` is not JSON (the block is then rendered).
    """
    try:
        extra = json.dumps(entry.extra, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    return (
        date,
        active_scope,
        entry.kind,
        entry.status,
        entry.title,
        entry.body,
        tuple(entry.tags),
        repr(entry.confidence),
        entry.source,
        entry.created_at,
        entry.updated_at,
        entry.expires_at,
        entry.date_only,
        entry.scope,
        entry.parent,
        tuple((r.type, r.target, r.resolved) for r in entry.relations),
        extra,
    )


def rendered(memo: Memo, entry: MemoryEntry, date: str, source: str, scope: str | None) -> tuple[str, RawBlock]:
    """:func:`~memcore_whitebox.codec.observation_block` of ``entry``, from ``memo`` when it holds it, else kept there.

    Raises:
        InvalidEntryError: The body cannot be one block (nothing is kept).
    """
    key = render_key(entry, date, scope)
    found = memo.get(key) if key is not None else None
    if found is not None:
        return found
    block, blk = observation_block(entry, date, source, scope)
    if key is not None and len(memo) < MEMO_LIMIT:
        memo[key] = (block, blk)
    return block, blk


def _tags_link(provider: WhiteBoxProvider) -> Callable[[], bool]:
    """Whether tags.md is a symlink, asked of the disk once (by the first entry with tags) per call."""
    link: list[bool] = []

    def tags_link() -> bool:
        if not link:
            link.append((provider.root / "tags.md").is_symlink())
        return link[0]

    return tags_link


class BulkAdd:
    """``plan_ids`` and ``add_many`` for :class:`~memcore_whitebox.provider.WhiteBoxProvider`."""

    def plan_ids(self, entries: Sequence[MemoryEntry]) -> list[str | None]:
        """Return the ids :meth:`add` would give ``entries``, added in this order now (nothing written).

        (Here, beside :meth:`add_many`, because the blocks it renders are kept for it.)
        An observation's id is its position (``observations/<YYYY-MM>.md#<N>``), a fact's its
        path (``-2``, ``-3``... when taken). One that add would refuse gets ``None`` and takes no
        number, as does a proposal (its name carries the time). In a session, numbers follow
        its pending records.
        """
        provider: WhiteBoxProvider = self  # type: ignore[assignment]
        provider.require(Capability.ADD, "plan_ids")
        session = provider.active_session()
        months: dict[str, MonthState] = {}
        taken: set[str] = set()
        planned: list[str | None] = []
        # the blocks rendered here are kept for add_many (one render per entry, not two)
        fast = bulk_enabled()
        memo = provider._rendered if fast else None
        link = _tags_link(provider) if fast else None  # tags.md asked once per call, as add_many does
        for entry in entries:
            try:
                entry = provider._check_new(entry, link)
                if entry.kind is Kind.FACT:
                    rel, explicit = provider._fact_place(entry)
                    rel = provider._free_fact_path(rel, explicit, taken)
                    taken.add(rel)
                    planned.append(rel)
                elif entry.kind is Kind.PROPOSAL and proposal_target(entry):
                    planned.append(None)
                else:
                    rel, month, block, _blk = provider._observation_block(entry, memo=memo)
                    state = months.get(rel)
                    if state is None:
                        known = provider._open_months.get(rel) if session is not None else None
                        if known is None:
                            found = provider._read(rel)
                            data, version = found if found is not None else (b"", None)
                            known = provider._month_state(rel, month, data, version)
                        state = months[rel] = replace(known, pending=[])  # a copy: append() changes it
                    planned.append(f"{rel}#{state.append(block)}")
            except (MemcoreError, ValueError, OSError):
                planned.append(None)
        return planned

    def add_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry | Exception]:
        """Add ``entries`` as consecutive :meth:`add` calls would, in one write session.

        The contract of :meth:`memcore.contract.BulkAdding.add_many`: the same stops (after a
        refusal, after an entry stored under another id than its own) and the same items returned.

        Raises:
            ReadOnlyStoreError: The store was opened read-only.
        """
        provider: WhiteBoxProvider = self  # type: ignore[assignment]
        out: list[MemoryEntry | Exception] = []
        fast = bulk_enabled()
        tags_link = _tags_link(provider)

        with provider.session("add") as session:

            def add(entry: MemoryEntry) -> MemoryEntry:  # add's own steps: its wrapper's checks, then add's
                sent = checked_for_write(provider, entry)
                provider.require(Capability.ADD, "add")
                return provider._add_new(provider._check_new(sent, tags_link), session, bulk=True)

            for entry in entries:
                if not add_in_turn(add if fast else provider.add, entry, out):
                    break
        return out
