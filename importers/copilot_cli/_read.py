"""Reading a Copilot CLI ``events.jsonl``: one ``{type, data, id, timestamp, parentId}`` event per
line, every event linked to the one before it.

A tool call is read from the assistant message that requests it (``toolRequests``, ``sub`` = its
index); the ``tool.execution_start`` that follows is ``other`` pointing at it (``ref``), or the
call itself when no request named it. Token counts: ``outputTokens`` of each assistant message is
a ``model_result``; ``session.shutdown`` totals each model, and its ``model_result`` carries what
the messages did not already count (so the session's tokens add up to Copilot's totals).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE
from walkback.timeline.sources import JsonLines

from ..fields import embedded_json, integer, mapping, string
from ..records import RecordReader, json_lines, written_lately
from ._tools import changes_file, exit_code, result_text, target

ROOT_AGENT = "main"
COUNTED = "counted_output_tokens"
"""``session.header`` key: output tokens per model the assistant messages counted before shutdown."""
MODELS = "models"
"""``session.header`` key: ``[[line, model], ...]``, the model in force from each line on."""
DENIED_WORDS = ("rejected", "denied", "declined")


def status_of(data: dict[str, Any]) -> str:
    """``ok``, ``failed`` or ``denied`` for a ``tool.execution_complete`` (a shell's non-zero exit
    is a failure; a refusal at the permission prompt is a denial)."""
    if data.get("success") is False:
        error = mapping(data.get("error"))
        words = (
            string(error.get("message")) or string(data.get("error")) or result_text(data.get("result"))
        )[:300]
        return "denied" if any(w in words.lower() for w in DENIED_WORDS) else "failed"
    code = exit_code(result_text(data.get("result")))
    return "failed" if code not in (None, 0) else "ok"


class EventsReader(RecordReader):
    """Fills the builder from one ``events.jsonl`` (see the module docstring)."""

    def __init__(self, b: SessionBuilder, path: Path) -> None:
        self.b = b
        self.path = path
        self.clock = MinuteClock()
        self.src = 0
        self.line = self.offset = self.length = 0
        self.agent = ROOT_AGENT
        self.cwd = ""
        self.model = ""
        self.models: list[list[Any]] = []
        self.counted: dict[str, int] = {}
        self.answered: set[str] = set()
        """Message ids whose tokens were counted (a message written twice counts once)."""
        self.children: dict[str, str] = {}
        """``parentToolCallId`` -> the subagent whose events carry it."""
        self.names: dict[str, str] = {}
        """Tool call id -> tool, while the call waits for its result."""
        self.ended = False
        self.last = math.nan


    def read(self) -> Iterator[None]:
        b = self.b
        self.src = b.source(JsonLines(self.path))
        b.agent(ROOT_AGENT)
        b.session.header[MODELS] = self.models
        b.session.header[COUNTED] = self.counted
        handlers, clock = HANDLERS, self.clock
        for offset, line, length, rec in json_lines(self.path, b, self.src):
            self.offset, self.line, self.length = offset, line, length
            typ = rec.get("type")
            typ = typ if typ.__class__ is str and typ else "?"
            data = rec.get("data")
            data = data if data.__class__ is dict else {}
            ts = clock(rec.get("timestamp"))
            if ts == ts:
                self.last = ts
            self.agent = self.agent_of(data) if "parentToolCallId" in data else ROOT_AGENT
            before = len(b.rows)
            handler = handlers.get(typ)
            if handler is not None:
                handler(self, typ, data, ts)
            if len(b.rows) == before:
                self.add("other", typ, ts)
            if b.due():
                yield
        b.session.status = self.status()

    def agent_of(self, data: dict[str, Any]) -> str:
        """The subagent an event belongs to (its ``parentToolCallId``), else the main agent."""
        parent = data.get("parentToolCallId")
        if not isinstance(parent, str) or not parent:
            return ROOT_AGENT
        child = self.children.get(parent)
        if child is None:
            child = self.children[parent] = f"subagent-{parent[-12:]}"
            self.b.agent(child, parent=ROOT_AGENT, spawned_by=self.call(parent))
        return child

    def call(self, cid: str) -> int | None:
        found = self.b.opened((self.src, cid))
        return found if found >= 0 else None

    def status(self) -> str:
        if self.ended:
            return "completed"
        if written_lately(self.path, self.last):
            return "running"
        return "crashed" if self.b.unanswered() else "unknown"

    # -- records ---------------------------------------------------------------------------------
    def start(self, typ: str, data: dict[str, Any], ts: float) -> None:
        header = self.b.session.header
        header.update({k: v for k, v in data.items() if k not in (MODELS, COUNTED)})
        self.cwd = string(mapping(data.get("context")).get("cwd"))
        self.b.agent(ROOT_AGENT, run=string(data.get("sessionId")))
        self.add("run_start", typ, ts)

    def model_change(self, typ: str, data: dict[str, Any], ts: float) -> None:
        model = string(data.get("newModel"))
        if model and model != self.model:
            self.model = model
            self.models.append([self.line, model])
        self.add("other", typ, ts)

    def said(self, typ: str, data: dict[str, Any], ts: float) -> None:
        """A user, system or info message; the first user prompt is the session's task."""
        text = string(data.get("content")) or string(data.get("message"))
        self.add("message", typ, ts)
        if typ == "user.message" and text.strip() and not self.b.session.task:
            self.b.session.task = text.strip()
            self.b.agent(self.agent, task=text.strip())

    def turn_start(self, typ: str, data: dict[str, Any], ts: float) -> None:
        self.add("model_call", typ, ts)

    def assistant(self, typ: str, data: dict[str, Any], ts: float) -> None:
        if string(data.get("content")) or string(data.get("reasoningText")):
            self.add("message", typ, ts)
        tokens = integer(data.get("outputTokens"))
        mid = string(data.get("messageId"))
        if tokens is not None and not (mid and mid in self.answered):
            self.answered.add(mid)
            self.counted[self.model] = self.counted.get(self.model, 0) + tokens
            self.add("model_result", typ, ts)
        requests = data.get("toolRequests")
        for k, req in enumerate(requests if isinstance(requests, list) else ()):
            req = mapping(req)
            self.tool_call(string(req.get("toolCallId")) or f"#{self.line}.{k}", req, "name", ts, k)

    def tool_call(self, cid: str, data: dict[str, Any], name_key: str, ts: float, sub: int) -> int:
        name = string(data.get(name_key)) or "?"
        args = mapping(embedded_json(data.get("arguments")))
        flags = FILE if changes_file(name, args) else 0
        i = self.add(
            "tool_call",
            self.type_of(sub),
            ts,
            tool=name,
            target=target(args, self.cwd),
            status="pending",
            sub=sub,
            flags=flags,
        )
        self.b.open((self.src, cid), i)
        self.names[cid] = name
        return i

    @staticmethod
    def type_of(sub: int) -> str:
        return "assistant.message" if sub >= 0 else "tool.execution_start"

    def execution_start(self, typ: str, data: dict[str, Any], ts: float) -> None:
        cid = string(data.get("toolCallId"))
        requested = self.call(cid) if cid else None
        if requested is None:
            self.tool_call(cid or f"#{self.line}", data, "toolName", ts, -1)
            return
        args = mapping(embedded_json(data.get("arguments")))
        tool = string(data.get("toolName")) or self.names.get(cid, "")
        self.add("other", typ, ts, tool=tool, target=target(args, self.cwd), ref=requested)

    def execution_complete(self, typ: str, data: dict[str, Any], ts: float) -> None:
        cid = string(data.get("toolCallId"))
        call = self.b.close((self.src, cid)) if cid else -1
        status = status_of(data)
        tool = string(data.get("toolName")) or self.names.pop(cid, "")
        self.add("tool_result", typ, ts, tool=tool, status=status, ref=call)
        if call >= 0:
            self.b.set_status(call, status)

    def permission(self, typ: str, data: dict[str, Any], ts: float) -> None:
        ask = mapping(data.get("permissionRequest"))
        call = self.call(string(ask.get("toolCallId")))
        what = string(ask.get("fileName")) or string(ask.get("fullCommandText")) or string(ask.get("url"))
        i = self.add(
            "approval_request", typ, ts, tool=string(ask.get("kind")), target=what[:240], status="pending"
        )
        self.b.open(("permission", string(data.get("requestId"))), i)
        if call is not None:
            self.b.session.gated[i] = call

    def permission_done(self, typ: str, data: dict[str, Any], ts: float) -> None:
        request = self.b.close(("permission", string(data.get("requestId"))))
        kind = string(mapping(data.get("result")).get("kind"))
        decision = "approved" if kind.startswith("approved") else "denied"
        self.add("approval_decision", typ, ts, status=decision, ref=request)
        if request >= 0:
            self.b.set_status(request, decision)

    def subagent(self, typ: str, data: dict[str, Any], ts: float) -> None:
        cid = string(data.get("toolCallId"))
        child = self.children.get(cid) or f"subagent-{cid[-12:] or self.line}"
        self.children[cid] = child
        i = self.add("agent_spawn", typ, ts, tool=string(data.get("agentName")), target=child)
        label = string(data.get("agentDisplayName")) or string(data.get("agentName"))
        self.b.agent(
            child,
            parent=self.agent,
            spawned_by=self.call(cid) or i,
            label=label,
            task=string(data.get("agentDescription")),
        )
        self.b.open(("subagent", cid), i)

    def subagent_end(self, typ: str, data: dict[str, Any], ts: float) -> None:
        cid = string(data.get("toolCallId"))
        spawn = self.b.close(("subagent", cid))
        outcome = "failed" if typ.endswith("failed") else "completed"
        self.add("agent_end", typ, ts, status=outcome, ref=spawn, target=self.children.get(cid, ""))
        child = self.b.session.agents.get(self.children.get(cid, ""))
        if child is not None:
            child.outcome = outcome

    def shutdown(self, typ: str, data: dict[str, Any], ts: float) -> None:
        self.ended = True
        self.add(
            "run_end",
            typ,
            ts,
            status="completed" if string(data.get("shutdownType")) != "error" else "failed",
        )
        metrics = mapping(data.get("modelMetrics"))
        for k, model in enumerate(metrics):
            self.add("model_result", typ, ts, target=model, sub=k)


def _as(kind: str, status: str = "") -> Callable[[EventsReader, str, dict[str, Any], float], None]:
    def handle(r: EventsReader, typ: str, data: dict[str, Any], ts: float) -> None:
        r.add(kind, typ, ts, status=status)

    return handle


HANDLERS: dict[str, Callable[[EventsReader, str, dict[str, Any], float], None]] = {
    "session.start": EventsReader.start,
    "session.resume": EventsReader.start,
    "session.model_change": EventsReader.model_change,
    "session.info": EventsReader.said,
    "system.message": EventsReader.said,
    "user.message": EventsReader.said,
    "assistant.turn_start": EventsReader.turn_start,
    "assistant.message": EventsReader.assistant,
    "tool.execution_start": EventsReader.execution_start,
    "tool.execution_complete": EventsReader.execution_complete,
    "permission.requested": EventsReader.permission,
    "permission.completed": EventsReader.permission_done,
    "subagent.started": EventsReader.subagent,
    "subagent.completed": EventsReader.subagent_end,
    "subagent.failed": EventsReader.subagent_end,
    "session.shutdown": EventsReader.shutdown,
    "session.error": _as("error", "error"),
    "session.compaction_complete": _as("compaction"),
}
"""Event types with a mapping; any other becomes ``other``."""
