"""Secret redaction on Maka's write path (and again when rendering the prompt).

Maka's contract (V0.2 "token-boundary") says raw tokens and API keys must never reach a memory
entry: memcore redacts every title, body and string it writes into MEMORY.md / PENDING.md, and
redacts the prompt body again (for secrets pasted into the file by hand), as Maka's
``redactSecrets`` does. Patterns, each replaced by ``[redacted]`` (the prefix that names the
secret is kept so the text still reads):

========================  ==========================================================
pattern                   example
========================  ==========================================================
private key blocks        ``-----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY-----``
bearer / basic tokens     ``Authorization: Bearer abc…``, ``Bearer eyJhbGciOi…``
password/key assignments  ``password=hunter2``, ``api_key: "…"``, ``"secret": "…"``
URL query secrets         ``?api_key=…&key=…&token=…``
vendor API key shapes     ``sk-…``, ``sk-ant-…``, ``AIza…``, ``ghp_…``, ``github_pat_…``,
                          ``xoxb-…``, ``AKIA…``, ``glpat-…``
========================  ==========================================================

Redaction is idempotent: redacting a redacted text changes nothing.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact_secrets"]

REDACTED = "[redacted]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
_KEY_NAMES = (
    r"x-api-key|api[_-]?key|apikey|access[_-]?token|accesstoken|auth[_-]?token|refresh[_-]?token"
    r"|client[_-]?secret|secret[_-]?key|token|secret|password|passwd|pwd"
)
_JSON_ASSIGNMENT = re.compile(rf'("(?:{_KEY_NAMES}|auth|authorization)"\s*:\s*")(?:\\.|[^"\\])*', re.IGNORECASE)
_ASSIGNMENT = re.compile(rf"""\b((?:{_KEY_NAMES})\s*[:=]\s*['"]?)[^\s"'&<>]+""", re.IGNORECASE)
_AUTH_HEADER = re.compile(r"\b(authorization\s*[:=]\s*(?:bearer|basic|token)\s+)[^\s\"'<>]+", re.IGNORECASE)
_BEARER = re.compile(r"\b(bearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_URL_QUERY = re.compile(
    r"([?&])(x-api-key|api[_-]?key|key|token|access[_-]?token|auth|authorization|password|secret)=([^&\s#]*)",
    re.IGNORECASE,
)
_VENDOR_KEYS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),
    re.compile(r"\bgh[pousr]_[0-9A-Za-z_]{20,}"),
    re.compile(r"\bgithub_pat_[0-9A-Za-z_]{20,}"),
    re.compile(r"\bxox[abprs]-[0-9A-Za-z-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bglpat-[0-9A-Za-z_-]{20,}"),
]


#: Every pattern above needs one of these words (case-insensitive: checked on ``casefold()``,
#: which maps each character those patterns' IGNORECASE matching equates with an ASCII
#: letter, such as U+212A KELVIN SIGN or U+017F LONG S, onto that letter)…
_CASELESS_HINTS = ("key", "token", "secret", "passw", "pwd", "auth", "bearer")
#: …or one of these case-sensitive prefixes (the private key block and the vendor key shapes).
_CASED_HINT = re.compile(r"-----BEGIN |sk-|AIza|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|glpat-")


def may_hold_secret(text: str) -> bool:
    """Return False when no redaction pattern can match ``text`` (then it is returned as is).

    A cheap necessary condition: each pattern contains one of the hint words or prefixes.
    """
    folded = text.casefold()
    return any(hint in folded for hint in _CASELESS_HINTS) or _CASED_HINT.search(text) is not None


def redact_secrets(text: str) -> str:
    """Return ``text`` with secrets replaced by ``[redacted]``.

    Args:
        text: Any text: an entry's title or body, or a rendered prompt.

    Returns:
        The text with private key blocks, bearer tokens, password/API-key assignments, URL query
        secrets and well-known API key shapes redacted. Idempotent.
    """
    return _apply_patterns(text) if may_hold_secret(text) else text


def _apply_patterns(text: str) -> str:
    """Run every redaction pattern over ``text`` (what :func:`redact_secrets` does when needed)."""
    out = _PRIVATE_KEY.sub("[redacted private key]", text)
    out = _JSON_ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, out)
    out = _URL_QUERY.sub(lambda m: f"{m.group(1)}{m.group(2)}={REDACTED}", out)
    out = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, out)
    out = _BEARER.sub(lambda m: m.group(1) + REDACTED, out)
    out = _ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, out)
    for pattern in _VENDOR_KEYS:
        out = pattern.sub(REDACTED, out)
    return out
