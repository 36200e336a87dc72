"""Storage primitives every provider uses; none writes files its own way.

- :func:`atomic_write`: replace a file so readers see old or new, never a mix.
- :func:`scratch_writes`: skip fsync for throw-away stores (dry runs, trial runs).
- :func:`append_record`: append one whole record under the cross-process lock.
- :func:`file_lock`: a cross-process lock for read-modify-write, kept outside the store.
- :func:`gate_allows`: a store's gate judged on where a path really leads (symlinks resolved).
- :func:`safe_join`: build a path from ids, slugs, titles or tags without leaving the store.
- :class:`TextFile`: decode bytes to text and back, keeping BOM and line endings.
"""

from __future__ import annotations

from memcore.storage._atomic import append_record, atomic_write, scratch_writes
from memcore.storage._lock import file_lock, lock_path_for
from memcore.storage._paths import check_component, gate_allows, resolved_rel, safe_join
from memcore.storage._text import TextFile

__all__ = [
    "TextFile",
    "append_record",
    "atomic_write",
    "check_component",
    "file_lock",
    "gate_allows",
    "lock_path_for",
    "resolved_rel",
    "safe_join",
    "scratch_writes",
]
