"""Spans and log records, collected compactly: what each becomes, its times, its links.

A span is read once into a :class:`Span` (its raw record stays in its file); the GenAI operation
decides what it becomes: ``invoke_agent`` an agent, ``execute_tool`` a tool call,
``chat``/``text_completion``/``generate_content``/``embeddings`` a model call, anything else one
``other`` row. Its span events and the log records that name it become rows of its lane too.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..fields import embedded_json, integer, mapping, string
from ..tool_args import target_of
from ._attrs import attributes, nanos, span_id

AGENT, TOOL, MODEL, OTHER = "agent", "tool", "model", "other"
OPERATIONS = {
    "invoke_agent": AGENT,
    "execute_tool": TOOL,
    "chat": MODEL,
    "text_completion": MODEL,
    "generate_content": MODEL,
    "embeddings": MODEL,
}
"""``gen_ai.operation.name`` (or the span name's first word) -> what the span becomes."""
OPENINFERENCE = {"AGENT": AGENT, "TOOL": TOOL, "LLM": MODEL, "EMBEDDING": MODEL}
"""``openinference.span.kind`` (Arize Phoenix's convention) for spans without a GenAI operation."""
MESSAGE_EVENTS = frozenset(
    {
        "gen_ai.user.message",
        "gen_ai.system.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
    }
)
"""Span events and log records of the GenAI conventions up to 1.36 that carry a message."""
EVENT_KINDS = frozenset(
    {
        "approval_request",
        "approval_decision",
        "checkpoint",
        "recovery",
        "integrity",
        "test_result",
        "error",
        "compaction",
        "branch",
        "plan",
    }
)
"""``walkback.<kind>`` span events (walkback's own OTLP export) that come back as that kind."""
ERROR_SEVERITY = 17
"""OTLP severity numbers from here up are ERROR and FATAL."""
intern = sys.intern
"""For the strings many spans repeat (trace ids, names, operations): each kept once."""


@dataclass(slots=True)
class Span:
    """What the timeline needs of one span (or one log record, ``what`` = ``log``)."""

    src: int
    k: int
    """Its index in its source's array (the rows' ``offset``)."""
    trace: str = ""
    id: str = ""
    parent: str = ""
    """The parent span's id (for a log record: the span it names)."""
    what: str = OTHER
    """``agent``, ``tool``, ``model``, ``other`` or ``log``."""
    op: str = "span"
    """The rows' type: ``gen_ai.operation.name``."""
    name: str = ""
    start: int | None = None
    end: int | None = None
    """Nanoseconds since the epoch."""
    failed: bool = False
    agent: str = ""
    agent_name: str = ""
    task: str = ""
    tool: str = ""
    target: str = ""
    status: str = ""
    """``walkback.status``, when walkback exported the span."""
    lsn: int | None = None
    file: str = ""
    events: Sequence[tuple[int, str, int | None, str, str]] = ()
    """Span events: ``(index, kind, time, name, status)``."""
    depth: int = 0
    lane: str | None = None
    """The agent whose lane the span's rows go to (None: no agent above it, the service's lane)."""


def span(rec: dict[str, Any], src: int, k: int) -> Span:
    """One span record, read once."""
    s = Span(src, k)
    s.trace = intern(span_id(rec.get("traceId") or rec.get("traceID")))
    s.id = span_id(rec.get("spanId") or rec.get("spanID"))
    s.parent = span_id(rec.get("parentSpanId") or rec.get("parentSpanID"))
    s.name = intern(string(rec.get("name")))
    s.start = nanos(rec.get("startTimeUnixNano"))
    s.end = nanos(rec.get("endTimeUnixNano"))
    s.failed = mapping(rec.get("status")).get("code") in (2, "STATUS_CODE_ERROR")
    a = attributes(rec.get("attributes"))
    s.what = operation(a, s.name)
    op = a.get("gen_ai.operation.name")
    s.op = intern(op) if isinstance(op, str) and op else "span"
    s.agent = string(a.get("gen_ai.agent.id")) if s.what == AGENT else ""
    s.agent_name = intern(string(a.get("gen_ai.agent.name")))
    if s.what == AGENT:
        s.agent_name = s.agent_name or s.name.removeprefix("invoke_agent").strip()
        s.task = string(a.get("gen_ai.agent.description"))
    s.tool = intern(tool_name(a, s.name)) if s.what == TOOL else ""
    s.status = string(a.get("walkback.status"))
    s.target = string(a.get("walkback.target"))
    s.file = string(a.get("walkback.file.path"))
    s.lsn = integer(a.get("walkback.lsn"))
    if s.what == TOOL and not s.target:
        s.target = s.file or intern(tool_target(a))
    events = rec.get("events")
    if isinstance(events, list) and events:
        s.events = [_event(j, mapping(item)) for j, item in enumerate(events)]
    return s


def _event(j: int, ev: dict[str, Any]) -> tuple[int, str, int | None, str, str]:
    name = string(ev.get("name"))
    ea = attributes(ev.get("attributes"))
    said = string(ea.get("walkback.approval.decision") or ea.get("walkback.status"))
    return j, event_kind(name), nanos(ev.get("timeUnixNano")), name or "event", said


def log_record(rec: dict[str, Any], src: int, k: int) -> Span:
    """One log record, read once (it becomes one row in the lane of the span it names)."""
    s = Span(src, k, what="log", op="log")
    s.trace = intern(span_id(rec.get("traceId")))
    s.parent = span_id(rec.get("spanId"))
    a = attributes(rec.get("attributes"))
    s.name = string(rec.get("eventName")) or string(a.get("event.name"))
    s.start = nanos(rec.get("timeUnixNano")) or nanos(rec.get("observedTimeUnixNano"))
    s.end = None
    severity = integer(rec.get("severityNumber"))
    s.failed = severity is not None and severity >= ERROR_SEVERITY
    s.target = s.name
    return s


def operation(a: dict[str, Any], name: str) -> str:
    """What a span becomes, from its GenAI operation (or its name, or OpenInference's kind)."""
    op = a.get("gen_ai.operation.name")
    if isinstance(op, str) and op in OPERATIONS:
        return OPERATIONS[op]
    first = name.split(" ", 1)[0]
    if first in OPERATIONS:
        return OPERATIONS[first]
    kind = a.get("openinference.span.kind")
    if isinstance(kind, str) and kind in OPENINFERENCE:
        return OPENINFERENCE[kind]
    return MODEL if a.get("llm.request.type") in ("chat", "completion") else OTHER


def tool_name(a: dict[str, Any], name: str) -> str:
    return (
        string(a.get("gen_ai.tool.name"))
        or string(a.get("tool.name"))
        or name.removeprefix("execute_tool").strip()
        or "tool"
    )


def tool_target(a: dict[str, Any]) -> str:
    """What a tool call acts on, from its captured arguments (opt-in in the conventions)."""
    args = embedded_json(a.get("gen_ai.tool.call.arguments", a.get("input.value")))
    return target_of(args) if isinstance(args, dict) else ""


def event_kind(name: str) -> str:
    """The kind a span event becomes."""
    if name.startswith("walkback."):
        kind = name.removeprefix("walkback.")
        return kind if kind in EVENT_KINDS else "other"
    if name == "exception":
        return "error"
    if name in MESSAGE_EVENTS:
        return "message"
    return "other"


def log_kind(s: Span) -> str:
    if s.name in MESSAGE_EVENTS:
        return "message"
    return "error" if s.failed else "other"
