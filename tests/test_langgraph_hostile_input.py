"""Hostile input to the LangGraph store: what it cannot keep is a ``ValueError`` naming the rule.

:class:`MemcoreStore` is given keys, labels, values and ttls a careless or hostile caller would
pass; each is refused before anything is written, with a message naming the rule and not the
store's place on this machine (LangGraph tool nodes hand exception text to the model).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from tests.conftest import BUILTIN_FORMATS, new_store

import memcore
from memcore.adapters.langgraph import MemcoreStore
from memcore.errors import ReadOnlyStoreError, UnsafePathError


@pytest.fixture(params=BUILTIN_FORMATS)
def lgstore(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemcoreStore]:
    with memcore.open(new_store(request.param, tmp_path)) as provider:
        yield MemcoreStore(provider)


@pytest.mark.parametrize("ttl", [1e12, math.inf, -math.inf, math.nan])
def test_a_ttl_that_is_no_time_is_a_value_error_and_writes_nothing(lgstore: MemcoreStore, ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        lgstore.put(("u",), "k", {"a": 1}, ttl=ttl)
    assert list(lgstore.provider.iter_entries()) == []


@pytest.mark.parametrize(("namespace", "key"), [(("u",), "k\ud800"), (("u\udc00",), "k")])
def test_a_lone_surrogate_in_a_key_or_label_is_a_value_error_naming_it(
    lgstore: MemcoreStore, namespace: tuple[str, ...], key: str
) -> None:
    with pytest.raises(ValueError, match="lone surrogate"):
        lgstore.put(namespace, key, {"a": 1})
    assert list(lgstore.provider.iter_entries()) == []
    assert lgstore.get(namespace, key) is None  # a WhiteBox id is hashed from the key: no UnicodeEncodeError


@pytest.mark.parametrize("value", [["a"], "abc", 5])
def test_a_value_that_is_not_a_dict_is_a_value_error_naming_it(lgstore: MemcoreStore, value: Any) -> None:
    with pytest.raises(ValueError, match="must be a dict"):
        lgstore.put(("u",), "k", value)
    assert list(lgstore.provider.iter_entries()) == []


def test_an_adapter_error_names_no_machine_path(lgstore: MemcoreStore) -> None:
    with pytest.raises(ValueError, match="must be JSON data") as caught:
        lgstore.put(("u",), "k", {"when": {1, 2}})
    assert lgstore.provider.location not in str(caught.value)


def test_a_filter_that_is_not_a_dict_is_a_value_error(lgstore: MemcoreStore) -> None:
    lgstore.put(("u",), "k", {"a": 1})
    with pytest.raises(ValueError, match="a search filter is a dict"):
        lgstore.search(("u",), filter=["a"])  # type: ignore[arg-type]


def test_a_label_too_long_for_a_folder_name_is_refused_naming_the_rule_not_the_path(tmp_path: Path) -> None:
    with memcore.open(new_store("box", tmp_path)) as provider:
        store = MemcoreStore(provider)
        with pytest.raises(UnsafePathError, match="over the 255") as caught:
            store.put(("t" * 5000,), "k", {"v": 1})
        assert str(tmp_path) not in str(caught.value)
        assert store.get(("t" * 5000,), "k") is None


def test_a_read_only_refusal_names_the_store_not_its_place_on_the_machine(tmp_path: Path) -> None:
    location = new_store("box", tmp_path)
    with memcore.open(location, read_only=True) as provider:
        store = MemcoreStore(provider)
        with pytest.raises(ReadOnlyStoreError, match="opened read-only") as caught:
            store.put(("u",), "k", {"a": 1})
    assert str(tmp_path) not in str(caught.value)
    assert "store " + Path(provider.location).name in str(caught.value)
