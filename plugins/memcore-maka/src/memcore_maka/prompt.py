"""The memory section of a model's system prompt, as Maka builds it (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memcore.models import Status
from memcore.redact import redact_secrets
from memcore_maka._parse import js_trim, js_trim_end, parse_tags
from memcore_maka.codec import EntryView, normalize_meta_value

__all__ = ["PROMPT_MAX_CHARS", "TRUNCATION_MARKER", "prompt_text"]

#: Maka's ``LOCAL_MEMORY_PROMPT_MAX_CHARS`` (UTF-16 code units, as JavaScript counts).
PROMPT_MAX_CHARS = 12_000
#: Maka's ``LOCAL_MEMORY_PROMPT_TRUNCATION_MARKER``.
TRUNCATION_MARKER = "[本地记忆已按长度截断]"


def _utf16_cut(text: str, units: int) -> str:
    raw = text.encode("utf-16-le", "surrogatepass")[: units * 2]
    return raw.decode("utf-16-le", "ignore")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def prompt_text(
    views: Iterable[EntryView], session_id: str | None, expired: Callable[[EntryView], bool], budget: int
) -> str:
    """Return the prompt section of ``views``: active, unexpired, visible in ``session_id``.

    ``scope=session`` entries show only when ``session_id`` equals their ``sessionId`` (one
    without ``sessionId`` never shows). Each entry is ``## title``, then ``Tags: a, b`` when
    tagged, then its content; secrets redacted; blocks joined by a blank line; over ``budget``
    UTF-16 code units it is cut (never inside a character) and ends with
    :data:`TRUNCATION_MARKER`.
    """
    session = normalize_meta_value(session_id or "")
    blocks: list[str] = []
    for item in views:
        if item.entry.status is not Status.ACTIVE or expired(item):
            continue
        if item.meta.get("scope") == "session" and not (session and item.meta.get("sessionId") == session):
            continue
        lines = [f"## {item.section.title}"]
        tags = parse_tags(item.meta.get("tags"))
        if tags:
            lines.append(f"Tags: {', '.join(tags)}")
        lines.append(item.section.content)
        blocks.append(redact_secrets("\n".join(lines)))
    body = js_trim("\n\n".join(blocks))
    if not body:
        return ""
    if _utf16_len(body) <= budget:
        return body
    return f"{js_trim_end(_utf16_cut(body, budget))}\n\n{TRUNCATION_MARKER}"
