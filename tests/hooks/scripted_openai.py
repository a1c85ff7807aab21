"""A scripted OpenAI Responses API on 127.0.0.1, so the real Codex CLI runs offline.

Each ``POST /v1/responses`` that carries tools (the main loop) is answered with the next scripted
turn as server-sent events: ``response.created``, one ``response.output_item.added`` / ``done``
pair per item (a ``function_call`` or ``custom_tool_call`` the agent runs, or the closing
assistant message), then ``response.completed``. Any other request gets a short closing message,
so side requests (titles, summaries) never eat a turn. Every request body is kept for the test.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from local_http import LocalServer

Item = dict[str, Any]


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> Item:
    """A JSON function tool call (Codex's ``shell``, ``exec_command``, function ``apply_patch``)."""
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def custom_call(call_id: str, name: str, text: str) -> Item:
    """A freeform tool call (Codex's grammar ``apply_patch`` takes the patch as plain text)."""
    return {
        "type": "custom_tool_call",
        "id": f"ctc_{call_id}",
        "call_id": call_id,
        "name": name,
        "input": text,
        "status": "completed",
    }


def message(text: str) -> Item:
    """The assistant's closing words for a turn."""
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _events(n: int, items: list[Item]) -> bytes:
    rid = f"resp_{n}"
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    out = [("response.created", {"response": {"id": rid, "status": "in_progress", "output": []}})]
    for k, item in enumerate(items):
        out.append(("response.output_item.added", {"output_index": k, "item": item}))
        out.append(("response.output_item.done", {"output_index": k, "item": item}))
    done = {"id": rid, "status": "completed", "output": items, "usage": usage}
    out.append(("response.completed", {"response": done}))
    return b"".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **body})}\n\n".encode() for name, body in out
    )


class ScriptedResponses:
    """Serves ``turns`` (lists of items) in order, then a closing message; keeps the requests."""

    def __init__(self, turns: list[list[Item]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = LocalServer(self._answer)
        self.base_url = self._server.origin + "/v1"

    def _answer(self, method: str, path: str, raw: bytes) -> tuple[str, bytes]:
        if method == "GET":
            return "application/json", b'{"object": "list", "data": []}'
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append({"path": path, "body": body})
            main = bool(body.get("tools")) and self.turns
            items = self.turns.pop(0) if main else [message("Done.")]
            return "text/event-stream", _events(len(self.requests), items)

    def close(self) -> None:
        self._server.close()
