"""GenAI traces written as OTLP/JSON exporters write them, for the OTel importer's tests.

No public repository holds a captured GenAI trace file (see the corpus notes), so these follow the
semantic conventions (open-telemetry/semantic-conventions-genai, ``gen-ai-agent-spans.md`` and
``gen-ai-spans.md``): ``invoke_agent {name}``, ``chat {model}``, ``execute_tool {tool}`` with
``gen_ai.*`` attributes, ids as hex, times as decimal strings of nanoseconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
OTHER_TRACE = "0af7651916cd43dd8448eb211c80319c"
T0 = 1_760_000_000_000_000_000
"""Nanoseconds since the epoch of the trace's first span."""


def any_value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [any_value(x) for x in v]}}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": any_value(x)} for k, x in v.items()]}}
    return {"stringValue": v}


def attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in values.items()]


def span(
    sid: str,
    name: str,
    start_ms: int,
    end_ms: int,
    parent: str | None = None,
    *,
    trace: str = TRACE,
    error: str | None = None,
    events: list[dict[str, Any]] | None = None,
    **attributes: Any,
) -> dict[str, Any]:
    """One span; attribute names are given with ``__`` for ``.`` (``gen_ai__operation__name``)."""
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": sid,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + start_ms * 1_000_000),
        "endTimeUnixNano": str(T0 + end_ms * 1_000_000),
        "attributes": attrs({k.replace("__", "."): v for k, v in attributes.items()}),
        "status": {"code": 2, "message": error} if error else {"code": 0},
    }
    if parent:
        out["parentSpanId"] = parent
    if events:
        out["events"] = events
    return out


def event(name: str, at_ms: int, **attributes: Any) -> dict[str, Any]:
    return {
        "timeUnixNano": str(T0 + at_ms * 1_000_000),
        "name": name,
        "attributes": attrs({k.replace("__", "."): v for k, v in attributes.items()}),
    }


def export(spans: list[dict[str, Any]], service: str = "coder-agent") -> dict[str, Any]:
    """An ExportTraceServiceRequest of one resource and one scope."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs({"service.name": service})},
                "scopeSpans": [
                    {
                        "scope": {"name": "opentelemetry.instrumentation.openai_agents", "version": "0.1"},
                        "spans": spans,
                    }
                ],
            }
        ]
    }


def agent_run() -> list[dict[str, Any]]:
    """A coding agent's run: its model calls, tools, a subagent called as a tool, a failed tool."""
    messages = orjson.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "Fix the failing test"}]}]
    )
    said = orjson.dumps(
        [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": "Running the tests."}],
                "finish_reason": "tool_call",
            }
        ]
    )
    return [
        span(
            "a000000000000001",
            "invoke_agent coder",
            0,
            9000,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="coder",
            gen_ai__agent__id="asst_coder",
            gen_ai__agent__description="Fixes bugs",
            gen_ai__provider__name="openai",
        ),
        span(
            "c000000000000001",
            "chat gpt-4o",
            100,
            900,
            "a000000000000001",
            gen_ai__operation__name="chat",
            gen_ai__provider__name="openai",
            gen_ai__request__model="gpt-4o",
            gen_ai__response__model="gpt-4o-2024",
            gen_ai__response__id="chatcmpl-1",
            gen_ai__response__finish_reasons=["tool_calls"],
            gen_ai__usage__input_tokens=1200,
            gen_ai__usage__output_tokens=40,
            gen_ai__usage__cache_read__input_tokens=1000,
            gen_ai__input__messages=messages.decode(),
            gen_ai__output__messages=said.decode(),
        ),
        span(
            "e000000000000001",
            "execute_tool bash",
            1000,
            2000,
            "a000000000000001",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="bash",
            gen_ai__tool__call__id="call_1",
            gen_ai__tool__type="function",
            gen_ai__tool__call__arguments='{"command": "pytest -q"}',
            gen_ai__tool__call__result="1 failed, 3 passed",
        ),
        span(
            "d000000000000001",
            "GET https://pypi.org/simple/",
            1100,
            1200,
            "e000000000000001",
            http__method="GET",
        ),
        span(
            "e000000000000002",
            "execute_tool research",
            2100,
            6000,
            "a000000000000001",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="research",
            gen_ai__tool__call__id="call_2",
        ),
        span(
            "a000000000000002",
            "invoke_agent researcher",
            2200,
            5900,
            "e000000000000002",
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="researcher",
        ),
        span(
            "c000000000000002",
            "chat gpt-4o-mini",
            2300,
            2800,
            "a000000000000002",
            gen_ai__operation__name="chat",
            gen_ai__system="openai",
            gen_ai__request__model="gpt-4o-mini",
            gen_ai__usage__prompt_tokens=300,
            gen_ai__usage__completion_tokens=20,
            events=[event("gen_ai.choice", 2790, content="Look at conftest.py")],
        ),
        span(
            "e000000000000003",
            "execute_tool write_file",
            6100,
            6200,
            "a000000000000001",
            error="permission denied",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="write_file",
            gen_ai__tool__call__id="call_3",
            error__type="PermissionError",
            events=[
                event(
                    "exception",
                    6150,
                    exception__type="PermissionError",
                    exception__message="permission denied: tests/conftest.py",
                )
            ],
        ),
    ]


def runs(copies: int) -> list[dict[str, Any]]:
    """``copies`` of :func:`agent_run` one after another in one trace, each span with its own id."""
    out = []
    for c in range(copies):
        for sp in agent_run():
            for key in ("spanId", "parentSpanId"):
                if key in sp:
                    sp[key] = f"{c:04x}{sp[key][4:]}"
            out.append(sp)
    return out


def write(path: Path, doc: Any, *, lines: list[Any] | None = None, indent: bool = False) -> Path:
    """One document (indented or not), or JSON lines (the collector's file exporter)."""
    if lines is not None:
        path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    else:
        path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0))
    return path
