"""Property: A -> B -> A gives back every field, except exactly the fields the reports list as lost.

Generated entries go into a ``full`` store (keeps everything), then to ``tiny`` (keeps free
data, so every change is kept) or ``bare`` (keeps no free data, so changes are losses) or the
conformance suite's reference provider, and back. For each entry and field: the field differs
after the round trip if and only if one of the two reports lists it as lost.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_convert import _Plugin

from memcore import hookimpl
from memcore.migrate import ConversionReport, migrate
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.plugins import get_plugin_manager
from memcore.registry import ProviderRegistry

reference = pytest.importorskip("memcore_conformance.reference")

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=40)
_times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)).map(
    lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
)
_tags = st.lists(st.from_regex(r"[a-z][a-z0-9:/-]{0,12}", fullmatch=True), max_size=4, unique=True)


@st.composite
def stores(draw: st.DrawFn) -> list[MemoryEntry]:
    n = draw(st.integers(min_value=1, max_value=6))
    ids = [f"e{i}" for i in range(n)]
    entries = []
    for i, entry_id in enumerate(ids):
        created = draw(st.none() | _times)
        rel_targets = draw(st.lists(st.sampled_from(ids), max_size=3, unique=True))
        relations = [
            Relation(type=draw(st.sampled_from(["related", "supersedes", "dep"])), target=t)
            for t in rel_targets
            if t != entry_id
        ]
        if draw(st.booleans()):
            relations.append(Relation(type="related", target=draw(_text.filter(str.strip)), resolved=False))
        entries.append(
            MemoryEntry(
                id=entry_id,
                kind=draw(st.sampled_from([k for k in Kind if k is not Kind.COMPANION])),
                title=draw(_text),
                body=draw(_text),
                status=draw(st.sampled_from(list(Status))),
                tags=draw(_tags),
                confidence=draw(st.none() | st.floats(0, 1, allow_nan=False)),
                source=draw(st.none() | _text.filter(str.strip)),
                created_at=created,
                updated_at=draw(st.none() | _times),
                date_only=draw(st.booleans()),
                scope=draw(st.none() | st.sampled_from(["work", "personal"])),
                relations=relations,
                parent=ids[i - 1] if i and draw(st.booleans()) else None,
                expires_at=draw(st.none() | _times),
                extra=draw(st.sampled_from([{}, {"full": {"pinned": True, "n": 3}}])),
            )
        )
    return entries


class _Ref:
    @hookimpl
    def memcore_register_providers(self) -> list[type]:
        return [reference.ReferenceProvider]


def _registry() -> ProviderRegistry:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(_Plugin(), name="fakes")
    pm.register(_Ref(), name="ref")
    return ProviderRegistry(pm)


def _lost(report: ConversionReport, ids: dict[str, str]) -> dict[str, set[str]]:
    """Losses by ORIGINAL id; ``ids`` maps the report's source ids to original ids."""
    out: dict[str, set[str]] = {}
    for entry in report.entries:
        out.setdefault(ids.get(entry.source_id, entry.source_id), set()).update(c.field for c in entry.losses)
    return out


def _diff(a: MemoryEntry, b: MemoryEntry) -> set[str]:
    da, db = a.content_dict(), b.content_dict()
    fields = {k for k in da if k not in ("id", "extra") and da[k] != db[k]}
    if a.confidence is not None and b.confidence is not None and abs(a.confidence - b.confidence) < 1e-9:
        fields.discard("confidence")
    for ns, values in a.extra.items():
        for key, value in values.items():
            if b.extra.get(ns, {}).get(key) != value:
                fields.add(f"extra.{ns}.{key}")
    return fields


@pytest.mark.slow
@pytest.mark.parametrize("middle", ["tiny", "bare", "reference"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=stores())
def test_round_trip_differs_exactly_where_reported(middle: str, entries: list[MemoryEntry]) -> None:
    registry = _registry()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cls = registry.get("full")
        cls.init_store(str(root / "a"))
        with cls(str(root / "a")) as store:
            for entry in entries:
                store.add(entry)
        there = migrate(f"full:{root / 'a'}", f"{middle}:{root / 'b'}", registry=registry)
        back = migrate(f"{middle}:{root / 'b'}", f"full:{root / 'c'}", registry=registry)
        assert there.ok and back.ok
        middle_to_original = {e.target_id: e.source_id for e in there.entries if e.target_id}
        lost = _lost(there, {})
        for field_set in _lost(back, middle_to_original).items():
            lost.setdefault(field_set[0], set()).update(field_set[1])
        with cls(str(root / "c")) as store:
            result = list(store.iter_entries())
        back_to_middle = {e.target_id: e.source_id for e in back.entries if e.target_id}
        by_origin: dict[str, MemoryEntry] = {}
        for got in result:
            by_origin[middle_to_original[back_to_middle[got.id or ""]]] = got
        assert set(by_origin) == {e.id for e in entries}
        for original in entries:
            assert original.id is not None
            got = by_origin[original.id]
            # relations: a link to an id is compared through the id maps (ids may differ)
            differing = _diff(original, got)
            reported = lost.get(original.id, set())
            # a relation target rewritten to the round-trip id of the same original is equal
            if "relations" in differing and "relations" not in reported:
                back_ids = {e.id: by_origin_key for by_origin_key, e in by_origin.items()}
                mapped = [
                    Relation(type=r.type, target=back_ids.get(r.target, r.target), resolved=r.resolved)
                    for r in got.relations
                ]
                if mapped == original.relations:
                    differing.discard("relations")
            if "parent" in differing and "parent" not in reported:
                back_ids = {e.id: key for key, e in by_origin.items()}
                if back_ids.get(got.parent or "") == original.parent:
                    differing.discard("parent")
            assert differing == reported, (middle, original.id, differing, reported)
