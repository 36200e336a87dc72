"""memcore-maka: Maka's single-file MEMORY.md as a memcore store.

Open it with ``memcore.open("maka:./memory/MEMORY.md")``; see docs/formats/maka.md.
"""

from __future__ import annotations

from memcore.redact import redact_secrets
from memcore_maka._parse import MAX_BYTES, parse_document
from memcore_maka.codec import stable_entry_id, stable_proposal_id
from memcore_maka.provider import (
    PROMPT_MAX_CHARS,
    TRUNCATION_MARKER,
    IncognitoBlockedError,
    MakaProvider,
    MakaState,
)

__all__ = [
    "MAX_BYTES",
    "PROMPT_MAX_CHARS",
    "TRUNCATION_MARKER",
    "IncognitoBlockedError",
    "MakaProvider",
    "MakaState",
    "parse_document",
    "redact_secrets",
    "stable_entry_id",
    "stable_proposal_id",
]
