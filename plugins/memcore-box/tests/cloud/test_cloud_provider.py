"""BoxCloudProvider under injected faults, with the metadata template, and its configuration."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memcore.models import Kind, MemoryEntry, Query, Severity, Status
from memcore_box.cloud import CloudStorage
from memcore_box.cloud_provider import BoxCloudProvider

TOKEN = "fake-dev-token-s3cr3t"


@pytest.fixture
def workspace(box_env: dict[str, str], fake_box: Any, workspace_id: str) -> str:
    BoxCloudProvider.init_store(workspace_id)
    return workspace_id


@pytest.fixture
def provider(workspace: str) -> Iterator[BoxCloudProvider]:
    with BoxCloudProvider(workspace) as store:
        yield store


def _entry(n: int, **kw: Any) -> MemoryEntry:
    return MemoryEntry(
        kind=kw.pop("kind", Kind.FACT),
        title=f"Memory {n}",
        body=f"Body {n}.\n",
        tags=kw.pop("tags", [f"t{n % 3}"]),
        **kw,
    )


def _assert_all_present(fake: Any, folder_id: str, ids: list[str]) -> None:
    """Every acknowledged id is in a memory file AND in memories/_index.json (and the rollup)."""
    files = fake.walk_files(folder_id)
    in_files = {
        m[1]
        for path, data in files.items()
        if path.endswith(".md")
        for m in [re.search(rb"^id: (\S+)$", data, re.M)]
        if m
    }
    indexed = {e["id"] for e in json.loads(files["memories/_index.json"])["entries"]}
    rollup = {e["id"] for e in json.loads(files["_index.json"])["entries"]}
    wanted = {i.encode() for i in ids}
    assert wanted <= in_files, f"missing files: {wanted - in_files}"
    assert set(ids) <= indexed, f"missing from memories/_index.json: {set(ids) - indexed}"
    assert set(ids) <= rollup, f"missing from the rollup: {set(ids) - rollup}"


def _errors(store: BoxCloudProvider) -> list[Any]:
    return [d for d in store.validate() if d.severity is Severity.ERROR]


def test_faults_lose_no_acknowledged_memory(provider: BoxCloudProvider, fake_box: Any, workspace: str) -> None:
    acked = [str(provider.add(_entry(0)).id)]
    # a 429 storm on everything
    fake_box.inject("status", status=429, retry_after="1", times=5)
    acked.append(str(provider.add(_entry(1)).id))
    # a 500 mid-batch: uploads and reads fail now and then inside one batch
    with provider.batch():
        for n in range(2, 8):
            if n == 4:
                fake_box.inject("status", status=500, method="POST", times=2)
                fake_box.inject("status", status=503, method="GET", times=2)
            acked.append(str(provider.add(_entry(n)).id))
    # a dropped connection during an upload, before and after it landed
    fake_box.inject("drop", method="POST", path="/upload/2.0/files/content$")
    acked.append(str(provider.add(_entry(8)).id))
    fake_box.inject("drop_after", method="POST", path=r"/upload/2.0/files/\d+/content$")
    acked.append(str(provider.add(_entry(9)).id))
    assert provider.storage.stats["retries"] >= 5 + 4 + 2
    _assert_all_present(fake_box, workspace, acked)
    assert _errors(provider) == []
    assert sorted(e.id for e in provider.iter_entries()) == sorted(acked)


def test_concurrent_writer_412_loses_nothing(provider: BoxCloudProvider, fake_box: Any, workspace: str) -> None:
    other = BoxCloudProvider(workspace).open()
    try:
        acked = [str(provider.add(_entry(0)).id)]
        theirs: list[str] = []

        busy: list[bool] = []

        def other_process_adds(_fake: Any) -> None:  # lands between our index read and our upload
            if busy:
                return  # the other writer's own uploads pass through
            busy.append(True)
            try:
                theirs.append(str(other.add(_entry(100 + len(theirs))).id))
            finally:
                busy.clear()

        for n in range(1, 4):
            fake_box.inject(
                "callback", method="POST", path=r"/upload/2.0/files/\d+/content$", callback=other_process_adds, times=1
            )
            acked.append(str(provider.add(_entry(n)).id))
        assert len(theirs) == 3
        assert provider.storage.stats["merges"] >= 1
        _assert_all_present(fake_box, workspace, acked + theirs)
        # both writers see everything afterwards
        assert sorted(e.id for e in provider.iter_entries()) == sorted(acked + theirs)
        assert sorted(e.id for e in other.iter_entries()) == sorted(acked + theirs)
        assert _errors(provider) == []
        # an update racing another writer's update of the same memory is a conflict, not a merge
        mine = provider.get(acked[0])
        theirs_copy = other.get(acked[0])
        other.update(theirs_copy.model_copy(update={"body": "Their edit.\n"}))
        with pytest.raises(Exception) as info:
            provider.update(mine.model_copy(update={"body": "My edit.\n"}), expected_version=mine.version)
        assert type(info.value).__name__ == "ConflictError"
        assert provider.get(acked[0]).body == "Their edit.\n"
    finally:
        other.close()


def test_metadata_template_applied_and_queried(box_env: dict[str, str], fake_box: Any, workspace_id: str) -> None:
    BoxCloudProvider.init_store(workspace_id, metadata_template_key="boxMemory")
    with BoxCloudProvider(workspace_id) as store:
        a = store.add(_entry(1, kind=Kind.DECISION, tags=["auth", "mobile"]))
        b = store.add(_entry(2, kind=Kind.FACT, tags=["auth"]))
        c = store.add(_entry(3, kind=Kind.TASK, tags=["ops"], status=Status.DRAFT))
        node = fake_box.node_at(workspace_id, "memories/decision__memory-1.md")
        values = node.metadata[("enterprise", "boxMemory")]
        assert values["memory_id"] == a.id and values["kind"] == "decision" and values["tags"] == ["auth", "mobile"]
        assert values["status"] == "active" and values["title"] == "Memory 1"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z", values["created_at"])
        # an update patches the instance
        store.update(store.get(str(a.id)).model_copy(update={"title": "Memory one", "tags": ["auth"]}))
        values = node.metadata[("enterprise", "boxMemory")]
        assert values["title"] == "Memory one" and values["tags"] == ["auth"]
        assert fake_box.requests("PUT", "/metadata/enterprise/boxMemory$")
        # searches with filters are answered by the metadata query, equal to a full scan
        for query in (
            Query(tags_any=["auth"]),
            Query(kinds=[Kind.TASK]),
            Query(statuses=[Status.DRAFT]),
            Query(kinds=[Kind.DECISION, Kind.FACT], tags_any=["auth"], text="memory"),
        ):
            before = len(fake_box.requests("POST", "metadata_queries"))
            got = [e.id for e in store.search(query)]
            assert len(fake_box.requests("POST", "metadata_queries")) == before + 1
            assert got == [e.id for e in query.apply(store.iter_entries())], query
        assert [e.id for e in store.search(Query(tags_any=["auth"]))] == [a.id, b.id]
        assert [e.id for e in store.search(Query(kinds=[Kind.TASK]))] == [c.id]
        assert store.storage.stats["metadata_failures"] == 0


def test_text_search_with_filters_asks_box_once_whatever_the_operator(
    box_env: dict[str, str], fake_box: Any, workspace_id: str
) -> None:
    from memcore.index import search_hits

    BoxCloudProvider.init_store(workspace_id, metadata_template_key="boxMemory")
    with BoxCloudProvider(workspace_id) as store:
        store.add(MemoryEntry(kind=Kind.FACT, title="Deploy on Fridays", body="We deploy weekly.\n", tags=["ops"]))
        store.add(MemoryEntry(kind=Kind.FACT, title="Rollback plan", body="Roll back fast.\n", tags=["ops"]))
        store.add(MemoryEntry(kind=Kind.FACT, title="Deploy docs", body="Elsewhere.\n", tags=["docs"]))
        for operator, text, titles in (
            ("AND", "deploys", ["Deploy on Fridays"]),
            ("OR", "deploys rollback", ["Deploy on Fridays", "Rollback plan"]),
        ):
            before = len(fake_box.requests("POST", "metadata_queries"))
            hits = search_hits(store, Query(text=text, tags_any=["ops"]), default_operator=operator)  # type: ignore[arg-type]
            assert len(fake_box.requests("POST", "metadata_queries")) == before + 1, operator
            assert sorted(hit.entry.title or "" for hit in hits) == titles
            assert all(re.search(r"\[(deploy|rollback)\w*\]", hit.snippet, re.I) for hit in hits), hits
        # a search with no filter to narrow by reads every memory and sends no metadata query
        before = len(fake_box.requests("POST", "metadata_queries"))
        assert sorted(e.title or "" for e in store.search("deploy")) == ["Deploy docs", "Deploy on Fridays"]
        assert len(fake_box.requests("POST", "metadata_queries")) == before


def test_without_template_search_uses_the_indexes(
    provider: BoxCloudProvider, fake_box: Any, box_env: dict[str, str], workspace_id: str
) -> None:
    provider.add(_entry(1, tags=["x"]))
    assert [e.title for e in provider.search(Query(tags_any=["x"]))] == ["Memory 1"]
    assert fake_box.requests("POST", "metadata_queries") == []
    assert fake_box.requests("POST", "/metadata/") == []
    # the workspace names a template the enterprise does not have: writes still succeed
    fake_box.templates.clear()
    BoxCloudProvider.init_store(workspace_id, metadata_template_key="boxMemory")
    with BoxCloudProvider(workspace_id) as store:
        added = store.add(_entry(2, tags=["x"]))
        assert isinstance(store.storage, CloudStorage) and store.storage.stats["metadata_failures"] == 1
        assert [e.id for e in store.search(Query(tags_any=["x"]))][-1] == added.id


def test_configuration_and_secrets(workspace: str, fake_box: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    with BoxCloudProvider(workspace, retry_attempts=2) as store:
        assert store.url == f"box+cloud:{workspace}"
        assert {c.value for c in store.capabilities} >= {"remote", "concurrent", "update"}
        assert isinstance(store.storage, CloudStorage) and store.storage.config.retry.attempts == 2
        fake_box.inject("status", status=500, times=10)
        with pytest.raises(Exception) as info:
            store.add(_entry(1))
        assert type(info.value).__name__ == "BoxCloudError"
        assert TOKEN not in str(info.value) + repr(store) + repr(store.storage) + caplog.text
    assert BoxCloudProvider.sniff(Path(".")) is False


def test_companion_keyed_by_box_file_id(provider: BoxCloudProvider, fake_box: Any, workspace: str) -> None:
    binary = fake_box.put(workspace, "files/report.pdf", b"%PDF-1.7 fake report\n")
    companion = provider.add_companion("files/report.pdf", MemoryEntry(body="What is in it.\n"))
    block = companion.extra["box"]["companion_for"]
    assert block["file_id"] == binary.id  # the Box file id, not the path
    assert block["hash_algo"] == "sha1" and block["sha1"] == binary.versions[-1].sha1
    assert block["size_bytes"] == len(binary.versions[-1].data)
    assert provider.get(str(companion.id)).extra["box"]["companion_for"]["file_id"] == binary.id
    index = json.loads(fake_box.read(workspace, "_index.json"))
    assert index["by_companion_for"] == {binary.id: companion.id}
    assert [d for d in provider.validate() if d.code.startswith("box.companion")] == []
    fake_box.put(workspace, "files/report.pdf", b"%PDF-1.7 changed\n")  # the binary changes on Box
    assert [d.code for d in provider.validate() if d.code.startswith("box.companion")] == ["box.companion-stale"]
