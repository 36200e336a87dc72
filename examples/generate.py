"""Write the example stores from examples/dataset.yaml through memcore's providers.

Run from the repository root (rewrites the example stores in place)::

    python examples/generate.py            # all of them
    python examples/generate.py box maka   # some

Each store is written by its own format's provider, entry by entry, the way a host app
would: non-observation entries first, then observations in date order (WhiteBox
observations are append-only, so they may only point at entries written before them), then
the relations that point forward are added with ``update``. Dataset keys become the store's
ids where the format lets the writer choose (RightMemory item ids; Box ``mem_`` ULIDs derived
from the entry's creation time and key so that regenerating gives the same ids).
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

import memcore
from memcore.mapping import translate_relation_type
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.registry import get_registry

HERE = Path(__file__).resolve().parent
DATASET = HERE / "dataset.yaml"

#: format -> store location, relative to examples/
STORES: dict[str, str] = {
    "whitebox": "whitebox-vault",
    "box": "box-workspace",
    "rightmemory": "rightmemory",
    "maka": "maka/MEMORY.md",
    "mcpmemory": "mcpmemory/memory.jsonl",
    "claudecode": "claudecode-memory",
    "basicmemory": "basicmemory-project",
}

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid_for(created: datetime, key: str) -> str:
    """Return a deterministic ``mem_`` ULID: 48-bit ms timestamp + 80 bits of sha256(key)."""
    ms = int(created.timestamp() * 1000)
    rand = int.from_bytes(hashlib.sha256(key.encode()).digest()[:10], "big")
    value = (ms << 80) | rand
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "mem_" + "".join(reversed(chars))


def load_dataset(path: Path = DATASET) -> list[dict[str, Any]]:
    """Return the dataset's records (plain dicts, dates as datetimes or dates)."""
    yaml = YAML(typ="safe", pure=True)
    records: list[dict[str, Any]] = yaml.load(path.read_text(encoding="utf-8"))
    keys = [r["key"] for r in records]
    if len(keys) != len(set(keys)):
        raise SystemExit("dataset.yaml: duplicate keys")
    return records


def to_entry(record: dict[str, Any]) -> MemoryEntry:
    """Return the MemoryEntry for a dataset record (relations still name dataset keys)."""
    relations = [Relation(type=r["type"], target=r["target"]) for r in record.get("relations", [])]
    relations += [Relation(type="supersedes", target=k) for k in record.get("supersedes", [])]
    created = record["created"]
    return MemoryEntry(
        id=record["key"],
        kind=Kind(record["kind"]),
        title=record.get("title", ""),
        body=record["body"],
        status=Status(record.get("status", "active")),
        tags=list(record.get("tags", [])),
        confidence=record.get("confidence"),
        source=record.get("source"),
        created_at=created,
        updated_at=record.get("updated", created),
        date_only=bool(record.get("date_only", False)),
        scope=record.get("scope"),
        relations=relations,
        expires_at=record.get("expires"),
    )


def dataset_entries() -> list[MemoryEntry]:
    """Return the dataset as entries, with ``superseded_by`` added to replaced entries."""
    entries = [to_entry(r) for r in load_dataset()]
    by_key = {e.id: e for e in entries}
    for entry in entries:
        for rel in entry.relations:
            if rel.type == "supersedes":
                old = by_key[rel.target]
                old.relations = [*old.relations, Relation(type="superseded_by", target=entry.id or "")]
    return entries


def write_store(
    fmt: str, location: Path, entries: list[MemoryEntry], predicted: dict[str, str] | None = None
) -> dict[str, str]:
    """Create a fresh store of ``fmt`` at ``location`` and write ``entries`` into it.

    Args:
        fmt: Format name.
        location: Store location (replaced).
        entries: The dataset.
        predicted: Ids a previous identical run assigned, so that append-only entries can
            point at entries written after them.

    Returns:
        Dataset key -> id in the store.
    """
    cls = get_registry().get(fmt)
    if location.is_dir():
        shutil.rmtree(location)
    elif location.exists():
        location.unlink()
    location.parent.mkdir(parents=True, exist_ok=True)
    cls.init_store(str(location))
    # entries the format may keep as append-only records go last, in date order
    stable = (Kind.FACT,) if fmt == "whitebox" else tuple(k for k in Kind if k is not Kind.OBSERVATION)
    observations = sorted((e for e in entries if e.kind not in stable), key=lambda e: e.created_at or 0)
    others = [e for e in entries if e.kind in stable]
    if fmt in ("box", "rightmemory"):
        # these check links on write: write link targets first, so that only the supersede
        # pairs (cycles) need an update afterwards
        others = _targets_first(others)
    known = predicted or {}

    def native(pivot: str) -> str:
        # the dataset names relations in the pivot; a host app writes the format's own name
        return translate_relation_type(pivot, {}, cls.relation_types)

    ids: dict[str, str] = {}
    later: dict[str, list[Relation]] = {}
    with cls(str(location)) as store:
        for entry in [*others, *observations]:
            key = entry.id or ""
            out = entry.model_copy(deep=True)
            out.id = _proposed_id(fmt, entry)
            if fmt == "basicmemory":  # a project keeps its notes in folders; one per kind here
                out.extra = {"basicmemory": {"folder": f"{entry.kind.value}s"}}
            now = [
                Relation(type=native(r.type), target=ids.get(r.target) or known[r.target])
                for r in entry.relations
                if r.target in ids or r.target in known
            ]
            if len(now) < len(entry.relations):
                later[key] = entry.relations
            out.relations = now
            stored = store.add(out)
            assert stored.id is not None
            ids[key] = stored.id
            if key in known and known[key] != stored.id:
                raise SystemExit(f"{fmt}: {key} got id {stored.id}, not {known[key]} as predicted")
        for key, relations in later.items():
            current = store.get(ids[key])
            current.relations = [Relation(type=native(r.type), target=ids[r.target]) for r in relations]
            try:
                store.update(current, expected_version=current.version)
            except memcore.UnsupportedOperationError:
                if predicted is not None:
                    raise
                # first of two runs: the second one writes these relations at add time
    return ids


def _targets_first(entries: list[MemoryEntry]) -> list[MemoryEntry]:
    """Return ``entries`` so that each comes after the entries it links to (cycles cut)."""
    by_id = {e.id: e for e in entries}
    done: set[str | None] = set()
    out: list[MemoryEntry] = []

    def visit(entry: MemoryEntry, path: set[str | None]) -> None:
        if entry.id in done or entry.id in path:
            return
        for rel in entry.relations:
            if rel.type != "superseded_by" and rel.target in by_id:
                visit(by_id[rel.target], path | {entry.id})
        done.add(entry.id)
        out.append(entry)

    for entry in entries:
        visit(entry, set())
    return out


def _proposed_id(fmt: str, entry: MemoryEntry) -> str | None:
    if fmt == "rightmemory":
        return entry.id
    if fmt == "box":
        assert entry.created_at is not None and entry.id is not None
        return ulid_for(entry.created_at, entry.id)
    return None


def main(argv: list[str]) -> int:
    """Regenerate the example stores named in ``argv`` (default: all)."""
    wanted = argv or list(STORES)
    entries = dataset_entries()
    for fmt in wanted:
        location = HERE / STORES[fmt]
        ids = write_store(fmt, location, entries)
        for backup in location.parent.glob(f"{location.name}*.bak") if location.is_file() else []:
            backup.unlink()  # the Maka writer's safety copy of the previous file
        if fmt == "whitebox":  # observations are append-only: write again, knowing every id
            ids = write_store(fmt, location, entries, predicted=ids)
        with memcore.open(f"{fmt}:{location}") as store:
            problems = [d for d in store.validate() if d.severity.value == "error"]
            count = sum(1 for _ in store.iter_entries())
        print(f"{fmt}: {count} entries ({len(ids)} written) at {location.relative_to(HERE.parent)}")
        for diag in problems:
            print(f"  {diag}")
        if problems:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
