"""Migration between stores: read with provider A, write with provider B, measure what was lost.

The generic conversion goes through :class:`~memcore.models.MemoryEntry`: every entry read from
the source is written to the target, then **read back** from the target and compared field by
field with what was written. Every difference is reported in a :class:`ConversionReport`, so the
report is measured, never guessed. A direct converter registered through the
``memcore_register_converters`` hook (see :class:`Converter`) is preferred where one exists for
the pair.

What the conversion does, in order (docs/migration.md explains each step for users):

1. **Order.** Source entries are written in the source's own order (a child right after its
   parent when it came before it), so documents keep their order and positional ids (WhiteBox
   observations ``observations/2026-03.md#2``) come out the same in a same-format copy. When
   a relation points forward (at an entry written later; ``supersedes`` / ``superseded_by``
   pairs always do one way), the ids the target will give are asked for first, with the
   provider's optional :meth:`~memcore.provider.BaseProvider.plan_ids` (a format that names
   entries by position or path tells them without writing); the real run proposes those ids
   and writes every relation at once, so each entry is written exactly once, by ``add`` (an
   ``update`` would stamp ``updated_at`` on most formats, and append-only entries cannot be
   updated at all). A target that cannot plan ids gets those relations in a second pass
   through ``update`` (as a graph format that refuses an edge to an entry that does not exist
   yet, RightMemory, does not plan them); one that can neither plan ids nor update gets
   them from a **trial run** into a scratch copy of the target. If the target assigns another
   id than planned, the relations concerned are rewritten in the second pass.
2. **Provenance.** An entry written under its source entry's own id (a same-format copy)
   carries no stamp: a second run finds it by that id, and tells it unchanged by the content
   digest the journal recorded for it or, without a journal, by holding what the source entry
   holds (an unstamped entry under that id holding something else is left alone: the source
   entry is written beside it, stamped). Every other written entry carries one short opaque stamp,
   ``extra["memcore"]["migrated_from"] = "<key>.<digest>"`` (:mod:`memcore.migrate.journal`):
   ``key`` hashes the source's format, location and the entry's id, ``digest`` is cut from the
   sha256 of the source entry's :meth:`~memcore.models.MemoryEntry.content_hash`. No path of
   the machine is written. A second run finds the entry by its key (two sources migrated into
   one target never overwrite each other; a moved source is a new source): same digest ->
   *unchanged* (nothing written), another digest -> *updated*. An interrupted run resumes: what
   was written is found, the rest is written. While an entry still waits for its second-pass
   relations its digest is ``pending``, so an interruption between the passes is repaired by
   the next run. Where the target cannot keep ``extra["memcore"]``, entries are matched by
   ``(title, body)`` (whitespace-trimmed) instead, and the report says so. Which format and id
   an entry came from is recorded outside the store (the origins file beside the journal).
   A same-format migration into a new store creates it with the provider's
   ``init_store_like`` (:meth:`~memcore.provider.BaseProvider.init_store_like`): the files
   that hold no entry are the source's own, not memcore's scaffold.
3. **Read back.** After the writes, the target is read once and each written entry is compared
   with what was sent (id and version aside). A core field the target changed is then
   **kept in free data** when the target allows it: ``extra["memcore"]["kept"][field] =
   {"value": <original>, "if_sha256": <sha256 of what the target stored>}`` is written with a
   second ``update``; a later conversion out of that store restores ``value`` when the field
   still holds what the target stored (a field edited since is left alone; ``updated_at``,
   which most formats stamp on every write, comes back only while nothing else in the entry
   changed). A field neither held nor kept is a *loss*, listed per entry and field.
4. **Ids.** Same-format copies propose the source id; an entry that came from the target's
   format (by the origins file of the store it is read from) gets its original id proposed back. A provider may assign
   its own id instead; relations are rewritten through the resulting id map either way. A
   relation to an entry that is not in the source (or was not written) is reported as an
   unresolved link and kept as unresolved link text.

Dry runs and ``strict`` never touch the real target: they run the same conversion into a
scratch copy of the target (or a fresh scratch store when the target does not exist yet) in a
temporary folder, so their report is as measured as a real run's. ``strict`` writes the real
target only when that scratch run lost nothing and failed nothing.

A target that is the source, lies inside it or contains it is refused before anything is
written (:mod:`memcore.migrate.stores`). Both stores are read with ``read_all()`` (entries and
``validate()`` diagnostics from one pass): the source's errors (files or entries it could not
read, which ``iter_entries`` skips) go to ``ConversionReport.source_errors`` and its
``*.unread-text`` warnings (text in no entry) to ``ConversionReport.unread_text``, so neither
can vanish silently; the target's read-back measures every entry written.

The source is only read. It is opened with ``read_only=True`` when its provider takes that
option (:func:`source_options_for`). A remote target (``REMOTE``) is set up by
:func:`migrate` only when opening it says it holds no store yet, and cannot be dry-run (there is
no local scratch copy of it).

The package, one job a module:

- :mod:`memcore.migrate.api`: the public entry points, :func:`migrate` and :func:`convert`,
  direct converters and the options a source is opened with.
- :mod:`memcore.migrate.report`: the report models (:class:`ConversionReport` and its parts).
- :mod:`memcore.migrate.fidelity`: field-by-field comparison, the ``kept`` stash and the read-back.
- :mod:`memcore.migrate.run`: the generic conversion's run (read, write, link, verify).
- :mod:`memcore.migrate.ids`: id planning and relation mapping for the entries a run writes.
- :mod:`memcore.migrate.state`: what one run carries between its phases.
- :mod:`memcore.migrate.stores`: guards and scratch copies (overlap refusal, dry runs, new targets).
- :mod:`memcore.migrate.journal`: the migration journal (target edits made since the last run).
"""

from __future__ import annotations

from memcore.migrate.api import Converter, convert, find_converter, migrate, source_options_for
from memcore.migrate.fidelity import MEMCORE_NS, compare_entries, restore_kept
from memcore.migrate.report import ConversionReport, EntryReport, FieldChange, ProgressCallback, UnresolvedLink

__all__ = [
    "MEMCORE_NS",
    "ConversionReport",
    "Converter",
    "EntryReport",
    "FieldChange",
    "ProgressCallback",
    "UnresolvedLink",
    "compare_entries",
    "convert",
    "find_converter",
    "migrate",
    "restore_kept",
    "source_options_for",
]
