"""CloudStorage against the fake Box API: the Storage contract, versions, pagination, config."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from memcore.errors import ConfigError, ConflictError, UnsafePathError
from memcore.storage import ANY_VERSION, CREATE, Storage
from memcore_box.cloud import CloudConfig, CloudStorage

TOKEN = "fake-dev-token-s3cr3t"


def test_is_a_storage(storage: CloudStorage) -> None:
    assert isinstance(storage, Storage)
    assert storage.description == f"box+cloud:{storage.folder_id}"


def test_files_round_trip_exact_bytes(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.make_folder("teams/core/memories")
    payloads = {
        "teams/core/memories/fact__crlf.md": b"---\r\nid: mem_1\r\n---\r\nline\r\n",
        "teams/core/memories/fact__bom.md": b"\xef\xbb\xbf---\nid: mem_2\n---\n",
        "teams/core/memories/blob.bin": bytes(range(256)),
    }
    for path, data in payloads.items():
        item = storage.write(path, data, expected_version=CREATE)
        assert item.size == len(data) and item.id and item.version
    for path, data in payloads.items():
        got, version = storage.read(path)
        assert got == data
        assert version == storage.stat(path).version
        assert fake_box.read(workspace_id, path) == data
    algo, digest, size = storage.checksum("teams/core/memories/blob.bin")
    assert (algo, size) == ("sha1", 256)
    assert digest == "4916d6bdb7f78e6803698cab32d1586ea457dfc8"  # sha1 of bytes 0..255


def test_listing_paginates_and_sorts(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.make_folder("memories")
    names = [f"note__n{i:02d}.md" for i in range(10)]
    for name in reversed(names):
        storage.write(f"memories/{name}", name.encode(), expected_version=CREATE)
    storage.make_folder("memories/sub")
    listed = storage.list("memories")
    assert [i.name for i in listed] == sorted([*names, "sub"])
    assert [i.is_folder for i in listed if i.name == "sub"] == [True]
    assert all(i.version and i.size for i in listed if not i.is_folder)
    # page size 3 on the fake: 11 children take 4 pages, all by marker
    pages = fake_box.requests("GET", r"/items$")[-4:]
    assert [bool(p["query"].get("marker")) for p in pages] == [False, True, True, True]
    with pytest.raises(FileNotFoundError):
        storage.list("nope")


def test_stat_exists_and_folders(storage: CloudStorage) -> None:
    assert storage.stat("").is_folder
    storage.make_folder("a/b")
    storage.make_folder("a/b")  # existing folders are fine
    assert storage.stat("a/b").is_folder
    assert storage.exists("a") and not storage.exists("a/c")
    with pytest.raises(FileNotFoundError):
        storage.stat("a/c.md")
    with pytest.raises(FileNotFoundError):
        storage.write("zz/x.md", b"x", expected_version=CREATE)
    for bad in ("../x.md", "/abs.md", "a/../../x", "a\\b.md"):
        with pytest.raises(UnsafePathError):
            storage.write(bad, b"x", expected_version=CREATE)


def test_conditional_writes(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    first = storage.write("fact__x.md", b"one", expected_version=CREATE)
    with pytest.raises(ConflictError):
        storage.write("fact__x.md", b"two", expected_version=CREATE)
    second = storage.write("fact__x.md", b"two", expected_version=first.version)
    assert second.version != first.version
    with pytest.raises(ConflictError):
        storage.write("fact__x.md", b"stale", expected_version=first.version)
    assert fake_box.read(workspace_id, "fact__x.md") == b"two"
    # a concurrent writer changes it: our version is stale
    fake_box.put(workspace_id, "fact__x.md", b"theirs")
    with pytest.raises(ConflictError):
        storage.write("fact__x.md", b"mine", expected_version=second.version)
    assert fake_box.read(workspace_id, "fact__x.md") == b"theirs"
    # every version upload carried If-Match
    uploads = fake_box.requests("POST", r"^/upload/2.0/files/\d+/content$")
    assert uploads and all(r["if_match"] is not None for r in uploads)
    # new files went to the upload host, never to the API host
    assert fake_box.requests("POST", r"^/2.0/files/content$") == []
    assert fake_box.requests("POST", r"^/upload/2.0/files/content$")


def test_deleted_and_recreated_file_does_not_match_old_token(storage: CloudStorage, fake_box: Any) -> None:
    old = storage.write("note__y.md", b"a", expected_version=CREATE)
    storage.delete("note__y.md", expected_version=old.version)
    new = storage.write("note__y.md", b"b", expected_version=CREATE)
    assert old.version is not None and new.version is not None
    assert old.version.split(":")[1] == new.version.split(":")[1]  # same etag "0" ...
    with pytest.raises(ConflictError):  # ... but another file
        storage.write("note__y.md", b"c", expected_version=old.version)
    with pytest.raises(ConflictError):
        storage.delete("note__y.md", expected_version=old.version)
    storage.delete("note__y.md")
    with pytest.raises(FileNotFoundError):
        storage.delete("note__y.md")
    with pytest.raises(FileNotFoundError):
        storage.read("note__y.md")


def test_files_changed_by_others_are_seen(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.write("a.md", b"1", expected_version=CREATE)
    assert storage.read("a.md")[0] == b"1"
    fake_box.put(workspace_id, "b.md", b"new")
    assert storage.read("b.md")[0] == b"new"  # not in the cache: the folder is listed again
    fake_box.put(workspace_id, "a.md", b"2")
    assert storage.read("a.md")[0] == b"2"
    with fake_box.lock:  # deleted behind our back, then re-created with another id
        node = fake_box.node_at(workspace_id, "a.md")
        del fake_box.nodes[node.id]
    fake_box.put(workspace_id, "a.md", b"3")
    assert storage.read("a.md")[0] == b"3"


def test_any_version_replaces(storage: CloudStorage, fake_box: Any, workspace_id: str) -> None:
    storage.write("README.md", b"v1", expected_version=ANY_VERSION)
    fake_box.put(workspace_id, "README.md", b"theirs")
    storage.write("README.md", b"v2", expected_version=ANY_VERSION)
    assert fake_box.read(workspace_id, "README.md") == b"v2"


# -- configuration and secrets ------------------------------------------------------------------
def test_config_from_env_only(box_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = CloudConfig.from_env()
    assert cfg.auth_kind == "developer_token"
    assert cfg.api_url == box_env["MEMCORE_BOX_API_URL"]
    assert cfg.retry.attempts == 6 and cfg.retry.max_delay == 0.02
    assert TOKEN not in repr(cfg)
    monkeypatch.setenv("MEMCORE_BOX_API_URL", box_env["MEMCORE_BOX_API_URL"] + "/2.0/")
    assert CloudConfig.from_env().api_url == box_env["MEMCORE_BOX_API_URL"]  # the /2.0 trap
    assert CloudConfig.from_env({"api_url": "https://x.example/"}).api_url == "https://x.example"
    monkeypatch.delenv("BOX_DEVELOPER_TOKEN")
    with pytest.raises(ConfigError, match="BOX_DEVELOPER_TOKEN"):
        CloudConfig.from_env()
    monkeypatch.setenv("BOX_CLIENT_ID", "cid")
    with pytest.raises(ConfigError, match="BOX_ENTERPRISE_ID"):
        CloudConfig.from_env()
    monkeypatch.setenv("MEMCORE_BOX_RETRY_ATTEMPTS", "many")
    with pytest.raises(ConfigError, match="retry_attempts"):
        CloudConfig.from_env()
    with pytest.raises(ConfigError, match="folder id"):
        CloudStorage("../x", config=cfg)


def test_proxies_are_ignored(storage: CloudStorage) -> None:
    # box_env points HTTP(S)_PROXY at a closed port: every request would fail through it
    storage.write("x.md", b"x", expected_version=CREATE)
    assert storage._session is not None and storage._session.trust_env is False


def test_client_credentials(
    box_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, fake_box: Any, workspace_id: str
) -> None:
    monkeypatch.delenv("BOX_DEVELOPER_TOKEN")
    monkeypatch.setenv("BOX_CLIENT_ID", "fake-client-id")
    monkeypatch.setenv("BOX_CLIENT_SECRET", "fake-client-s3cr3t")
    monkeypatch.setenv("BOX_ENTERPRISE_ID", "4242")
    store = CloudStorage(workspace_id)
    try:
        assert store.config.auth_kind == "ccg"
        store.write("a.md", b"a", expected_version=CREATE)
        assert fake_box.token_grants == [{"subject_type": "enterprise", "subject_id": "4242"}]
        assert "fake-client-s3cr3t" not in repr(store) + repr(store.config)
    finally:
        store.close()
    monkeypatch.setenv("BOX_CLIENT_SECRET", "wrong-s3cr3t")
    bad = CloudStorage(workspace_id)
    try:
        with pytest.raises(ConfigError) as info:
            bad.list()
        assert "wrong-s3cr3t" not in str(info.value)
    finally:
        bad.close()


def test_bad_token_is_a_config_error_without_the_token(
    box_env: dict[str, str], workspace_id: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BOX_DEVELOPER_TOKEN", "expired-t0ken-value")
    caplog.set_level(logging.DEBUG)
    store = CloudStorage(workspace_id)
    try:
        with pytest.raises(ConfigError) as info:
            store.list()
    finally:
        store.close()
    assert "expired-t0ken-value" not in str(info.value)
    assert "expired-t0ken-value" not in repr(store)
    assert "expired-t0ken-value" not in caplog.text
