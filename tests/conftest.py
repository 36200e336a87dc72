from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memcore import BaseProvider, Capability, MemoryEntry, Query, hookimpl
from memcore.errors import EntryNotFoundError

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples"
# tests/reference_readers (the formats' own parsers' rules, independent of memcore) imports as a package
sys.path.insert(0, str(Path(__file__).resolve().parent))


class DictProvider(BaseProvider):
    """A tiny in-process provider for core tests: entries in a class-level dict per location."""

    format_name = "dictfmt"
    capabilities = frozenset({Capability.ADD, Capability.UPDATE, Capability.DELETE})
    stores: dict[str, dict[str, MemoryEntry]] = {}

    @classmethod
    def sniff(cls, path: Path) -> bool:
        return path.suffix == ".dict"

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        cls.stores[location] = {}

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        entries = list(self.stores.get(self.location, {}).values())
        yield from (query or Query()).apply(entries)

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        store = self.stores.setdefault(self.location, {})
        stored = entry.model_copy(update={"id": entry.id or f"e{len(store) + 1}"})
        store[stored.id or ""] = stored
        return stored

    def delete(self, entry_id: str) -> None:
        if self.stores.get(self.location, {}).pop(entry_id, None) is None:
            raise EntryNotFoundError(entry_id)


class DictPlugin:
    @hookimpl
    def memcore_register_providers(self) -> list[type[BaseProvider]]:
        return [DictProvider]


@pytest.fixture
def dict_plugin() -> Iterator[DictPlugin]:
    DictProvider.stores.clear()
    yield DictPlugin()
    DictProvider.stores.clear()


class JsonDirProvider(BaseProvider):
    """A file-backed test provider: one ``<id>.json`` per entry, re-readable file by file."""

    format_name = "jsondir"
    capabilities = frozenset({Capability.ADD, Capability.UPDATE, Capability.DELETE})

    def source_files(self) -> list[str]:
        return sorted(p.name for p in Path(self.location).glob("*.json"))

    def iter_file_entries(self, path: str) -> Iterator[MemoryEntry]:
        yield MemoryEntry.model_validate_json((Path(self.location) / path).read_text(encoding="utf-8"))

    def file_of(self, entry: MemoryEntry) -> str:
        return f"{entry.id}.json"

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        entries = (e for f in self.source_files() for e in self.iter_file_entries(f))
        yield from (query or Query()).apply(entries)

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        from memcore.storage import atomic_write

        assert entry.id
        atomic_write(Path(self.location) / f"{entry.id}.json", entry.model_dump_json().encode())
        return entry

    update = add  # type: ignore[assignment]

    def delete(self, entry_id: str) -> None:
        (Path(self.location) / f"{entry_id}.json").unlink()


@pytest.fixture
def coffee_box(tmp_path: Path) -> Iterator[Any]:
    """An open Box-memory workspace of two memories, "Coffee" (espresso) and "Deploy window" (friday)."""
    import memcore
    from memcore_box import BoxMemoryProvider

    location = tmp_path / "box"
    BoxMemoryProvider.init_store(str(location))
    with memcore.open(f"box:{location}") as store:
        store.add(MemoryEntry(title="Coffee", body="Espresso after lunch."))
        store.add(MemoryEntry(title="Deploy window", body="We deploy on friday."))
        yield store


#: The seven built-in formats, and the file a single-file format's store is.
BUILTIN_FORMATS = ("whitebox", "box", "rightmemory", "maka", "mcpmemory", "claudecode", "basicmemory")
_SINGLE_FILE = {"maka": "MEMORY.md", "mcpmemory": "memory.jsonl"}


def new_store(fmt: str, where: Path) -> str:
    """Create an empty store of format ``fmt`` under ``where`` and return its ``format:location``."""
    from memcore.registry import get_registry

    location = str(where / _SINGLE_FILE.get(fmt, "store"))
    get_registry().get(fmt).init_store(location)
    return f"{fmt}:{location}"
