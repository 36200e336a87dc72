"""Secret redaction: what a provider applies to every string it writes (Maka's write path does).

Maka's contract (V0.2 "token-boundary") says raw tokens and API keys must never reach a memory
entry; Maka's ``redactSecrets`` runs on its write path and again on the prompt. memcore keeps the
redactor here, in core, so that every provider that redacts uses the same patterns: the Maka
provider runs :func:`redact_entry` over each entry it writes (title, body, tags, source, scope,
parent, relations, every key and string of ``extra``: so nothing reaches the file, neither as
text nor base64-encoded inside memcore's own metadata) and :func:`redact_secrets` over the
prompt. Patterns, each replaced by ``[redacted]`` (the prefix that names the secret is kept so
the text still reads):

========================  ==========================================================
pattern                   example
========================  ==========================================================
private key blocks        ``-----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY-----``
Authorization headers     ``Authorization: Bearer abc…``, ``Authorization: Basic dXNl…``,
                          ``Proxy-Authorization: Digest …``, ``Authorization: abc…``
bearer tokens             ``Bearer abcdefgh…``
JSON Web Tokens           ``eyJhbGciOi….eyJzdWIi….sig``
URL credentials           ``https://user:pass@host/``, ``postgres://u:p@db:5432``
curl credentials          ``curl -u user:pass …``, ``curl --user=user:pass``
password/key assignments  ``password=hunter2``, ``api_key: "…"``, ``"secret": "…"``,
                          ``AWS_SECRET_ACCESS_KEY=…``, ``DB_PASSWORD=…``
password phrases          ``the password is hunter2``, ``passphrase: …``
URL query secrets         ``?api_key=…&key=…&token=…``
vendor API key shapes     ``sk-…``, ``sk-ant-…``, ``sk_live_…``, ``AIza…``, ``ghp_…``,
                          ``github_pat_…``, ``xoxb-…``, ``AKIA…``, ``glpat-…``, ``hf_…``,
                          ``npm_…``, ``ya29.…``
========================  ==========================================================

Redaction is idempotent: redacting a redacted text changes nothing.
"""

from __future__ import annotations

import re
from typing import Any

from memcore.models import MemoryEntry

__all__ = [
    "REDACTED",
    "holds_secret",
    "may_hold_secret",
    "names_secret",
    "redact_entry",
    "redact_secrets",
    "redact_tree",
]

REDACTED = "[redacted]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
_KEY_NAMES = (
    r"x-api-key|api[_-]?key|apikey|access[_-]?token|accesstoken|auth[_-]?token|refresh[_-]?token"
    r"|client[_-]?secret|secret[_-]?key|token|secret|password|passwd|passphrase|pwd"
)
#: an identifier ending in a key name: ``DB_PASSWORD``, ``aws_secret_access_key``, ``GITHUB_TOKEN``
_NAMED = rf"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{{0,64}}?(?:{_KEY_NAMES}|access[_-]?key|private[_-]?key)"
#: a whole key or relation type that names a secret: its value is redacted whole, however plain
_SECRET_NAME = re.compile(rf"{_NAMED}", re.IGNORECASE)
_JSON_ASSIGNMENT = re.compile(rf'("(?:{_NAMED}|auth|authorization)"\s*:\s*")(?:\\.|[^"\\])*', re.IGNORECASE)
#: a quoted value is redacted whole (``password: 'correct horse'``, quotes kept), a bare one up to a space
_QUOTED_OR_BARE = r"""(?:(')(?!\[redacted\]')[^'\n]*'|(")(?!\[redacted\]")[^"\n]*"|(?!['"])[^\s"'&<>]+)"""
_ASSIGNMENT = re.compile(rf"""({_NAMED}['"]?\s*(?:=>|[:=])\s*){_QUOTED_OR_BARE}""", re.IGNORECASE)
_PHRASE = re.compile(rf"\b((?:password|passwd|passphrase|pwd)s?\s+(?:is|was|=|:)\s+){_QUOTED_OR_BARE}", re.IGNORECASE)
_SCHEMES = r"(?:bearer|basic|token|digest|negotiate|ntlm|apikey)"
_AUTH_HEADER = re.compile(
    rf"""\b((?:proxy-)?authorization['"]?\s*[:=]\s*['"]?(?:{_SCHEMES}\s+)?['"]?)(?!\[redacted\])(?!{_SCHEMES}\s)[^\s"'<>]+""",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(bearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_JWT = re.compile(r"(?<![A-Za-z0-9-])ey[JA][A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_URL_CREDENTIALS = re.compile(
    r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/:@'\"<>]{0,256}:)(?!\[redacted\]@)[^\s/@'\"<>]{1,512}(@)"
)
_CURL_USER = re.compile(r"((?:\s|^)(?:-u|--user)(?:\s+|=)?['\"]?)(?!\[redacted\])([^\s'\":]+:[^\s'\"]+)")
_URL_QUERY = re.compile(
    r"([?&])(x-api-key|api[_-]?key|key|token|access[_-]?token|auth|authorization|password|secret|sig|signature)=([^&\s#]*)",
    re.IGNORECASE,
)
_VENDOR_KEYS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{8,}"),
    re.compile(r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),
    re.compile(r"\bgh[pousr]_[0-9A-Za-z_]{20,}"),
    re.compile(r"\bgithub_pat_[0-9A-Za-z_]{20,}"),
    re.compile(r"\bxox[abprs]-[0-9A-Za-z-]{10,}"),
    re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
    re.compile(r"\bglpat-[0-9A-Za-z_-]{20,}"),
    re.compile(r"\bhf_[0-9A-Za-z]{20,}"),
    re.compile(r"\bnpm_[0-9A-Za-z]{20,}"),
    re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"),
]


#: Every pattern above needs one of these words (case-insensitive: checked on ``casefold()``,
#: which maps each character those patterns' IGNORECASE matching equates with an ASCII
#: letter, such as U+212A KELVIN SIGN or U+017F LONG S, onto that letter)…
_CASELESS_HINTS = ("key", "token", "secret", "passw", "passphrase", "pwd", "auth", "bearer", "sig")
#: …or one of these case-sensitive marks (private key blocks, vendor key shapes, JWTs, URL
#: credentials, curl's -u / --user).
_CASED_HINT = re.compile(
    r"-----BEGIN |sk-|[sr]k_(?:live|test)_|AIza|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|ASIA|glpat-|hf_|npm_|ya29\."
    r"|eyJ|eyA|://|-u|--user"
)


def may_hold_secret(text: str) -> bool:
    """Return False when no redaction pattern can match ``text`` (then it is returned as is).

    A cheap necessary condition: each pattern contains one of the hint words or marks.
    """
    folded = text.casefold()
    return any(hint in folded for hint in _CASELESS_HINTS) or _CASED_HINT.search(text) is not None


def redact_secrets(text: str) -> str:
    """Return ``text`` with secrets replaced by ``[redacted]``.

    Args:
        text: Any text: an entry's title, body, tag or other string, or a rendered prompt.

    Returns:
        The text with every pattern of the module docstring redacted. Idempotent.
    """
    return _apply_patterns(text) if may_hold_secret(text) else text


def holds_secret(text: str) -> bool:
    """Return whether :func:`redact_secrets` would change ``text``."""
    return redact_secrets(text) != text


def _keep_prefix(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED


def _keep_quotes(match: re.Match[str]) -> str:
    quote = match.group(2) or match.group(3) or ""
    return f"{match.group(1)}{quote}{REDACTED}{quote}"


def _apply_patterns(text: str) -> str:
    """Run every redaction pattern over ``text`` (what :func:`redact_secrets` does when needed)."""
    out = _PRIVATE_KEY.sub("[redacted private key]", text)
    out = _JSON_ASSIGNMENT.sub(_keep_prefix, out)
    out = _URL_CREDENTIALS.sub(lambda m: m.group(1) + REDACTED + m.group(2), out)
    out = _URL_QUERY.sub(lambda m: f"{m.group(1)}{m.group(2)}={REDACTED}", out)
    out = _CURL_USER.sub(_keep_prefix, out)
    out = _AUTH_HEADER.sub(_keep_prefix, out)
    out = _BEARER.sub(_keep_prefix, out)
    out = _JWT.sub(REDACTED, out)
    out = _ASSIGNMENT.sub(_keep_quotes, out)
    out = _PHRASE.sub(_keep_quotes, out)
    for pattern in _VENDOR_KEYS:
        out = pattern.sub(REDACTED, out)
    return out


def names_secret(name: str) -> bool:
    """Whether ``name`` (a key, a relation type) names a secret: ``password``, ``DB_PASSWORD``, ``client_secret``."""
    return _SECRET_NAME.fullmatch(name.strip()) is not None


def _redact_value(value: Any) -> Any:
    """Redact every scalar under a secret-named key whole (numbers and booleans too), keeping shape."""
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    if value is None or value == "" or value == REDACTED:
        return value
    return REDACTED


def redact_tree(value: Any) -> Any:
    """Return a copy of JSON data with every string redacted, dictionary keys included.

    A value under a key that names a secret (:func:`names_secret`: ``{"password": "hunter2"}``)
    is redacted whole, since the pair is what a writer renders (``password=hunter2``). Two keys
    that redact to the same text keep both values: the later one gets ``#2``, ``#3``… appended,
    so redaction never drops data.
    """
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            name = redact_secrets(key) if isinstance(key, str) else key
            if name in out:
                n = 2
                while f"{name}#{n}" in out:
                    n += 1
                name = f"{name}#{n}"
            out[name] = _redact_value(item) if isinstance(key, str) and names_secret(key) else redact_tree(item)
        return out
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    return value


def redact_entry(entry: MemoryEntry) -> MemoryEntry:
    """Return a copy of ``entry`` with every string it holds redacted (the id and version aside).

    Redacted: title, body, each tag, source, scope, parent, each relation's type and target (the
    whole target when the type names a secret), every key and string of ``extra`` (new dicts and
    lists all the way down; values under secret-named keys whole). The id is not
    changed (a caller that writes it checks it with :func:`holds_secret` and refuses).

    Args:
        entry: The entry to write.

    Returns:
        A new entry; ``entry`` itself is not changed.
    """

    def opt(text: str | None) -> str | None:
        return None if text is None else redact_secrets(text)

    return entry.model_copy(
        update={
            "title": redact_secrets(entry.title),
            "body": redact_secrets(entry.body),
            "tags": [redact_secrets(tag) for tag in entry.tags],
            "source": opt(entry.source),
            "scope": opt(entry.scope),
            "parent": opt(entry.parent),
            "relations": [
                rel.model_copy(
                    update={
                        "type": redact_secrets(rel.type),
                        "target": REDACTED if names_secret(rel.type) else redact_secrets(rel.target),
                    }
                )
                for rel in entry.relations
            ],
            "extra": redact_tree(entry.extra),
        }
    )
