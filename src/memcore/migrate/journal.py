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

**Origin keys.** No file memcore writes names a place of the machine it ran on. A migrated entry
that keeps its source entry's id carries nothing: the journal records its content digest
(``digests``: ``{target id: digest}``), and without a journal it is matched by id and content. Any
other migrated entry carries only ``extra["memcore"]["migrated_from"] = "<key>.<digest>"`` (:func:`origin_stamp`):
``key`` is 12 hex digits of the sha256 of ``"<source format>:<source location>\n<source id>"``
(:func:`origin_key`; the location as the journal names it, a resolved real path for file
stores), ``digest`` the first 8 hex digits of the source entry's
:meth:`~memcore.models.MemoryEntry.content_hash` (``pending`` while its links wait for the
second pass). A re-run computes the key of every source entry and finds its own entries by
it, with or without a journal. What the key cannot say, which format and id an entry came from
(a later migration *back* into that format proposes the original id), is recorded outside the
store, in an origins file per target store (:func:`load_origins` / :func:`save_origins`,
beside the journals, also 0600).
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

__all__ = [
    "JOURNAL_VERSION",
    "EditCheck",
    "journal_dir",
    "journal_path",
    "legacy_origin",
    "load_journal",
    "load_journal_state",
    "load_origins",
    "origin_key",
    "origin_stamp",
    "origins_path",
    "parse_stamp",
    "save_journal",
    "save_origins",
]

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
    #: ``{origin key: (format, id)}`` of the source store's entries that earlier runs migrated
    #: into it (from its origins file): where an entry came from, to propose its id back home
    homes: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: Filled by the conversion: ``{origin key: (source format, source id)}`` of every entry it
    #: left migrated in the target (saved in the target's origins file)
    origins: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: ``{target id: digest}`` the last run recorded for the entries it wrote without a stamp
    #: (a target entry that keeps its source entry's id, see :func:`origin_stamp`)
    digests: Mapping[str, str] = field(default_factory=dict)
    #: Filled by the conversion: ``{target id: digest}`` of the unstamped entries it left migrated
    current_digests: dict[str, str] = field(default_factory=dict)


#: hex digits of an origin key (48 bits: a collision among a store's entries is negligible)
KEY_DIGITS = 12
#: hex digits of the content digest in a stamp
DIGEST_DIGITS = 8
#: the digest of an entry whose relations still wait for the second pass
PENDING = "pending"


def origin_key(source_url: str, source_id: str) -> str:
    """Return the opaque key naming a source entry in the entries memcore migrated from it.

    Args:
        source_url: ``format:location`` of the source as the journal names it.
        source_id: The entry's id in the source.

    Returns:
        :data:`KEY_DIGITS` hex digits of ``sha256(source_url + "\n" + source_id)``.
    """
    blob = f"{source_url}\n{source_id}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()[:KEY_DIGITS]


def origin_stamp(key: str, content_hash: str | None) -> str:
    """Return the ``migrated_from`` value: ``"<key>.<digest>"`` (``"<key>.pending"`` for ``None``)."""
    return f"{key}.{content_hash[:DIGEST_DIGITS] if content_hash is not None else PENDING}"


def parse_stamp(value: object) -> tuple[str, str] | None:
    """Return ``(key, digest)`` of a ``migrated_from`` value, ``None`` when it is not one.

    Also reads the record earlier memcore versions wrote (``{"format", "location", "id",
    "sha256"}``): its key is computed as :func:`origin_key` would have (the location made
    real), its digest cut from its sha256.
    """
    if isinstance(value, str):
        key, dot, digest = value.partition(".")
        return (key, digest) if dot and key and digest else None
    if isinstance(value, dict):
        fmt, loc, src_id, sha = (value.get(k) for k in ("format", "location", "id", "sha256"))
        if isinstance(fmt, str) and isinstance(loc, str) and isinstance(src_id, str):
            real = loc if "://" in loc or not os.path.isabs(loc) else os.path.realpath(loc)
            digest = sha[:DIGEST_DIGITS] if isinstance(sha, str) and sha != PENDING else PENDING
            return origin_key(f"{fmt}:{real}", src_id), digest
    return None


def legacy_origin(value: object) -> tuple[str, str] | None:
    """Return ``(format, id)`` from a record of earlier memcore versions, ``None`` otherwise."""
    if isinstance(value, dict) and isinstance(value.get("format"), str) and isinstance(value.get("id"), str):
        return value["format"], value["id"]
    return None


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


def origins_path(store_url: str) -> Path:
    """Return the origins file of a target store (``origins-<sha256 of its URL>.json``)."""
    key = hashlib.sha256(store_url.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return journal_dir() / f"origins-{key}.json"


def load_origins(store_url: str) -> dict[str, tuple[str, str]]:
    """Return ``{origin key: (format, id)}`` recorded for the entries migrated into a store.

    Never raises: a missing, unreadable or foreign file gives ``{}`` (a later migration out of
    the store then proposes no original ids; nothing else depends on it).
    """
    try:
        data = json.loads(origins_path(store_url).read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    keys = data.get("keys") if isinstance(data, dict) and data.get("journal") == JOURNAL_VERSION else None
    if not isinstance(keys, dict):
        return {}
    out: dict[str, tuple[str, str]] = {}
    for key, value in keys.items():
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
            out[key] = (value[0], value[1])
    return out


def save_origins(store_url: str, origins: Mapping[str, tuple[str, str]]) -> Path | None:
    """Add ``{origin key: (format, id)}`` to the origins file of a store (``None``: nothing to add).

    Raises:
        OSError: The state folder or the file cannot be written.
    """
    known = load_origins(store_url)
    merged = {**known, **origins}
    if merged == known:
        return None
    path = origins_path(store_url)
    make_private_dir(path.parent)
    data = {"journal": JOURNAL_VERSION, "store": store_url, "keys": {k: list(v) for k, v in sorted(merged.items())}}
    atomic_write(path, (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8"), mode=PRIVATE_FILE_MODE)
    return path


def load_journal(source_url: str, target_url: str) -> tuple[dict[str, str], str | None]:
    """Return ``({target id: version}, problem)`` recorded by the last run of this migration.

    Never raises: a missing journal gives ``({}, None)``; one that cannot be read or parsed
    gives ``({}, why)`` so that the caller can say edits were not checked.
    """
    versions, _digests, problem = load_journal_state(source_url, target_url)
    return versions, problem


def load_journal_state(source_url: str, target_url: str) -> tuple[dict[str, str], dict[str, str], str | None]:
    """Return ``({target id: version}, {target id: digest}, problem)`` of the last run of this migration.

    The digests are those of the entries written without a ``migrated_from`` stamp (see
    :func:`origin_stamp`). Never raises, as :func:`load_journal`.
    """
    path = journal_path(source_url, target_url)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, {}, None
    except OSError as exc:
        return {}, {}, f"the migration journal {path} could not be read ({exc.strerror or exc})"
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return {}, {}, f"the migration journal {path} is not JSON ({exc}); delete it to start afresh"
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("journal") != JOURNAL_VERSION or not isinstance(versions, dict):
        return {}, {}, f"the migration journal {path} is not a memcore journal of version {JOURNAL_VERSION}"
    found = data.get("digests")
    digests = found if isinstance(found, dict) else {}
    return (
        {k: v for k, v in versions.items() if isinstance(k, str) and isinstance(v, str)},
        {k: v for k, v in digests.items() if isinstance(k, str) and isinstance(v, str)},
        None,
    )


def save_journal(
    source_url: str, target_url: str, versions: Mapping[str, str], digests: Mapping[str, str] | None = None
) -> Path:
    """Record ``{target id: version}`` for this migration (replacing what was recorded).

    Args:
        source_url: ``format:location`` of the source.
        target_url: ``format:location`` of the target.
        versions: The version token of every target entry the run left migrated.
        digests: ``{target id: digest}`` of the entries written without a stamp (kept
            under ``digests``; omitted when empty).

    Returns:
        The journal file written.

    Raises:
        OSError: The state folder or the file cannot be written.
    """
    path = journal_path(source_url, target_url)
    make_private_dir(path.parent)
    data: dict[str, object] = {
        "journal": JOURNAL_VERSION,
        "source": source_url,
        "target": target_url,
        "versions": dict(versions),
    }
    if digests:
        data["digests"] = dict(digests)
    text = json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"
    atomic_write(path, text.encode("utf-8"), mode=PRIVATE_FILE_MODE)
    return path
