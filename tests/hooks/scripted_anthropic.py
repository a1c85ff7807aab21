"""A scripted Anthropic Messages API on 127.0.0.1: what drives the real Claude Code offline.

Each main-loop request (one that offers ``tools``) gets the next turn of the script as server-sent
events (``message_start``, one ``content_block_*`` run per block, ``message_delta`` with the stop
reason, ``message_stop``); any other request (titles, summaries) gets a short text; token counting
gets a count. Every request body is kept, so a test can check what the agent sent (a resume brief).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]
"""``{"tool": NAME, "input": {...}}`` for a tool call, ``{"text": "..."}`` for text."""


def tool(name: str, **args: Any) -> Block:
    return {"tool": name, "input": args}


def text(value: str) -> Block:
    return {"text": value}


class Script:
    """The turns the model plays, and every request the agent made."""

    def __init__(self, turns: list[list[Block]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self.main_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = 0

    def next_turn(self, body: dict[str, Any]) -> list[Block]:
        with self._lock:
            self.main_requests.append(body)
            return self.turns.pop(0) if self.turns else [text("Done.")]

    def tool_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"toolu_{self._ids:04d}"

    def sent(self, needle: str) -> bool:
        """Whether any main-loop request carried ``needle`` (in a message or the system prompt)."""
        return any(needle in json.dumps(body) for body in self.main_requests)


def _events(script: Script, blocks: list[Block], model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": []}
    yield (
        "message_start",
        {"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}},
    )
    stop = "end_turn"
    for i, block in enumerate(blocks):
        if "tool" in block:
            stop = "tool_use"
            start = {"type": "tool_use", "id": script.tool_id(), "name": block["tool"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    delta_stop = {"stop_reason": stop, "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": delta_stop, "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    script: Script
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self.script.requests.append(body)
        if self.path.startswith("/v1/messages/count_tokens"):
            return self._json({"input_tokens": 10})
        if not self.path.startswith("/v1/messages"):
            return self._json({}, 404)
        model = str(body.get("model") or "claude-sonnet-4-5")
        blocks = self.script.next_turn(body) if body.get("tools") else [text("Scripted.")]
        if not body.get("stream"):
            return self._json(_message(self.script, blocks, model))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in _events(self.script, blocks, model):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        self._json({"data": []} if self.path.startswith("/v1/models") else {}, 200)

    def _json(self, data: dict[str, Any], status: int = 200) -> None:
        out = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def _message(script: Script, blocks: list[Block], model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for b in blocks:
        if "tool" in b:
            content.append(
                {"type": "tool_use", "id": script.tool_id(), "name": b["tool"], "input": b["input"]}
            )
        else:
            content.append({"type": "text", "text": b["text"]})
    stop = "tool_use" if any("tool" in b for b in blocks) else "end_turn"
    usage = {"input_tokens": 10, "output_tokens": 5}
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """Serve ``script`` on 127.0.0.1 (a free port) and yield the base URL."""
    handler = type("Handler", (_Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
