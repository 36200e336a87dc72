"""memory.jsonl <-> :class:`~memcore.models.MemoryEntry`: the field table, as data (tables only).

The code that applies these tables is :mod:`memcore_mcpmemory.codec`. Spec: the MCP reference
memory server's ``memory.jsonl`` (``../shared/specs/mcp-memory-jsonl.md``, sections 2, 4, 6).

Native slots (docs/formats/mcpmemory.md has the full table):

=====================  ===============================================================
MemoryEntry            memory.jsonl
=====================  ===============================================================
``id``                 the entity's ``name`` (identity is exact string equality); a later
                       entity with a name already used gets ``<name>#2``, ``#3``… and its
                       exact name in ``extra["mcpmemory"]["name"]``
``title``              the entity's ``name``
``kind``               ``entityType`` when it names a memcore kind (any case), else ``note``;
                       the exact ``entityType`` is always in ``extra["mcpmemory"]["entityType"]``
``body``               the ``observations``, one markdown list item each (``- text``; the
                       lines of a multi-line observation after the first indented by two
                       spaces; an empty observation is ``-``)
``relations``          relation records whose ``from`` is the entity: ``relationType`` ->
                       ``type``, ``to`` -> ``target`` (unresolved when no entity has that name)
record keys of forks   ``extra["mcpmemory"]["fields"]`` (e.g. ``createdAt``), written back
=====================  ===============================================================

Everything else (``status``, ``tags``, ``confidence``, ``source``, the timestamps, ``scope``,
``parent``, ``expires_at``, other formats' ``extra``, a title other than the name, a body that
is not such a list) has no slot: it is kept in one key the reference server ignores, ``memcore``
(a JSON object on the entity record, after the native keys), and only when there is something to
keep. The server drops unknown keys when it next saves the file, so these values survive memcore
and other JSONL readers, not a write by the server itself.
"""

from __future__ import annotations

from memcore.models import Kind

__all__ = [
    "ENTITY_KEYS",
    "FORMAT",
    "KIND_FOR_UNKNOWN_TYPE",
    "LEGACY_KEYS",
    "MEMCORE_KEY",
    "RELATION_KEYS",
    "kind_for_entity_type",
]

#: The format name and ``extra`` namespace.
FORMAT = "mcpmemory"

#: The keys of an entity record, in the order the reference server writes them (spec §2).
ENTITY_KEYS: tuple[str, ...] = ("type", "name", "entityType", "observations")

#: The keys of a relation record, in the order the reference server writes them (spec §2).
RELATION_KEYS: tuple[str, ...] = ("type", "from", "to", "relationType")

#: The record key memcore keeps the fields without a native slot in.
MEMCORE_KEY = "memcore"

#: Older spellings read in place of a missing key: basic-memory's importer accepts them
#: (``id``/``entityName`` for ``name``; ``from_id``, ``to_id``, ``relation_type``); the
#: reference server does not, so ``validate`` warns where they are used.
LEGACY_KEYS: dict[str, tuple[str, ...]] = {
    "name": ("id", "entityName"),
    "from": ("from_id",),
    "to": ("to_id",),
    "relationType": ("relation_type",),
}

#: The kind of an entity whose ``entityType`` names no memcore kind (``person``, ``company``…):
#: memcore's default kind, so that an entry given only ``extra["mcpmemory"]["entityType"]`` is
#: written with that type (a kind set to anything else writes the kind's name instead).
KIND_FOR_UNKNOWN_TYPE = Kind.NOTE

_KINDS = {kind.value: kind for kind in Kind}


def kind_for_entity_type(entity_type: str) -> Kind:
    """Return the memcore kind an ``entityType`` maps to (case-insensitive; unknown: ``fact``)."""
    return _KINDS.get(entity_type.casefold(), KIND_FOR_UNKNOWN_TYPE)
