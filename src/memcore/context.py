"""The memory block a host application puts into an agent's system prompt.

:func:`build_context` reads the *active* entries a provider lets it see, ranks them by
relevance to an optional query and renders as many as fit in a character budget, ending with
a visible truncation marker when something was left out::

    import memcore
    from memcore.context import build_context

    with memcore.open("whitebox:./vault", scope="work") as store:
        system_prompt += build_context(store, query="deploy friday", budget=8000)

The same block is ``memcore context`` on the command line and the ``memcore://context``
resource of ``memcore serve``.

Gates. Every read goes through the provider, so a provider's own rules (WhiteBox's active scope
and ``sensitive/``, Box-memory's teams…) decide what is visible. On top of that
:func:`agent_read_denied` asks the provider whether an agent may read the store at all (Maka's
agent-read switch and incognito): when it may not, the block is empty; and :func:`agent_view`
lets a provider hide or redact single entries for agents.

Ranking (documented, deterministic):

* The query and each entry are split into terms: runs of letters and digits (``\\w+``),
  case-folded, NFC-normalised; terms shorter than 2 characters are ignored. Terms match
  exactly (no stemming: ``deploy`` does not match ``deploys``).
* An entry's score is ``sum over query terms t of idf(t) * (3*tf_title(t) + 2*tf_tags(t) +
  tf_body(t))`` where ``tf_x(t)`` is how often ``t`` occurs in that field and
  ``idf(t) = ln(1 + N / df(t))`` over the ``N`` visible active entries.
* Entries are ordered by score (highest first), then most recently updated (``updated_at``,
  else ``created_at``), then the store's own order. Entries scoring 0 still follow the matching
  ones: they are memory too, only less relevant. Without a query the order is recency.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from memcore.models import MemoryEntry, Query, Status, utc_now
from memcore.provider import MemoryProvider

__all__ = [
    "DEFAULT_BUDGET",
    "MIN_BUDGET",
    "TRUNCATION_MARKER",
    "agent_entries",
    "agent_read_denied",
    "agent_view",
    "build_context",
    "rank_entries",
    "render_entry",
    "score_entries",
    "tokenize",
]

#: Default budget in characters (Maka's own prompt cap is 12,000 characters).
DEFAULT_BUDGET = 12_000

#: Marker appended when entries (or the end of one) did not fit; ``{shown}``/``{total}`` filled in.
TRUNCATION_MARKER = "[memory truncated: {shown} of {total} entries shown; raise the budget to see more]"

#: The smallest budget :func:`build_context` accepts (room for the heading and the marker).
MIN_BUDGET = 200

_HEADING = "# Memory\n\n"
_TERM = re.compile(r"\w+")


def agent_read_denied(provider: MemoryProvider) -> str | None:
    """Return why an agent may not read ``provider``'s store right now, or ``None`` if it may.

    The contract providers follow (all optional, checked in this order):

    * a method ``agent_read_denied() -> str | None`` returning a human reason or ``None``;
    * an attribute or property ``agent_read_enabled: bool``; ``False`` denies;
    * an attribute or property ``incognito: bool``; ``True`` denies.

    A provider with none of them allows agent reads (its own read rules still apply).

    Args:
        provider: An opened provider.

    Returns:
        ``None`` when agents may read, else one sentence naming the format, the store and the
        switch to flip.
    """
    hook: Callable[[], Any] | None = getattr(provider, "agent_read_denied", None)
    if callable(hook):
        reason = hook()
        return str(reason) if reason else None
    name = getattr(provider, "format_name", "store")
    where = getattr(provider, "location", "")
    if getattr(provider, "agent_read_enabled", True) is False:
        return (
            f"{name}: agent read is off for {where}; nothing is served to agents until the "
            "store's agent-read switch is turned on (-o agent_read_enabled=true)"
        )
    if getattr(provider, "incognito", False) is True:
        return (
            f"{name}: incognito is active for {where}; agents can neither read nor write it "
            "(open it without -o incognito=true)"
        )
    return None


def agent_view(provider: MemoryProvider, entry: MemoryEntry) -> MemoryEntry | None:
    """Return ``entry`` as an agent may see it, or ``None`` when an agent may not see it at all.

    A provider whose format has per-entry rules for agents (entries private to another session,
    secrets to redact from prompts…) offers a method ``agent_view(entry) -> MemoryEntry | None``
    returning the entry to show (possibly a redacted copy) or ``None`` to hide it; without one
    every entry the provider returns is shown as it is. Used by :func:`build_context` and by
    every read of ``memcore serve``.

    Args:
        provider: An opened provider.
        entry: An entry the provider returned.
    """
    hook: Callable[[MemoryEntry], MemoryEntry | None] | None = getattr(provider, "agent_view", None)
    if callable(hook):
        return hook(entry)
    return entry


def agent_entries(provider: MemoryProvider, entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
    """Return :func:`agent_view` of each entry, leaving out the hidden ones."""
    out = []
    for entry in entries:
        view = agent_view(provider, entry)
        if view is not None:
            out.append(view)
    return out


def tokenize(text: str) -> list[str]:
    """Split ``text`` into ranking terms (``\\w+`` runs, case-folded, NFC, length >= 2)."""
    text = unicodedata.normalize("NFC", text).casefold()
    return [t for t in _TERM.findall(text) if len(t) >= 2]


def _when(entry: MemoryEntry) -> float:
    moment: datetime | None = entry.updated_at or entry.created_at
    return moment.timestamp() if moment is not None else float("-inf")


def score_entries(entries: Iterable[MemoryEntry], query: str | None) -> list[tuple[float, MemoryEntry]]:
    """Return ``(score, entry)`` pairs, best first (see the module docstring for the formula).

    Args:
        entries: The entries to rank, in the store's order.
        query: Free text; ``None`` or blank gives every entry score 0 (order: recency).

    Returns:
        A new list ordered by score, then recency, then the input order.
    """
    items = list(entries)
    terms = list(dict.fromkeys(tokenize(query or "")))
    scores = [0.0] * len(items)
    if terms:
        counts = [
            (Counter(tokenize(e.title)), Counter(tokenize(" ".join(e.tags))), Counter(tokenize(e.body))) for e in items
        ]
        idf = {}
        for term in terms:
            df = sum(1 for title, tags, body in counts if term in title or term in tags or term in body)
            idf[term] = math.log(1 + len(items) / df) if df else 0.0
        scores = [sum(idf[t] * (3 * title[t] + 2 * tags[t] + body[t]) for t in terms) for title, tags, body in counts]
    order = sorted(range(len(items)), key=lambda i: (-scores[i], -_when(items[i]), i))
    return [(scores[i], items[i]) for i in order]


def rank_entries(entries: Iterable[MemoryEntry], query: str | None = None) -> list[MemoryEntry]:
    """Order entries by relevance to ``query``, then by recency (see :func:`score_entries`).

    Args:
        entries: The entries to rank, in the store's order.
        query: Free text; ``None`` or blank ranks by recency only.

    Returns:
        A new list; the input order breaks remaining ties.
    """
    return [entry for _, entry in score_entries(entries, query)]


def render_entry(entry: MemoryEntry) -> str:
    """Render one entry as a Markdown section for a prompt or an MCP resource.

    Shape::

        ## <title, or the body's first line, or the id>
        id: <id> · kind: <kind> · tags: <a, b> · updated: <YYYY-MM-DD>

        <body>

    Returns:
        The section, ending with one newline.
    """
    title = entry.title.strip()
    if not title:
        first = entry.body.strip().splitlines()[0] if entry.body.strip() else ""
        title = first[:80] or (entry.id or "untitled")
    meta = [f"id: {entry.id}"] if entry.id else []
    meta.append(f"kind: {entry.kind.value}")
    if entry.status is not Status.ACTIVE:
        meta.append(f"status: {entry.status.value}")
    if entry.tags:
        meta.append("tags: " + ", ".join(entry.tags))
    moment = entry.updated_at or entry.created_at
    if moment is not None:
        meta.append(f"updated: {moment.date().isoformat()}")
    body = entry.body.strip("\n")
    text = f"## {title}\n" + " · ".join(meta) + "\n"
    if body:
        text += "\n" + body + "\n"
    return text


def _visible_active(provider: MemoryProvider) -> list[MemoryEntry]:
    now = utc_now()
    return [
        e
        for e in agent_entries(provider, provider.iter_entries(Query(statuses=[Status.ACTIVE])))
        if e.status is Status.ACTIVE and (e.expires_at is None or e.expires_at > now)
    ]


def build_context(provider: MemoryProvider, query: str | None = None, budget: int = DEFAULT_BUDGET) -> str:
    """Return the memory block for a system prompt, at most ``budget`` characters long.

    Active, unexpired entries the provider lets it see are ranked by :func:`rank_entries` and
    rendered by :func:`render_entry` under a ``# Memory`` heading, separated by blank lines.
    Whole entries are added while they fit; the first that does not fit is cut (at a line
    break where possible, ending in `` …``) when at least 120 characters of it fit, or 40 if
    it is the first entry, and the block then ends with
    :data:`TRUNCATION_MARKER`. Nothing is cut when everything fits.

    Args:
        provider: An opened provider; its options (scope…) decide what it returns.
        query: Free text the block should be relevant to, or ``None``.
        budget: Maximum length of the result in characters (``len(str)``), at least
            :data:`MIN_BUDGET`.

    Returns:
        The block, or ``""`` when the store has no visible active entry or when
        :func:`agent_read_denied` denies agent reads (e.g. Maka with agent read off).

    Raises:
        ValueError: ``budget`` is below :data:`MIN_BUDGET`.
        memcore.errors.MemcoreError: Whatever the provider raises while reading.
    """
    if budget < MIN_BUDGET:
        raise ValueError(f"budget must be at least {MIN_BUDGET} characters, got {budget}")
    if agent_read_denied(provider) is not None:
        return ""
    entries = rank_entries(_visible_active(provider), query)
    if not entries:
        return ""
    total = len(entries)
    sections = [render_entry(e) for e in entries]
    full = _HEADING + "\n".join(sections)
    if len(full) <= budget:
        return full
    marker_room = len(TRUNCATION_MARKER.format(shown=total, total=total)) + 2
    room = budget - marker_room
    out = _HEADING
    shown = 0
    for section in sections:
        piece = section if shown == 0 else "\n" + section
        if len(out) + len(piece) <= room:
            out += piece
            shown += 1
            continue
        left = room - len(out)
        if left >= 120 or (shown == 0 and left >= 40):  # a useful part fits: cut at a line break
            cut = piece[: left - 3]  # room for " …"
            newline = cut.rfind("\n")
            if newline > left // 2:
                cut = cut[:newline]
            out += cut.rstrip() + " …\n"
            shown += 1
        break
    out = out.rstrip("\n") + "\n\n" + TRUNCATION_MARKER.format(shown=shown, total=total)
    return out
