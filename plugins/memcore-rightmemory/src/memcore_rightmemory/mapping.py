"""RightMemory's vocabulary and how it maps onto memcore's pivot, as data.

Spec: ../shared/specs/rightmemory-schema.md ("Addressable Items", "Edge Types", "Backing Forms",
"File Set"); what the reference parser (RightMemory's ``graph.py``) decides:
../shared/specs/reference-notes/rightmemory.md. docs/formats/rightmemory.md renders these tables.

=====================  ======================================================================
RightMemory            memcore
=====================  ======================================================================
Memory ``#``/``F#``    kind ``fact`` (heading or node)
Memory ``S#``          kind ``skill``
Memory ``M#``          kind ``reference``
``MF#`` / ``MQ#``      kind ``reference``
Pursuit tree item      kind ``pursuit``
Agent Corrections      kind ``correction`` (``###`` entries of the two fixed collections; read-only)
``Uncertain:`` prefix  confidence :data:`UNCERTAIN_CONFIDENCE` (memcore ``low``, 0.3)
graph id               ``id``
heading / node text    ``title``
heading body           ``body`` (nodes: ``""``)
containing heading     ``parent`` (nearest addressable ancestor, across F# files)
edge ``type:target``   ``Relation(type, target)``
marker, file, depth    ``extra["rightmemory"]`` (``marker``, ``file``, ``depth``, ``backing``…)
=====================  ======================================================================

Writing back, a kind, confidence or status other than what the item itself implies, tags,
source, timestamps, scope, expiry, relations that are not edges and other formats' ``extra``
go into the item's ``<!-- memcore: {...} -->`` comment (:mod:`memcore_rightmemory._meta`), so
every :class:`~memcore.models.Kind` and :class:`~memcore.models.Status` round-trips.
"""

from __future__ import annotations

import re

from memcore.mapping import CONFIDENCE_LABELS
from memcore.models import Kind

__all__ = [
    "AGENT_CORRECTION_FILES",
    "DIAGNOSTIC_CODES",
    "EDGE_TYPES",
    "EDIT_FEEDBACK_FILE",
    "ITEM_ID_RE",
    "KIND_BY_MARKER",
    "MARKERS",
    "MEMORY_ONLY_MARKERS",
    "RELATION_TYPES",
    "TERMINAL_MARKERS",
    "UNCERTAIN_CONFIDENCE",
    "UNCERTAIN_PREFIX",
    "kind_for",
]

#: The fifteen edge types (schema "Edge Types"), in the spec's order.
EDGE_TYPES: tuple[str, ...] = (
    "dep", "emb", "bak", "agg", "ver", "ext", "up", "rel",
    "loc", "run", "cfg", "out", "in", "doc", "todo",
)  # fmt: skip

#: Native edge type -> memcore's pivot relation type, for conversions between formats
#: (:func:`memcore.mapping.translate_relation_type`): ``rel`` is the schema's "general
#: relationship, when no specific type fits", which is what Box's ``related`` means; ``dep``
#: ("A depends on B") is the pivot's ``depends_on`` (WhiteBox's and the memory tools'). The
#: other thirteen edge types have no counterpart elsewhere and keep their names.
RELATION_TYPES: dict[str, str] = {"rel": "related", "dep": "depends_on"}

#: Item id grammar ``[A-Za-z0-9_.-]+``.
ITEM_ID_RE = re.compile(r"^[A-Za-z0-9_.-]+$")

#: Heading markers, as written inside the braces before the id.
MARKERS: tuple[str, ...] = ("#", "F#", "M#", "S#", "MF#", "MQ#")
#: Markers valid only in the Memory module.
MEMORY_ONLY_MARKERS: frozenset[str] = frozenset({"M#", "S#", "MF#", "MQ#"})
#: Markers a ``####`` terminal reference may use.
TERMINAL_MARKERS: frozenset[str] = frozenset({"F#", "M#", "S#", "MF#", "MQ#"})

#: Memory-module kind by heading marker (``"node"`` for nodes).
KIND_BY_MARKER: dict[str, Kind] = {
    "node": Kind.FACT,
    "#": Kind.FACT,
    "F#": Kind.FACT,
    "M#": Kind.REFERENCE,
    "S#": Kind.SKILL,
    "MF#": Kind.REFERENCE,
    "MQ#": Kind.REFERENCE,
}

UNCERTAIN_PREFIX = "Uncertain:"
UNCERTAIN_CONFIDENCE: float = CONFIDENCE_LABELS["low"]

#: The two fixed Agent Corrections collections (schema "Modules"), by collection name.
AGENT_CORRECTION_FILES: dict[str, str] = {
    "writing": "MEMORY_agent-corrections-writing.md",
    "design": "MEMORY_agent-corrections-design.md",
}
#: Root RightMemory Edit Feedback file.
EDIT_FEEDBACK_FILE = "corrections.md"


def kind_for(family: str, marker: str) -> Kind:
    """Return the memcore kind of a graph item.

    Args:
        family: ``"memory"`` or ``"pursuit"`` (the module whose tree holds the item).
        marker: The heading marker (``"#"``, ``"F#"``…) or ``"node"``.
    """
    if family == "pursuit":
        return Kind.PURSUIT
    return KIND_BY_MARKER.get(marker, Kind.FACT)


#: Every diagnostic code the validator emits, with what it means.
DIAGNOSTIC_CODES: dict[str, str] = {
    "rm.missing-root": "MEMORY.md or PURSUITS.md is missing from the store root",
    "rm.foreign-root": "MEMORY.md or PURSUITS.md holds no RightMemory item but is another format's file (Maka)",
    "rm.unreadable": "a graph file is not UTF-8 text (it is not parsed and never rewritten)",
    "rm.unread-text": "text in no entry (continuation lines or nested plain bullets of a node, paragraphs "
    "after a node list, text under a plain heading or before a file's first heading): not carried by conversions",
    "rm.irregular-file": "a graph file is a symlink, not a regular file, or outside the root",
    "rm.invalid-id": "a heading, node or Focus id outside [A-Za-z0-9_.-]+",
    "rm.malformed-heading-edges": "an anchored heading with text after the anchor that is not an edge list",
    "rm.unsupported-marker": "a heading anchor {X#id} with an unknown marker",
    "rm.anchor-in-code": "a heading whose only anchor is inside inline code or HTML (graph.py reads a malformed one)",
    "rm.reference-reads-syntax": "a line graph.py reads as a node or anchored heading that is no item in Markdown",
    "rm.reference-line-break": "a line holding a character str.splitlines() breaks at (U+2028, U+0085...)",
    "rm.heading-under-f": "a child heading under an F# heading in its containing file",
    "rm.node-under-f": "a node under an F# heading in its containing file",
    "rm.terminal-children": "a child heading or node under a #### terminal reference",
    "rm.heading-too-deep": "a heading deeper than ####",
    "rm.terminal-marker": "a #### heading without an F#/M#/S#/MF#/MQ# anchor",
    "rm.terminal-parent": "a #### terminal reference not directly under a ### heading",
    "rm.memory-only-marker": "an M#/S#/MF#/MQ# heading in the Pursuit tree",
    "rm.reserved-id": "a Pursuit F# heading with the reserved id `rules`",
    "rm.invalid-next-action": "a **Next:** bullet whose action is not do, ask or wait",
    "rm.node-missing-edges": "a node line without an edge list (write → [] when empty)",
    "rm.duplicate-id": "an id used twice across Memory and Pursuit",
    "rm.shared-backing": "one backing file claimed by two typed headings",
    "rm.missing-backing": "the backing file of an F#/M#/S# heading is missing or not a regular file",
    "rm.cyclic-backing": "an F# detail file that (indirectly) references itself",
    "rm.multi-attached": "a detail file attached by more than one F# heading",
    "rm.malformed-edge": "an edge that is not type:target",
    "rm.duplicate-edge": "the same edge twice on one item",
    "rm.self-edge": "an edge from an item to itself",
    "rm.unknown-edge-type": "an edge type outside the fifteen",
    "rm.dangling-edge": "an edge to an id that is not in the graph",
    "rm.containment-edge": "a rel: edge to one of the item's own ancestor headings",
    "rm.focus-invalid-id": "a Focus reference whose id is not a valid id",
    "rm.focus-duplicate": "the same Focus reference twice",
    "rm.focus-dangling": "a Focus reference to an id that is not in the graph",
    "rm.focus-not-pursuit": "a Focus reference to something that is not a Pursuit heading",
    "rm.bad-meta": "a <!-- memcore: … --> comment that is not a JSON object (warning)",
    "rm.corrections-entries": "an Agent Corrections collection with more than 15 entries",
    "rm.corrections-lines": "an Agent Corrections collection with more than 180 non-empty lines",
    "rm.corrections-entry-lines": "an Agent Corrections entry with more than 16 non-empty lines",
    "rm.corrections-line-length": "an Agent Corrections collection with lines over 200 characters",
    "rm.feedback-orphan-section": "a ### section before any ## entry in corrections.md",
    "rm.feedback-entries": "corrections.md with more than 15 entries",
    "rm.feedback-unexpected-section": "a ### section other than Candidate / Proposed edit / Accepted edit",
    "rm.feedback-missing-section": "an entry without one of the three ### sections",
    "rm.feedback-repeated-section": "an entry repeating one of the three ### sections",
    "rm.feedback-order": "sections not in the order Candidate, Proposed edit, Accepted edit",
    "rm.feedback-empty-section": "one of the three ### sections with no content",
}
