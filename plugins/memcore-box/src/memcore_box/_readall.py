"""The checking pass of ``read_all``/``validate``, fast: listings reused, files read in bulk, plain mapping.

:meth:`~memcore_box.provider.BoxMemoryProvider.read_all` builds the entries and the
diagnostics from one parse of each memory file. With this module's switch on:

- :func:`scan` gives what :meth:`~memcore_box._state.WorkspaceState._scan` gives with
  ``fast=True`` (the same files, parsed by :func:`memcore_box._parse.parse` from the same
  bytes, the same orphans, in the same order), reading the files through
  :func:`memcore.storage.file_reader` and taking the folder listings :meth:`open` made when no
  folder changed since (:meth:`~memcore_box._state.WorkspaceState._reused_listings`, as
  iteration does) instead of listing every folder again, and keeping them for
  :meth:`~memcore_box.provider.BoxMemoryProvider.source_files` (core's checks of every memory
  file's text, right after the pass), and handing each file's bytes to those checks
  (:meth:`memcore.provider.BaseProvider.source_bytes_read`) so that they do not read it again;
- :func:`memcore_box.validate.content_diags` maps a file whose frontmatter is plain (a
  :class:`~memcore_box._parse._PlainMeta`) with :func:`memcore_box.codec.entry_from_plain` and
  :func:`memcore_box.codec.plain_diagnostics` where those apply (the entry and diagnostics
  :func:`memcore_box.codec.entry_from_meta` gives);
- :func:`memcore_box.validate.drift_diags` compares a compact index row with its file's plain
  frontmatter field by field (``_plain_row_matches``) before building the row the file would
  have;
- the drift check takes a folder index memcore wrote and nobody read since opening (its layout
  record names exactly its bytes, :meth:`~memcore_box._state.WorkspaceState._known_index_entries`)
  from its parsed entries, compared with the files' plain values
  (:func:`memcore_box.validate._known_index_clean`), instead of building its rows first (the
  index is read the usual way when it has something to report, or when something needs it);
  ``read_all`` therefore reads no index up front (``_sync(unread=False)``); and a rollup
  memcore wrote (:func:`memcore_box._drift.rollup_known`) is not parsed whole.

The cyclic garbage collector is paused around the pass by core, as around every provider's
``read_all``/``validate`` (``MEMCORE_READ_GC_PAUSE``): the pass holds some ten objects per
memory file, and each collection the growing heap set off rescanned all of them.

``MEMCORE_BOX_READ_ALL_FAST=0`` turns all of them off (so do ``MEMCORE_BOX_STREAM_FAST=0`` and the
YAML fast paths off): every file is then read with ``storage.read`` after a new listing of
every folder, mapped by :func:`memcore_box.codec.entry_from_meta`, and its index row built
and compared. ``plugins/memcore-box/tests/test_box_read_all_fast.py`` compares both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.models import Diagnostic, MemoryEntry, Severity
from memcore.storage import file_reader
from memcore.switches import switch_on
from memcore_box import _scan
from memcore_box._parse import _File, read_memory_files
from memcore_box._workspace import CONFIG_FILE

if TYPE_CHECKING:
    from memcore_box._state import WorkspaceState
    from memcore_box.provider import BoxMemoryProvider

__all__ = ["ENV", "check_files", "enabled", "scan"]

ENV = "MEMCORE_BOX_READ_ALL_FAST"


def enabled() -> bool:
    """Return whether the fast paths are on (``MEMCORE_BOX_READ_ALL_FAST`` not ``0``, the stream fast paths on)."""
    return _scan.enabled() and switch_on(ENV)


def scan(store: WorkspaceState) -> tuple[list[_File], list[Diagnostic]]:
    """Return every memory file (folders sorted) and the orphans' diagnostics, as ``store._scan(fast=True)``.

    Args:
        store: The open workspace (its listings, storage and :meth:`_parse`).
    """
    files: list[_File] = []
    orphans: list[Diagnostic] = []
    listings = store._reused_listings(keep=True) or store._discover()
    with file_reader(store.storage) as read:
        for folder, items in sorted(listings.items()):
            for item, path, data, version in read_memory_files(folder, items, read):
                store.source_bytes_read(path, data)  # core's control-character check: no second read
                parsed = store._parse(path, data, version or "", item.id, fast=True)
                (files if isinstance(parsed, _File) else orphans).append(parsed)  # type: ignore[arg-type]
    return files, orphans


def check_files(store: BoxMemoryProvider, entries: list[MemoryEntry] | None, *, fast: bool) -> list[Diagnostic]:
    """Return the diagnostics of ``validate`` (and fill ``entries`` for ``read_all``) from one scan.

    The config's problem, the orphans, each file's content and the index drift, in that order;
    with ``fast`` the scan and checks of this module, else the general ones. Leftover temp files
    and skipped links are core's (:meth:`memcore.provider.BaseProvider.read_all` reports them).
    """
    from memcore_box.validate import content_diags, drift_diags

    diags: list[Diagnostic] = []
    if store._config_problem is not None:
        diags.append(
            Diagnostic(path=CONFIG_FILE, code="box.config", severity=Severity.ERROR, message=store._config_problem)
        )
    files, orphans = scan(store) if fast else store._scan(fast=True)
    diags += orphans
    diags += content_diags(store, files, entries, fast=fast)
    diags += drift_diags(store, files, fast=fast)
    return diags
