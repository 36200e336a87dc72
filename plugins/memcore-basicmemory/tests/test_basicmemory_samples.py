"""Every basic-memory sample reads with the values basic-memory 0.24.1's own parser gives.

``expected-parse.bm-0.24.1.json`` is ``EntityParser.parse_markdown_content`` run on each sample
(frontmatter state, normalised metadata, observations, relations). One test per sample compares
our parser with it, and the entry the provider reads from a project holding the sample.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memcore.mapping import parse_iso_time as parse_time
from memcore.models import Relation
from memcore_basicmemory._parse import parse_note
from memcore_basicmemory.mapping import kind_of_type, status_of
from memcore_basicmemory.provider import BasicMemoryProvider

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "basic-memory"
EXPECTED: dict[str, dict[str, Any]] = json.loads((SAMPLES / "expected-parse.bm-0.24.1.json").read_text("utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses_as_basic_memory_parses_it(name: str) -> None:
    expected = EXPECTED[name]
    note = parse_note(Path(name).name, (SAMPLES / name).read_bytes())
    assert note.state == expected["frontmatter_state"]
    assert note.bm_metadata == expected["metadata"]
    assert [o.as_dict() for o in note.observations] == expected["observations"]
    assert [r.as_dict() for r in note.relations] == expected["relations"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_reads_as_an_entry_with_every_field(name: str, tmp_path: Path) -> None:
    expected = EXPECTED[name]
    meta = expected["metadata"]
    (tmp_path / "p" / Path(name).parent).mkdir(parents=True)
    shutil.copyfile(SAMPLES / name, tmp_path / "p" / name)
    with BasicMemoryProvider(tmp_path / "p") as store:
        (entry,) = list(store.iter_entries())
        assert [d for d in store.validate() if d.severity.value == "error"] == []
    own = entry.extra.get("basicmemory", {})
    assert entry.id == meta.get("permalink", entry.id)
    assert entry.title == meta["title"]
    assert entry.kind == kind_of_type(meta["type"])
    assert own.get("type", entry.kind.value) == meta["type"]
    assert entry.tags == meta.get("tags", [])
    assert own.get("observations", []) == expected["observations"]
    assert entry.status.value == (status_of(meta.get("status")) or "active")
    created = parse_time(meta["created"]) if "created" in meta else None
    assert entry.created_at == (created[0] if created else None)
    assert entry.date_only == bool(created and created[1])
    wanted = {(r["type"], r["target"]) for r in expected["relations"]}
    assert {(r.type, r.target) for r in entry.relations} == wanted
    assert all(r == Relation(type=r.type, target=r.target, resolved=False) for r in entry.relations)
    managed = {"title", "type", "permalink", "tags", "created", "status"}
    extras = {k: v for k, v in meta.items() if k not in managed}
    got = {k: v for k, v in own.get("metadata", {}).items()}
    assert {k: str(v) if not isinstance(v, dict | list) else v for k, v in got.items()} == extras
