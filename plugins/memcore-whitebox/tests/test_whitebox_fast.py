"""WhiteBox's ``MEMCORE_WHITEBOX_FAST`` paths give what the general path gives.

- An observation or stable file whose ``memcore:`` object validation would pass unchanged is
  built without validating it again (``codec._as_validated``): every entry read (every field,
  the fields set) and every diagnostic must be those of the validated path, for objects
  validation passes and for objects it refuses (lone surrogates, NaN, a bad timestamp, an empty parent, NFD text,
  an integer confidence, deep nesting...).
- The memos of the block writer (tag lists, field values, labels) write the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import read_all
from memcore_whitebox import _fast
from memcore_whitebox.provider import WhiteBoxProvider

T0 = datetime(2026, 3, 4, 9, 30, tzinfo=UTC)

#: ``memcore:`` objects of hand-written blocks: some validation passes, some it refuses.
MEMCORE_OBJECTS: list[Any] = [
    {"kind": "decision", "updated_at": "2026-03-04T10:00:00Z", "created_at": "2026-03-04T09:00:00Z"},
    {"status": "superseded", "relations": [{"type": "related", "target": "observations/2026-03.md#1"}]},
    {"parent": "facts/x.md", "expires_at": "2026-05-01", "confidence": 0.62},
    {"extra": {"box": {"n": 1, "f": 1.5, "b": True, "none": None, "list": [1, "two", {"x": []}]}}},
    {"extra": {"box": {"text": "caf\u00e9 \u2603"}}, "whitebox": {"custom": "kept"}},
    {"fields": {"odd key": 1}, "body_lead": "  ", "body_trail": "\n"},
    {"confidence": 1},
    {"confidence": 1.5},
    {"updated_at": "not a time"},
    {"expires_at": "2026-13-40"},
    {"updated_at": "2026-03-04T10:00:00"},
    {"parent": ""},
    {"parent": "a\u0000b"},
    {"parent": "cafe\u0301.md"},
    {"extra": {"box": {"bad": "\ud800"}}},
    {"extra": {"box": {"nan": float("nan")}}},
    {"extra": {"box": "not an object"}},
    {"extra": {"box": {"deep": json.loads("[" * 40 + "]" * 40)}}},
    {"body_lead": "\ud800"},
    {"kind": "nonsense", "status": 3},
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test
    monkeypatch.delenv("MEMCORE_WHITEBOX_FAST", raising=False)
    yield


def _block(i: int, memcore: Any, *, title: str = "", tags: str = '["a", "b"]') -> str:
    line = json.dumps(memcore, ensure_ascii=True, allow_nan=True)
    title_line = f"title: {title}\n" if title else ""
    return (
        f"```\n---\ndate: 2026-03-0{1 + i % 9}\nsource: agent\ntags: {tags}\nconfidence: high\n"
        f"{title_line}memcore: {line}\n---\n\nBody {i}.\n```\n"
    )


def _hand_written_vault(root: Path) -> None:
    WhiteBoxProvider.init_store(str(root))
    blocks = [_block(i, m) for i, m in enumerate(MEMCORE_OBJECTS)]
    blocks.append(_block(90, {"kind": "note"}, title="Cafe\u0301 NFD"))
    blocks.append(_block(91, {"kind": "note"}, tags='["cafe\u0301", "b"]'))
    text = "# Observations \u2014 March 2026\n\n---\n\n" + "\n---\n\n".join(blocks)
    (root / "observations" / "2026-03.md").write_text(text, encoding="utf-8")
    for i, memcore in enumerate(MEMCORE_OBJECTS):
        meta = json.dumps(memcore, ensure_ascii=True, allow_nan=True)
        fact = f"---\nschema: whitebox/1.0\ntitle: Fact {i}\ntags: [a, b]\nconfidence: high\nmemcore: {meta}\n---\nBody {i}.\n"
        (root / f"fact-{i}.md").write_text(fact, encoding="utf-8")


def _read(root: Path) -> tuple[list[Any], list[Any]]:
    with WhiteBoxProvider(str(root)) as store:
        entries, diags = read_all(store)
    return [(e.model_dump(), sorted(e.model_fields_set)) for e in entries], [d.model_dump() for d in diags]


def test_hand_written_memcore_objects_read_the_same_with_the_fast_paths_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hand_written_vault(tmp_path)
    fast = _read(tmp_path)
    monkeypatch.setenv("MEMCORE_WHITEBOX_FAST", "0")
    general = _read(tmp_path)
    assert fast == general
    entries, diags = fast
    # two stable files cannot be read even without their memcore: object (a lone surrogate)
    assert len(entries) == 2 * len(MEMCORE_OBJECTS)
    codes = {d["code"] for d in diags}
    assert {"wb.memcore-field", "wb.invalid"} <= codes  # the refused objects are reported
    kinds = {e[0]["kind"] for e in entries}
    assert {"decision", "note", "observation"} <= kinds


def test_entries_built_without_validation_equal_validated_entries(tmp_path: Path) -> None:
    _hand_written_vault(tmp_path)
    with WhiteBoxProvider(str(tmp_path)) as store:
        entries = list(store.iter_entries())
    assert entries
    for entry in entries:
        validated = MemoryEntry.model_validate(entry.model_dump())
        assert validated == entry
        assert validated.model_dump() == entry.model_dump()


def _entries(n: int) -> list[MemoryEntry]:
    return [
        MemoryEntry(
            kind=(Kind.OBSERVATION, Kind.DECISION, Kind.FACT, Kind.NOTE)[i % 4],
            title="" if i % 4 == 0 else f"Item {i}: yes",
            body=f"Entry {i}.\n",
            status=Status.SUPERSEDED if i % 5 == 4 else Status.ACTIVE,
            tags=[f"t{i % 3}", "yes", "a b"][: 1 + i % 3],
            confidence=(0.1, 0.3, 0.55, 0.7, None, 0.9)[i % 6],
            source=("agent", "yes", "a: b", None)[i % 4],
            created_at=T0 + timedelta(days=i * 3, hours=i),
            updated_at=T0 + timedelta(days=i * 3, hours=i + 1),
            relations=[Relation(type="related", target="facts/x.md")] if i % 7 == 3 else [],
            extra={"whitebox": {"confidence_label": "High"}} if i % 9 == 2 else {},
        )
        for i in range(n)
    ]


def test_add_many_writes_and_returns_the_same_with_the_fast_paths_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = []
    for switch in ("1", "0", "1"):
        monkeypatch.setenv("MEMCORE_WHITEBOX_FAST", switch)
        root = tmp_path / f"v{len(results)}"
        WhiteBoxProvider.init_store(str(root))
        with WhiteBoxProvider(str(root), as_user=True) as store:
            returned = store.add_many(_entries(36))
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
        dumped = [(e.model_dump(), sorted(e.model_fields_set)) for e in returned if isinstance(e, MemoryEntry)]
        assert len(dumped) == 36
        results.append((files, dumped))
    assert results[0] == results[1] == results[2]


def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_WHITEBOX_FAST", "0")
    assert not _fast.fast_enabled()
    monkeypatch.setenv("MEMCORE_WHITEBOX_FAST", "1")
    assert _fast.fast_enabled()


def test_a_full_memo_starts_again_and_still_answers() -> None:
    memo: dict[int, int] = {}
    for i in range(_fast.MEMO_MAX + 10):
        assert _fast.remembered(memo, i, lambda k: k * 2) == i * 2
    assert len(memo) <= _fast.MEMO_MAX
    assert _fast.remembered(memo, 3, lambda k: -1) == -1  # forgotten when the memo started again
