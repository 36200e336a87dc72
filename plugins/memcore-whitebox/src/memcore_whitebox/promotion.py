"""Promotion: observations that agree become a proposed stable fact (spec "Promotion").

Candidates follow the spec's rule: a cluster of observations with the same tags (the reference
cluster key: the sorted, lower-cased tag list) holding at least ``threshold`` (default 3)
observations of confidence medium or higher. Beside it, the reference code's weighted score
(``promotion.ts``, reference note 8) is reported: Σ confidence weight (very-low .1 … very-high
.9, missing or unknown .5) * source trust (1.0) * recency (0.5 ** (age_days / 30); 0.5 without
a date) * kind (``inference`` 1.3, else 1.0); the reference promotes with ≥ 2 distinct sources
and score ≥ 1.5, or one source and score ≥ 3.0.

Applying a candidate writes a proposal (``proposed/<timestamp>-<slug>.md`` with
``derived_from``), never a fact, unless auto-promotion is authorised for the active scope: a
line ``auto-promote: <scope>, <scope>`` in promotion.md or scopes.md (memcore's reading of
the spec's "explicitly authorizes auto-promotion within named scopes"). Then the observations
are appended to the target stable file as a list. The observations always stay in place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memcore.errors import MemcoreError
from memcore.frontmatter import FrontmatterDocument, parse_frontmatter
from memcore.models import Kind, MemoryEntry, Query, utc_now
from memcore.storage import TextFile
from memcore_whitebox.provider import WhiteBoxProvider

__all__ = [
    "Candidate",
    "apply_candidate",
    "auto_promotion_scopes",
    "find_candidates",
    "observation_score",
    "run_promotion",
    "target_for",
]

HALF_LIFE_DAYS = 30.0
SCORE_THRESHOLD = 1.5
SINGLE_SOURCE_THRESHOLD = 3.0
_AUTO = re.compile(r"^\s*(?:[-*]\s*)?auto-promote\s*:\s*(.+)$", re.I | re.M)


@dataclass
class Candidate:
    """One cluster of matching observations.

    Attributes:
        tags: The cluster key: sorted, lower-cased tags.
        observations: Every observation of the cluster, in vault order.
        eligible: Those with confidence medium or higher (the spec's count).
        score: The reference weighted score of the whole cluster.
        distinct_sources: Number of distinct non-empty sources.
        reference_promote: Whether the reference rule would promote.
        reason: The reference rule's explanation.
        target: Stable file the fact belongs in (vault-relative).
        meets_rule: Whether the spec's rule (``threshold`` eligible observations) holds.
    """

    tags: tuple[str, ...]
    observations: list[MemoryEntry] = field(default_factory=list)
    eligible: list[MemoryEntry] = field(default_factory=list)
    score: float = 0.0
    distinct_sources: int = 0
    reference_promote: bool = False
    reason: str = ""
    target: str = "identity.md"
    meets_rule: bool = False


def _recency(entry: MemoryEntry, as_of: datetime) -> float:
    if entry.created_at is None:
        return 0.5
    days = (as_of - entry.created_at).total_seconds() / 86400.0
    if days <= 0:
        return 1.0
    return float(2.0 ** (-days / HALF_LIFE_DAYS))


def observation_score(entry: MemoryEntry, as_of: datetime) -> float:
    """Return one observation's reference score: confidence * trust * recency * kind."""
    confidence = entry.confidence if entry.confidence is not None else 0.5
    kind = entry.extra.get("whitebox", {}).get("kind")
    return confidence * 1.0 * _recency(entry, as_of) * (1.3 if kind == "inference" else 1.0)


def target_for(tags: Iterable[str]) -> str:
    """Return the stable file a cluster with ``tags`` belongs in.

    ``project:<slug>`` -> ``projects/<slug>.md``, ``relationship:<name>`` ->
    ``relationships/<name>.md``, ``working-style`` -> ``working-style.md``, else
    ``identity.md``.
    """
    tags = list(tags)
    for tag in tags:
        prefix, _, name = tag.partition(":")
        if prefix == "project" and name:
            return f"projects/{name}.md"
        if prefix == "relationship" and name:
            return f"relationships/{name}.md"
    if "working-style" in tags:
        return "working-style.md"
    return "identity.md"


def find_candidates(
    entries: Iterable[MemoryEntry], *, threshold: int = 3, as_of: datetime | None = None
) -> list[Candidate]:
    """Group observations by tags and score each group.

    Args:
        entries: Entries to consider (non-observations are skipped).
        threshold: Eligible observations (confidence ≥ medium) the spec's rule needs.
        as_of: Reference time for recency (default now, UTC).

    Returns:
        Every cluster with at least one eligible observation, best score first.
    """
    as_of = as_of or utc_now()
    clusters: dict[tuple[str, ...], Candidate] = {}
    for entry in entries:
        if entry.kind is not Kind.OBSERVATION or not entry.tags:
            continue
        key = tuple(sorted({t.lower() for t in entry.tags}))
        cand = clusters.setdefault(key, Candidate(tags=key, target=target_for(key)))
        cand.observations.append(entry)
        if entry.confidence is not None and entry.confidence >= 0.5:
            cand.eligible.append(entry)
    out = []
    for cand in clusters.values():
        if not cand.eligible:
            continue
        cand.score = sum(observation_score(e, as_of) for e in cand.observations)
        sources = {e.source.strip() for e in cand.observations if e.source and e.source.strip()}
        cand.distinct_sources = len(sources)
        if not sources:
            cand.reason = "no source attribution on any observation"
        elif len(sources) >= 2 and cand.score >= SCORE_THRESHOLD:
            cand.reference_promote = True
            cand.reason = f"cross-source corroboration ({len(sources)} sources, score {cand.score:.2f} >= 1.5)"
        elif len(sources) == 1 and cand.score >= SINGLE_SOURCE_THRESHOLD:
            cand.reference_promote = True
            cand.reason = f"single-source high weight (score {cand.score:.2f} >= 3.0)"
        elif len(sources) == 1:
            cand.reason = f"only one source; score {cand.score:.2f} below single-source threshold 3.0"
        else:
            cand.reason = f"score {cand.score:.2f} below cross-source threshold 1.5 ({len(sources)} sources)"
        cand.meets_rule = len(cand.eligible) >= threshold
        out.append(cand)
    out.sort(key=lambda c: (-c.score, c.tags))
    return out


def auto_promotion_scopes(provider: WhiteBoxProvider) -> set[str]:
    """Return the scopes promotion.md or scopes.md authorise for auto-promotion."""
    names: set[str] = set()
    for name in ("promotion.md", "scopes.md"):
        try:
            data, _version = provider.storage.read(name)
        except FileNotFoundError:
            continue
        text = TextFile.decode(data, path=name).text
        for m in _AUTO.finditer(text):
            names.update(s.strip().strip("`").strip() for s in re.split(r"[,+]", m.group(1)) if s.strip())
    return names


def _existing_proposals(provider: WhiteBoxProvider) -> list[set[str]]:
    out = []
    for entry in provider.iter_entries(Query(kinds=[Kind.PROPOSAL])):
        front = entry.extra.get("whitebox", {}).get("frontmatter", {})
        derived = front.get("derived_from") if isinstance(front, dict) else None
        if isinstance(derived, list):
            out.append({str(x) for x in derived})
    return out


def _content(cand: Candidate) -> str:
    lines = []
    for entry in cand.eligible:
        text = " ".join(entry.body.split())
        lines.append(f"- {text} ({entry.id})")
    return "\n".join(lines)


def apply_candidate(provider: WhiteBoxProvider, cand: Candidate, *, auto: bool) -> tuple[str, str]:
    """Write a candidate: a proposal, or (``auto``) the fact itself in its stable file.

    Returns:
        ``(action, vault-relative path)``, action ``"proposed"`` or ``"promoted"``.
    """
    ids = [e.id for e in cand.eligible if e.id]
    if not auto:
        rationale = (
            f"{len(cand.eligible)} observations tagged [{', '.join(cand.tags)}] with confidence medium or "
            f"higher (spec rule). Reference score {cand.score:.2f} from {cand.distinct_sources} source(s): "
            f"{cand.reason}."
        )
        stored = provider.propose_stable_edit(
            cand.target,
            source="memcore-promote",
            rationale=rationale,
            content=_content(cand),
            extra={"derived_from": ids},
        )
        return "proposed", stored.id or ""
    section = f"\n## Promoted {utc_now().date().isoformat()}\n\n{_content(cand)}\n"

    def edit(data: bytes | None) -> bytes:
        if data is not None:
            tf = TextFile.decode(data, path=cand.target)
            doc = parse_frontmatter(tf.text, path=cand.target)
            doc.body = doc.body.rstrip("\n") + "\n" + section
            return tf.encode(doc.dumps())
        title = cand.target.rsplit("/", 1)[-1].removesuffix(".md")
        doc = FrontmatterDocument.new({"schema": "whitebox/1.0"}, f"\n# {title}\n{section}")
        return doc.dumps().encode("utf-8")

    return "promoted", provider.promote(cand.target, edit)


def run_promotion(
    provider: WhiteBoxProvider,
    *,
    dry_run: bool = False,
    threshold: int = 3,
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """Find candidates and (unless ``dry_run``) write them; return one report row each.

    Rows: ``tags``, ``observations`` (ids), ``eligible`` (count), ``score`` (2 decimals),
    ``distinct_sources``, ``reference_promote``, ``reason``, ``meets_rule``, ``target``,
    ``action`` (``"below-threshold"``, ``"would-propose"``, ``"would-promote"``,
    ``"already-proposed"``, ``"proposed"``, ``"promoted"``, ``"failed"``) and ``path``; a failed
    row also has ``error`` (why: e.g. a tag that makes an unsafe path). A failed group never
    stops the others.
    """
    if as_of is not None and as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=UTC)
    candidates = find_candidates(provider.iter_entries(), threshold=threshold, as_of=as_of)
    auto = provider.active_scope is not None and provider.active_scope in auto_promotion_scopes(provider)
    existing = _existing_proposals(provider) if candidates else []
    rows = []
    for cand in candidates:
        ids = [e.id for e in cand.eligible]
        row: dict[str, Any] = {
            "tags": list(cand.tags),
            "observations": [e.id for e in cand.observations],
            "eligible": len(cand.eligible),
            "score": round(cand.score, 2),
            "distinct_sources": cand.distinct_sources,
            "reference_promote": cand.reference_promote,
            "reason": cand.reason,
            "meets_rule": cand.meets_rule,
            "target": cand.target,
            "action": "below-threshold",
            "path": None,
        }
        if cand.meets_rule:
            # one bad group (a tag that makes an unsafe path, a target out of scope) is reported
            # as failed and skipped; the other groups are still promoted
            try:
                if not auto and set(ids) in existing:
                    row["action"] = "already-proposed"
                elif dry_run:
                    provider.check_writable("promote")
                    provider.check_in_scope(cand.target)
                    provider.storage.exists(cand.target)  # refuses a target that leaves the vault
                    row["action"] = "would-promote" if auto else "would-propose"
                else:
                    row["action"], row["path"] = apply_candidate(provider, cand, auto=auto)
            except MemcoreError as exc:
                row["action"], row["error"] = "failed", str(exc)
        rows.append(row)
    return rows
