"""The JSON Lines provider against real files: tests/data/memory.jsonl and damaged copies of it."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from memcore_jsonl import plugin
from memcore_jsonl.provider import JsonlProvider

from memcore.errors import ConflictError, ParseError
from memcore.models import Kind, MemoryEntry, Severity
from memcore.plugins import get_plugin_manager
from memcore.registry import get_registry

DATA = Path(__file__).resolve().parent / "data" / "memory.jsonl"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A writable copy of tests/data/memory.jsonl."""
    target = tmp_path / "memory.jsonl"
    shutil.copyfile(DATA, target)
    return target


def test_reads_the_sample_in_line_order(store: Path) -> None:
    with JsonlProvider(str(store)) as p:
        entries = list(p.iter_entries())
    assert [e.id for e in entries] == ["deploy-pool", "tokyo-office", "bad-link"]
    deploy, tokyo, _ = entries
    assert deploy.kind is Kind.DECISION and deploy.tags == ["ops", "project:atlas"] and deploy.confidence == 0.9
    assert deploy.created_at == datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
    # the line another tool wrote (compact, other key order, defaults omitted) reads too
    assert tokyo.title == "東京オフィスの住所" and tokyo.body == "渋谷区 1-2-3\n" and tokyo.date_only
    assert tokyo.updated_at is None and tokyo.status.value == "active"


def test_validate_warns_about_the_dangling_relation_only(store: Path) -> None:
    with JsonlProvider(str(store)) as p:
        found = p.validate()
    assert [(d.code, d.severity, d.line, d.entry_id) for d in found] == [
        ("jsonl.dangling-edge", Severity.WARNING, 4, "bad-link")
    ]
    assert "runbook-v2" in found[0].message


def test_update_rewrites_one_line_and_keeps_the_others_byte_for_byte(store: Path) -> None:
    before = store.read_bytes().split(b"\n")
    with JsonlProvider(str(store)) as p:
        entry = p.get("deploy-pool")
        entry.body = "Blue pool until Friday.\n"
        stored = p.update(entry, expected_version=entry.version)
        assert stored.version != entry.version
        with pytest.raises(ConflictError):
            p.update(entry, expected_version=entry.version)
    after = store.read_bytes().split(b"\n")
    assert json.loads(after[0])["body"] == "Blue pool until Friday.\n"
    # the other tool's line keeps its exact text; the blank line is dropped
    assert after[1] == before[1] and after[2] == before[4 - 1] and len(after) == len(before) - 1


def test_versions_are_per_line(store: Path) -> None:
    with JsonlProvider(str(store)) as p:
        tokyo = p.get("tokyo-office")
        deploy = p.get("deploy-pool")
        p.update(deploy.model_copy(update={"title": "Changed"}), expected_version=deploy.version)
        # tokyo's token is still current: updating another line did not invalidate it
        p.update(tokyo.model_copy(update={"title": "Tokyo office"}), expected_version=tokyo.version)
        assert p.get("tokyo-office").title == "Tokyo office"


def test_a_bad_line_is_reported_skipped_and_blocks_every_write(store: Path) -> None:
    damaged = store.read_bytes().replace(b'"id": "bad-link"', b'"id": "bad-link",,')
    store.write_bytes(damaged)
    with JsonlProvider(str(store)) as p:
        assert [e.id for e in p.iter_entries()] == ["deploy-pool", "tokyo-office"]
        (error,) = [d for d in p.validate() if d.severity == Severity.ERROR]
        assert (error.path, error.line, error.code) == ("memory.jsonl", 4, "jsonl.json")
        with pytest.raises(ParseError, match=r"memory\.jsonl:4"):
            p.add(MemoryEntry(title="Refused"))
        with pytest.raises(ParseError):
            p.delete("deploy-pool")
    assert store.read_bytes() == damaged


def test_a_repeated_id_is_an_error_and_the_first_line_wins(store: Path) -> None:
    first = DATA.read_bytes().split(b"\n")[0]
    store.write_bytes(store.read_bytes() + first.replace(b"Deploy to the blue pool", b"Impostor") + b"\n")
    with JsonlProvider(str(store)) as p:
        assert p.get("deploy-pool").title == "Deploy to the blue pool"
        codes = [(d.code, d.line) for d in p.validate() if d.severity == Severity.ERROR]
    assert codes == [("jsonl.duplicate-id", 5)]


def test_bom_and_crlf_survive_an_add(store: Path) -> None:
    store.write_bytes(b"\xef\xbb\xbf" + DATA.read_bytes().replace(b"\n", b"\r\n"))
    with JsonlProvider(str(store)) as p:
        assert p.get("tokyo-office").title == "東京オフィスの住所"
        added = p.add(MemoryEntry(title="Added", body="Line one\nline two\u2028still two\n"))
    raw = store.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\n" not in raw.replace(b"\r\n", b"")
    # three lines read (the blank one dropped) + the new one: U+2028 is escaped, so it is one line
    assert raw.count(b"\r\n") == 4 and b"\\u2028" in raw
    with JsonlProvider(str(store)) as p:
        assert p.get(str(added.id)).body == "Line one\nline two\u2028still two\n"


def test_batch_writes_the_file_once_at_the_end(store: Path) -> None:
    before = store.read_bytes()
    with JsonlProvider(str(store)) as p:
        with p.batch():
            added = [p.add(MemoryEntry(title=f"Batched {n}")) for n in range(3)]
            p.delete("tokyo-office")
            assert store.read_bytes() == before  # nothing written yet
            assert [e.title for e in p.iter_entries()][-3:] == ["Batched 0", "Batched 1", "Batched 2"]
        ids = [e.id for e in JsonlProvider(str(store)).open().iter_entries()]
    assert ids == ["deploy-pool", "bad-link", *[e.id for e in added]]


def test_a_batch_that_raises_keeps_the_writes_that_returned(store: Path) -> None:
    with JsonlProvider(str(store)) as p:
        with pytest.raises(RuntimeError), p.batch():
            p.add(MemoryEntry(id="kept", title="Kept"))
            raise RuntimeError("boom")
    assert json.loads(store.read_bytes().split(b"\n")[-2])["id"] == "kept"


def test_the_hook_registers_the_provider() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(plugin, name="jsonl")
    assert get_registry(pm).get("jsonl") is JsonlProvider


def test_the_installed_distribution_is_found_through_its_entry_point(store: Path) -> None:
    try:
        dist = importlib.metadata.distribution("memcore-jsonl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("memcore-jsonl is not installed (run from tox -e jsonl)")
    points = {(ep.group, ep.name, ep.value) for ep in dist.entry_points}
    assert ("memcore", "jsonl", "memcore_jsonl.plugin") in points
    assert ("memcore_conformance", "jsonl", "memcore_jsonl.conformance:JsonlConformance") in points
    import memcore

    with memcore.open(f"jsonl:{store}") as p:
        assert isinstance(p, JsonlProvider) and p.get("deploy-pool").kind is Kind.DECISION
