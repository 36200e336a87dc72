"""Injected faults: 429 storms, 5xx, dropped connections, concurrent writers (412/409), merges."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from memcore.errors import ConflictError
from memcore.storage import ANY_VERSION, CREATE
from memcore_box.cloud import BoxCloudError, CloudStorage
from memcore_box.cloud_merge import merge_json

TOKEN = "fake-dev-token-s3cr3t"


def _index(*entries: dict[str, Any]) -> bytes:
    doc = {
        "version": 1,
        "folder_id": "1",
        "folder_path": "memories/",
        "updated_at": "2026-01-01T00:00:00Z",
        "tier": "personal",
        "entry_count": len(entries),
        "entries": list(entries),
        "by_id": {},
        "by_slug": {},
        "by_wikilink": {},
        "by_kind": {},
        "by_tag": {},
        "by_status": {},
        "by_companion_for": {},
    }
    return (json.dumps(doc, indent=2) + "\n").encode()


def _entry(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"mem_{n:026d}",
        "slug": f"s{n}",
        "title": f"T{n}",
        "kind": "note",
        "status": "active",
        "tags": [f"t{n % 2}"],
        "companion_for": None,
        **extra,
    }


def _ids(data: bytes) -> list[str]:
    return [e["id"] for e in json.loads(data)["entries"]]


# -- transient failures ---------------------------------------------------------------------
def test_429_storm_is_survived(
    storage: CloudStorage, fake_box: Any, workspace_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    storage.make_folder("memories")
    fault = fake_box.inject("status", status=429, retry_after="30", times=5)
    item = storage.write("memories/note__a.md", b"a", expected_version=CREATE)
    assert fault.hits == 5 and storage.stats["retries"] == 5  # Retry-After 30 s capped to 20 ms
    assert fake_box.read(workspace_id, "memories/note__a.md") == b"a"
    assert storage.read("memories/note__a.md") == (b"a", item.version)
    assert TOKEN not in caplog.text


def test_retry_budget_is_bounded_and_errors_hide_the_token(
    storage: CloudStorage, fake_box: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_box.inject("status", status=429, retry_after="0", times=100)
    with pytest.raises(BoxCloudError) as info:
        storage.list()
    assert info.value.status == 429
    assert len(fake_box.requests("GET")) == 6  # attempts = 6, then give up
    assert TOKEN not in str(info.value) and TOKEN not in caplog.text


def test_listing_that_never_ends_is_refused(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    for i in range(7):
        fake_box.put(workspace_id, f"n{i}.md", b"x")
    fake_box.repeat_marker = True
    with pytest.raises(BoxCloudError, match="repeats page marker"):
        storage.list()
    assert len(fake_box.requests("GET", r"/items$")) == 2  # page 2 points at itself: stop there


def test_500_mid_batch(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.make_folder("memories")
    for i in range(3):
        storage.write(f"memories/n{i}.md", b"x", expected_version=CREATE)
    fake_box.inject("status", status=500, method="POST", times=2)
    fake_box.inject("status", status=503, method="GET", times=1)
    for i in range(3, 6):
        storage.write(f"memories/n{i}.md", b"x", expected_version=CREATE)
    assert sorted(fake_box.walk_files(workspace_id)) == [f"memories/n{i}.md" for i in range(6)]


def test_dropped_connection_mid_upload(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    body = b"y" * 300_000
    fault = fake_box.inject("drop", method="POST", path="/upload/")
    item = storage.write("big.md", body, expected_version=CREATE)
    assert fault.hits == 1
    assert fake_box.read(workspace_id, "big.md") == body
    assert len(fake_box.node_at(workspace_id, "big.md").versions) == 1
    assert item.size == len(body)


def test_dropped_connection_after_the_upload_landed(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    # create: the first attempt landed, the retry gets 409 naming a file with our sha1 -> success
    fake_box.inject("drop_after", method="POST", path="/upload/2.0/files/content$")
    first = storage.write("a.md", b"one", expected_version=CREATE)
    node = fake_box.node_at(workspace_id, "a.md")
    assert len(node.versions) == 1 and first.id == node.id
    # version: the first attempt landed, the retry gets 412 but the bytes are ours -> success
    fake_box.inject("drop_after", method="POST", path=r"/upload/2.0/files/\d+/content$")
    second = storage.write("a.md", b"two", expected_version=first.version)
    assert fake_box.read(workspace_id, "a.md") == b"two" and len(node.versions) == 2
    assert second.version == f"{node.id}:{node.etag}"
    # delete: landed, the retry gets 404 -> success, not FileNotFoundError
    fake_box.inject("drop_after", method="DELETE")
    storage.delete("a.md", expected_version=second.version)
    assert fake_box.node_at(workspace_id, "a.md") is None


def test_index_write_survives_every_fault_at_once(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.write("_index.json", _index(), expected_version=CREATE)
    fake_box.inject("status", status=429, retry_after="1", times=3)
    fake_box.inject("drop", method="POST", path="/upload/")
    fake_box.inject("status", status=502, times=1)
    storage.read("_index.json")
    fake_box.inject(
        "callback",
        method="POST",
        path="/upload/",
        callback=lambda fb: fb.put(workspace_id, "_index.json", _index(_entry(99))),
    )
    storage.write("_index.json", _index(_entry(1)), expected_version=ANY_VERSION)
    assert sorted(_ids(fake_box.read(workspace_id, "_index.json"))) == [_entry(1)["id"], _entry(99)["id"]]


# -- concurrent writers -------------------------------------------------------------------------
def test_concurrent_writer_412_on_index_is_merged(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.write("_index.json", _index(_entry(1)), expected_version=CREATE)
    _data, version = storage.read("_index.json")

    def other_writer(fb: Any) -> None:  # lands between our read and our upload
        fb.put(workspace_id, "_index.json", _index(_entry(1), _entry(2)))

    fault = fake_box.inject("callback", method="POST", path="/upload/", callback=other_writer)
    ours = _index(_entry(1), _entry(3))
    item = storage.write("_index.json", ours, expected_version=version)
    assert fault.hits == 1 and storage.stats["merges"] == 1
    merged = json.loads(fake_box.read(workspace_id, "_index.json"))
    assert [e["id"] for e in merged["entries"]] == [_entry(1)["id"], _entry(2)["id"], _entry(3)["id"]]
    assert merged["entry_count"] == 3
    assert merged["by_id"] == {_entry(n)["id"]: i for i, n in enumerate((1, 2, 3))}
    assert merged["by_tag"] == {"t1": [_entry(1)["id"], _entry(3)["id"]], "t0": [_entry(2)["id"]]}
    assert item.version == storage.stat("_index.json").version + "+merged"  # the caller must re-read
    # a memory file the caller changed is never merged: 412 -> ConflictError
    storage.write("note__m.md", b"mine", expected_version=CREATE)
    _, v = storage.read("note__m.md")
    fake_box.inject(
        "callback", method="POST", path="/upload/", callback=lambda fb: fb.put(workspace_id, "note__m.md", b"theirs")
    )
    with pytest.raises(ConflictError):
        storage.write("note__m.md", b"mine again", expected_version=v)
    assert fake_box.read(workspace_id, "note__m.md") == b"theirs"


def test_409_on_index_create_becomes_a_merged_version(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    fake_box.inject(
        "callback",
        method="POST",
        path="/upload/2.0/files/content$",
        callback=lambda fb: fb.put(workspace_id, "_index.json", _index(_entry(7))),
    )
    storage.write("_index.json", _index(_entry(8)), expected_version=ANY_VERSION)
    assert sorted(_ids(fake_box.read(workspace_id, "_index.json"))) == [_entry(7)["id"], _entry(8)["id"]]


def test_two_storages_racing_on_one_index(box_env: dict[str, str], fake_box: Any, workspace_id: str) -> None:
    a, b = CloudStorage(workspace_id), CloudStorage(workspace_id)
    try:
        a.write("_index.json", _index(), expected_version=CREATE)
        for n in range(10):
            # both read, both write: one of each pair loses the If-Match race and merges
            da, _ = a.read("_index.json")
            db, _ = b.read("_index.json")
            doc_a, doc_b = json.loads(da), json.loads(db)
            doc_a["entries"].append(_entry(2 * n))
            doc_b["entries"].append(_entry(2 * n + 1))
            a.write("_index.json", (json.dumps(doc_a, indent=2) + "\n").encode(), expected_version=ANY_VERSION)
            b.write("_index.json", (json.dumps(doc_b, indent=2) + "\n").encode(), expected_version=ANY_VERSION)
        final = fake_box.read(workspace_id, "_index.json")
        assert sorted(_ids(final)) == sorted(_entry(n)["id"] for n in range(20))
        assert json.loads(final)["entry_count"] == 20
        assert b.stats["merges"] == 10
    finally:
        a.close()
        b.close()


def test_long_lived_writer_keeps_others_entries(box_env: dict[str, str], fake_box: Any, workspace_id: str) -> None:
    """A writer that never re-reads (keeps its own view) must not delete what others merged in."""
    a = CloudStorage(workspace_id)
    try:
        a.write("_index.json", _index(), expected_version=CREATE)
        data, _ = a.read("_index.json")
        view = json.loads(data)
        fake_box.put(workspace_id, "_index.json", _index(_entry(50)))
        for n in range(3):
            view["entries"].append(_entry(n))
            a.write("_index.json", (json.dumps(view, indent=2) + "\n").encode(), expected_version=ANY_VERSION)
        assert sorted(_ids(fake_box.read(workspace_id, "_index.json"))) == sorted(
            [_entry(50)["id"]] + [_entry(n)["id"] for n in range(3)]
        )
    finally:
        a.close()


_CHILD = r"""
import json, os, sys, time
from memcore_box.cloud import CloudStorage
from memcore.storage import ANY_VERSION
folder, prefix, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
store = CloudStorage(folder)
store.list()  # connect and warm up before the start line
for _ in range(600):
    if os.path.exists(go):
        break
    time.sleep(0.05)
for n in range(count):
    data, _ = store.read("_index.json")
    doc = json.loads(data)
    doc["entries"].append({"id": f"mem_{prefix}{n:03d}", "slug": f"{prefix}-{n}", "title": f"{prefix} {n}",
                           "kind": "note", "status": "active", "tags": [prefix], "companion_for": None})
    store.write("_index.json", (json.dumps(doc, indent=2) + "\n").encode(), expected_version=ANY_VERSION)
store.close()
print(store.stats["merges"])
"""


@pytest.mark.slow
def test_processes_racing_on_one_index_lose_nothing(
    box_env: dict[str, str], fake_box: Any, workspace_id: str, tmp_path: Any
) -> None:
    go = tmp_path / "go"
    seed = CloudStorage(workspace_id)
    seed.write("_index.json", _index(), expected_version=CREATE)
    seed.close()
    env = {**os.environ, "MEMCORE_BOX_CONFLICT_RETRIES": "200"}
    listed = len(fake_box.requests("GET", r"/items$"))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, workspace_id, p, "25", str(go)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for p in ("a", "b", "c")
    ]
    while len(fake_box.requests("GET", r"/items$")) < listed + 3 and all(p.poll() is None for p in procs):
        time.sleep(0.05)  # bounded by the children's own bounded start loops
    go.write_text("go")
    merges = 0
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        merges += int(out.decode().strip().splitlines()[-1])
    ids = _ids(fake_box.read(workspace_id, "_index.json"))
    assert sorted(ids) == sorted(f"mem_{p}{n:03d}" for p in "abc" for n in range(25))
    assert merges >= 1  # they did race


# -- the merge itself ------------------------------------------------------------------------------
def test_merge_rules() -> None:
    base = _index(_entry(1), _entry(2), _entry(3))
    ours = _index(_entry(1, status="archived"), _entry(3), _entry(4))  # edit 1, delete 2, add 4
    theirs = _index(_entry(1), _entry(2), _entry(3, title="Edited"), _entry(5))  # edit 3, add 5
    merged = json.loads(merge_json(base, ours, theirs, what="x", index=True))
    by = {e["id"]: e for e in merged["entries"]}
    assert list(by) == [_entry(n)["id"] for n in (1, 3, 5, 4)]
    assert by[_entry(1)["id"]]["status"] == "archived" and by[_entry(3)["id"]]["title"] == "Edited"
    assert merged["by_status"] == {"archived": [_entry(1)["id"]], "active": [_entry(n)["id"] for n in (3, 5, 4)]}
    assert merged["by_wikilink"]["Edited"] == _entry(3)["id"]
    # an edit beats a stale delete
    merged = json.loads(merge_json(_index(_entry(1)), _index(), _index(_entry(1, title="New")), what="x", index=True))
    assert _ids(json.dumps(merged).encode()) == [_entry(1)["id"]]
    # never overwrite what cannot be parsed
    with pytest.raises(ConflictError):
        merge_json(base, ours, b"{broken", what="x", index=True)
    # formatting follows ours
    assert merge_json(None, b'{"a": 1}', b'{"b": 2}', what="x", index=False) == b'{"b": 2, "a": 1}'
