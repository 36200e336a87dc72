"""How a basic-memory note maps onto memcore's :class:`~memcore.models.MemoryEntry` (as data).

One note (one ``.md`` file of the project) is one entry. Observations and relations are written
in the note's body by the user; they stay there, byte for byte.

==============================  ==============================================================
basic-memory                    MemoryEntry
==============================  ==============================================================
``permalink:``                  ``id`` (a note without one: ``generate_permalink(path)``, with
                                ``-1``, ``-2``… on a clash, as basic-memory's indexer assigns)
``title:``                      ``title`` (missing, empty or ``None``: the file stem)
``type:``                       ``kind`` when it names one (``fact``, ``decision``…, case and
                                spaces folded to snake_case); else ``note`` and the type kept
                                in ``extra.basicmemory.type`` (``Person``, ``schema``…)
``tags:``                       ``tags`` (list, comma string or JSON-array string; ``#`` dropped)
``created:`` / ``modified:``    ``created_at`` / ``updated_at`` (a date alone: ``date_only``;
                                naive times read as UTC)
``status:``                     ``status`` when it is one of memcore's statuses; written only
                                when not ``active``
other frontmatter keys          ``extra.basicmemory.metadata`` (as written: ``schema``,
                                ``settings``, ``entity``…), written back in place
the markdown after the fence    ``body`` (the one blank line after ``---`` is the separator)
``- type [[Target]]``,          ``relations``: the explicit type, or ``links_to`` for links in
``[[Target]]``, ``[x](./x.md)``  prose; the target resolved by permalink, title or path to the
                                note's id, else kept as written with ``resolved=False``
observations                    ``extra.basicmemory.observations`` (read only, derived from the
``- [category] text #t (ctx)``  body: category, content, tags, context, temporal)
relation contexts               ``extra.basicmemory.relations`` (read only, when one has a
                                context)
the note's folder               ``extra.basicmemory.folder`` (where ``add`` puts a new note)
the note's layout               ``extra.basicmemory.layout`` (:mod:`memcore.layout`; ``file``: its name)
frontmatter state               ``extra.basicmemory.frontmatter`` (``absent`` / ``malformed``;
                                not set when present)
``memcore:`` mapping            what basic-memory has no slot for: ``confidence``, ``source``,
                                ``scope``, ``parent``, ``expires_at``, an empty ``title``, tags
                                ``tags:`` cannot spell, relations no body line can spell,
                                ``relations_section`` (the trailing ``## Relations`` list memcore
                                wrote for the entry's relations is not part of ``body``), other
                                formats' ``extra``
==============================  ==============================================================
"""

from __future__ import annotations

import re

from memcore.models import Kind, Status

__all__ = [
    "DERIVED_EXTRA",
    "FREE_KEY",
    "KEY_ORDER",
    "LAYOUT",
    "NAMESPACE",
    "RELATION_TYPES",
    "RELATIONS_HEADING",
    "kind_of_type",
    "status_of",
]

#: The ``extra`` namespace of this format.
NAMESPACE = "basicmemory"
#: The frontmatter key holding what basic-memory has no slot for.
FREE_KEY = "memcore"
#: The heading of the relation list memcore appends for relations the body does not hold.
RELATIONS_HEADING = "## Relations"
#: ``extra.basicmemory`` keys computed on read; a writer ignores them.
DERIVED_EXTRA = frozenset({"observations", "relations", "frontmatter", "layout"})
LAYOUT = "layout"  #: ``extra.basicmemory`` key of a note's layout (:mod:`memcore.layout`), never kept as data
#: Order of the keys memcore writes (basic-memory's ``write_note`` order first, §5.1).
KEY_ORDER: tuple[str, ...] = ("title", "type", "permalink", "tags", "created", "modified", "status")
#: basic-memory's relation types that are memcore's under another name: none (it names links ``links_to``).
RELATION_TYPES: dict[str, str] = {}

_KINDS = {k.value for k in Kind}
_STATUSES = {s.value for s in Status}


def kind_of_type(note_type: str) -> Kind:
    """Return the :class:`Kind` a ``type:`` value names (``Decision`` -> decision), else ``note``."""
    folded = re.sub(r"[\s-]+", "_", note_type.strip()).lower()
    return Kind(folded) if folded in _KINDS else Kind.NOTE


def status_of(value: object) -> Status | None:
    """Return the :class:`Status` a ``status:`` value names, else ``None`` (it stays metadata)."""
    return Status(value) if isinstance(value, str) and value in _STATUSES else None
