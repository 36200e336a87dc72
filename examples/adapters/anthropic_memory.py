"""Give Claude's memory tool a memcore store: ``python examples/adapters/anthropic_memory.py``.

With ``ANTHROPIC_API_KEY`` set it asks Claude (through the SDK's tool runner) to remember a
preference in the store; with ``--offline`` a scripted stand-in for the Messages API on
127.0.0.1 plays Claude's part, so the example runs without network or key::

    python examples/adapters/anthropic_memory.py --offline --store maka:/tmp/demo/MEMORY.md
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

import anthropic

from memcore.adapters._fake_messages import FakeMessagesAPI
from memcore.adapters.anthropic import MemcoreMemoryTool
from memcore.registry import get_registry

#: What the offline stand-in has "Claude" do: look, write, then read back.
SCRIPT = [
    [{"command": "view", "path": "/memories"}],
    [{"command": "create", "path": "/memories/coffee.md", "file_text": "Black, no sugar.\n"}],
    [{"command": "view", "path": "/memories/coffee.md"}],
]


def main() -> None:
    """Run one conversation against the store named by ``--store`` and print each tool result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="maka:./demo-memory/MEMORY.md", help="store URL (format:location)")
    parser.add_argument("--offline", action="store_true", help="use the scripted local stand-in for the API")
    args = parser.parse_args()
    fmt, _, location = args.store.partition(":")
    if not Path(location).exists():
        get_registry().get(fmt).init_store(location)
    options = {"agent_read_enabled": True} if fmt == "maka" else {}
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(get_registry().get(fmt)(location, **options))
        if args.offline:
            api = stack.enter_context(FakeMessagesAPI(SCRIPT, final_text="I'll remember that."))
            client = anthropic.Anthropic(api_key="offline", base_url=api.base_url, max_retries=0)
        else:
            client = anthropic.Anthropic(api_key=os.environ["ANTHROPIC_API_KEY"])
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            tools=[MemcoreMemoryTool(store)],
            messages=[{"role": "user", "content": "Remember that I take my coffee black, no sugar."}],
        )
        for message in runner:
            for block in message.content:
                if block.type == "tool_use":
                    print(f"> {block.input}")
            reply = runner.generate_tool_call_response()
            for part in reply["content"] if reply and not isinstance(reply["content"], str) else []:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    print(part.get("content"))
            if message.stop_reason == "end_turn":
                print(f"Claude: {message.content[0].text if message.content[0].type == 'text' else ''}")
        print(f"{len(list(store.iter_entries()))} entries in {args.store}")


if __name__ == "__main__":
    main()
