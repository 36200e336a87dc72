"""Claude Code memory files <-> :class:`~memcore.models.MemoryEntry`: the field table, as data.

The code that applies these tables is :mod:`memcore_claudecode.codec`. Spec:
claude-code-memory.md (Part A: CLAUDE.md files, Part B: auto memory).

A store is a folder. Each file below is one entry; its id is its store-relative path:

=========================  ========================================================================
file                       role
=========================  ========================================================================
``MEMORY.md`` (root)       the auto-memory index (B.3): no entry of its own; its lines give the
                           topics' order and ``extra.claudecode.index_title`` / ``hook``
``<topic>.md`` (root)      ``topic``: one auto memory (B.4), YAML frontmatter + body
``CLAUDE.md``, ``AGENTS.md``  ``instructions`` (A.1, A.2), at any depth; ``.claude/CLAUDE.md`` too
``CLAUDE.local.md``        ``local``: personal instructions
``.claude/rules/**/*.md``  ``rule`` (A.3): optional frontmatter with ``paths``
any ``.md`` an ``@import``  ``import``: a markdown file reached by ``@path`` from an instruction or
reaches inside the store    rule file (up to four hops), read as stable memory too
=========================  ========================================================================

Native slots:

=====================  ===================================================================
MemoryEntry            Claude Code
=====================  ===================================================================
``id``                 the file's store-relative path (``feedback_testing.md``)
``title``              topic: frontmatter ``name`` (else the index link text, else the file
                       stem); other files: the first ``# `` heading (else the path)
``body``               the text after the frontmatter, byte for byte (the whole file when it
                       has none)
``kind``               topic: ``type`` (``metadata.type`` or top-level ``type``), by
                       :data:`KIND_OF_TYPE`; no type: ``note``; instruction files: ``fact``
``updated_at``         topic: ``modified`` (``metadata.modified``, Claude Code 2.1.214+)
``created_at``         ``updated_at`` (Claude Code keeps no creation time)
``relations``          topic: ``[[slug]]`` links in the body (type ``related``; resolved by
                       ``name`` or file stem); instruction, rule and import files: each
                       ``@path`` import (type ``imports``; resolved when the target is an entry)
``extra.claudecode``   ``path``, ``role`` (not for topics), ``description``, ``type`` (an
                       unknown type, raw), ``shape`` (``top-level``: ``type`` is not under
                       ``metadata``), ``frontmatter`` (every other key, e.g. ``originSessionId``,
                       ``node_type``, ``paths``), ``index_title`` / ``hook`` (the index line,
                       where it differs from ``title`` / ``description``), ``indexed: false``
                       (a topic the index does not list), ``layout`` (:mod:`memcore.layout`)
=====================  ===================================================================

Everything else (``status``, ``tags``, ``confidence``, ``source``, ``scope``, ``parent``,
``expires_at``, ``date_only``, a ``created_at`` other than ``updated_at``, a kind Claude Code has
no type for, relations the body does not spell, other formats' ``extra``) is kept where Claude
Code keeps data it does not interpret: the frontmatter key ``memcore:`` (a YAML mapping) in a
file with frontmatter, else a first line ``<!-- memcore: {compact JSON} -->`` (Claude Code
strips block-level HTML comments before the text reaches the model). An entry whose fields all
fit is written without either.
"""

from __future__ import annotations

from memcore.models import Kind

__all__ = ["FORMAT", "FREE_KEY", "IMPORT_HOPS", "INDEX_FILE", "INDEX_MAX_BYTES", "INDEX_MAX_LINES"]
__all__ += ["INSTRUCTION_NAMES", "KIND_OF_TYPE", "LOCATION_KEYS", "NATIVE_KEYS", "RELATION_IMPORTS", "RELATION_LINK"]
__all__ += ["RELATION_TYPES", "ROLE_KINDS", "TYPE_OF_KIND"]

#: The format name (``extra`` namespace, URL scheme).
FORMAT = "claudecode"
#: The auto-memory index at the store's root (B.3).
INDEX_FILE = "MEMORY.md"
#: Claude Code loads the first 200 lines or 25 KB of the index, whichever comes first (B.3).
INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25 * 1024
#: Recursion limit of ``@imports`` in the current docs (A.2: four hops; older docs said five).
IMPORT_HOPS = 4
#: File name -> role of instruction files, at any depth (A.1).
INSTRUCTION_NAMES: dict[str, str] = {
    **dict.fromkeys(["CLAUDE.md", "AGENTS.md"], "instructions"),
    "CLAUDE.local.md": "local",
}
#: The frontmatter key, and comment label, of memcore's free data.
FREE_KEY = "memcore"

#: Topic ``type`` -> kind (B.4: the four documented types).
KIND_OF_TYPE: dict[str, Kind] = {
    "user": Kind.FACT,
    "feedback": Kind.PREFERENCE,
    "project": Kind.NOTE,
    "reference": Kind.REFERENCE,
}
#: Kind -> the ``type`` written for it; a kind not in :data:`KIND_OF_TYPE` keeps its own name in
#: the free data (``memcore: {kind: decision}`` beside ``type: project``).
TYPE_OF_KIND: dict[Kind, str] = {
    **{kind: type_ for type_, kind in KIND_OF_TYPE.items()},
    **dict.fromkeys([Kind.CORRECTION], "feedback"),
    **dict.fromkeys([Kind.DECISION, Kind.TASK, Kind.OBSERVATION, Kind.PURSUIT, Kind.PROPOSAL], "project"),
    **dict.fromkeys([Kind.SKILL, Kind.COMPANION], "reference"),
}
#: Role -> the kind its files read as (topics: by their ``type``).
ROLE_KINDS: dict[str, Kind] = {"topic": Kind.NOTE, **dict.fromkeys("instructions local rule import".split(), Kind.FACT)}

#: Relation type of an ``@path`` import (instruction, rule and import files).
RELATION_IMPORTS = "imports"
#: Relation type of a ``[[slug]]`` link in a topic's body (the pivot's own name).
RELATION_LINK = "related"
#: Native relation type -> memcore pivot type: the same names.
RELATION_TYPES: dict[str, str] = {}

#: ``extra.claudecode`` keys that say where an entry is (set by the store on read, never written
#: into the entry's file).
LOCATION_KEYS = frozenset({"path", "role", "index_title", "hook", "indexed"})
#: Every ``extra.claudecode`` key the file or the index holds natively.
NATIVE_KEYS = LOCATION_KEYS | {"description", "type", "shape", "frontmatter", "layout"}
