"""Every ``BaseStore`` method of :class:`MemcoreStore` behaves as LangGraph documents it.

The checks shared by both run against LangGraph's own ``InMemoryStore`` too (``inmemory``), so
each expectation is the real behaviour of a LangGraph store, not our reading of the docs.
What only memcore has (text search through its index, TTL, files, read-only, entries written
by other tools) is checked on the seven formats alone.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from tests.conftest import BUILTIN_FORMATS, new_store

import memcore
from memcore.adapters.langgraph import MemcoreStore
from memcore.errors import QuerySyntaxError, ReadOnlyStoreError, UnsupportedOperationError
from memcore.models import MemoryEntry, utc_now

#: Formats without delete: ``put(value=None)`` raises memcore's error there.
NO_DELETE = {"whitebox"}


@pytest.fixture(params=("inmemory", *BUILTIN_FORMATS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    """LangGraph's InMemoryStore, or a MemcoreStore over a fresh store of one format."""
    if request.param == "inmemory":
        yield InMemoryStore()
        return
    with memcore.open(new_store(request.param, tmp_path)) as provider:
        yield MemcoreStore(provider)


@pytest.fixture(params=BUILTIN_FORMATS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store of each built-in format, as ``format:location``."""
    return new_store(request.param, tmp_path)


@pytest.fixture
def mstore(url: str) -> Iterator[MemcoreStore]:
    with memcore.open(url) as provider:
        yield MemcoreStore(provider)


def _deletes(store: BaseStore) -> bool:
    return not (isinstance(store, MemcoreStore) and store.provider.format_name in NO_DELETE)


def _fill(store: BaseStore) -> None:
    store.put(("docs", "a"), "1", {"kind": "report", "n": 1, "meta": {"lang": "en"}})
    store.put(("docs", "a"), "2", {"kind": "memo", "n": 2, "meta": {"lang": "fr"}})
    store.put(("docs", "b"), "3", {"kind": "report", "n": 3, "meta": {"lang": "en"}, "list": [1, 2]})
    store.put(("users", "alice", "prefs"), "4", {"kind": "pref", "n": 4})


# -- shared with InMemoryStore ----------------------------------------------------------------


def test_get_of_a_missing_key_is_none(store: BaseStore) -> None:
    assert store.get(("docs",), "nothing") is None
    store.put(("docs",), "here", {"x": 1})
    assert store.get(("docs",), "nothing") is None
    assert store.get(("other",), "here") is None


def test_put_then_get_gives_the_value_key_namespace_and_utc_times(store: BaseStore) -> None:
    value = {"title": "Coffee", "content": "Espresso.", "tags": ["drink"], "n": 1, "deep": {"a": [1, None, "x"]}}
    store.put(("users", "alice"), "coffee", value)
    item = store.get(("users", "alice"), "coffee")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (("users", "alice"), "coffee", value)
    assert isinstance(item.created_at, datetime) and item.created_at.utcoffset() == timedelta(0)
    assert item.updated_at >= item.created_at


def test_put_overwrites_the_whole_value(store: BaseStore) -> None:
    store.put(("docs",), "k", {"title": "Old", "a": 1, "b": 2})
    store.put(("docs",), "k", {"c": 3})
    item = store.get(("docs",), "k")
    assert item is not None and item.value == {"c": 3}
    assert [i.key for i in store.search(("docs",))] == ["k"]


def test_put_none_and_delete_remove_the_item(store: BaseStore) -> None:
    if not _deletes(store):
        pytest.skip("the format has no delete (checked in test_a_format_without_delete_refuses_with_memcores_error)")
    store.put(("docs",), "k", {"a": 1})
    store.put(("docs",), "j", {"a": 2})
    store.put(("docs",), "k", None)  # type: ignore[arg-type]
    assert store.get(("docs",), "k") is None
    store.delete(("docs",), "j")
    assert store.get(("docs",), "j") is None
    store.delete(("docs",), "never-there")  # no error
    assert store.search(("docs",)) == []


def test_search_filters_by_namespace_prefix_and_value_equality(store: BaseStore) -> None:
    _fill(store)
    assert sorted(i.key for i in store.search(("docs",))) == ["1", "2", "3"]
    assert sorted(i.key for i in store.search(("docs", "a"))) == ["1", "2"]
    assert sorted(i.key for i in store.search(())) == ["1", "2", "3", "4"]
    assert sorted(i.key for i in store.search(("docs",), filter={"kind": "report"})) == ["1", "3"]
    assert [i.key for i in store.search(("docs",), filter={"kind": "report", "n": 3})] == ["3"]
    assert sorted(i.key for i in store.search(("docs",), filter={"meta": {"lang": "en"}})) == ["1", "3"]
    assert [i.key for i in store.search(("docs",), filter={"list": [1, 2]})] == ["3"]
    assert store.search(("docs",), filter={"kind": "nothing"}) == []
    assert all(i.score is None for i in store.search(("docs",)))


def test_search_filter_operators(store: BaseStore) -> None:
    _fill(store)
    assert sorted(i.key for i in store.search(("docs",), filter={"n": {"$gt": 1}})) == ["2", "3"]
    assert sorted(i.key for i in store.search(("docs",), filter={"n": {"$gte": 2, "$lt": 3}})) == ["2"]
    assert sorted(i.key for i in store.search(("docs",), filter={"n": {"$lte": 1}})) == ["1"]
    assert sorted(i.key for i in store.search(("docs",), filter={"kind": {"$ne": "report"}})) == ["2"]
    assert sorted(i.key for i in store.search(("docs",), filter={"kind": {"$eq": "memo"}})) == ["2"]


def test_search_limit_and_offset_page_through_every_item_once(store: BaseStore) -> None:
    _fill(store)
    pages = [store.search(("docs",), limit=2, offset=offset) for offset in (0, 2, 4)]
    assert [len(p) for p in pages] == [2, 1, 0]
    assert sorted(i.key for p in pages for i in p) == ["1", "2", "3"]
    assert len(store.search((), limit=10)) == 4


def test_list_namespaces_with_prefix_suffix_wildcards_and_max_depth(store: BaseStore) -> None:
    _fill(store)
    assert store.list_namespaces() == [("docs", "a"), ("docs", "b"), ("users", "alice", "prefs")]
    assert store.list_namespaces(prefix=("docs",)) == [("docs", "a"), ("docs", "b")]
    assert store.list_namespaces(suffix=("prefs",)) == [("users", "alice", "prefs")]
    assert store.list_namespaces(prefix=("*", "a")) == [("docs", "a")]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("users",)]
    assert store.list_namespaces(prefix=("users",), max_depth=2) == [("users", "alice")]
    assert store.list_namespaces(limit=1, offset=1) == [("docs", "b")]
    assert store.list_namespaces(prefix=("nothing",)) == []


def test_batch_returns_one_result_per_op_in_order(store: BaseStore) -> None:
    _fill(store)
    results = store.batch(
        [
            GetOp(("docs", "a"), "1"),
            PutOp(("docs", "c"), "5", {"n": 5}),
            SearchOp(("docs", "b")),
            GetOp(("docs", "a"), "missing"),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("users",)),)),
        ]
    )
    assert len(results) == 5
    first = results[0]
    assert isinstance(first, Item) and first.value["n"] == 1
    assert results[1] is None
    searched = results[2]
    assert isinstance(searched, list) and [i.key for i in searched] == ["3"]  # type: ignore[union-attr]
    assert results[3] is None
    assert results[4] == [("users", "alice", "prefs")]
    got = store.get(("docs", "c"), "5")
    assert got is not None and got.value == {"n": 5}


def test_every_async_twin(store: BaseStore) -> None:
    async def run() -> None:
        await store.aput(("docs",), "k", {"a": 1})
        item = await store.aget(("docs",), "k")
        assert item is not None and item.value == {"a": 1}
        assert [i.key for i in await store.asearch(("docs",), filter={"a": 1})] == ["k"]
        assert await store.alist_namespaces() == [("docs",)]
        results = await store.abatch([GetOp(("docs",), "k"), SearchOp(("docs",), limit=1)])
        assert isinstance(results[0], Item) and len(results[1]) == 1  # type: ignore[arg-type]
        if _deletes(store):
            await store.adelete(("docs",), "k")
            assert await store.aget(("docs",), "k") is None

    asyncio.run(run())


def test_invalid_namespaces_are_refused_by_langgraphs_rules(store: BaseStore) -> None:
    for bad in [(), ("a.b",), ("langgraph", "x"), ("",)]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"a": 1})


def test_ttl_on_a_store_without_ttl_is_langgraphs_not_implemented_error() -> None:
    with pytest.raises(NotImplementedError, match="TTL"):
        InMemoryStore().put(("docs",), "k", {"a": 1}, ttl=5)


# -- memcore only -----------------------------------------------------------------------------


def _entry(store: MemcoreStore, namespace: tuple[str, ...], key: str) -> MemoryEntry:
    data = {"namespace": list(namespace), "key": key}
    return next(e for e in store.provider.iter_entries() if data.items() <= e.extra["langgraph"].items())


def test_a_value_round_trips_exactly_whatever_its_shape(mstore: MemcoreStore) -> None:
    values: list[dict[str, Any]] = [
        {},
        {"title": "  padded  ", "content": 5, "tags": "not-a-list"},
        {"title": "Café ☕", "content": "Line one.\n\n## A heading\n\n- a list\n", "tags": ["Mixed Case", "ns:x"]},
        {"content": "", "nested": {"a": {"b": [True, False, None, 1.5]}}},
        {"title": "Two\nlines", "tags": []},
    ]
    for n, value in enumerate(values):
        mstore.put(("shapes",), f"key {n}/weird", value)
    for n, value in enumerate(values):
        item = mstore.get(("shapes",), f"key {n}/weird")
        assert item is not None and item.value == value, n


def test_the_value_lives_in_the_formats_own_slots(mstore: MemcoreStore) -> None:
    mstore.put(("users", "alice"), "coffee", {"title": "Coffee", "content": "Espresso.", "tags": ["drink"], "n": 1})
    entry = _entry(mstore, ("users", "alice"), "coffee")
    assert (entry.title, entry.body, entry.tags) == ("Coffee", "Espresso.", ["drink"])
    assert entry.scope == (None if mstore.provider.format_name == "maka" else "users.alice")
    assert entry.extra["langgraph"] == {
        "namespace": ["users", "alice"],
        "key": "coffee",
        "native": ["title", "content", "tags"],
        "fields": {"n": 1},
    }


def test_an_item_without_content_gets_a_body_listing_its_fields(mstore: MemcoreStore) -> None:
    mstore.put(("users", "bob"), "food", {"likes": "pizza", "n": 2})
    entry = _entry(mstore, ("users", "bob"), "food")
    assert entry.title == "food"
    assert entry.body == '- likes: "pizza"\n- n: 2\n'
    assert [i.key for i in mstore.search(("users",), query="pizza")] == ["food"]


def test_search_with_a_query_goes_through_memcores_index_best_first(mstore: MemcoreStore) -> None:
    mstore.put(("docs",), "a", {"title": "Espresso", "content": "Espresso, espresso and espresso."})
    mstore.put(("docs",), "b", {"title": "Tea", "content": "Green tea, sometimes espresso."})
    mstore.put(("docs",), "c", {"title": "Water", "content": "Just water."})
    mstore.put(("other",), "d", {"title": "Espresso elsewhere", "content": "Espresso."})
    hits = mstore.search(("docs",), query="espresso")
    assert [h.key for h in hits] == ["a", "b"]
    assert hits[0].score is not None and hits[1].score is not None and hits[0].score > hits[1].score
    assert [h.key for h in mstore.search(("docs",), query="espresso", offset=1, limit=1)] == ["b"]
    assert [h.key for h in mstore.search(("docs",), query="espresso", filter={"title": "Tea"})] == ["b"]
    assert [h.key for h in mstore.search(("docs",), query='"green tea"')] == ["b"]
    with pytest.raises(QuerySyntaxError):
        mstore.search(("docs",), query='"unclosed')


def test_put_then_get_in_one_batch_sees_the_put(mstore: MemcoreStore) -> None:
    results = mstore.batch([PutOp(("docs",), "k", {"a": 1}), GetOp(("docs",), "k"), PutOp(("docs",), "k", {"a": 2})])
    assert isinstance(results[1], Item) and results[1].value == {"a": 1}
    got = mstore.get(("docs",), "k")
    assert got is not None and got.value == {"a": 2}


def test_put_with_ttl_sets_expires_at_and_an_expired_item_is_gone(mstore: MemcoreStore) -> None:
    before = utc_now()
    mstore.put(("docs",), "k", {"a": 1}, ttl=30)
    entry = _entry(mstore, ("docs",), "k")
    assert entry.expires_at is not None
    assert before + timedelta(minutes=30) <= entry.expires_at <= utc_now() + timedelta(minutes=30)
    assert entry.extra["langgraph"]["ttl"] == 30
    entry.expires_at = utc_now() - timedelta(minutes=1)  # as if 31 minutes had passed
    mstore.provider.update(entry, expected_version=entry.version)
    assert mstore.get(("docs",), "k") is None
    assert mstore.search(("docs",)) == []
    assert mstore.list_namespaces() == []


def test_a_put_after_expiry_reuses_the_items_entry(mstore: MemcoreStore) -> None:
    mstore.put(("docs",), "k", {"a": 1}, ttl=30)
    entry = _entry(mstore, ("docs",), "k")
    entry.expires_at = utc_now() - timedelta(minutes=1)
    mstore.provider.update(entry, expected_version=entry.version)
    mstore.put(("docs",), "k", {"a": 2})
    assert [(e.id, e.status.value) for e in mstore.provider.iter_entries()] == [(entry.id, "active")]
    got = mstore.get(("docs",), "k")
    assert got is not None and got.value == {"a": 2}


def test_refresh_ttl_moves_expires_at_forward_and_false_leaves_it(mstore: MemcoreStore) -> None:
    mstore.put(("docs",), "k", {"a": 1}, ttl=60)
    entry = _entry(mstore, ("docs",), "k")
    soon = utc_now() + timedelta(minutes=1)
    entry.expires_at = soon
    mstore.provider.update(entry, expected_version=entry.version)
    kept = _entry(mstore, ("docs",), "k").expires_at
    assert kept is not None and abs(kept - soon) < timedelta(seconds=1)
    mstore.get(("docs",), "k", refresh_ttl=False)
    mstore.search(("docs",), refresh_ttl=False)
    assert _entry(mstore, ("docs",), "k").expires_at == kept
    mstore.get(("docs",), "k")  # refresh_ttl defaults to True
    refreshed = _entry(mstore, ("docs",), "k").expires_at
    assert refreshed is not None and refreshed >= utc_now() + timedelta(minutes=59)
    mstore.put(("docs",), "k", {"a": 2})  # a put without ttl: no expiry
    assert _entry(mstore, ("docs",), "k").expires_at is None


def test_a_ttl_config_gives_the_default_ttl_and_the_refresh_default(url: str) -> None:
    with memcore.open(url) as provider:
        store = MemcoreStore(provider, ttl={"default_ttl": 10, "refresh_on_read": False})
        store.put(("docs",), "k", {"a": 1})
        entry = _entry(store, ("docs",), "k")
        assert entry.extra["langgraph"]["ttl"] == 10
        assert entry.expires_at is not None and entry.expires_at <= utc_now() + timedelta(minutes=10)
        store.get(("docs",), "k")  # refresh_on_read is false: nothing is written
        assert _entry(store, ("docs",), "k").expires_at == entry.expires_at
        store.put(("docs",), "k", {"a": 2}, ttl=None)  # an explicit None: no expiry
        assert _entry(store, ("docs",), "k").expires_at is None


def test_sweep_deletes_expired_items(mstore: MemcoreStore) -> None:
    if mstore.provider.format_name in NO_DELETE:
        pytest.skip("no delete in this format")
    mstore.put(("docs",), "old", {"a": 1}, ttl=1)
    mstore.put(("docs",), "new", {"a": 2}, ttl=60)
    entry = _entry(mstore, ("docs",), "old")
    entry.expires_at = utc_now() - timedelta(seconds=1)
    mstore.provider.update(entry, expected_version=entry.version)
    assert mstore.sweep() == 1
    assert [e.extra["langgraph"]["key"] for e in mstore.provider.iter_entries()] == ["new"]


def test_a_read_only_store_refuses_put_and_still_reads(url: str) -> None:
    with memcore.open(url) as provider:
        MemcoreStore(provider).put(("docs",), "k", {"a": 1}, ttl=60)
    with memcore.open(url, read_only=True) as provider:
        store = MemcoreStore(provider)
        with pytest.raises(ReadOnlyStoreError):
            store.put(("docs",), "j", {"a": 2})
        item = store.get(("docs",), "k")  # refresh_ttl is skipped: reading writes nothing
        assert item is not None and item.value == {"a": 1}


def test_a_format_without_delete_refuses_with_memcores_error(tmp_path: Path) -> None:
    with memcore.open(new_store("whitebox", tmp_path)) as provider:
        store = MemcoreStore(provider)
        store.put(("docs",), "k", {"a": 1})
        with pytest.raises(UnsupportedOperationError, match="not supported"):
            store.delete(("docs",), "k")
        item = store.get(("docs",), "k")
        assert item is not None and item.value == {"a": 1}


def test_entries_written_by_other_tools_are_read_only_items_under_memcore(mstore: MemcoreStore) -> None:
    added = mstore.provider.add(MemoryEntry(title="Deploy window", body="We deploy on friday.", tags=["ops"]))
    mstore.put(("docs",), "k", {"a": 1})
    found = [i for i in mstore.search(()) if i.namespace[0] == "memcore"]
    assert [i.key for i in found] == [added.id]
    assert found[0].value == {
        "title": "Deploy window",
        "content": "We deploy on friday.",
        "tags": ["ops"],
        "kind": added.kind.value,
    }
    assert mstore.get(found[0].namespace, found[0].key) == found[0]
    assert [i.key for i in mstore.search(("memcore",), query="friday")] == [added.id]
    with pytest.raises(UnsupportedOperationError, match="read-only"):
        mstore.put(found[0].namespace, found[0].key, {"title": "x"})


def test_importing_without_langgraph_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.store.base", None)
    monkeypatch.delitem(sys.modules, "memcore.adapters.langgraph")
    with pytest.raises(ImportError, match=r'pip install "memcore-unified\[langgraph\]"'):
        importlib.import_module("memcore.adapters.langgraph")


# -- lookups by id ----------------------------------------------------------------------------


class _Counting:
    """Counts the entries a provider yields from ``iter_entries`` (``get`` goes through it too)."""

    def __init__(self, provider: Any) -> None:
        self.read = 0
        inner = provider.iter_entries

        def counted(query: Any = None) -> Iterator[MemoryEntry]:
            for entry in inner(query):
                self.read += 1
                yield entry

        provider.iter_entries = counted


def test_a_get_or_put_of_a_known_item_reads_that_entry_alone(mstore: MemcoreStore) -> None:
    for n in range(12):
        mstore.put(("docs",), f"k{n}", {"n": n})
    counter = _Counting(mstore.provider)
    assert mstore.get(("docs",), "k7").value == {"n": 7}  # type: ignore[union-attr]
    mstore.put(("docs",), "k7", {"n": 70})
    assert mstore.get(("docs",), "k7").value == {"n": 70}  # type: ignore[union-attr]
    assert counter.read <= 6  # three lookups, each one entry (the put's save reads it once more)


def test_an_item_changed_by_another_writer_is_read_as_changed(url: str) -> None:
    with memcore.open(url) as first, memcore.open(url) as second:
        mine, theirs = MemcoreStore(first), MemcoreStore(second)
        mine.put(("docs",), "shared", {"v": 1})
        assert theirs.get(("docs",), "shared").value == {"v": 1}  # type: ignore[union-attr]
        theirs.put(("docs",), "shared", {"v": 2})
        seen = mine.get(("docs",), "shared").value  # type: ignore[union-attr]
        if first.format_name == "whitebox":  # agents propose, never overwrite another's file
            assert seen == {"v": 1}
            assert len(list((first.root / "proposed").glob("*-docs_shared.md"))) == 1  # type: ignore[attr-defined]
        else:
            assert seen == {"v": 2}


def test_an_item_deleted_by_another_writer_is_gone_for_the_first(url: str) -> None:
    with memcore.open(url) as first, memcore.open(url) as second:
        mine, theirs = MemcoreStore(first), MemcoreStore(second)
        mine.put(("docs",), "short-lived", {"v": 1})
        assert theirs.get(("docs",), "short-lived") is not None
        if first.format_name in NO_DELETE:
            pytest.skip("no delete in this format")
        theirs.delete(("docs",), "short-lived")
        assert mine.get(("docs",), "short-lived") is None
        mine.put(("docs",), "short-lived", {"v": 3})
        assert theirs.get(("docs",), "short-lived").value == {"v": 3}  # type: ignore[union-attr]
