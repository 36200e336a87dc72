"""Maka's one-pass secret check (``MEMCORE_MAKA_FAST_REDACT``) gives what ``redact_entry`` gives.

:func:`memcore_maka.codec.prepare` joins every string of an entry and asks
:func:`memcore.redact.may_hold_secret` once; an entry holding no hint word is copied instead of
redacted string by string. Both paths must return equal entries (values, fields marked set,
relation copies) and write the same bytes, for clean entries and for entries holding a secret in
any field, including a key or relation type that names one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.errors import InvalidEntryError
from memcore.models import Kind, MemoryEntry, Relation
from memcore_maka import MakaProvider
from memcore_maka.codec import prepare

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _entries() -> list[MemoryEntry]:
    clean = MemoryEntry(
        id="e1",
        kind=Kind.DECISION,
        title="Use the queue",
        body="We chose the queue for retries.\nSecond line.",
        tags=["infra", "queue"],
        source="chat",
        scope="project",
        parent="p0",
        created_at=WHEN,
        updated_at=WHEN,
        relations=[Relation(type="related", target="e0"), Relation(type="see", target="Some text", resolved=False)],
        extra={"maka": {"origin": "manual"}, "other": {"nested": [1, "two", {"three": None}], "flag": True}},
    )
    out = [clean, MemoryEntry(body="just a body"), MemoryEntry(title="t", body="b", extra={"x": {}})]
    secret = "sk-ant-api03-Q7w1Anthropic9Zx"
    out += [
        clean.model_copy(update={"body": f"the key is {secret}"}),
        clean.model_copy(update={"title": f"Authorization: Bearer {secret}"}),
        clean.model_copy(update={"tags": ["infra", secret]}),
        clean.model_copy(update={"source": f"https://u:{secret}@host/x"}),
        clean.model_copy(update={"relations": [Relation(type="password", target="plain-target")]}),
        clean.model_copy(update={"extra": {"other": {"api_key": "plain value", "n": 3}}}),
        clean.model_copy(update={"extra": {"other": {"note": f"password={secret}"}}}),
        # a hint word that redacts nothing: the slow path, same result
        clean.model_copy(update={"body": "the token bucket refills each second"}),
    ]
    return out


def _relation_sets(entry: MemoryEntry) -> list[set[str]]:
    return [set(rel.model_fields_set) for rel in entry.relations]


@pytest.mark.parametrize("index", range(len(_entries())))
def test_prepare_returns_the_same_entry_with_the_one_pass_check_on_and_off(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = _entries()[index]
    monkeypatch.setenv("MEMCORE_MAKA_FAST_REDACT", "1")
    fast = prepare(entry)
    monkeypatch.setenv("MEMCORE_MAKA_FAST_REDACT", "0")
    slow = prepare(entry)
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_fields_set == slow.model_fields_set
    assert _relation_sets(fast) == _relation_sets(slow)
    assert fast is not entry
    assert fast.tags is not entry.tags and fast.extra is not entry.extra


def test_prepare_without_secrets_shares_nothing_mutable_with_the_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_MAKA_FAST_REDACT", "1")
    entry = _entries()[0]
    copy = prepare(entry)
    copy.extra["other"]["nested"].append("four")  # type: ignore[union-attr]
    copy.tags.append("new")
    assert entry.extra["other"]["nested"] == [1, "two", {"three": None}]
    assert entry.tags == ["infra", "queue"]


def test_prepare_redacts_a_secret_in_the_body_with_the_one_pass_check_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_MAKA_FAST_REDACT", "1")
    out = prepare(MemoryEntry(body="token: abcdef123456 for the api"))
    assert "abcdef123456" not in out.body
    assert "[redacted]" in out.body


@pytest.mark.parametrize("flag", ["1", "0"])
def test_an_id_holding_a_secret_is_refused_with_the_one_pass_check_on_and_off(
    flag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_MAKA_FAST_REDACT", flag)
    with pytest.raises(InvalidEntryError, match="looks like a secret"):
        prepare(MemoryEntry(id="ghp_U1v5Github7Oo3abcdefghij", body="b"))


def _written(tmp_path: Path, flag: str, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setenv("MEMCORE_MAKA_FAST_REDACT", flag)
    loc = tmp_path / flag / "MEMORY.md"
    loc.parent.mkdir()
    MakaProvider.init_store(str(loc))
    with MakaProvider(str(loc)) as store, store.batch():
        for entry in _entries():
            entry = entry.model_copy(deep=True)
            entry.id = None
            entry.created_at = entry.updated_at = WHEN  # ids and times from the entry, not the clock
            store.add(entry)
    return loc.read_bytes()


def test_maka_file_bytes_are_the_same_with_the_one_pass_check_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _written(tmp_path, "1", monkeypatch)
    slow = _written(tmp_path, "0", monkeypatch)
    assert fast == slow
    assert b"Q7w1Anthropic9Zx" not in fast
