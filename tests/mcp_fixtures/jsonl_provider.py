"""A tiny test-only provider for the MCP server tests: one JSON object per line in a file.

It has the gates the real formats have, in miniature, so the server's handling of them can be
tested before (and independently of) the four format plugins:

* ``scope`` option: entries whose ``scope`` is ``"sensitive"`` are invisible (reads) and refused
  (writes) unless the active scope is ``"sensitive"`` (WhiteBox's ``sensitive/`` rule).
* ``agent_read_enabled`` option (default true, unlike Maka): exposed as ``agent_read_enabled`` (Maka's switch).
* ``held`` status: immutable (Box-memory's legal hold).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memcore import BaseProvider, Capability, MemoryEntry, Query, hookimpl
from memcore.errors import ConflictError, EntryNotFoundError, ImmutableEntryError, ReadOnlyStoreError
from memcore.models import Status, utc_now
from memcore.storage import atomic_write


class JsonlProvider(BaseProvider):
    format_name = "jsonl-test"
    capabilities = frozenset(
        {
            Capability.ADD,
            Capability.UPDATE,
            Capability.DELETE,
            Capability.SUPERSEDE,
            Capability.ARCHIVE,
            Capability.SCOPES,
        }
    )

    @classmethod
    def init_store(cls, location: str, **options: Any) -> None:
        Path(location).write_bytes(b"")

    @property
    def agent_read_enabled(self) -> bool:
        return self.options.get("agent_read_enabled", True) is not False

    def open(self) -> JsonlProvider:
        if not Path(self.location).is_file():
            raise EntryNotFoundError(f"{self.format_name}: no store file at {self.location}")
        return super().open()

    def _visible(self, entry: MemoryEntry) -> bool:
        return entry.scope != "sensitive" or self.options.get("scope") == "sensitive"

    def _all(self) -> list[MemoryEntry]:
        out = []
        for line in Path(self.location).read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = MemoryEntry.model_validate_json(line)
                entry.version = entry.content_hash()[:12]
                out.append(entry)
        return out

    def _write(self, entries: list[MemoryEntry]) -> None:
        text = "".join(json.dumps(e.content_dict(), ensure_ascii=False) + "\n" for e in entries)
        atomic_write(Path(self.location), text.encode("utf-8"))

    def iter_entries(self, query: Query | None = None) -> Iterator[MemoryEntry]:
        visible = [e for e in self._all() if self._visible(e)]
        yield from (query or Query()).apply(visible)

    def add(self, entry: MemoryEntry) -> MemoryEntry:
        if not self._visible(entry):
            raise ReadOnlyStoreError(f"{self.format_name}: scope 'sensitive' is not active; refusing to write it")
        entries = self._all()
        entry = entry.model_copy(deep=True)
        entry.id = entry.id or f"e-{uuid.uuid4().hex[:8]}"
        entry.created_at = entry.created_at or utc_now()
        entry.updated_at = entry.updated_at or entry.created_at
        entry.version = None
        self._write([*entries, entry])
        return self.get(entry.id)

    def update(self, entry: MemoryEntry, *, expected_version: str | None = None) -> MemoryEntry:
        entries = self._all()
        for i, old in enumerate(entries):
            if old.id == entry.id and self._visible(old):
                if old.status is Status.HELD:
                    raise ImmutableEntryError(f"{self.format_name}: entry {old.id!r} is held and cannot change")
                if expected_version is not None and old.version != expected_version:
                    raise ConflictError(f"{self.format_name}: entry {old.id!r} changed since it was read")
                new = entry.model_copy(deep=True)
                new.version = None
                entries[i] = new
                self._write(entries)
                assert entry.id is not None
                return self.get(entry.id)
        raise EntryNotFoundError(f"{self.format_name}: no entry {entry.id!r} in {self.location}")

    def delete(self, entry_id: str) -> None:
        entries = self._all()
        kept = [e for e in entries if not (e.id == entry_id and self._visible(e))]
        if len(kept) == len(entries):
            raise EntryNotFoundError(f"{self.format_name}: no entry {entry_id!r} in {self.location}")
        if any(e.status is Status.HELD for e in entries if e.id == entry_id):
            raise ImmutableEntryError(f"{self.format_name}: entry {entry_id!r} is held and cannot change")
        self._write(kept)


@hookimpl
def memcore_register_providers() -> list[type[BaseProvider]]:
    return [JsonlProvider]
