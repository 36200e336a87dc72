"""A LangGraph graph that remembers a user's preferences in a memcore store.

Usage::

    python examples/adapters/langgraph_store.py [FORMAT:LOCATION]

Without an argument a fresh Box-memory workspace is made in a temporary folder. The graph's
first node stores two preferences through the store LangGraph injects, the second searches
them (memcore's search syntax, through the store's index) and reads one back; the script then
prints what the store holds, through a fresh provider, as the format's own entries.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

import memcore
from memcore.adapters.langgraph import MemcoreStore
from memcore.registry import get_registry


class State(TypedDict, total=False):
    """The graph's state: whose memory, and what the recall found."""

    user: str
    found: list[str]


def remember(state: State, runtime: Runtime[None]) -> State:
    """Store two preferences under ``("users", <user>, "prefs")``."""
    assert runtime.store is not None
    namespace = ("users", state["user"], "prefs")
    runtime.store.put(namespace, "coffee", {"title": "Coffee", "content": "Espresso after lunch.", "strength": 3})
    runtime.store.put(namespace, "deploys", {"title": "Deploy window", "content": "Deploys happen on fridays."})
    return {}


def recall(state: State, runtime: Runtime[None]) -> State:
    """Search the user's memories for coffee and read the best hit back."""
    assert runtime.store is not None
    hits = runtime.store.search(("users", state["user"]), query="espresso")
    found = []
    for hit in hits:
        item = runtime.store.get(hit.namespace, hit.key)
        assert item is not None
        found.append(f"{hit.key}: {item.value}")
    return {"found": found}


def main(url: str | None = None) -> None:
    """Run the graph on the store ``url`` (``format:location``; default: a fresh Box workspace)."""
    if url is None:
        location = Path(tempfile.mkdtemp()) / "workspace"
        get_registry().get("box").init_store(str(location))
        url = f"box:{location}"
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    with memcore.open(url) as provider:
        result = graph.compile(store=MemcoreStore(provider)).invoke({"user": "alice"})
    print("recalled:", *result["found"], sep="\n  ")
    with memcore.open(url) as provider:  # a fresh provider: what the files hold
        mine = [e for e in provider.iter_entries() if "langgraph" in e.extra]
    print(f"{url} holds {len(mine)} LangGraph items:", *(f"{e.id}: {e.title}" for e in mine), sep="\n  ")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
