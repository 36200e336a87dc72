"""memcore.mapping: each format's own mapping module is found, and docs/mapping.md covers them."""

from __future__ import annotations

from pathlib import Path

import pytest

import memcore
from memcore.mapping import (
    CONFIDENCE_LABELS,
    confidence_from_label,
    confidence_to_label,
    format_mappings,
    relation_types,
    translate_relation_type,
)
from memcore.migrate import migrate
from memcore.models import Kind, MemoryEntry, Relation
from memcore.registry import get_registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "mapping.md"


def test_every_installed_format_has_a_documented_mapping_module() -> None:
    found = format_mappings()
    for name in ("whitebox", "box", "rightmemory", "maka", "mcpmemory"):
        if name not in get_registry().names():
            pytest.skip(f"{name} is not installed")
        module = found[name]
        assert module.__name__ == f"memcore_{name}.mapping"
        assert module.__doc__ and len(module.__doc__) > 200, f"{module.__name__} needs its table as a docstring"
    text = DOC.read_text(encoding="utf-8")
    for module in found.values():
        assert f"`{module.__name__}`" in text, f"docs/mapping.md does not name {module.__name__}"
    for field in MemoryEntry.model_fields:
        if field not in ("version", "extra"):
            assert f"| `{field}` |" in text, f"docs/mapping.md has no row for {field}"


def test_confidence_labels_round_trip_both_ways() -> None:
    for label, number in CONFIDENCE_LABELS.items():
        assert confidence_from_label(label) == number
        assert confidence_to_label(number) == label
    assert confidence_to_label(0.6) == "medium"  # a tie goes to the lower label
    assert confidence_to_label(0.85) == "very-high"
    assert confidence_from_label("Very High") == 0.9
    assert confidence_from_label("certain") is None


def test_relation_type_names_map_through_the_pivot() -> None:
    rm = {"rel": "related"}
    assert translate_relation_type("rel", rm, {}) == "related"
    assert translate_relation_type("related", {}, rm) == "rel"
    assert translate_relation_type("dep", rm, {}) == "dep"  # no counterpart: verbatim
    assert translate_relation_type("supersedes", {}, rm) == "supersedes"


def test_a_depends_on_relation_is_a_rightmemory_dep_edge_and_comes_back(tmp_path: Path) -> None:
    """WhiteBox/Box ``depends_on`` <-> RightMemory ``dep:`` (schema "Edge Types": A depends on B)."""
    box = f"box:{tmp_path / 'box'}"
    get_registry().get("box").init_store(str(tmp_path / "box"))
    with memcore.open(box) as store:
        a = store.add(MemoryEntry(kind=Kind.FACT, title="Billing export", body="The project.\n"))
        store.add(
            MemoryEntry(
                kind=Kind.DECISION,
                title="Parquet by month",
                body="Partitioned.\n",
                relations=[Relation(type="depends_on", target=a.id or "")],
            )
        )
    rm = tmp_path / "rm"
    migrate(box, f"rightmemory:{rm}")
    text = (rm / "MEMORY.md").read_text(encoding="utf-8")
    assert "→ [dep:billing-export]" in text
    assert '"relations"' not in text  # drawn as the edge, not kept in the comment
    assert _relations(f"rightmemory:{rm}")["Parquet by month"] == [("dep", "Billing export")]
    migrate(f"rightmemory:{rm}", f"box:{tmp_path / 'box2'}")
    assert _relations(f"box:{tmp_path / 'box2'}")["Parquet by month"] == [("depends_on", "Billing export")]


def _relations(url: str) -> dict[str, list[tuple[str, str]]]:
    with memcore.open(url) as store:
        titles = {e.id: e.title for e in store.iter_entries()}
        return {
            e.title: sorted((r.type, titles.get(r.target, r.target)) for r in e.relations) for e in store.iter_entries()
        }


@pytest.mark.skipif(
    not {"box", "rightmemory"} <= set(get_registry().names()), reason="needs the box and rightmemory plugins"
)
def test_box_related_is_a_rightmemory_rel_edge_and_both_come_back(tmp_path: Path) -> None:
    """Box ``related`` <-> RightMemory ``rel:`` edge; a ``related`` RightMemory kept in free data stays one."""
    assert relation_types("rightmemory") == {"rel": "related", "dep": "depends_on"}
    assert relation_types("box") == {}
    box = f"box:{tmp_path / 'box'}"
    get_registry().get("box").init_store(str(tmp_path / "box"))
    with memcore.open(box) as store:
        a = store.add(MemoryEntry(kind=Kind.FACT, title="Advisory locks", body="Use them.\n"))
        store.add(
            MemoryEntry(
                kind=Kind.FACT,
                title="Skip locked",
                body="Instead.\n",
                relations=[Relation(type="related", target=a.id or "")],
            )
        )
    rm = tmp_path / "rm"
    migrate(box, f"rightmemory:{rm}")
    assert "→ [rel:" in (rm / "MEMORY.md").read_text(encoding="utf-8")
    assert _relations(f"rightmemory:{rm}")["Skip locked"] == [("rel", "Advisory locks")]
    migrate(f"rightmemory:{rm}", f"box:{tmp_path / 'box2'}")
    assert _relations(f"box:{tmp_path / 'box2'}")["Skip locked"] == [("related", "Advisory locks")]

    # a RightMemory store holding both names: the rel edge and a related kept in free data
    with memcore.open(f"rightmemory:{rm}") as store:
        skip = next(e for e in store.iter_entries() if e.title == "Skip locked")
        adv = next(e for e in store.iter_entries() if e.title == "Advisory locks")
        store.add(
            MemoryEntry(
                kind=Kind.FACT,
                title="Both names",
                body="",
                parent=None,
                relations=[Relation(type="rel", target=skip.id or ""), Relation(type="related", target=adv.id or "")],
            )
        )
    before = _relations(f"rightmemory:{rm}")
    migrate(f"rightmemory:{rm}", f"box:{tmp_path / 'box3'}")
    migrate(f"box:{tmp_path / 'box3'}", f"rightmemory:{tmp_path / 'rm2'}")
    assert _relations(f"rightmemory:{tmp_path / 'rm2'}") == before
