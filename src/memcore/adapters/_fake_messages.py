"""A scripted stand-in for Anthropic's Messages API on 127.0.0.1, for tests and offline examples.

:class:`FakeMessagesAPI` answers each ``POST /v1/messages`` with the next scripted assistant
turn: one ``tool_use`` block per memory command of the turn, then, when the script is spent, a
final ``end_turn`` text. It records every request body, so the ``tool_result`` blocks the
client sent back can be read from :attr:`FakeMessagesAPI.results`. Stdlib only; no network
beyond the loopback interface.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

__all__ = ["FakeMessagesAPI"]


class FakeMessagesAPI:
    """A Messages API that replays ``turns`` of memory-tool commands.

    Args:
        turns: One list of command inputs per assistant turn (``{"command": "view", ...}``).
        final_text: The text of the last, tool-free answer.

    Attributes:
        requests: Every request body received, in order (parsed JSON).
        base_url: ``http://127.0.0.1:<port>`` once started (a free port is picked).
    """

    def __init__(self, turns: Sequence[Sequence[dict[str, Any]]], final_text: str = "Done.") -> None:
        self.turns = [list(t) for t in turns]
        self.final_text = final_text
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None
        self.base_url = ""

    def reply(self, number: int) -> dict[str, Any]:
        """Return the assistant message answering request ``number`` (0-based)."""
        base: dict[str, Any] = {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        if number >= len(self.turns):
            return {**base, "content": [{"type": "text", "text": self.final_text}], "stop_reason": "end_turn"}
        blocks = [
            {"type": "tool_use", "id": f"toolu_{number:04d}_{i:03d}", "name": "memory", "input": command}
            for i, command in enumerate(self.turns[number])
        ]
        return {**base, "content": blocks, "stop_reason": "tool_use"}

    @property
    def results(self) -> list[dict[str, Any]]:
        """Return every ``tool_result`` block the client sent, with the input it answered.

        Returns:
            Dicts of ``input`` (the command), ``content`` (text), ``is_error`` (bool).
        """
        inputs = {
            f"toolu_{n:04d}_{i:03d}": command for n, turn in enumerate(self.turns) for i, command in enumerate(turn)
        }
        seen: list[dict[str, Any]] = []
        for body in self.requests[1:]:
            last = body["messages"][-1]
            for block in last["content"] if isinstance(last["content"], list) else []:
                if block.get("type") != "tool_result":
                    continue
                content = block.get("content", "")
                if isinstance(content, list):
                    content = "".join(part.get("text", "") for part in content)
                seen.append(
                    {
                        "input": inputs[block["tool_use_id"]],
                        "content": content,
                        "is_error": bool(block.get("is_error", False)),
                    }
                )
        return seen

    def __enter__(self) -> Self:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                api.requests.append(body)
                data = json.dumps(api.reply(len(api.requests) - 1)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
