"""memcore.mapping: each format's own mapping module is found, and docs/mapping.md covers them."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.mapping import (
    CONFIDENCE_LABELS,
    confidence_from_label,
    confidence_to_label,
    format_mappings,
)
from memcore.models import MemoryEntry
from memcore.registry import get_registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "mapping.md"


def test_every_installed_format_has_a_documented_mapping_module() -> None:
    found = format_mappings()
    for name in ("whitebox", "box", "rightmemory", "maka"):
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
