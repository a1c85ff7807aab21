"""A real local HTTP service that honours ``Idempotency-Key`` and records every call it receives.

Stdlib ``http.server`` on 127.0.0.1 with a random port. A request whose key was seen before gets
the first response again (header ``Idempotent-Replayed: true``) and does not act twice. Every call,
acting or replayed, is appended to ``calls.jsonl`` in the service's directory as
``{"method", "path", "key", "body", "effect": bool, "status"}``, so tests count effects from the
file; on start the file is read back, so a restarted service still honours old keys. ``GET``
reports the effect count; ``/status/<code>`` answers with that HTTP status and acts on nothing.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson

CALLS = "calls.jsonl"


class DemoService:
    """The service and its state. ``start()`` serves in a daemon thread; ``stop()`` shuts down."""

    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.calls_path = self.dir / CALLS
        self._lock = threading.Lock()
        self._responses: dict[str, tuple[int, bytes]] = {}
        self._effects = 0
        for call in self.calls():
            if call.get("effect"):
                self._effects += 1
                if call.get("key"):
                    self._responses[call["key"]] = (int(call["status"]), orjson.dumps(call["response"]))
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                status, body, replayed = service.handle(
                    self.command, self.path, self.headers.get("Idempotency-Key"), raw
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if replayed:
                    self.send_header("Idempotent-Replayed", "true")
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the calls file is the log."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="demo-service",
            daemon=True,
        ).start()
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def handle(self, method: str, path: str, key: str | None, raw: bytes) -> tuple[int, bytes, bool]:
        """Act once per key: the first call acts and its response is kept; repeats get it again."""
        try:
            body = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            return 400, orjson.dumps({"error": "body is not JSON"}), False
        response: dict[str, Any]
        with self._lock:
            if key and key in self._responses:
                status, resp = self._responses[key]
                self._record(
                    method, path, key, body, effect=False, status=status, response=orjson.loads(resp)
                )
                return status, resp, True
            if method == "GET" or path.startswith("/status/"):
                code = path.removeprefix("/status/")
                status = int(code) if code.isdigit() and 200 <= int(code) < 600 else 200
                response = {"effects": self._effects}
                self._record(method, path, key, body, effect=False, status=status, response=response)
                return status, orjson.dumps(response), False
            self._effects += 1
            response = {"id": self._effects, "path": path, "received": body}
            status = 201 if method == "POST" else 200
            self._record(method, path, key, body, effect=True, status=status, response=response)
            if key:
                self._responses[key] = (status, orjson.dumps(response))
            return status, orjson.dumps(response), False

    def _record(self, method: str, path: str, key: str | None, body: Any, **rest: Any) -> None:
        line = orjson.dumps({"method": method, "path": path, "key": key, "body": body, **rest}) + b"\n"
        with open(self.calls_path, "ab") as f:
            f.write(line)

    def calls(self) -> list[dict[str, Any]]:
        """Every call received so far, in order."""
        if not self.calls_path.exists():
            return []
        return [orjson.loads(ln) for ln in self.calls_path.read_bytes().splitlines() if ln.strip()]

    def effects_by_key(self) -> dict[str | None, int]:
        """How many times each key acted (an honoured key: 1)."""
        out: dict[str | None, int] = {}
        for c in self.calls():
            if c.get("effect"):
                out[c.get("key")] = out.get(c.get("key"), 0) + 1
        return out
