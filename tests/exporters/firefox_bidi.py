"""A headless Firefox driven over WebDriver BiDi, for the browser tests that need Firefox.

geckodriver is in neither Debian nor PyPI, but Firefox speaks BiDi itself: it is started with
``--remote-debugging-port=0`` (the port it picked is read from its log, so no port can race), a
profile and a HOME in a scratch folder, and every proxy pointed at a closed port on 127.0.0.1, so
no request can leave. A WebSocket (websocket-client, which selenium already brings) carries the
commands; the console and network events it sends meanwhile are kept for the test to look at.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import websocket

FIREFOX = "firefox-esr"
CLOSED_PORT = 9
"""The discard port, closed on 127.0.0.1: the proxy every request is sent to."""
PREFS = {
    "network.proxy.type": 1,
    "network.proxy.share_proxy_settings": True,
    "network.proxy.http": "127.0.0.1",
    "network.proxy.http_port": CLOSED_PORT,
    "network.proxy.ssl": "127.0.0.1",
    "network.proxy.ssl_port": CLOSED_PORT,
    "network.proxy.socks": "127.0.0.1",
    "network.proxy.socks_port": CLOSED_PORT,
    "network.proxy.no_proxies_on": "",
    "network.proxy.allow_hijacking_localhost": True,
    "network.proxy.socks_remote_dns": True,
}
KEYS = {"\n": "\ue007"}
"""Characters sent as the WebDriver key they stand for (Enter)."""


class BidiError(AssertionError):
    """A command Firefox answered with an error (its error and message)."""


def _value(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as Python (primitives, arrays, plain objects)."""
    kind = remote["type"]
    if kind in ("undefined", "null"):
        return None
    if kind == "array":
        return [_value(v) for v in remote["value"]]
    if kind == "object":
        return {k if isinstance(k, str) else _value(k): _value(v) for k, v in remote["value"]}
    return remote.get("value")


class Firefox:
    """One headless Firefox and its one top-level page (``context``)."""

    def __init__(self, scratch: Path, timeout: float = 20) -> None:
        binary = shutil.which(FIREFOX)
        assert binary, f"{FIREFOX} is not on PATH"
        (scratch / "home").mkdir(parents=True, exist_ok=True)
        profile = scratch / "profile"
        profile.mkdir(exist_ok=True)
        (profile / "user.js").write_text(
            "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in PREFS.items())
        )
        self.log = scratch / "firefox.log"
        self.timeout = timeout
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch / "home")}
        env |= {"MOZ_HEADLESS": "1", "MOZ_CRASHREPORTER_DISABLE": "1", "TMPDIR": str(scratch)}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [binary, "--headless", "--no-remote", "--remote-debugging-port=0", "--profile", str(profile)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        try:
            self.ws = websocket.create_connection(
                self._listening(timeout) + "/session", timeout=timeout, suppress_origin=True
            )
            self.events: list[dict[str, Any]] = []
            self._id = 0
            self.send("session.new", {"capabilities": {}})
            self.context: str = self.send("browsingContext.getTree", {"maxDepth": 0})["contexts"][0][
                "context"
            ]
            self.send("session.subscribe", {"events": ["log.entryAdded", "network.beforeRequestSent"]})
        except BaseException:
            self.proc.kill()
            self.proc.wait()
            raise

    def _listening(self, timeout: float) -> str:
        """The BiDi address Firefox prints once it listens."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            found = re.search(
                r"WebDriver BiDi listening on (ws://\S+)", self.log.read_text("utf-8", "replace")
            )
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{FIREFOX} did not start its BiDi server: {self.log.read_text()[-2000:]}")

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run one command and return its result; events that come first are kept."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("type") == "event":
                self.events.append(msg)
            elif msg.get("id") == self._id:
                if msg["type"] == "error":
                    raise BidiError(f"{method}: {msg['error']}: {msg.get('message', '')}")
                result: dict[str, Any] = msg["result"]
                return result

    def open(self, url: str) -> None:
        self.send("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def reload(self) -> None:
        self.send("browsingContext.reload", {"context": self.context, "wait": "complete"})

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (a promise is awaited); its exception fails."""
        done = self.send(
            "script.evaluate",
            {
                "expression": expression,
                "target": {"context": self.context},
                "awaitPromise": True,
                "userActivation": True,
            },
        )
        if done["type"] == "exception":
            raise BidiError(f"{expression!r} threw: {done['exceptionDetails']['text']}")
        return _value(done["result"])

    def keys(self, text: str) -> None:
        """Type ``text`` as real key presses into the focused element."""
        presses: list[dict[str, str]] = []
        for ch in text:
            key = KEYS.get(ch, ch)
            presses += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        self.send(
            "input.performActions",
            {"context": self.context, "actions": [{"type": "key", "id": "keyboard", "actions": presses}]},
        )

    def take_events(self, method: str, quiet: float = 0.3) -> list[dict[str, Any]]:
        """The params of the ``method`` events so far, and forget them. Firefox sends a console
        entry a moment after the script that caused it answered, so this first waits until no
        event has come for ``quiet`` seconds."""
        self.send("session.status", {})
        self.ws.settimeout(quiet)
        try:
            while True:
                self.events.append(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(self.timeout)
        mine = [e["params"] for e in self.events if e["method"] == method]
        self.events = [e for e in self.events if e["method"] != method]
        return mine

    def close(self) -> None:
        try:
            self.send("browser.close", {})
        except (BidiError, OSError, websocket.WebSocketException):
            pass  # it may go before it answers
        self.ws.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
