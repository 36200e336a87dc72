"""A compiled LangGraph graph remembers through :class:`MemcoreStore` in each of the seven formats.

The graph's nodes ``put``, ``search`` and ``get`` through the store LangGraph injects
(``StateGraph(...).compile(store=...)``); afterwards a fresh provider opened on the same files
reads the item back, so what the graph stored is in the format's own files.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from tests.conftest import BUILTIN_FORMATS, new_store

import memcore
from memcore.adapters.langgraph import MemcoreStore

VALUE = {"title": "Coffee", "content": "Espresso after lunch, never after four.", "tags": ["drink"], "strength": 3}


class State(TypedDict, total=False):
    user: str
    found: list[str]
    value: dict[str, Any] | None


def _remember(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    runtime.store.put(("users", state["user"], "prefs"), "coffee", VALUE)
    runtime.store.put(("users", state["user"], "prefs"), "deploys", {"title": "Deploys", "content": "On fridays."})
    return {}


def _recall(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    found = runtime.store.search(("users", state["user"]), query="espresso")
    item = runtime.store.get(("users", state["user"], "prefs"), found[0].key) if found else None
    return {"found": [hit.key for hit in found], "value": item.value if item else None}


async def _aremember(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    await runtime.store.aput(("users", state["user"], "prefs"), "coffee", VALUE)
    return {}


async def _arecall(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    found = await runtime.store.asearch(("users", state["user"]), query="espresso")
    item = await runtime.store.aget(("users", state["user"], "prefs"), "coffee")
    return {"found": [hit.key for hit in found], "value": item.value if item else None}


def _graph(store: MemcoreStore, remember: Any, recall: Any) -> CompiledStateGraph[State, None, State, State]:
    graph = StateGraph(State).add_sequence([("remember", remember), ("recall", recall)])
    return graph.add_edge(START, "remember").add_edge("recall", END).compile(store=store)


def _stored_in_files(url: str) -> None:
    """A fresh provider on the same files holds the item, natively and as LangGraph's value."""
    with memcore.open(url) as provider:
        entries = [e for e in provider.iter_entries() if e.title == "Coffee"]
        assert len(entries) == 1
        assert entries[0].body == VALUE["content"]
        assert entries[0].tags == ["drink"]
        # Maka's scope= is workspace or session: the namespace is kept in free data there
        assert entries[0].scope == (None if url.startswith("maka:") else "users.alice.prefs")
        item = MemcoreStore(provider).get(("users", "alice", "prefs"), "coffee")
    assert item is not None and item.value == VALUE


@pytest.mark.parametrize("fmt", BUILTIN_FORMATS)
def test_a_compiled_graph_puts_searches_and_gets_through_the_injected_store(fmt: str, tmp_path: Path) -> None:
    url = new_store(fmt, tmp_path)
    with memcore.open(url) as provider:
        out = _graph(MemcoreStore(provider), _remember, _recall).invoke({"user": "alice"})
    assert out["found"] == ["coffee"]
    assert out["value"] == VALUE
    _stored_in_files(url)


@pytest.mark.parametrize("fmt", BUILTIN_FORMATS)
def test_an_async_graph_uses_the_async_twins(fmt: str, tmp_path: Path) -> None:
    url = new_store(fmt, tmp_path)
    with memcore.open(url) as provider:
        out = asyncio.run(_graph(MemcoreStore(provider), _aremember, _arecall).ainvoke({"user": "alice"}))
    assert out["found"] == ["coffee"]
    assert out["value"] == VALUE
    _stored_in_files(url)
