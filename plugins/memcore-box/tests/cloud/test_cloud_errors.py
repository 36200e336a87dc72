"""What memcore's Box cloud errors hold: no credential anywhere, the failing step, a bounded wait.

Issue 17, items 18 (credentials unreachable from any exception, its chain included), 19 (errors
name the failing step and the right variables) and 20 (the HTTP timeout is an option). Real
``box_sdk_gen`` client, fake Box API on 127.0.0.1 with injected faults.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from memcore.errors import ConfigError, ConflictError, MemcoreError
from memcore.models import Kind, MemoryEntry
from memcore.storage import CREATE
from memcore_box.cloud import DEFAULT_TIMEOUT, BoxCloudError, CloudConfig, CloudStorage
from memcore_box.cloud_provider import BoxCloudProvider

TOKEN = "fake-dev-token-s3cr3t"
SECRET = "fake-client-s3cr3t"


def _reachable_text(exc: BaseException, *, limit: int = 20000) -> list[str]:
    """Return str/repr of every object reachable from ``exc``: its chain, args and attributes.

    Walks ``__cause__``, ``__context__``, ``args`` and every attribute (``__dict__``, slots,
    mappings, sequences) of each object met, bounded by ``limit`` objects; not tracebacks
    (their frames reach the whole process, configuration included).
    """
    out: list[str] = []
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or obj is None:
            continue
        seen.add(id(obj))
        if isinstance(obj, (bytes, bytearray)):
            out.append(bytes(obj).decode("latin-1"))
            continue
        if isinstance(obj, (str, int, float, bool)):
            out.append(str(obj))
            continue
        try:
            out.append(repr(obj))
            out.append(str(obj))
        except Exception:  # noqa: BLE001 - a repr that fails hides nothing
            pass
        if isinstance(obj, BaseException):
            stack += [obj.__cause__, obj.__context__, *obj.args]
        if isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack += list(obj)
        if hasattr(obj, "__dict__") and not isinstance(obj, type):
            stack += list(vars(obj).values())
        for slot in getattr(type(obj), "__slots__", ()):
            stack.append(getattr(obj, slot, None))
    return out


def _assert_no_secret(exc: BaseException, *secrets: str) -> None:
    texts = _reachable_text(exc)
    assert len(texts) > 1
    for secret in secrets:
        leaks = [t[:200] for t in texts if secret in t]
        assert not leaks, f"{secret!r} reachable from {type(exc).__name__}: {leaks[:3]}"


@pytest.fixture
def ccg_env(fake_box: Any, box_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Client credentials instead of the developer token."""
    monkeypatch.delenv("BOX_DEVELOPER_TOKEN")
    monkeypatch.setenv("BOX_CLIENT_ID", "fake-client-id")
    monkeypatch.setenv("BOX_CLIENT_SECRET", SECRET)
    monkeypatch.setenv("BOX_ENTERPRISE_ID", "4242")


# -- item 18 --------------------------------------------------------------------------------------------
def test_token_is_unreachable_from_every_error_and_its_chain(
    storage: CloudStorage, fake_box: Any, workspace_id: str
) -> None:
    storage.make_folder("memories")
    storage.write("memories/a.md", b"a", expected_version=CREATE)
    caught: list[BaseException] = []

    def expect(kind: type[BaseException], fn: Any) -> None:
        with pytest.raises(kind) as info:
            fn()
        caught.append(info.value)

    # 404 on a folder, 409 on create, 412 on a stale version, 400 from Box, retries exhausted
    expect(FileNotFoundError, lambda: storage.list("nope"))
    fake_box.put(workspace_id, "memories/b.md", b"theirs")
    expect(ConflictError, lambda: storage.write("memories/b.md", b"ours", expected_version=CREATE))
    _, version = storage.read("memories/a.md")
    fake_box.put(workspace_id, "memories/a.md", b"changed")
    expect(ConflictError, lambda: storage.write("memories/a.md", b"x", expected_version=version))
    fake_box.inject("status", status=400, method="DELETE")
    expect(BoxCloudError, lambda: storage.delete("memories/a.md"))
    fake_box.inject("status", status=503, times=50)
    expect(BoxCloudError, lambda: storage.read("memories/a.md"))
    fake_box.faults.clear()
    fake_box.tokens.clear()  # the token expired
    expect(ConfigError, lambda: storage.list("memories"))
    assert len(caught) == 6
    for exc in caught:
        _assert_no_secret(exc, TOKEN)
        assert isinstance(exc, (MemcoreError, FileNotFoundError))


def test_client_secret_is_unreachable_from_errors_of_the_token_request(
    ccg_env: None, fake_box: Any, workspace_id: str
) -> None:
    fake_box.inject("status", status=500, path="/oauth2/token", times=50)
    store = CloudStorage(workspace_id)
    try:
        with pytest.raises(BoxCloudError) as info:
            store.list()
    finally:
        store.close()
    _assert_no_secret(info.value, SECRET, "fake-client-id")


def test_provider_errors_hold_no_token(box_env: dict[str, str], fake_box: Any, workspace_id: str) -> None:
    BoxCloudProvider.init_store(workspace_id)
    with BoxCloudProvider(workspace_id) as store:
        stored = store.add(MemoryEntry(kind=Kind.FACT, title="T", body="b\n"))
        fake_box.inject("status", status=400, method="DELETE")
        with pytest.raises(MemcoreError) as info:
            store.delete(stored.id or "")
    assert isinstance(info.value, BoxCloudError) and info.value.status == 400
    _assert_no_secret(info.value, TOKEN)


# -- item 19 --------------------------------------------------------------------------------------------
def test_500_from_the_token_endpoint_says_authentication_failed(
    ccg_env: None, fake_box: Any, workspace_id: str
) -> None:
    fault = fake_box.inject("status", status=500, path="/oauth2/token", times=50)
    store = CloudStorage(workspace_id)
    try:
        with pytest.raises(BoxCloudError) as info:
            store.list()
    finally:
        store.close()
    message = str(info.value)
    assert fault.hits == 6
    assert info.value.step == "authenticate" and info.value.status == 500
    assert "authentication failed" in message and "token endpoint" in message
    assert "list folder failed" not in message
    assert fake_box.requests("GET", r"/2.0/folders/") == []  # nothing reached the API


def test_bad_client_secret_names_the_client_credentials_not_the_developer_token(
    ccg_env: None, fake_box: Any, workspace_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOX_CLIENT_SECRET", "wrong-secret-value")
    store = CloudStorage(workspace_id)
    try:
        with pytest.raises(ConfigError) as info:
            store.list()
    finally:
        store.close()
    message = str(info.value)
    assert "authentication failed" in message
    assert "BOX_CLIENT_ID" in message and "BOX_CLIENT_SECRET" in message
    assert "BOX_DEVELOPER_TOKEN" not in message
    assert "wrong-secret-value" not in message
    _assert_no_secret(info.value, "wrong-secret-value")


def test_expired_developer_token_names_the_developer_token(storage: CloudStorage, fake_box: Any) -> None:
    fake_box.tokens.clear()
    with pytest.raises(ConfigError) as info:
        storage.list()
    assert "BOX_DEVELOPER_TOKEN" in str(info.value) and "BOX_CLIENT_SECRET" not in str(info.value)


# -- item 20 --------------------------------------------------------------------------------------------
def test_timeout_is_an_option_with_a_documented_default(
    box_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    assert CloudConfig.from_env().timeout == DEFAULT_TIMEOUT == 20.0
    assert CloudConfig.from_env({"timeout": "1.5"}).timeout == 1.5
    monkeypatch.setenv("MEMCORE_BOX_TIMEOUT", "3")
    assert CloudConfig.from_env().timeout == 3.0
    with pytest.raises(ConfigError, match="timeout"):
        CloudConfig.from_env({"timeout": "0"})
    docs = Path(__file__).resolve().parents[4] / "docs" / "formats" / "box-cloud.md"
    text = docs.read_text(encoding="utf-8")
    assert "`MEMCORE_BOX_TIMEOUT` (20)" in text and "`timeout`" in text


def test_silently_dropped_upload_does_not_block_a_write(
    box_env: dict[str, str], fake_box: Any, workspace_id: str
) -> None:
    store = CloudStorage(workspace_id, config=CloudConfig.from_env({"timeout": "0.5", "retry_attempts": "3"}))
    try:
        store.make_folder("memories")
        # the upload lands, then the server says nothing (a dropped answer): the retry sees ours
        fault = fake_box.inject("hang_after", method="POST", path="/upload/2.0/files/content$", seconds=5)
        started = time.monotonic()
        item = store.write("memories/a.md", b"landed", expected_version=CREATE)
        elapsed = time.monotonic() - started
    finally:
        store.close()
    assert fault.hits == 1
    assert elapsed < 4, f"the write waited {elapsed:.1f}s for an answer that never came"
    assert fake_box.read(workspace_id, "memories/a.md") == b"landed"
    assert item.id == fake_box.node_at(workspace_id, "memories/a.md").id


def test_hang_on_every_try_fails_within_the_budget_naming_the_timeout(
    box_env: dict[str, str], fake_box: Any, workspace_id: str
) -> None:
    store = CloudStorage(workspace_id, config=CloudConfig.from_env({"timeout": "0.3", "retry_attempts": "2"}))
    try:
        fake_box.inject("hang", method="GET", seconds=3, times=2)
        started = time.monotonic()
        with pytest.raises(BoxCloudError) as info:
            store.list()
        elapsed = time.monotonic() - started
    finally:
        store.close()
    assert elapsed < 2.5
    assert "no answer within 0.3 s" in str(info.value) and "timeout" in str(info.value)
