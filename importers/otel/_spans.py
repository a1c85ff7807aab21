"""Spans and log records, collected compactly: what each becomes, its times, its links.

A span is read once into a :class:`Span` (its raw record stays in its file), kept as a row of
:class:`Spans` (columns: a 100 MB export's 121K spans would be 80 MB as objects); the GenAI operation
decides what it becomes: ``invoke_agent`` an agent, ``execute_tool`` a tool call,
``chat``/``text_completion``/``generate_content``/``embeddings`` a model call, anything else one
``other`` row. Its span events and the log records that name it become rows of its lane too.
"""

from __future__ import annotations

import re
import sys
from array import array
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


NONE = -(1 << 63)
"""An :class:`Ints` slot that is None or kept aside."""
_HEX16 = re.compile(r"[0-9a-f]{16}")


class Ints:
    """Optional ints in an ``array('q')``, the few that do not fit one (absurd times) kept aside."""

    def __init__(self) -> None:
        self.a = array("q")
        self.odd: dict[int, int] = {}

    def append(self, v: int | None) -> None:
        if v is None or NONE < v < -NONE:
            self.a.append(NONE if v is None else v)
        else:
            self.odd[len(self.a)] = v
            self.a.append(NONE)

    def __getitem__(self, n: int) -> int | None:
        v = self.a[n]
        return v if v != NONE else self.odd.get(n)


class Ids:
    """Span ids, 8 bytes each when they are 16 hex digits (the norm), else kept as strings."""

    def __init__(self) -> None:
        self.value = array("Q")
        self.other: list[str] = []
        self.kind = bytearray()
        """0: no id, 1: :attr:`value` is the id, 2: :attr:`value` is its place in :attr:`other`."""

    def append(self, s: str) -> None:
        if _HEX16.fullmatch(s):
            self.value.append(int(s, 16))
            self.kind.append(1)
        else:
            self.value.append(len(self.other) if s else 0)
            self.kind.append(2 if s else 0)
            if s:
                self.other.append(s)

    def __getitem__(self, n: int) -> str:
        kind, v = self.kind[n], self.value[n]
        return f"{v:016x}" if kind == 1 else self.other[v] if kind else ""

    def key(self, trace: int, n: int) -> object:
        """The id with its trace's number as one dict key (None: no id)."""
        kind, v = self.kind[n], self.value[n]
        return trace << 64 | v if kind == 1 else (trace, self.other[v]) if kind else None


class Spans:
    """The collected spans column by column (a few bytes per field, not an object per span)."""

    def __init__(self) -> None:
        self.src, self.k = array("q"), array("q")
        self.traces: list[str] = []
        """Each trace number's id."""
        self.numbers: dict[str, int] = {}
        """Trace id -> its number (:attr:`trace` holds numbers)."""
        self.trace = array("I")
        self.id, self.parent = Ids(), Ids()
        self.start, self.end, self.lsn = Ints(), Ints(), Ints()
        self.failed = bytearray()
        self.what: list[str] = []
        self.op: list[str] = []
        self.name: list[str] = []
        self.agent: list[str] = []
        self.agent_name: list[str] = []
        self.task: list[str] = []
        self.tool: list[str] = []
        self.target: list[str] = []
        self.status: list[str] = []
        self.file: list[str] = []
        self.events: dict[int, Sequence[tuple[int, str, int | None, str, str]]] = {}
        """Span events of the spans that have any."""

    def __len__(self) -> int:
        return len(self.src)

    def add(self, s: Span) -> None:
        n = len(self.src)
        self.src.append(s.src)
        self.k.append(s.k)
        self.trace.append(self.numbers.setdefault(s.trace, len(self.numbers)))
        if len(self.traces) < len(self.numbers):
            self.traces.append(s.trace)
        self.id.append(s.id)
        self.parent.append(s.parent)
        self.start.append(s.start)
        self.end.append(s.end)
        self.lsn.append(s.lsn)
        self.failed.append(s.failed)
        for name in _STRINGS:
            getattr(self, name).append(getattr(s, name))
        if s.events:
            self.events[n] = s.events

    def __getitem__(self, n: int) -> Span:
        s = Span(self.src[n], self.k[n], self.traces[self.trace[n]], self.id[n], self.parent[n])
        s.start, s.end, s.lsn, s.failed = self.start[n], self.end[n], self.lsn[n], bool(self.failed[n])
        for name in _STRINGS:
            setattr(s, name, getattr(self, name)[n])
        s.events = self.events.get(n, ())
        return s

    def key(self, n: int) -> object:
        """Span ``n``'s (trace, id) as one dict key (None: no id)."""
        return self.id.key(self.trace[n], n)

    def parent_key(self, n: int) -> object:
        return self.parent.key(self.trace[n], n)

    def only(self, trace: str) -> Spans:
        """The spans of one trace."""
        out = Spans()
        number = self.numbers[trace]
        for n in range(len(self)):
            if self.trace[n] == number:
                out.add(self[n])
        return out


_STRINGS = ("what", "op", "name", "agent", "agent_name", "task", "tool", "target", "status", "file")


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


def log_kind(name: str, failed: bool) -> str:
    if name in MESSAGE_EVENTS:
        return "message"
    return "error" if failed else "other"
