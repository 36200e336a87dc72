"""memcore-maka: Maka's single-file MEMORY.md as a memcore store.

Open it with ``memcore.open("maka:./memory/MEMORY.md")``; see docs/formats/maka.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
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

# Each name is imported on first use: loading the plugin entry point (``.plugin``) imports this
# package, which must not import the provider (see memcore._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "MAX_BYTES": "memcore_maka._parse",
        "PROMPT_MAX_CHARS": "memcore_maka.provider",
        "TRUNCATION_MARKER": "memcore_maka.provider",
        "IncognitoBlockedError": "memcore_maka.provider",
        "MakaProvider": "memcore_maka.provider",
        "MakaState": "memcore_maka.provider",
        "parse_document": "memcore_maka._parse",
        "redact_secrets": "memcore.redact",
        "stable_entry_id": "memcore_maka.codec",
        "stable_proposal_id": "memcore_maka.codec",
    },
)
