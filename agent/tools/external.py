"""``external_call``: one HTTP request carrying ``Idempotency-Key: <run>:<lsn>``.

The key is the intent's own lsn, so a re-issue after a crash (by recovery, or by a resumed run)
sends the same key and a service that honours it acts once.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import orjson

from .base import ToolError

TAIL = 2000


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


def call_external(method: str, url: str, body: Any, key: str, *, timeout: float = 30.0) -> ExternalResult:
    """Send the request; an HTTP error status is a result, an unreachable service is a ToolError."""
    data = orjson.dumps(body) if body is not None else None
    req = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"Idempotency-Key": key, "Content-Type": "application/json", "User-Agent": "walkback-agent"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode("utf-8", "replace")
            return ExternalResult(
                resp.status, text[-TAIL:], resp.headers.get("Idempotent-Replayed") == "true"
            )
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        return ExternalResult(e.code, text[-TAIL:], e.headers.get("Idempotent-Replayed") == "true")
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise ToolError(f"{method} {url} failed: {reason}") from None
