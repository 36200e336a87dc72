"""Maka's review queue: proposals in PENDING.md that a user approves into MEMORY.md or rejects.

The functions behind :meth:`MakaProvider.pending <memcore_maka.MakaProvider.pending>`,
``proposals``, ``propose``, ``approve`` and ``reject``; every write goes through the provider's
write session (``_mutate``), PENDING.md written at once and MEMORY.md before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.errors import ConflictError
from memcore.models import MemoryEntry, Status
from memcore_maka import _render, codec
from memcore_maka._render import Edit
from memcore_maka._state import Loaded
from memcore_maka.codec import render_section
from memcore_maka.mapping import PENDING_HEADER

if TYPE_CHECKING:
    from memcore_maka.provider import MakaProvider

__all__ = ["approve", "loaded", "propose", "reject", "waiting"]

_WAITING = (Status.DRAFT, Status.REVIEW_REQUIRED)


def loaded(provider: MakaProvider) -> Loaded:
    """Read PENDING.md (nothing when memory is disabled).

    Raises:
        IncognitoBlockedError: Incognito is on.
    """
    if not provider._gate_read():
        return Loaded(path=provider.pending_path, pending=True)
    return provider._load(provider.pending_path, pending=True)


def waiting(provider: MakaProvider) -> list[MemoryEntry]:
    """Return PENDING.md's proposals still waiting for review (draft / review_required).

    Raises:
        IncognitoBlockedError: Incognito is on.
    """
    return [v.entry for v in loaded(provider).views if v.entry.status in _WAITING]


def _read_back(provider: MakaProvider, entry_id: str) -> MemoryEntry:
    """Return PENDING.md's entry ``entry_id`` as it now reads."""
    return provider._find(provider._load(provider.pending_path, pending=True, full=False), entry_id).entry


def propose(provider: MakaProvider, entry: MemoryEntry) -> MemoryEntry:
    """Add ``entry`` to PENDING.md as an extracted proposal waiting for review.

    Written as Maka's ``appendLocalMemoryProposalDraft`` does: ``id`` = ``proposalId`` =
    ``proposal-`` + 16 hex, ``origin=extracted source=chat_extracted``, ``proposedAt``,
    ``status=review_required``, ``scope`` (workspace unless session).

    Raises:
        InvalidEntryError: A session-scoped proposal without ``extra["maka"]["sessionId"]``
            (Maka's ``invalid_session_id``), or an id that cannot be written.
        ConflictError, StoreLimitError, ReadOnlyStoreError: As :meth:`MakaProvider.add`.
    """
    stored: list[MemoryEntry] = []

    def change(file: Loaded) -> Edit | str:
        new = codec.proposed_entry(entry, file.doc, file.path, provider._now())
        stored.append(new)
        return _render.append(file.doc, PENDING_HEADER, render_section(new))

    provider._mutate(provider.pending_path, change, "propose", pending=True)
    return _read_back(provider, stored[0].id or "")


def approve(provider: MakaProvider, proposal_id: str, *, entry_id: str | None = None) -> MemoryEntry:
    """Move a pending proposal into MEMORY.md as an active entry and remove it from PENDING.md.

    The new entry (Maka's ``approveLocalMemoryProposalDraft``): id ``entry_id`` or
    ``mem-`` + 16 hex of the content and the confirmation time; ``origin=extracted``,
    ``source=chat_extracted``, ``createdAt = updatedAt = confirmedAt`` = now,
    ``status=active``, ``approvedBy=user``, ``approvalSurface=settings_review_queue``,
    ``proposalId``; scope, session, tags and memcore fields carried over. MEMORY.md is
    written first; approving again after a crash between the two writes only removes the
    proposal.

    Raises:
        EntryNotFoundError: No such proposal.
        ConflictError: The proposal is not pending (rejected, active…), or the id exists.
        StoreLimitError: MEMORY.md would go over 128 KiB (nothing written).
        ReadOnlyStoreError: Incognito, disabled, read-only, or a file that could not be parsed.
    """
    provider._gate_write("approve")
    with provider.session("approve"):
        queue = provider._load(provider.pending_path, pending=True, full=False)
        proposal = provider._find(queue, proposal_id, by_proposal=True)
        if proposal.entry.status not in _WAITING:
            raise ConflictError(
                f"maka: proposal {proposal_id!r} is {proposal.entry.status.value}, not pending; "
                "only draft / review_required proposals can be approved"
            )
        pid = proposal.meta.get("proposalId") or proposal.entry.id or proposal_id
        if not any(v.meta.get("proposalId") == pid for v in provider._load(provider.path).views):
            provider.add(codec.approved_entry(proposal, pid, entry_id, provider._now(), proposal_id))

        def change(file: Loaded) -> str:
            return _render.remove_section(file.doc, provider._find(file, pid, by_proposal=True).section)

        provider._mutate(provider.pending_path, change, "approve", pending=True)
        return next(v.entry for v in provider._load(provider.path).views if v.meta.get("proposalId") == pid)


def reject(provider: MakaProvider, proposal_id: str) -> MemoryEntry:
    """Mark a pending proposal rejected in PENDING.md (``status=rejected rejectedAt=<ms>``).

    Raises:
        EntryNotFoundError: No such proposal.
        ConflictError: The proposal is not pending.
        ReadOnlyStoreError: Incognito, disabled, read-only, or a file that could not be parsed.
    """
    found: list[str] = []

    def change(file: Loaded) -> str:
        old = provider._find(file, proposal_id, by_proposal=True)
        if old.entry.status not in _WAITING:
            raise ConflictError(f"maka: proposal {proposal_id!r} is {old.entry.status.value}, not pending")
        assert old.entry.id is not None
        meta = dict(old.meta)
        meta.update(
            id=old.entry.id,
            proposalId=meta.get("proposalId") or old.entry.id,
            status="rejected",
            rejectedAt=str(provider._now()),
        )
        found.append(old.entry.id)
        return _render.with_meta(file.doc, old, meta)

    provider._mutate(provider.pending_path, change, "reject", pending=True)
    return _read_back(provider, found[0])
