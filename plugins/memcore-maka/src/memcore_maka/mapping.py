"""Maka <-> :class:`~memcore.models.MemoryEntry`: the field table, as data (tables only).

The code that applies these tables is :mod:`memcore_maka.codec`.

Native slots (docs/formats/maka.md has the full table):

=====================  ===============================================================
MemoryEntry            Maka
=====================  ===============================================================
``id``                 ``id=`` (missing or empty: the title's slug, as Maka does)
``title``              the ``## `` heading text (one line)
``body``               the section's content (metadata lines removed, trimmed)
``status``             ``status=`` (:data:`STATUS_FROM_MAKA`; missing: active, or
                       review_required in PENDING.md; anything else: ``unknown`` with the
                       raw value in ``extra["maka"]["status"]``)
``source``             ``origin=`` (manual / extracted / imported; anything else, or no
                       comment: ``unknown``, raw value in ``extra["maka"]["origin"]``)
``tags``               ``tags=`` read with Maka's ``parseTags``
``scope``              ``scope=`` raw (``workspace`` / ``session``; absent: ``None``, which
                       Maka treats as workspace); the session id is ``extra["maka"]["sessionId"]``
``created_at``         ``createdAt=`` (unix ms, UTC)
``updated_at``         ``updatedAt=`` (unix ms, UTC)
``expires_at``         ``createdAt + decayTtlMs``
``kind``               ``mcKind=`` (memcore key; absent: ``note``)
``confidence``         ``mcConfidence=`` (memcore key, a decimal number)
everything else        ``extra["maka"]``: every other comment key, raw string values
=====================  ===============================================================

Fields Maka has no slot for (``relations``, ``parent``, ``date_only``, other formats' ``extra``)
and native values Maka cannot hold exactly (a multi-line title, tags Maka would lowercase, a
body with leading whitespace or a line that Maka would read as a heading, an empty body — written
with the title as visible content, since Maka drops empty sections…) are kept in one
memcore key, ``mcData`` (split into ``mcData_0``, ``mcData_1``… when longer than the 128
characters a value may have): standard base64 of compact UTF-8 JSON. Base64's alphabet has no
whitespace, ``<``, ``>`` or ``-``, so Maka's parser keeps it as an unknown key and Maka's writer
keeps it unchanged when it rewrites the comment. Each override records the native value it was
written next to; if the file was edited in Maka since (the native value differs), the native
value wins and the stale override is ignored.
"""

from __future__ import annotations

import re

from memcore.models import Status

__all__ = [
    "FORMAT",
    "KEY_ORDER",
    "MEMORY_HEADER",
    "PENDING_HEADER",
    "MAKA_STATUSES",
    "MC_CONFIDENCE",
    "MC_DATA",
    "MC_DATA_RE",
    "MC_KEYS",
    "MC_KIND",
    "NATIVE_KEYS",
    "ORIGINS",
    "PASSTHROUGH_STATUSES",
    "STATUS_FROM_MAKA",
]

FORMAT = "maka"

#: The order Maka's ``serializeMetaComment`` writes known keys in; other keys follow, sorted.
KEY_ORDER: tuple[str, ...] = (
    "id",
    "proposalId",
    "origin",
    "source",
    "createdAt",
    "updatedAt",
    "status",
    "proposedAt",
    "confirmedAt",
    "archivedAt",
    "rejectedAt",
    "scope",
    "sessionId",
    "approvedBy",
    "approvalSurface",
    "sourceTurnId",
    "archiveReason",
    "tags",
    "decayTtlMs",
)

#: :data:`KEY_ORDER` as a set.
KEY_ORDER_SET = frozenset(KEY_ORDER)

#: Maka's statuses (HEAD) and the memcore status each maps to, both ways.
STATUS_FROM_MAKA: dict[str, Status] = {
    "draft": Status.DRAFT,
    "review_required": Status.REVIEW_REQUIRED,
    "active": Status.ACTIVE,
    "archived": Status.ARCHIVED,
    "rejected": Status.REJECTED,
}
MAKA_STATUSES: frozenset[str] = frozenset(STATUS_FROM_MAKA)
#: memcore statuses Maka does not have; written as-is (Maka reads them as unknown: shown in its
#: UI, never given to a model) and read back as themselves.
PASSTHROUGH_STATUSES: frozenset[str] = frozenset(
    s.value for s in Status if s.value not in MAKA_STATUSES and s is not Status.UNKNOWN
)
#: Maka's recognised origins; anything else reads as ``unknown``.
ORIGINS: tuple[str, ...] = ("manual", "extracted", "imported")

MC_KIND = "mcKind"
MC_CONFIDENCE = "mcConfidence"
MC_DATA = "mcData"
MC_DATA_RE = re.compile(r"^mcData(?:_(\d+))?\Z")
#: Comment keys memcore owns (never passed through ``extra["maka"]``).
MC_KEYS: frozenset[str] = frozenset({MC_KIND, MC_CONFIDENCE, MC_DATA})
#: Keys of ``extra["maka"]`` that are written with their native field, not passed through.
NATIVE_KEYS = frozenset(
    {"status", "origin", "createdAt", "updatedAt", "decayTtlMs", "id", "tags", "scope", MC_KIND, MC_CONFIDENCE}
)

#: The title line Maka's template starts MEMORY.md with.
MEMORY_HEADER = "# Maka Memory"
#: The title line of PENDING.md.
PENDING_HEADER = "# Maka Pending Memory"
