"""The migration journal: what a migration left in its target, to notice edits made there since.

Running a migration again updates the target entries whose source entry changed. Had someone
edited such a target entry since the last run, that update would silently replace their edit.
The journal prevents it, as a two-way synchroniser's archive does: after every real run,
:func:`memcore.migrate.migrate` records the version token of each target entry it migrated
(``{target id: version}``); the next run compares the target's current version with the one
recorded, and an entry edited in between is reported as a ``conflict`` and left alone unless
the run is asked to ``overwrite``.

One JSON file per (source URL, target URL) pair, in ``$MEMCORE_STATE_DIR`` (default
``migrations`` in platformdirs' user state folder: ``$XDG_STATE_HOME/memcore/migrations`` or
``~/.local/state/memcore/migrations`` on Linux), named by
the sha256 of the pair: the journal never adds a file to either store. Journals are written
0600 and the folders memcore creates for them 0700 (they name the entries of both stores).
Without a journal (first run, another machine, a deleted state folder) nothing is compared and
the run behaves as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from memcore.storage import PRIVATE_FILE_MODE, atomic_write, make_private_dir

__all__ = ["JOURNAL_VERSION", "EditCheck", "journal_dir", "journal_path", "load_journal", "save_journal"]

#: Format number written in each journal file; a file with another number is ignored.
JOURNAL_VERSION = 1


@dataclass
class EditCheck:
    """What a conversion needs to leave target edits alone, and what it records for the next run.

    Attributes:
        previous: ``{target id: version}`` the last run recorded (empty: nothing to compare).
        overwrite: Update entries edited in the target anyway (the source wins).
        current: Filled by the conversion: ``{target id: version}`` of every target entry it
            left migrated (a conflict keeps its previous version, so it is reported again by
            the next run until resolved), recorded as each is written.
        unknown: Entries migrated by an earlier run that the journal had no version for.
    """

    previous: Mapping[str, str] = field(default_factory=dict)
    overwrite: bool = False
    current: dict[str, str] = field(default_factory=dict)
    #: entries migrated before whose version the journal did not hold (their current state
    #: became the baseline: edits made in the target before this run could not be told)
    unknown: int = 0


def journal_dir() -> Path:
    """Return the folder holding the journals (created by :func:`save_journal`, not here).

    ``$MEMCORE_STATE_DIR`` when set (used as is), else ``migrations`` in
    :func:`platformdirs.user_state_dir` (``$XDG_STATE_HOME/memcore/migrations``, else
    ``~/.local/state/memcore/migrations`` on Linux; the platform's own folder elsewhere).
    """
    explicit = os.environ.get("MEMCORE_STATE_DIR")
    if explicit:
        return Path(explicit)
    return Path(platformdirs.user_state_dir("memcore", appauthor=False, ensure_exists=False)) / "migrations"


def journal_path(source_url: str, target_url: str) -> Path:
    """Return the journal file of the migration ``source_url`` -> ``target_url``.

    Args:
        source_url: ``format:location`` of the source, location absolute for file stores.
        target_url: The same for the target.
    """
    key = hashlib.sha256(f"{source_url}\n{target_url}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return journal_dir() / f"{key}.json"


def load_journal(source_url: str, target_url: str) -> tuple[dict[str, str], str | None]:
    """Return ``({target id: version}, problem)`` recorded by the last run of this migration.

    Never raises: a missing journal gives ``({}, None)``; one that cannot be read or parsed
    gives ``({}, why)`` so that the caller can say edits were not checked.
    """
    path = journal_path(source_url, target_url)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"the migration journal {path} could not be read ({exc.strerror or exc})"
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return {}, f"the migration journal {path} is not JSON ({exc}); delete it to start afresh"
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("journal") != JOURNAL_VERSION or not isinstance(versions, dict):
        return {}, f"the migration journal {path} is not a memcore journal of version {JOURNAL_VERSION}"
    return {k: v for k, v in versions.items() if isinstance(k, str) and isinstance(v, str)}, None


def save_journal(source_url: str, target_url: str, versions: Mapping[str, str]) -> Path:
    """Record ``{target id: version}`` for this migration (replacing what was recorded).

    Args:
        source_url: ``format:location`` of the source.
        target_url: ``format:location`` of the target.
        versions: The version token of every target entry the run left migrated.

    Returns:
        The journal file written.

    Raises:
        OSError: The state folder or the file cannot be written.
    """
    path = journal_path(source_url, target_url)
    make_private_dir(path.parent)
    data = {"journal": JOURNAL_VERSION, "source": source_url, "target": target_url, "versions": dict(versions)}
    text = json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"
    atomic_write(path, text.encode("utf-8"), mode=PRIVATE_FILE_MODE)
    return path
