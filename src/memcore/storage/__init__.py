"""Storage primitives every provider uses; none writes files its own way.

- :func:`atomic_write`: replace a file so readers see old or new, never a mix.
- :func:`scratch_writes`: skip fsync for throw-away stores (dry runs, trial runs).
- :func:`append_record`: append one whole record under the cross-process lock.
- :func:`file_lock`: a cross-process lock for read-modify-write, kept outside the store.
- :func:`gate_allows`: a store's gate judged on where a path really leads (symlinks resolved).
- :func:`make_private_dir` / :func:`touch_private_file`: 0700 folders and 0600 files for derived data.
- :func:`sweep_temp_files` / :func:`temp_file_diagnostics`: temp files of interrupted writes.
- :func:`safe_join`: build a path from ids, slugs, titles or tags without leaving the store.
- :func:`check_entry_text` / :func:`control_char_diagnostics`: NUL and C0 controls refused on
  write, reported on read.
- :func:`list_names` / :func:`on_disk_name` / :func:`name_twins`: file names in either Unicode
  normal form, compared NFC, opened as spelled on disk.
- :class:`TextFile`: decode bytes to text and back, keeping BOM and line endings.
- :class:`Storage` / :class:`LocalStorage`: the interface every provider's file I/O goes through,
  and its implementation on a local folder; :func:`version_token`: the one version scheme;
  :func:`file_reader`: many reads of one storage, through folder descriptors on a local folder.
- :class:`WriteSession`: one thread's staged writes, checked and flushed in a safe order.
"""

from __future__ import annotations

from memcore.storage._atomic import append_record, atomic_write, scratch_writes
from memcore.storage._control import check_entry_text, check_text, control_char_diagnostics
from memcore.storage._interface import ANY_VERSION, CREATE, Item, Storage, join, version_token
from memcore.storage._local import BULK_READ_ENV, LocalStorage, bulk_reads, file_reader
from memcore.storage._lock import file_lock, lock_dir, lock_path_for
from memcore.storage._modes import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, make_private_dir, touch_private_file
from memcore.storage._paths import (
    check_component,
    gate_allows,
    list_names,
    name_twin_diagnostics,
    name_twins,
    on_disk_name,
    on_disk_path,
    resolved_rel,
    safe_join,
)
from memcore.storage._session import WriteSession
from memcore.storage._temps import TEMP_NAME, TempSweeper, find_temp_files, sweep_temp_files, temp_file_diagnostics
from memcore.storage._text import TextFile

__all__ = [
    "ANY_VERSION",
    "CREATE",
    "Item",
    "BULK_READ_ENV",
    "LocalStorage",
    "Storage",
    "WriteSession",
    "join",
    "version_token",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "TEMP_NAME",
    "TempSweeper",
    "TextFile",
    "append_record",
    "bulk_reads",
    "check_entry_text",
    "file_reader",
    "check_text",
    "control_char_diagnostics",
    "atomic_write",
    "check_component",
    "file_lock",
    "find_temp_files",
    "gate_allows",
    "list_names",
    "lock_dir",
    "lock_path_for",
    "make_private_dir",
    "name_twin_diagnostics",
    "name_twins",
    "on_disk_name",
    "on_disk_path",
    "resolved_rel",
    "safe_join",
    "scratch_writes",
    "sweep_temp_files",
    "temp_file_diagnostics",
    "touch_private_file",
]
