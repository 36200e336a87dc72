"""How WhiteBox maps onto memcore's :class:`~memcore.models.MemoryEntry` (as data).

=============================  ==============================================================
WhiteBox                       MemoryEntry
=============================  ==============================================================
``observations/YYYY-MM.md``    ``kind=observation``, id ``observations/YYYY-MM.md#N`` (N is
block                          1-based, counting the file's observation blocks in order, as
                               v1.1 ``derived_from`` and the reference ``listConflicts`` do)
stable file (root,             ``kind=fact``, id = vault-relative path
``relationships/``,
``projects/``, ``sensitive/``)
``proposed/*.md``              ``kind=proposal``, status from ``status:`` (``proposed``)
``sources/*.md`` (v1.1)        ``kind=reference``
``conversations/``,            ``kind=note``; ``extra["whitebox"]["layer"]`` names the folder
``synthesized/``,
``reactions/``, other folders
``date: YYYY-MM-DD``           ``created_at`` 00:00 UTC, ``date_only=True``
``source``                     ``source``
``tags`` (inline list)         ``tags`` as written (namespaces kept)
``confidence`` label           ``confidence`` via :mod:`memcore.mapping` (very-low .1 … very-high
                               .9); an unknown label -> ``None`` and
                               ``extra["whitebox"]["confidence_label"]``
``source_ref``, ``context``,   ``extra["whitebox"][key]``
``kind`` (v1.1)
``scope``                      ``scope``
``title``                      ``title`` (memcore addition; stable files: first ``# `` heading)
any other key                  ``extra["whitebox"]["fields"][key]``
``memcore: {json}``            the MemoryEntry fields WhiteBox has no slot for (status,
                               relations, parent, expires_at, times, exact confidence, other
                               formats' ``extra``), written by memcore and read back
=============================  ==============================================================
"""

from __future__ import annotations

from memcore.models import Kind, Status

__all__ = [
    "FOLDER_KINDS",
    "OBSERVATION_KEYS",
    "SPECIAL_ROOT_FILES",
    "STATUS_FROM_WHITEBOX",
    "STATUS_TO_WHITEBOX",
    "V11_KEYS",
    "kind_for_path",
]

#: Top-level folder -> kind of the markdown files inside it. Folders not listed -> ``note``.
FOLDER_KINDS: dict[str, Kind] = {
    "relationships": Kind.FACT,
    "projects": Kind.FACT,
    "sensitive": Kind.FACT,
    "proposed": Kind.PROPOSAL,
    "sources": Kind.REFERENCE,
    "conversations": Kind.NOTE,
    "synthesized": Kind.NOTE,
    "reactions": Kind.NOTE,
}

#: Files at the vault root that are the vault's machinery, not entries.
SPECIAL_ROOT_FILES: frozenset[str] = frozenset(
    {"AGENTS.md", "README.md", "tags.md", "scopes.md", "promotion.md", "CLAUDE.md", "GEMINI.md"}
)

#: Folders never read as entries (derived or log data).
SKIPPED_FOLDERS: frozenset[str] = frozenset({"audit", "node_modules"})

#: The reference writer's observation keys, in its order.
OBSERVATION_KEYS: tuple[str, ...] = ("date", "source", "tags", "confidence", "source_ref", "context", "kind")
#: v1.1 optional observation keys kept in ``extra["whitebox"]``.
V11_KEYS: tuple[str, ...] = ("source_ref", "context", "kind")

#: WhiteBox ``status:`` values (proposals, tags) -> memcore status.
STATUS_FROM_WHITEBOX: dict[str, Status] = {
    "proposed": Status.PROPOSED,
    "active": Status.ACTIVE,
    "accepted": Status.ACTIVE,
    "applied": Status.DONE,
    "rejected": Status.REJECTED,
    "deprecated": Status.SUPERSEDED,
    "superseded": Status.SUPERSEDED,
    "archived": Status.ARCHIVED,
}
#: memcore status -> WhiteBox ``status:`` value for proposal files.
STATUS_TO_WHITEBOX: dict[Status, str] = {
    Status.PROPOSED: "proposed",
    Status.ACTIVE: "active",
    Status.DONE: "applied",
    Status.REJECTED: "rejected",
    Status.SUPERSEDED: "superseded",
    Status.ARCHIVED: "archived",
}


def kind_for_path(rel: str) -> Kind:
    """Return the kind of the non-observation file at vault-relative ``rel``."""
    if "/" not in rel:
        return Kind.FACT
    return FOLDER_KINDS.get(rel.split("/", 1)[0], Kind.NOTE)
