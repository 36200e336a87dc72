"""memcore's closed vocabularies: :class:`Kind`, :class:`Status` and :class:`Severity`.

Plain enums, kept apart from the pydantic models of :mod:`memcore.models` (which re-exports
them) so that the CLI can offer them as choices without importing pydantic.
"""

from __future__ import annotations

import enum

__all__ = ["Kind", "Severity", "Status"]


class Kind(enum.StrEnum):
    """What an entry is. Each format's own kinds map onto these (docs/mapping.md)."""

    FACT = "fact"
    OBSERVATION = "observation"
    DECISION = "decision"
    TASK = "task"
    REFERENCE = "reference"
    NOTE = "note"
    COMPANION = "companion"
    PURSUIT = "pursuit"
    SKILL = "skill"
    CORRECTION = "correction"
    PREFERENCE = "preference"
    PROPOSAL = "proposal"


class Status(enum.StrEnum):
    """Where an entry is in its lifecycle. Each format's statuses map onto these."""

    ACTIVE = "active"
    DRAFT = "draft"
    PROPOSED = "proposed"
    REVIEW_REQUIRED = "review_required"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    HELD = "held"
    REJECTED = "rejected"
    DONE = "done"
    UNKNOWN = "unknown"


class Severity(enum.StrEnum):
    """How serious a :class:`Diagnostic` is. ``error`` makes ``memcore validate`` exit 1."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
