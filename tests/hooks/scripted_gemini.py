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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._send("application/json", b'{"models": []}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                with scripted._lock:
                    scripted.requests.append({"path": self.path, "body": body})
                    if ":countTokens" in self.path:
                        self._send("application/json", b'{"totalTokens": 10}')
                        return
                    main = bool(body.get("tools")) and scripted.turns
                    parts = scripted.turns.pop(0) if main else [text("Done.")]
                answer = json.dumps(_chunk(parts)).encode()
                if "alt=sse" in self.path:
                    self._send("text/event-stream", b"data: " + answer + b"\r\n\r\n")
                else:
                    self._send("application/json", answer)

            def _send(self, kind: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
