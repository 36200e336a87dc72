"""WhiteBox's ``add_many`` writes, returns and refuses exactly what one ``add`` each does.

Each case adds the same entries to new vaults: one ``add`` per entry in one batch, one
``add_many`` call, and one ``add_many`` call with ``MEMCORE_WHITEBOX_BULK=0`` (one ``add``
each); it compares the files byte for byte and the results item by item (every field, the
fields set, the errors' types and messages).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import memcore_whitebox.provider as wb_provider
from memcore.errors import InvalidEntryError, MemcoreError, UnsafePathError
from memcore.models import Kind, MemoryEntry, Relation, Status
from memcore.provider import BulkAdding
from memcore_whitebox import _bulk
from memcore_whitebox.provider import WhiteBoxProvider

T0 = datetime(2026, 3, 4, 9, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test


def _vault(root: Path) -> Path:
    WhiteBoxProvider.init_store(str(root))
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _result(item: MemoryEntry | Exception) -> Any:
    """An add's result as compared: every field and the fields set, or the error (its vault path aside)."""
    if isinstance(item, MemoryEntry):
        return item.model_dump(), sorted(item.model_fields_set)
    text = f"{type(item).__name__}: {item}"
    for name in ("one", "many", "off"):
        text = text.replace(f"/{name}/", "/<vault>/").replace(f"/{name};", "/<vault>;")
    return text


def _one_by_one(root: Path, entries: Sequence[MemoryEntry], plan: bool) -> list[MemoryEntry | Exception]:
    out: list[MemoryEntry | Exception] = []
    with WhiteBoxProvider(str(root), as_user=True) as store:
        if plan:
            store.plan_ids(entries)
        with store.batch():
            for entry in entries:
                try:
                    stored = store.add(entry)
                except MemcoreError as exc:
                    out.append(exc)
                    break
                out.append(stored)
                if entry.id is not None and stored.id != entry.id:
                    break
    return out


def _bulk_add(root: Path, entries: Sequence[MemoryEntry], plan: bool) -> list[MemoryEntry | Exception]:
    with WhiteBoxProvider(str(root), as_user=True) as store:
        assert isinstance(store, BulkAdding)
        if plan:
            store.plan_ids(entries)
        with store.batch():
            return store.add_many(entries)


def _same(
    tmp_path: Path, entries: Sequence[MemoryEntry], monkeypatch: pytest.MonkeyPatch, *, plan: bool = False
) -> list[MemoryEntry | Exception]:
    """Add ``entries`` the three ways; check files and results are the same; return add_many's."""
    expected = _one_by_one(_vault(tmp_path / "one"), entries, plan)
    got = _bulk_add(_vault(tmp_path / "many"), entries, plan)
    with monkeypatch.context() as env:
        env.setenv("MEMCORE_WHITEBOX_BULK", "0")
        off = _bulk_add(_vault(tmp_path / "off"), entries, plan)
    assert [_result(r) for r in got] == [_result(r) for r in expected]
    assert [_result(r) for r in off] == [_result(r) for r in expected]
    assert _files(tmp_path / "many") == _files(tmp_path / "one")
    assert _files(tmp_path / "off") == _files(tmp_path / "one")
    return got


def _mixed(n: int) -> list[MemoryEntry]:
    """Observations (memcore: fields of every kind), facts and a proposal, as a migration sends them."""
    out: list[MemoryEntry] = []
    for i in range(n):
        kind = (Kind.OBSERVATION, Kind.DECISION, Kind.FACT, Kind.NOTE, Kind.TASK)[i % 5]
        out.append(
            MemoryEntry(
                id=f"item-{i}.md" if kind is Kind.FACT else None,
                kind=kind,
                title="" if i % 2 else f"Item {i}",
                body=f"Entry {i}: what was learnt.\n" if i % 3 else f"  Entry {i} with a lead.\n\n",
                status=Status.SUPERSEDED if i % 11 == 0 else Status.ACTIVE,
                tags=[f"topic-{i % 4}", "bench"] if i % 6 else [],
                confidence=(0.3, 0.5, 0.7, None, 0.85)[i % 5],
                source="bench" if i % 4 else None,
                created_at=T0 + timedelta(hours=7 * i),
                updated_at=T0 + timedelta(hours=7 * i, seconds=1) if i % 2 else None,
                date_only=i % 3 == 1,
                relations=[Relation(type="related", target=f"observations/2026-03.md#{i - 2}")] if i % 7 == 3 else [],
                parent="observations/2026-03.md#1" if i % 9 == 4 else None,
                extra={"memcore": {"migrated_from": f"abc.{i}"}, "other": {"n": i, "x": 1.0, "flag": True}},
            )
        )
    return out


def test_observations_and_facts_are_written_and_returned_as_one_add_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = _same(tmp_path, _mixed(40), monkeypatch)
    assert len(got) == 40 and all(isinstance(r, MemoryEntry) for r in got)
    assert sum(1 for r in got if isinstance(r, MemoryEntry) and "#" in (r.id or "")) == 32


def test_blocks_planned_first_are_not_rendered_again_and_give_the_same_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _mixed(30)
    _same(tmp_path, entries, monkeypatch, plan=True)
    renders: list[int] = []
    real = wb_provider.observation_block

    def counting(*args: Any) -> Any:
        renders.append(1)
        return real(*args)

    monkeypatch.setattr(wb_provider, "observation_block", counting)
    monkeypatch.setattr(_bulk, "observation_block", counting)
    with WhiteBoxProvider(str(_vault(tmp_path / "counted")), as_user=True) as store:
        planned = store.plan_ids(entries)
        observations = sum(1 for p in planned if p is not None and "#" in p)
        assert len(renders) == observations
        with store.batch():
            results = store.add_many(entries)
    assert len(renders) == observations  # add_many rendered none of them again
    assert [r.id for r in results if isinstance(r, MemoryEntry)] == planned


def test_an_entry_planned_otherwise_than_sent_is_rendered_as_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _mixed(10)
    with WhiteBoxProvider(str(_vault(tmp_path / "v")), as_user=True) as store:
        store.plan_ids(entries)
        changed = [e.model_copy(update={"body": e.body + " Changed."}) for e in entries]
        with store.batch():
            results = store.add_many(changed)
    expected = _one_by_one(_vault(tmp_path / "one"), changed, plan=False)
    assert [_result(r) for r in results] == [_result(r) for r in expected]
    assert _files(tmp_path / "v") == _files(tmp_path / "one")


def test_entries_that_do_not_read_back_as_sent_are_returned_as_a_read_gives_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    odd = [
        MemoryEntry(kind=Kind.DECISION, title="Ünïcödé título", body="Body é.\n", created_at=T0),
        MemoryEntry(kind=Kind.NOTE, body="Windows\r\nline breaks\r\n", created_at=T0),
        MemoryEntry(kind=Kind.NOTE, body="Zero.", confidence=-0.0, created_at=T0),
        MemoryEntry(kind=Kind.NOTE, body="Micro.", created_at=T0 + timedelta(microseconds=123456), updated_at=T0),
        MemoryEntry(kind=Kind.NOTE, body="Odd JSON.", extra={"other": {"a": [1, 1.0, True, None, "\u2028"]}}),
        MemoryEntry(kind=Kind.NOTE, body="```python\ncode\n```\nafter", tags=["tag with space"], created_at=T0),
        MemoryEntry(
            kind=Kind.NOTE, body="Kept label.", confidence=0.7, extra={"whitebox": {"confidence_label": "HIGH"}}
        ),
        MemoryEntry(kind=Kind.NOTE, body="Expires.", expires_at=T0 + timedelta(days=3), parent="somewhere.md"),
        MemoryEntry(body="No kind chosen, no date."),
    ]
    got = _same(tmp_path, odd, monkeypatch)
    assert all(isinstance(r, MemoryEntry) for r in got)


def test_a_refused_entry_stops_the_call_and_writes_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _mixed(6)
    hidden = {"whitebox": {"path": ".git/x.md"}}
    entries.insert(3, MemoryEntry(kind=Kind.FACT, title="Hidden", body="Never read.", extra=hidden))
    got = _same(tmp_path, entries, monkeypatch)
    assert len(got) == 4 and isinstance(got[-1], InvalidEntryError)
    entries[3] = MemoryEntry(kind=Kind.NOTE, body="A bad tag.", tags=["back`tick"], created_at=T0)
    got = _same(tmp_path / "tag", entries, monkeypatch)
    assert len(got) == 4 and isinstance(got[-1], InvalidEntryError)


def test_a_fact_whose_path_is_taken_stops_the_call_as_add_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [*_mixed(4), MemoryEntry(id="item-2.md", kind=Kind.FACT, title="Again", body="Taken.")]
    got = _same(tmp_path, entries, monkeypatch)
    assert len(got) == 5 and isinstance(got[-1], MemcoreError)


def test_tags_md_as_a_symlink_refuses_the_first_entry_with_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = [
        MemoryEntry(kind=Kind.NOTE, body="No tags.", created_at=T0),
        MemoryEntry(kind=Kind.NOTE, body="Tagged.", tags=["a"], created_at=T0),
    ]
    results = []
    for name in ("one", "many"):
        root = _vault(tmp_path / name)
        (root / "real-tags.md").write_bytes((root / "tags.md").read_bytes())
        (root / "tags.md").unlink()
        (root / "tags.md").symlink_to(root / "real-tags.md")
        results.append(_one_by_one(root, entries, False) if name == "one" else _bulk_add(root, entries, False))
    assert [_result(r) for r in results[1]] == [_result(r) for r in results[0]]
    assert isinstance(results[1][-1], UnsafePathError) and len(results[1]) == 2
    assert _files(tmp_path / "many") == _files(tmp_path / "one")


def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_WHITEBOX_BULK", "0")
    assert not _bulk.bulk_enabled()
    monkeypatch.setenv("MEMCORE_WHITEBOX_BULK", "1")
    assert _bulk.bulk_enabled()


def test_render_key_tells_apart_what_renders_otherwise() -> None:
    base = MemoryEntry(kind=Kind.NOTE, body="B.", confidence=0.0, extra={"o": {"k": 1}})
    key = _bulk.render_key(base, "2026-03-04", None)
    assert key == _bulk.render_key(base.model_copy(), "2026-03-04", None)
    for other in (
        base.model_copy(update={"confidence": -0.0}),
        base.model_copy(update={"extra": {"o": {"k": 1.0}}}),
        base.model_copy(update={"extra": {"o": {"k": True}}}),
        base.model_copy(update={"tags": ["t"]}),
        base.model_copy(update={"relations": [Relation(type="related", target="x", resolved=False)]}),
    ):
        assert _bulk.render_key(other, "2026-03-04", None) != key
    assert _bulk.render_key(base, "2026-03-05", None) != key
    assert _bulk.render_key(base, "2026-03-04", "work") != key
