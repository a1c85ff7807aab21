"""``external_call``: one HTTP request carrying ``Idempotency-Key: <run>:<lsn>``.

The key is the intent's own lsn, so a re-issue after a crash (by recovery, or by a resumed run)
sends the same key and a service that honours it acts once.
"""

from __future__ import annotations

from typing import Any

from walkback.journal.effects import ExternalResult, call

from .base import ToolError

__all__ = ["ExternalResult", "call_external"]


def call_external(method: str, url: str, body: Any, key: str, *, timeout: float = 30.0) -> ExternalResult:
    """Send the request; an HTTP error status is a result, an unreachable service is a ToolError."""
    try:
        return call(method, url, body, key, timeout=timeout, agent="walkback-agent")
    except OSError as e:
        raise ToolError(str(e)) from None
