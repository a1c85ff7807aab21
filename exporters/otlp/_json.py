"""OTLP/JSON: a trace as an ``ExportTraceServiceRequest`` document (the OTLP file format).

Ids are lowercase hex, times decimal strings of nanoseconds, enums integers, as the OTLP/JSON
encoding specifies; the document is written span by span, never held whole.
"""

from __future__ import annotations

from typing import IO, Any

import orjson

from ._spans import Span, Trace, Value

SCOPE = {"name": "walkback.exporters.otlp", "version": "1"}


def _array(v: list[str]) -> dict[str, Any]:
    return {"arrayValue": {"values": [{"stringValue": str(x)} for x in v]}}


_ANY = {
    str: lambda v: {"stringValue": v},
    bool: lambda v: {"boolValue": v},
    int: lambda v: {"intValue": str(v)},
    float: lambda v: {"doubleValue": v},
    list: _array,
}
"""OTLP ``AnyValue`` by the Python type of an attribute value."""


def any_value(v: Value) -> dict[str, Any]:
    """An attribute value as an OTLP ``AnyValue`` (a subclass as its base type)."""
    encode = _ANY.get(type(v))
    if encode is None:
        base = next((t for t in (bool, int, float, str, list) if isinstance(v, t)), str)
        return _ANY[base](v if base is not str else str(v))
    return encode(v)


def attributes(attrs: dict[str, Value]) -> list[dict[str, Any]]:
    get = _ANY.get
    return [{"key": k, "value": (get(type(v)) or any_value)(v)} for k, v in attrs.items()]


def span_json(s: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": s.trace_id.hex(),
        "spanId": s.span_id.hex(),
        "name": s.name,
        "kind": s.kind,
        "startTimeUnixNano": str(s.start),
        "endTimeUnixNano": str(s.end),
        "attributes": attributes(s.attributes),
    }
    if s.parent is not None:
        out["parentSpanId"] = s.parent.hex()
    if s.events:
        out["events"] = [
            {"timeUnixNano": str(e.time), "name": e.name, "attributes": attributes(e.attributes)}
            for e in s.events
        ]
    if s.status:
        out["status"] = {"code": s.status, "message": s.message} if s.message else {"code": s.status}
    return out


def write(tr: Trace, f: IO[bytes]) -> int:
    """Write ``tr`` to ``f`` as one OTLP/JSON document; return the number of spans."""
    resource = orjson.dumps({"attributes": attributes(tr.resource)})
    f.write(
        b'{"resourceSpans":[{"resource":'
        + resource
        + b',"scopeSpans":[{"scope":'
        + orjson.dumps(SCOPE)
        + b',"spans":['
    )
    n = 0
    for span in tr.spans:
        if n:
            f.write(b",\n")
        f.write(orjson.dumps(span_json(span)))
        n += 1
    f.write(b"]}]}]}\n")
    return n
