"""Adapters: any memcore store behind the memory interfaces agent frameworks already call.

Each adapter is its own module with its own optional extra, imported only when used:

* :mod:`memcore.adapters.anthropic` (``pip install "memcore-unified[anthropic]"``): a handler for
  Anthropic's memory tool (``memory_20250818``) built on the SDK's ``BetaAbstractMemoryTool``.
* :mod:`memcore.adapters.langgraph` (``pip install "memcore-unified[langgraph]"``): a LangGraph
  ``BaseStore`` over a memcore store.

Neither adapter reads or writes anything a direct call on the store could not: every operation
goes through the store's :class:`memcore.contract.MemoryProvider` methods and :mod:`memcore.ops`.
"""
