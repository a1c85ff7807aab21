"""The non-file side effects that both the agent and recovery perform: commands and keyed HTTP calls.

One implementation, so a redo by recovery runs exactly what the agent ran: the same environment
(minus the crash switches, so a tool's subprocess never dies of a failpoint), the same output tail
kept in the journal, and the same ``Idempotency-Key`` header on a re-issued call.
"""

from __future__ import annotations

import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

TAIL = 2000
"""Characters of output (or response body) kept in the journal."""

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""No proxies from the environment: calls go exactly where the intent says."""


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    output_tail: str

    def to_json(self) -> dict[str, object]:
        return {"exit_code": self.exit_code, "output_tail": self.output_tail}


@dataclass(frozen=True)
class ExternalResult:
    status: int
    body_tail: str
    replayed: bool
    """The service said it answered from its idempotency cache (header ``Idempotent-Replayed``)."""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "body_tail": self.body_tail, "replayed": self.replayed}


def clean_env() -> dict[str, str]:
    """This process's environment minus its crash switches."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WALKBACK_FAILPOINT")}


def run(cmd: list[str] | str, cwd: Path, *, shell: bool = False, timeout: float = 300.0) -> CommandResult:
    """Run ``cmd`` (argv, or a shell string when ``shell``) in ``cwd``; never raises for the command."""
    try:
        p = subprocess.run(
            cmd,
            cwd=cwd,
            shell=shell,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=clean_env(),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return CommandResult(-9, (out + f"\n[timed out after {timeout:g}s]")[-TAIL:])
    except OSError as e:
        return CommandResult(127, f"{e.strerror}: {e.filename}")
    return CommandResult(p.returncode, p.stdout.decode("utf-8", "replace")[-TAIL:])


HTTP_TOOLS = {f"http_{m.lower()}": m for m in ("GET", "POST", "PUT", "PATCH", "DELETE")}
"""Tool names that are one HTTP request by their name alone (the seq seed's ``http_post``)."""
METHODS = frozenset(HTTP_TOOLS.values())


@dataclass(frozen=True)
class HttpRequest:
    """The HTTP request an intent describes, as :func:`call` sends it."""

    method: str
    url: str
    body: Any


def http_request(tool: str, args: dict[str, Any]) -> HttpRequest | None:
    """The request an intent of ``tool`` with ``args`` makes, or None when it is not an HTTP call
    walkback can send again: an ``http_<method>`` tool with a ``url``, or any tool whose arguments
    carry an explicit ``method`` (GET, POST, PUT, PATCH, DELETE) and an http(s) ``url``."""
    url = args.get("url")
    method = args.get("method", HTTP_TOOLS.get(tool))
    if not isinstance(url, str) or not url.startswith(("http://", "https://")) or not isinstance(method, str):
        return None
    if method.upper() not in METHODS:
        return None
    return HttpRequest(method.upper(), url, args.get("body"))


def call(
    method: str, url: str, body: Any, key: str, *, timeout: float = 30.0, agent: str = "walkback"
) -> ExternalResult:
    """Send one HTTP request carrying ``Idempotency-Key: key``. An HTTP error status is a result.

    Raises:
        OSError: the URL is not http(s) or the service could not be reached (the call stays in doubt).
    """
    if not url.startswith(("http://", "https://")):
        raise OSError(f"not an http(s) URL: {url[:80]!r}")
    data = orjson.dumps(body) if body is not None else None
    req = urllib.request.Request(
        url,
        data=data,
        method=method.upper(),
        headers={"Idempotency-Key": key, "Content-Type": "application/json", "User-Agent": agent},
    )
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            status, raw, replayed = int(resp.status), resp.read(), resp.headers.get("Idempotent-Replayed")
    except urllib.error.HTTPError as e:
        status, raw, replayed = int(e.code), e.read(), e.headers.get("Idempotent-Replayed")
    except urllib.error.URLError as e:
        raise OSError(f"{method} {url} failed: {e.reason}") from None
    return ExternalResult(status, raw.decode("utf-8", "replace")[-TAIL:], replayed == "true")
