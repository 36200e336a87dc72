"""The cloud provider opened ``read_only`` refuses every write before any request that changes Box."""

from __future__ import annotations

from typing import Any

import pytest

from memcore.errors import ReadOnlyStoreError
from memcore.models import Kind, MemoryEntry
from memcore_box.cloud_provider import BoxCloudProvider


def _fact(title: str) -> MemoryEntry:
    return MemoryEntry(kind=Kind.FACT, title=title, body=f"{title}.\n")


@pytest.mark.parametrize("operation", ["add", "update", "delete", "archive", "supersede", "reindex"])
def test_read_only_cloud_store_refuses_each_write(
    box_env: dict[str, str], fake_box: Any, workspace_id: str, operation: str
) -> None:
    BoxCloudProvider.init_store(workspace_id)
    with BoxCloudProvider(workspace_id) as store:
        stored = store.add(_fact("First"))
    before = fake_box.walk_files(workspace_id)
    with BoxCloudProvider(workspace_id, read_only=True) as store:
        writes: dict[str, Any] = {
            "add": lambda: store.add(_fact("Second")),
            "update": lambda: store.update(stored.model_copy(update={"body": "changed\n"})),
            "delete": lambda: store.delete(stored.id or ""),
            "archive": lambda: store.archive(stored.id or ""),
            "supersede": lambda: store.supersede(stored.id or "", _fact("Again")),
            "reindex": store.reindex,
        }
        name = "update" if operation == "archive" else operation  # archive is BaseProvider's update
        with pytest.raises(ReadOnlyStoreError, match=rf"read-only; `{name}` refused"):
            writes[operation]()
        assert [e.id for e in store.iter_entries()] == [stored.id]
    assert fake_box.walk_files(workspace_id) == before
