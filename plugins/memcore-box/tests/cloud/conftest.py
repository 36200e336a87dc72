"""Fixtures for the Box cloud tests: a fake Box API on 127.0.0.1 and storages pointed at it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).resolve().parent
_NAME = "memcore_box_tests_fakebox"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, _HERE / "_fakebox.py")
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)
fakebox = sys.modules[_NAME]

#: Every environment variable the cloud storage reads; tests start from none of them.
BOX_ENV = (
    "BOX_DEVELOPER_TOKEN",
    "BOX_CLIENT_ID",
    "BOX_CLIENT_SECRET",
    "BOX_ENTERPRISE_ID",
    "BOX_USER_ID",
    "BOX_JWT_CONFIG",
    "MEMCORE_BOX_API_URL",
    "MEMCORE_BOX_UPLOAD_URL",
    "MEMCORE_BOX_OAUTH_URL",
    "MEMCORE_BOX_RETRY_ATTEMPTS",
    "MEMCORE_BOX_RETRY_BASE_DELAY",
    "MEMCORE_BOX_RETRY_MAX_DELAY",
    "MEMCORE_BOX_CONFLICT_RETRIES",
    "MEMCORE_BOX_PAGE_SIZE",
)
#: A short retry budget for tests: 6 attempts, 1 ms base, 20 ms cap.
FAST_RETRY = {
    "MEMCORE_BOX_RETRY_ATTEMPTS": "6",
    "MEMCORE_BOX_RETRY_BASE_DELAY": "0.001",
    "MEMCORE_BOX_RETRY_MAX_DELAY": "0.02",
}


@pytest.fixture
def fake_box() -> Iterator[Any]:
    """A fresh fake Box API server (page size 3, so listings paginate), stopped after the test."""
    with fakebox.FakeBox(page_size_max=3) as fake:
        yield fake


@pytest.fixture
def box_env(fake_box: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point the environment at ``fake_box`` with a developer token and the short retry budget.

    Proxy variables are set to an unroutable proxy: the storage must ignore them.
    """
    for name in BOX_ENV:
        monkeypatch.delenv(name, raising=False)
    env = {**fake_box.env(), **FAST_RETRY}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return env


@pytest.fixture
def workspace_id(fake_box: Any) -> str:
    """The id of an empty folder ``ws`` in the fake's root: the workspace under test."""
    return str(fake_box.make_folder("ws"))


@pytest.fixture
def storage(box_env: dict[str, str], workspace_id: str) -> Iterator[Any]:
    """A :class:`CloudStorage` on ``workspace_id``, configured from the environment only."""
    from memcore_box.cloud import CloudStorage

    store = CloudStorage(workspace_id)
    yield store
    store.close()
