"""RightMemoryProvider.move: an item moves under another heading keeping its id, lines and edges."""

from __future__ import annotations

from pathlib import Path

import pytest

import memcore.ops
from memcore.errors import EntryNotFoundError, InvalidEntryError, ReadOnlyStoreError
from memcore.models import MemoryEntry, Relation, Severity
from memcore_rightmemory import GraphInvariantError, RightMemoryProvider
from memcore_rightmemory._header import inline_text

START = """# Memory

## Infra {#infra} → [rel:apps]
About infra.

- `db` Postgres 16. → [dep:cache]
  <!-- memcore: {"confidence":0.9} -->
- `cache` Redis. → []

### Network {#network}
Subnets.

- `vpn` WireGuard. → []

## Apps {#apps}

- `web` Web app. → [dep:db]

# Other

## Archive {F#archive}
"""


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "rm"
    RightMemoryProvider.init_store(str(root))
    (root / "MEMORY.md").write_text(START, encoding="utf-8")
    (root / "MEMORY_archive.md").write_text("### Old {#old}\n\n- `legacy` Legacy box. → []\n", encoding="utf-8")
    return root


def _errors(provider: RightMemoryProvider) -> list[str]:
    return [d.code for d in provider.validate() if d.severity is Severity.ERROR]


def test_a_node_moves_with_its_edges_and_comment_and_referrers_still_resolve(store: Path) -> None:
    with RightMemoryProvider(str(store)) as provider:
        moved = memcore.ops.move(provider, "db", "apps")
        assert moved.id == "db" and moved.parent == "apps" and moved.confidence == 0.9
        assert [(r.type, r.target) for r in moved.relations] == [("dep", "cache")]
        assert provider.get("web").relations[0].resolved is True
        assert _errors(provider) == []
    text = inline_text((store / "MEMORY.md").read_text(encoding="utf-8"))
    assert "- `web` Web app. → [dep:db]\n- `db` Postgres 16. → [dep:cache]\n  <!-- memcore:" in text
    assert "## Infra {#infra} → [rel:apps]\nAbout infra.\n\n- `cache` Redis. → []\n" in text


def test_a_heading_moves_with_body_and_children_one_level_below_its_new_parent(store: Path) -> None:
    with RightMemoryProvider(str(store)) as provider:
        moved = provider.move("network", "apps")
        assert moved.parent == "apps" and moved.body.strip() == "Subnets."
        assert provider.get("vpn").parent == "network"
        assert _errors(provider) == []
        to_top = provider.move("network", None)
        assert to_top.parent is None
    text = (store / "MEMORY.md").read_text(encoding="utf-8")
    assert text.endswith("\n# Network {#network}\nSubnets.\n\n- `vpn` WireGuard. → []\n")
    assert "### Network" not in text


def test_a_move_into_an_f_heading_goes_into_its_detail_file(store: Path) -> None:
    with RightMemoryProvider(str(store)) as provider:
        moved = provider.move("cache", "archive")
        assert moved.parent == "archive"
        assert "db" in {e.id for e in provider.iter_entries()}
    assert "`cache`" in (store / "MEMORY_archive.md").read_text(encoding="utf-8")
    assert "`cache`" not in (store / "MEMORY.md").read_text(encoding="utf-8")


def test_refused_moves_write_nothing(store: Path) -> None:
    before = (store / "MEMORY.md").read_bytes()
    with RightMemoryProvider(str(store)) as provider:
        with pytest.raises(InvalidEntryError, match="itself or one of its descendants"):
            provider.move("infra", "network")
        with pytest.raises(InvalidEntryError, match="only headings contain items"):
            provider.move("cache", "db")
        with pytest.raises(EntryNotFoundError, match="'nowhere'"):
            provider.move("cache", "nowhere")
        # infra has `rel:apps`: under apps that edge would only repeat containment
        with pytest.raises(GraphInvariantError, match=r"rm\.containment-edge"):
            provider.move("infra", "apps")
    assert (store / "MEMORY.md").read_bytes() == before
    with RightMemoryProvider(str(store), read_only=True) as provider, pytest.raises(ReadOnlyStoreError):
        provider.move("cache", "apps")


def test_moving_to_where_the_item_is_writes_nothing(store: Path) -> None:
    before = (store / "MEMORY.md").read_bytes()
    with RightMemoryProvider(str(store)) as provider:
        assert provider.move("db", "infra").parent == "infra"
    assert (store / "MEMORY.md").read_bytes() == before


def test_a_node_added_then_moved_reads_back_as_added(store: Path) -> None:
    with RightMemoryProvider(str(store)) as provider:
        added = provider.add(MemoryEntry(title="Queue", parent="infra", relations=[Relation(type="dep", target="db")]))
        moved = provider.move(str(added.id), "network")
        assert (moved.id, moved.title, moved.parent) == (added.id, "Queue", "network")
        assert [(r.type, r.target) for r in moved.relations] == [("dep", "db")]
