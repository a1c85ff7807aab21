"""A session as OpenTelemetry spans following the GenAI semantic conventions (docs/exports.md).

One trace per session: an ``invoke_agent`` span per agent and subagent (a subagent's parent is
the span of the event that spawned it: the tool call, or its parent agent for a spawn record), an
``execute_tool`` span per tool call (from the call to its result), a ``chat`` span per model call
(from the call to its result, or at the result when the source has no call record). Approvals,
checkpoints, recovery decisions, integrity findings, test results and errors are span events of
their agent's span. Ids are hashes of the session id and the event's address in its source, so
exporting the same session again gives the same ids (backends deduplicate, nothing is doubled).

Spans are plain values here; :mod:`._json` writes them as OTLP/JSON and :mod:`._push` hands them
to the OpenTelemetry SDK's OTLP/HTTP exporter.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from walkback.timeline.details import (
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
    Detail,
    Error,
    Integrity,
    ModelCall,
    ModelResult,
    Recovery,
    TestResult,
    ToolCall,
)
from walkback.timeline.facts import details, session_id
from walkback.timeline.kinds import KIND_INDEX, KINDS
from walkback.timeline.session import Session

Value = str | int | float | bool | list[str]
"""An attribute value (OTLP AnyValue: string, int, double, bool, array of strings)."""

INTERNAL, CLIENT = 1, 3
"""OTLP span kinds used: agents and tools run in-process, a model call goes to a provider."""
UNSET, ERROR = 0, 2
"""OTLP status codes used (OK is left to backends: the conventions leave a success UNSET)."""
EVENT_KINDS = (
    "approval_request",
    "approval_decision",
    "checkpoint",
    "recovery",
    "integrity",
    "test_result",
    "error",
)
"""Kinds exported as span events of their agent's ``invoke_agent`` span."""
TEXT = 4096
"""Characters of a reason or detail kept in an attribute."""
_K = {k: KIND_INDEX[k] for k in ("tool_call", "tool_result", "model_call", "model_result", *EVENT_KINDS)}


@dataclass(slots=True)
class SpanEvent:
    name: str
    time: int
    """Nanoseconds since the epoch."""
    attributes: dict[str, Value]


@dataclass(slots=True)
class Span:
    """One span, with the ids and times it will have in every encoding."""

    trace_id: bytes
    span_id: bytes
    parent: bytes | None
    name: str
    kind: int
    start: int
    """Nanoseconds since the epoch."""
    end: int
    attributes: dict[str, Value]
    events: list[SpanEvent] = field(default_factory=list)
    status: int = UNSET
    message: str = ""


@dataclass(frozen=True)
class Trace:
    """A session's trace: its resource attributes and a generator of its spans."""

    trace_id: bytes
    resource: dict[str, Value]
    spans: Iterator[Span]


def trace(session: Session) -> Trace:
    """The session as one trace; the spans are built as they are consumed (agents' spans last)."""
    sid = session_id(session)
    tid = hashlib.blake2b(f"walkback\0{session.format}\0{sid}".encode(), digest_size=16).digest()
    resource: dict[str, Value] = {
        "service.name": "walkback",
        "walkback.session.id": sid,
        "walkback.session.format": session.format,
        "walkback.session.status": session.status,
    }
    if session.task:
        resource["walkback.session.task"] = session.task[:TEXT]
    return Trace(tid, resource, _Builder(session, tid, sid).spans())


class _Builder:
    """Walks a session once, yielding tool and model spans, then every agent's span."""

    def __init__(self, session: Session, trace_id: bytes, sid: str) -> None:
        self.s = session
        self.trace_id = trace_id
        self.sid = sid
        t = session.table
        n = len(t)

        def col(a: Any, dtype: Any) -> np.ndarray:
            return np.frombuffer(a, dtype)[:n] if n else np.zeros(0, dtype)

        self.kind = col(t.kind, np.uint8)
        self.ref = col(t.ref, np.int64)
        self.src = col(t.src, np.uint32)
        self.offset = col(t.offset, np.int64)
        self.sub = col(t.sub, np.int32)
        self.ns = _times(col(t.ts, np.float64), session)
        self.files = [str(src.path) for src in session.sources]
        self.agent_events: dict[str, list[SpanEvent]] = {a: [] for a in session.agents}
        self.agent_ids: dict[str, bytes] = {}

    # -- ids ------------------------------------------------------------------------------------
    def span_id(self, what: str) -> bytes:
        return hashlib.blake2b(what.encode(), digest_size=8, key=self.trace_id).digest()

    def event_span_id(self, i: int) -> bytes:
        """The id of event ``i``'s span: from where its record is, not from its position."""
        t = self.s.table
        off = t.offset[i]
        where = f"{t.src[i]}:{off}:{t.sub[i]}" if off >= 0 else f"#{i}"
        return self.span_id(f"{KINDS[t.kind[i]]}\0{where}")

    def agent_span_id(self, agent: str) -> bytes:
        found = self.agent_ids.get(agent)
        if found is None:
            found = self.agent_ids[agent] = self.span_id(f"agent\0{agent}")
        return found

    # -- spans ----------------------------------------------------------------------------------
    def spans(self) -> Iterator[Span]:
        s = self.s
        completion = _completions(self.kind, self.ref)
        wanted = np.flatnonzero(np.isin(self.kind, [_K[k] for k in _K if k != "tool_result"]))
        agent_col = s.table.agent
        names = s.table.pool.values
        for i, d in details(s, wanted):
            agent = names[agent_col[i]]
            k = KINDS[self.kind[i]]
            if k == "tool_call" and isinstance(d, ToolCall):
                yield self.tool_span(i, agent, d, completion[i])
            elif k in ("model_call", "model_result"):
                span = self.chat_span(i, agent, d, completion[i])
                if span is not None:
                    yield span
            elif k in EVENT_KINDS:
                self.agent_events.setdefault(agent, []).append(self.span_event(i, k, d))
        yield from self.agent_spans()

    def base(self, i: int, agent: str) -> dict[str, Value]:
        attrs: dict[str, Value] = {"gen_ai.agent.id": agent, "gen_ai.conversation.id": self.sid}
        t = self.s.table
        lsn, line = t.lsn[i], t.line[i]
        if lsn >= 0:
            attrs["walkback.lsn"] = lsn
        if self.files:
            attrs["walkback.source.file"] = self.files[t.src[i]]
        if line:
            attrs["walkback.source.line"] = line
        return attrs

    def tool_span(self, i: int, agent: str, d: ToolCall, done: int) -> Span:
        t = self.s.table
        status = t.pool.values[t.status[i]]
        attrs = self.base(i, agent)
        span_id = self.event_span_id(i)
        attrs.update(
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": d.name,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.id": d.call_id or d.idempotency_key or span_id.hex(),
            }
        )
        if d.target:
            attrs["walkback.target"] = d.target
        if status:
            attrs["walkback.status"] = status
        if d.edit is not None:
            attrs["walkback.file.path"] = d.edit.path
            attrs["walkback.file.operation"] = d.edit.operation
            for side, value in (("pre", d.edit.pre), ("post", d.edit.post)):
                if value:
                    attrs[f"walkback.file.{side}_sha256"] = value.removeprefix("sha256:")
        span = Span(
            self.trace_id,
            span_id,
            self.agent_span_id(agent),
            f"execute_tool {d.name}",
            INTERNAL,
            int(self.ns[i]),
            self.end(i, done),
            attrs,
        )
        if status in ("failed", "denied", "error"):
            span.status, span.message = ERROR, status
            attrs["error.type"] = "denied" if status == "denied" else "tool_error"
        return span

    def chat_span(self, i: int, agent: str, d: Detail, done: int) -> Span | None:
        """A model call's span (with its result's usage), or a result's that has no call record."""
        call: ModelCall | None = d if isinstance(d, ModelCall) else None
        result: ModelResult | None = d if isinstance(d, ModelResult) else None
        if result is not None:
            r = int(self.ref[i])
            if r >= 0 and self.kind[r] == _K["model_call"]:
                return None  # the call's span carries it
        elif done >= 0 and self.kind[done] == _K["model_result"]:
            found = self.s.detail(done)
            result = found if isinstance(found, ModelResult) else None
        attrs = self.base(i, agent)
        attrs["gen_ai.operation.name"] = "chat"
        model = (call.model if call is not None else "") or (result.model if result is not None else "")
        if model:
            attrs["gen_ai.request.model"] = model
        if result is not None:
            _usage(attrs, result)
        end = self.end(i, done) if call is not None else int(self.ns[i])
        name = f"chat {model}" if model else "chat"
        return Span(
            self.trace_id,
            self.event_span_id(i),
            self.agent_span_id(agent),
            name,
            CLIENT,
            int(self.ns[i]),
            end,
            attrs,
        )

    def span_event(self, i: int, kind: str, d: Detail) -> SpanEvent:
        t = self.s.table
        attrs: dict[str, Value] = {"walkback.kind": kind}
        if self.files:
            attrs["walkback.source.file"] = self.files[t.src[i]]
        lsn = t.lsn[i]
        if lsn >= 0:
            attrs["walkback.lsn"] = lsn
        status = t.pool.values[t.status[i]]
        if status:
            attrs["walkback.status"] = status
        for key, value in _event_fields(d).items():
            if value not in (None, ""):
                attrs[f"walkback.{key}"] = value[:TEXT] if isinstance(value, str) else value
        name = "exception" if kind == "error" else f"walkback.{kind}"
        if isinstance(d, Error):
            attrs["exception.message"] = d.message[:TEXT]
            if d.error_type:
                attrs["exception.type"] = d.error_type
        return SpanEvent(name, int(self.ns[i]), attrs)

    def end(self, i: int, done: int) -> int:
        return max(int(self.ns[i]), int(self.ns[done])) if done >= 0 else int(self.ns[i])

    def agent_spans(self) -> Iterator[Span]:
        s = self.s
        t = s.table
        n = len(t)
        ids = np.frombuffer(t.agent, np.uint32)[:n] if n else np.zeros(0, np.uint32)
        start: dict[str, int] = {}
        end: dict[str, int] = {}
        for agent in s.agents:
            aid = t.pool.find(agent)
            mine = self.ns[ids == aid] if aid is not None else self.ns[:0]
            if len(mine):
                start[agent], end[agent] = int(mine.min()), int(mine.max())
        for agent in _children_first(s):  # a parent's span covers its subagents' spans
            a = s.agents[agent]
            if a.parent in s.agents and agent in start:
                p = a.parent
                start[p] = min(start.get(p, start[agent]), start[agent])
                end[p] = max(end.get(p, end[agent]), end[agent])
        for agent, a in s.agents.items():
            if agent not in start:
                continue
            attrs: dict[str, Value] = {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.id": agent,
                "gen_ai.agent.name": a.label or agent,
                "gen_ai.conversation.id": self.sid,
            }
            if a.task:
                attrs["gen_ai.agent.description"] = a.task[:TEXT]
            if a.run:
                attrs["walkback.run"] = a.run
            if a.parent:
                attrs["walkback.parent_agent"] = a.parent
            outcome = a.outcome or (s.status if a.parent is None else "")
            if outcome:
                attrs["walkback.outcome"] = outcome
            span = Span(
                self.trace_id,
                self.agent_span_id(agent),
                self.parent_of(agent),
                f"invoke_agent {a.label or agent}",
                INTERNAL,
                start[agent],
                end[agent],
                attrs,
                self.agent_events.get(agent, []),
            )
            if outcome in ("failed", "crashed", "aborted"):
                span.status, span.message = ERROR, outcome
            yield span

    def parent_of(self, agent: str) -> bytes | None:
        """A subagent's parent span: the tool call that spawned it, else its parent agent's span."""
        a = self.s.agents[agent]
        if (
            a.spawned_by is not None
            and 0 <= a.spawned_by < len(self.kind)
            and self.kind[a.spawned_by] == _K["tool_call"]
        ):
            return self.event_span_id(a.spawned_by)
        if a.parent in self.s.agents:
            return self.agent_span_id(a.parent)
        return None


def _usage(attrs: dict[str, Value], r: ModelResult) -> None:
    if r.model:
        attrs["gen_ai.response.model"] = r.model
    if r.response_id:
        attrs["gen_ai.response.id"] = r.response_id
    if r.stop_reason:
        attrs["gen_ai.response.finish_reasons"] = [r.stop_reason]
    u = r.usage
    for key, value in (
        ("gen_ai.usage.input_tokens", u.input_tokens),
        ("gen_ai.usage.output_tokens", u.output_tokens),
        ("gen_ai.usage.cache_read.input_tokens", u.cache_read_tokens),
        ("gen_ai.usage.cache_creation.input_tokens", u.cache_write_tokens),
        ("gen_ai.usage.reasoning.output_tokens", u.reasoning_tokens),
    ):
        if value is not None:
            attrs[key] = value
    if r.cost is not None:
        attrs["walkback.cost_usd"] = r.cost


EVENT_FIELDS: dict[type, tuple[str, tuple[str, ...]]] = {
    ApprovalRequest: ("approval", ("tool", "target", "reason", "policy")),
    ApprovalDecision: ("approval", ("decision", "approver", "reason", "inferred")),
    Checkpoint: ("checkpoint", ("git", "covers", "label")),
    Recovery: ("recovery", ("finding", "action", "target", "tool", "detail")),
    Integrity: ("integrity", ("what", "reason", "detail")),
    TestResult: ("test", ("command", "passed", "exit_code")),
}
"""Per detail type, the prefix and the fields of a span event's ``walkback.<prefix>.<field>``
attributes (no message content)."""


def _event_fields(d: Detail) -> dict[str, Any]:
    prefix, names = EVENT_FIELDS.get(type(d), ("", ()))
    return {f"{prefix}.{name}": getattr(d, name) for name in names}


def _completions(kind: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """For each event, the index of the first result/answer whose ``ref`` names it (-1: none)."""
    done = np.full(len(kind), -1, np.int64)
    completing = np.isin(kind, [_K["tool_result"], _K["model_result"]]) & (ref >= 0)
    rows = np.flatnonzero(completing)[::-1]  # written last-first, so the first completion wins
    done[ref[rows]] = rows
    return done


def _times(ts: np.ndarray, session: Session) -> np.ndarray:
    """Event times in nanoseconds; an event without a time takes the one before it (or after it)."""
    known = np.isfinite(ts)
    if not known.any():
        return np.zeros(len(ts), np.int64)
    pos = np.where(known, np.arange(len(ts)), -1)
    np.maximum.accumulate(pos, out=pos)
    first = int(np.flatnonzero(known)[0])
    pos[pos < 0] = first
    return (ts[pos] * 1e9).astype(np.int64)


def _children_first(session: Session) -> list[str]:
    """Agents ordered so that every subagent comes before its parent."""
    depth: dict[str, int] = {}

    def of(agent: str, seen: frozenset[str] = frozenset()) -> int:
        if agent not in depth:
            p = session.agents[agent].parent
            depth[agent] = 0 if p not in session.agents or p in seen else of(p, seen | {agent}) + 1
        return depth[agent]

    return sorted(session.agents, key=lambda a: -of(a))
