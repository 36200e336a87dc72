"""Box-memory's field table, as data: kinds, statuses, frontmatter order, slugs, timestamps.

Spec: box-memory-schema.md ("Memory file", "ID generation rules"); the authors' writer
(``box-write`` step 5) and examples fix the frontmatter order used here.

MemoryEntry <-> frontmatter:

=================  ===========================================================================
MemoryEntry        Box-memory frontmatter
=================  ===========================================================================
id                 ``id`` (``mem_`` + ULID for new entries; a given id is kept verbatim)
kind               ``kind`` (the seven Box kinds map 1:1; others are written as ``note`` and
                   kept in ``memcore.kind``)
status             ``status`` (the five Box statuses map 1:1; others: see STATUS_TO_BOX, the
                   original kept in ``memcore.status``)
title              ``title`` (the wikilink target; an empty title is written as the id,
                   which reads back as empty, so ``[[<id>]]`` links resolve by the schema;
                   a title that is the id itself adds ``memcore.title``)
body               the markdown after the frontmatter, byte for byte
tags               ``tags`` (flow list)
confidence         ``confidence`` (float 0-1)
source             ``agent``
created_at         ``created_at`` (ISO-8601 UTC with ``Z``)
updated_at         ``updated_at`` (set on every write)
scope              ``team``
relations          ``related`` (``"[[Title]]"``, type ``related``), ``supersedes`` (ids),
                   ``superseded_by`` (id); other types in ``memcore.relations``
expires_at         ``expires_at``
date_only, parent  ``memcore.date_only``, ``memcore.parent``
extra["box"]       ``slug``, ``links``, ``sources``, ``companion_for`` and every frontmatter key
                   memcore does not know, under its own name
extra[<other>]     ``memcore.extra.<other>`` (other formats' namespaces, so A -> box -> A
                   loses nothing)
=================  ===========================================================================
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime
from typing import Final

from memcore.models import Kind, Status

__all__ = [
    "BOX_KINDS",
    "BOX_STATUSES",
    "FIELD_ORDER",
    "KIND_TO_BOX",
    "MEMCORE_KEY",
    "STATUS_TO_BOX",
    "box_kind",
    "box_status",
    "format_timestamp",
    "parse_timestamp",
    "slugify",
]

#: Box-memory's seven kinds (schema "Kinds").
BOX_KINDS: Final[tuple[str, ...]] = ("decision", "fact", "task", "observation", "reference", "note", "companion")
#: Box-memory's five statuses (schema "Statuses").
BOX_STATUSES: Final[tuple[str, ...]] = ("active", "draft", "superseded", "archived", "held")

#: memcore kinds Box has no word for -> the Box kind written (the original goes in ``memcore.kind``).
KIND_TO_BOX: Final[dict[Kind, str]] = {
    Kind.PURSUIT: "task",
    Kind.SKILL: "reference",
    Kind.CORRECTION: "note",
    Kind.PREFERENCE: "fact",
    Kind.PROPOSAL: "note",
}
#: memcore statuses Box has no word for -> the Box status written (original in ``memcore.status``).
#: A task is "archived (done)" in Box's lifecycle; proposals and reviews are drafts.
STATUS_TO_BOX: Final[dict[Status, str]] = {
    Status.PROPOSED: "draft",
    Status.REVIEW_REQUIRED: "draft",
    Status.REJECTED: "archived",
    Status.DONE: "archived",
    Status.UNKNOWN: "active",
}

#: Frontmatter keys in the order the authors' writer emits them (box-write step 5, with
#: ``companion_for`` where example-companion.md has it), then the schema's remaining optional
#: fields. Keys memcore does not know follow, in their own order, then ``memcore``.
FIELD_ORDER: Final[tuple[str, ...]] = (
    "id",
    "slug",
    "title",
    "kind",
    "status",
    "team",
    "agent",
    "created_at",
    "updated_at",
    "confidence",
    "companion_for",
    "tags",
    "related",
    "links",
    "sources",
    "supersedes",
    "superseded_by",
    "expires_at",
)
#: The one frontmatter key holding what Box has no slot for (MemoryEntry fields, other formats).
MEMCORE_KEY: Final = "memcore"

#: Keys inside ``companion_for`` in the authors' order (schema + example-companion.md).
COMPANION_ORDER: Final[tuple[str, ...]] = (
    "file_id",
    "filename",
    "sha256",
    "hash_algo",
    "size_bytes",
    "mime_type",
    "reviewed_at",
    "reviewed_by",
    "box_version_id",
    "extracted_via",
    "extracted_at",
)

_SLUG_MAX = 80


def box_kind(kind: Kind) -> str:
    """Return the Box kind written for a memcore :class:`~memcore.models.Kind`."""
    return kind.value if kind.value in BOX_KINDS else KIND_TO_BOX.get(kind, "note")


def box_status(status: Status) -> str:
    """Return the Box status written for a memcore :class:`~memcore.models.Status`."""
    return status.value if status.value in BOX_STATUSES else STATUS_TO_BOX.get(status, "active")


def slugify(title: str) -> str:
    """Derive a slug from a title (schema "ID generation rules"), never empty.

    Lowercase, non-alphanumerics -> ``-``, runs collapsed, ends trimmed; before that the title
    is NFKD-decomposed and combining marks dropped, so ``"Café Übersicht"`` gives
    ``"cafe-ubersicht"``. A title leaving no ASCII letter or digit (CJK, emoji, empty) gets
    ``"memo-<first 8 hex of sha256(NFC title)>"``: readable, stable and distinct per title.
    Slugs are cut to 80 characters at a hyphen where possible.

    Args:
        title: The memory's title.

    Returns:
        A lowercase ASCII kebab-case slug (no collision suffix; the provider adds ``-2``…).
    """
    decomposed = unicodedata.normalize("NFKD", title)
    ascii_text = "".join(c for c in decomposed if not unicodedata.combining(c)).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if not slug:
        digest = hashlib.sha256(unicodedata.normalize("NFC", title).encode("utf-8")).hexdigest()[:8]
        return f"memo-{digest}"
    if len(slug) > _SLUG_MAX:
        cut = slug[:_SLUG_MAX]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[_SLUG_MAX // 2 :] else cut
        slug = slug.strip("-")
    return slug


def format_timestamp(value: datetime) -> str:
    """Format a UTC datetime the way Box-memory writes it: ``2026-05-22T18:32:00Z``.

    Sub-second parts are kept when present (``.123Z`` for whole milliseconds, else six
    digits), so a datetime read back is the same datetime.
    """
    value = value.astimezone(UTC)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        if value.microsecond % 1000 == 0:
            text += f".{value.microsecond // 1000:03d}"
        else:
            text += f".{value.microsecond:06d}"
    return text + "Z"


# The last text parse_timestamp read and its value (a file's updated_at is mostly its created_at).
_last_stamp: tuple[str, datetime] | None = None


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or an offset; a bare date is 00:00 UTC) to UTC.

    Raises:
        ValueError: Not ISO-8601, or a datetime without a timezone.
    """
    global _last_stamp
    last = _last_stamp
    if last is not None and last[0] == text:
        return last[1]
    value = _parse_timestamp(text)
    _last_stamp = (text, value)
    return value


def _parse_timestamp(text: str) -> datetime:
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    value = datetime.fromisoformat(raw)
    if value.tzinfo is None:
        if len(raw) == 10:
            return value.replace(tzinfo=UTC)
        raise ValueError(f"timestamp {text!r} has no timezone; Box-memory writes UTC with 'Z'")
    return value.astimezone(UTC)
