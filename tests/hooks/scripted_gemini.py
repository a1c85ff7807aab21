"""A scripted Gemini API on 127.0.0.1, so the real Gemini CLI runs offline.

The CLI talks to ``GOOGLE_GEMINI_BASE_URL`` (with any ``GEMINI_API_KEY``) through the genai SDK:
``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` for the main loop, answered here
with one server-sent ``data:`` chunk per scripted turn (a candidate whose parts are
``functionCall``s or the closing text). Requests that offer no tools (routing, summaries,
``countTokens``) get a short text answer and do not eat a turn. Every request is kept.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from local_http import LocalServer

Part = dict[str, Any]


def call(name: str, args: dict[str, Any]) -> Part:
    """A function call part (``write_file``, ``replace``, ``run_shell_command``, …)."""
    return {"functionCall": {"name": name, "args": args}}


def text(words: str) -> Part:
    """The model's closing words."""
    return {"text": words}


def _chunk(parts: list[Part]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
    }


class ScriptedGemini:
    """Serves ``turns`` (lists of parts) in order, then closing text; keeps the requests."""

    def __init__(self, turns: list[list[Part]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = LocalServer(self._answer)
        self.base_url = self._server.origin

    def _answer(self, method: str, path: str, raw: bytes) -> tuple[str, bytes]:
        if method == "GET":
            return "application/json", b'{"models": []}'
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append({"path": path, "body": body})
            if ":countTokens" in path:
                return "application/json", b'{"totalTokens": 10}'
            main = bool(body.get("tools")) and self.turns
            parts = self.turns.pop(0) if main else [text("Done.")]
        answer = json.dumps(_chunk(parts)).encode()
        if "alt=sse" in path:
            return "text/event-stream", b"data: " + answer + b"\r\n\r\n"
        return "application/json", answer

    def close(self) -> None:
        self._server.close()
