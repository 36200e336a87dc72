"""Entries built without a validation pass equal the validated ones (and the off switch validates)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memcore.frontmatter import set_fast_paths
from memcore.models import Kind, MemoryEntry, Relation
from memcore_box.codec import _construct, _json_text


def _fields(**over: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "id": "mem_01M8VMGJQK1JX7AQGCQ253AHYK",
        "body": "Body.\n",
        "version": "sha256:abc",
        "kind": Kind.DECISION,
        "title": "Cafe\u0301 tokens",  # NFD: the model normalises it to NFC
        "scope": "default",
        "source": "agent",
        "created_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "updated_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "confidence": 0.5,
        "tags": ["auth", "re\u0301seau"],
        "relations": [Relation(type="related", target="mem_X", resolved=False)],
        "extra": {"box": {"slug": "cafe-tokens", "links": [{"url": "https://x", "n": 1.5}]}},
    }
    fields.update(over)
    return fields


def test_a_constructed_entry_equals_the_validated_one_with_the_same_fields_set() -> None:
    built = _construct(_fields())
    validated = MemoryEntry(**_fields())
    assert built == validated
    assert built.title == "Café tokens" and built.tags == ["auth", "réseau"]
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump(mode="json") == validated.model_dump(mode="json")


def test_fields_left_out_get_fresh_defaults_never_shared_between_entries() -> None:
    fields = _fields()
    del fields["tags"]
    first, second = _construct(dict(fields)), _construct(dict(fields))
    first.tags.append("x")
    assert second.tags == [] and "tags" not in second.model_fields_set


def test_a_lone_surrogate_is_refused_as_the_model_refuses_it() -> None:
    with pytest.raises(ValueError, match="surrogate"):
        _construct(_fields(title="bad \ud800"))


def test_extra_that_is_not_plain_json_goes_through_the_models_check() -> None:
    assert not _json_text({"box": {"n": float("nan")}})
    with pytest.raises(ValueError, match="JSON"):
        _construct(_fields(extra={"box": {"n": float("nan")}}))


def test_with_the_fast_paths_off_the_model_validates() -> None:
    set_fast_paths(False)
    try:
        assert _construct(_fields()) == MemoryEntry(**_fields())
    finally:
        set_fast_paths(True)
