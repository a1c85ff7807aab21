"""Push a trace to an OTLP/HTTP collector (protobuf) through the OpenTelemetry SDK's exporter.

The spans become SDK ``ReadableSpan``s with their own ids and times and go out in batches; the
SDK's exporter retries what a collector may accept later (429, 502-504, a dropped connection)
with exponential backoff until the timeout. The SDK logs failures: they are caught here and said
in one :class:`ExportError` line instead.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from walkback.journal.errors import ExportError

from ._json import SCOPE
from ._spans import CLIENT, ERROR, Span, Trace

BATCH = 512
"""Spans per request (the SDK's BatchSpanProcessor default)."""
TRACES_PATH = "/v1/traces"


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of ``endpoint`` (a bare ``http://host:port`` gets ``/v1/traces``)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExportError(f"not an http(s) URL of an OTLP collector: {endpoint!r}")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ExportError(f"not an http(s) URL of an OTLP collector: {endpoint!r}") from None
    return endpoint.rstrip("/") + TRACES_PATH if parts.path in ("", "/") else endpoint


def push(tr: Trace, endpoint: str, *, headers: Mapping[str, str], timeout: float) -> int:
    """Send every span of ``tr`` to ``endpoint``; return how many were sent."""
    url = traces_url(endpoint)
    _reachable(url, timeout)
    exporter = OTLPSpanExporter(endpoint=url, headers=dict(headers), timeout=timeout)
    resource = Resource(dict(tr.resource))
    scope = InstrumentationScope(SCOPE["name"], SCOPE["version"])
    sent = 0
    try:
        with _sdk_log() as said:
            for batch in _batches(tr.spans):
                spans = [_readable(s, resource, scope) for s in batch]
                if exporter.export(spans) is not SpanExportResult.SUCCESS:
                    why = said[-1] if said else "no answer"
                    done = f" ({sent} spans were sent before)" if sent else ""
                    raise ExportError(f"the OTLP collector at {url} did not take the spans{done}: {why}")
                sent += len(spans)
    finally:
        exporter.shutdown()
    return sent


def _reachable(url: str, timeout: float) -> None:
    """Fail at once, naming the reason, when nothing listens at the collector's address."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=min(timeout, 5.0)).close()
    except OSError as e:
        raise ExportError(f"cannot reach the OTLP collector at {url}: {e.strerror or e}") from None


def _batches(spans: Iterator[Span]) -> Iterator[list[Span]]:
    while batch := list(islice(spans, BATCH)):
        yield batch


def _context(trace_id: bytes, span_id: bytes) -> SpanContext:
    return SpanContext(
        int.from_bytes(trace_id),
        int.from_bytes(span_id),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )


def _readable(s: Span, resource: Resource, scope: InstrumentationScope) -> ReadableSpan:
    status = Status(StatusCode.ERROR, s.message or None) if s.status == ERROR else Status(StatusCode.UNSET)
    return ReadableSpan(
        name=s.name,
        context=_context(s.trace_id, s.span_id),
        parent=_context(s.trace_id, s.parent) if s.parent is not None else None,
        resource=resource,
        attributes=_attrs(s.attributes),
        events=[Event(e.name, _attrs(e.attributes), e.time) for e in s.events],
        kind=SpanKind.CLIENT if s.kind == CLIENT else SpanKind.INTERNAL,
        instrumentation_scope=scope,
        status=status,
        start_time=s.start,
        end_time=s.end,
    )


def _attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}


class _Said(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage().splitlines()[0] if record.getMessage() else record.levelname)


@contextmanager
def _sdk_log() -> Iterator[list[str]]:
    """What the SDK logs meanwhile, kept (not printed): its last line explains a failure."""
    said: list[str] = []
    log = logging.getLogger("opentelemetry")
    handler = _Said(said)
    propagate = log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        yield said
    finally:
        log.removeHandler(handler)
        log.propagate = propagate
