"""A local HTTP server for the scripted model APIs: one answer function, on 127.0.0.1, in a thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[str, str, bytes], tuple[str, bytes]]
"""(method, path, request body) -> (content type, response body), always status 200."""


class LocalServer:
    """Serves ``answer`` on a free port of 127.0.0.1 until :meth:`close`."""

    def __init__(self, answer: Answer) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply(answer("GET", self.path, b""))

            def do_POST(self) -> None:
                self._reply(
                    answer("POST", self.path, self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                )

            def _reply(self, out: tuple[str, bytes]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", out[0])
                self.send_header("Content-Length", str(len(out[1])))
                self.end_headers()
                self.wfile.write(out[1])

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
