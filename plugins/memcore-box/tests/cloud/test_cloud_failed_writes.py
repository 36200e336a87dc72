"""A failed write either left the workspace as it was or is completed by the next write (issue 17, item 16).

Real ``box_sdk_gen`` client against the fake Box API with injected faults: retries exhausted
after the memory file landed but before its index was written, a delete that landed while its
answer was lost. The caller is told which (``workspace_state`` and the message).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from memcore.errors import ConflictError, MemcoreError
from memcore.models import Kind, MemoryEntry, Severity
from memcore_box.cloud import BoxCloudError
from memcore_box.cloud_provider import BoxCloudProvider

_INDEX_UPLOAD = r"/upload/2.0/files/\d+/content$"  # a new version of an existing file (the indexes)


@pytest.fixture
def workspace(box_env: dict[str, str], fake_box: Any, workspace_id: str) -> str:
    BoxCloudProvider.init_store(workspace_id)
    return workspace_id


@pytest.fixture
def provider(workspace: str) -> Iterator[BoxCloudProvider]:
    with BoxCloudProvider(workspace) as store:
        yield store


def _ids(fake: Any, folder_id: str, path: str) -> set[str]:
    return {e["id"] for e in json.loads(fake.read(folder_id, path))["entries"]}


def _memory_ids(fake: Any, folder_id: str) -> set[str]:
    out = set()
    for path, data in fake.walk_files(folder_id).items():
        if path.endswith(".md"):
            for line in data.decode().splitlines():
                if line.startswith("id: "):
                    out.add(line[4:])
    return out


def _drift(store: BoxCloudProvider) -> list[tuple[str, str | None]]:
    return [(d.code, d.entry_id) for d in store.validate() if d.code.startswith("box.index")]


def _fact(title: str) -> MemoryEntry:
    return MemoryEntry(kind=Kind.FACT, title=title, body=f"{title}.\n")


def test_add_failing_after_the_upload_is_completed_by_the_next_write(
    provider: BoxCloudProvider, fake_box: Any, workspace: str
) -> None:
    first = provider.add(_fact("First"))
    # the memory file lands; every try of the index write then gets a 503 (retries exhausted)
    fault = fake_box.inject("status", status=503, method="POST", path=_INDEX_UPLOAD, times=6)
    with pytest.raises(BoxCloudError) as info:
        provider.add(_fact("Orphaned"))
    assert fault.hits == 6
    assert info.value.workspace_state == "pending"  # type: ignore[attr-defined]
    assert "the next write to it completes that" in str(info.value)
    orphan = next(i for i in _memory_ids(fake_box, workspace) if i != first.id)
    assert orphan not in _ids(fake_box, workspace, "memories/_index.json")
    # the next write, in the same process, indexes the file the failed add left
    third = provider.add(_fact("Third"))
    want = {first.id, orphan, third.id}
    assert _ids(fake_box, workspace, "memories/_index.json") == want
    assert _ids(fake_box, workspace, "_index.json") == want
    assert provider.get(orphan).title == "Orphaned"
    with BoxCloudProvider(workspace) as fresh:
        assert _drift(fresh) == []
        assert not [d for d in fresh.validate() if d.severity is Severity.ERROR]


def test_delete_reported_failed_after_it_landed_is_completed_by_the_next_write(
    provider: BoxCloudProvider, fake_box: Any, workspace: str
) -> None:
    keep = provider.add(_fact("Keep"))
    doomed = provider.add(_fact("Doomed"))
    # the DELETE lands but its answer is lost; every retry then gets a 503
    fake_box.inject("drop_after", method="DELETE")
    fake_box.inject("status", status=503, method="DELETE", times=5)
    with pytest.raises(BoxCloudError) as info:
        provider.delete(doomed.id or "")
    assert info.value.workspace_state == "pending"  # type: ignore[attr-defined]
    assert doomed.id not in _memory_ids(fake_box, workspace)  # it had been deleted
    assert doomed.id in _ids(fake_box, workspace, "memories/_index.json")  # not un-indexed yet
    provider.add(_fact("Next"))
    assert doomed.id not in _ids(fake_box, workspace, "memories/_index.json")
    assert doomed.id not in _ids(fake_box, workspace, "_index.json")
    assert keep.id in _ids(fake_box, workspace, "memories/_index.json")
    config = json.loads(fake_box.read(workspace, "_box-memory.json"))
    assert doomed.id in config["memcore"]["deleted_ids"]  # never reused
    with BoxCloudProvider(workspace) as fresh:
        assert _drift(fresh) == []


def test_write_refused_before_touching_the_workspace_says_unchanged(
    provider: BoxCloudProvider, fake_box: Any, workspace: str
) -> None:
    stored = provider.add(_fact("Stale"))
    before = fake_box.walk_files(workspace)
    stored.body = "mine\n"
    with pytest.raises(ConflictError) as info:
        provider.update(stored, expected_version="1:999")
    assert info.value.workspace_state == "unchanged"  # type: ignore[attr-defined]
    assert "next write" not in str(info.value)
    assert fake_box.walk_files(workspace) == before
    assert isinstance(info.value, MemcoreError)


def test_add_whose_upload_answer_was_lost_is_completed_by_the_next_write(
    provider: BoxCloudProvider, fake_box: Any, workspace: str
) -> None:
    # the upload lands but its answer is lost, then every retry gets a 503: the caller cannot know
    fake_box.inject("drop_after", method="POST", path=r"/upload/2.0/files/content$")
    fake_box.inject("status", status=503, method="POST", path=r"/upload/2.0/files/content$", times=5)
    with pytest.raises(BoxCloudError) as info:
        provider.add(_fact("Maybe"))
    assert info.value.workspace_state == "pending"  # type: ignore[attr-defined]
    landed = _memory_ids(fake_box, workspace)
    assert len(landed) == 1 and not _ids(fake_box, workspace, "memories/_index.json")
    after = provider.add(_fact("After"))
    assert _ids(fake_box, workspace, "memories/_index.json") == landed | {after.id}
    assert _ids(fake_box, workspace, "_index.json") == landed | {after.id}
