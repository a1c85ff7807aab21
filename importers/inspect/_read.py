"""One Inspect sample's events as timeline rows: one event record gives one or two rows.

A model event is a ``model_call`` and its ``model_result``; a tool event (and a sandbox ``exec``,
``read_file`` or ``write_file``) a ``tool_call`` and its ``tool_result``; an approval event a
request and its decision. Agents come from spans of type ``agent`` (and ``subtask`` events of
older logs): each event's ``span_id`` names the span it ran in, so the lane it belongs to. Older
logs nest events inside ``tool.events`` and ``subtask.events``; each nested list is its own source.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, KIND_INDEX

from ..fields import mapping, string
from ..tool_args import short, target_of
from ._logs import Sample, Unreadable
from ._text import Attachments, content_text
from ._tools import changed_file, sandbox_written

MAX_NESTING = 64
"""Levels of ``tool.events`` / ``subtask.events`` followed (deeper lists are left out, counted)."""
DECISIONS = {
    "approve": "approved",
    "modify": "approved",
    "reject": "denied",
    "terminate": "denied",
    "escalate": "escalated",
}
"""Inspect's approval decisions as timeline statuses (a modified call still runs)."""
MAPPED = {
    "compaction": "compaction",
    "branch": "branch",
    "checkpoint": "checkpoint",
    "error": "error",
    "sample_limit": "error",
    "input": "message",
    "score": "test_result",
}
"""Event types that are one row of a kind of their own; any other unhandled type is ``other``."""
PASSED = frozenset({"C", True})
FAILED = frozenset({"I", False})
_K = KIND_INDEX
Nested = tuple[list[Any], int, Callable[[], None]]
"""Events nested in an event, the lane they run in, and what completes the event after them."""
Handler = Callable[[dict[str, Any], int, int, int, float], Nested | None]


class SampleReader:
    """Maps the samples of one log into the builder, one sample at a time."""

    def __init__(self, b: SessionBuilder, *, run: str) -> None:
        self.b = b
        self.run = run
        self.intern = b.pool.id
        self.clock = MinuteClock()
        self.handlers: dict[str, Handler] = {
            "model": self.model,
            "tool": self.tool,
            "sandbox": self.sandbox,
            "approval": self.approval,
            "span_begin": self.span_begin,
            "span_end": self.span_end,
            "sample_init": self.sample_init,
            "subtask": self.subtask,
            "logger": self.logger,
        }
        self.outcomes: list[str] = []
        """Each sample's outcome, in reading order."""

    # -- a sample ----------------------------------------------------------------------------------
    def sample(self, s: Sample, *, default_root: str = "main") -> Iterator[None]:
        b = self.b
        root = s.part or default_root
        self.s = s
        try:
            doc = s.load()
        except Unreadable as e:
            b.agent(root, run=self.run, label=_label(root))
            b.placeholder(
                src=b.source(s.source("")),
                line=0,
                offset=-1,
                length=0,
                status=e.status,
                reason=e.reason,
                agent=root,
            )
            self.outcomes.append("failed")
            return
        self.att = Attachments(doc.get("attachments"))
        task = content_text(self.att.resolve(doc.get("input")))
        b.agent(root, run=self.run, task=task[:2000], label=_label(root))
        self.root = root
        self.spans: dict[str, int] = {}
        """span id -> the lane (agent pool id) its events belong to."""
        self.agent_spans: dict[str, tuple[int, int, str]] = {}
        """agent span id -> (its spawn row, the parent's lane, the child agent id)."""
        self.names: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.gates: dict[str, int] = {}
        self.handoffs: dict[str, int] = {}
        self.tool_span = ""
        self.span_call: dict[str, int] = {}
        """tool span id -> the tool call it ran (a sandbox event inside it belongs to that call)."""
        self.file_calls: dict[int, str] = {}
        self.scorers: dict[Any, str] = {}
        self.limited = False
        events = doc.get("events")
        if not isinstance(events, list):
            b.skip(s.where, 0, "a sample without an events list")
            events = []
        yield from self.events(events, "/events", self.intern(root), 0)
        failed = doc.get("error") is not None
        if failed:
            b.add("error", type="sample.error", agent=root, status="error", src=b.source(s.source("/error")))
        limit = doc.get("limit")
        if isinstance(limit, dict) and not self.limited:
            b.add(
                "error",
                type="sample.limit",
                agent=root,
                status="error",
                target=string(limit.get("type")),
                src=b.source(s.source("/limit")),
            )
        self.outcomes.append("failed" if failed else "completed")
        b.session.agents[root].outcome = self.outcomes[-1]

    def events(self, events: list[Any], pointer: str, aid: int, depth: int) -> Iterator[None]:
        """Map one list of events (the sample's, or one nested in a tool or subtask event)."""
        b = self.b
        src = b.source(self.s.source(pointer))
        handlers = self.handlers
        spans = self.spans
        when = self.when
        for k, e in enumerate(events):
            if e.__class__ is not dict:
                b.placeholder(
                    src=src,
                    line=0,
                    offset=k,
                    length=0,
                    agent=self.root,
                    reason=f"an event that is a JSON {type(e).__name__}, not an object",
                )
                continue
            typ = e.get("event")
            sid = e.get("span_id")
            lane = spans.get(sid, aid) if sid.__class__ is str else aid
            ts = when(e.get("timestamp"))
            h = handlers.get(typ) if typ.__class__ is str else None
            if h is None:
                self.single(e, k, src, lane, ts)
                nested = None
            else:
                nested = h(e, k, src, lane, ts)
            if nested is not None:
                inner, child, done = nested
                if depth >= MAX_NESTING:
                    why = f"events nested deeper than {MAX_NESTING} levels at {pointer}/{k}"
                    b.skip(self.s.where, 0, why)
                else:
                    yield from self.events(inner, f"{pointer}/{k}/events", child, depth + 1)
                done()
            if b.due():
                yield

    # -- rows --------------------------------------------------------------------------------------
    def row(
        self,
        kind: str,
        typ: str,
        ts: float,
        lane: int,
        src: int,
        k: int,
        *,
        tool: str = "",
        target: str = "",
        status: str = "",
        ref: int = -1,
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        p = self.intern
        return self.b.row(
            _K[kind], p(typ), -1, ts, lane, p(tool), p(target), p(status), ref, src, 0, k, 0, sub, flags
        )

    def when(self, value: Any, default: float = math.nan) -> float:
        ts = self.clock(value) if value is not None else math.nan
        return default if ts != ts else ts

    def single(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        """An event of one row: its own kind when it has one, else ``other``."""
        typ = e.get("event")
        typ = typ if isinstance(typ, str) and typ else "?"
        kind = MAPPED.get(typ, "other")
        status, target = "", ""
        if kind == "error":
            status = "error"
            if typ == "sample_limit":
                self.limited = True
                target = string(e.get("type"))
        elif kind == "test_result":
            value = mapping(e.get("score")).get("value")
            if _hashable(value):
                status = "ok" if value in PASSED else "failed" if value in FAILED else ""
            sid = e.get("span_id")
            target = (self.scorers.get(sid) if isinstance(sid, str) else None) or self.scorers.get(None, "")
        elif typ == "step":
            target = string(e.get("name"))
            if e.get("type") == "scorer":
                self.scorers[None] = target
        self.row(kind, typ, ts, lane, src, k, status=status, target=target)

    def logger(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        level = string(mapping(e.get("message")).get("level")).lower()
        error = level in ("error", "critical")
        self.row("error" if error else "other", "logger", ts, lane, src, k, status="error" if error else "")

    def sample_init(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        self.row("run_start", "sample_init", ts, lane, src, k)
        messages = mapping(e.get("state")).get("messages")
        for j in range(len(messages) if isinstance(messages, list) else 0):
            self.row("message", "sample_init", ts, lane, src, k, sub=j)

    def model(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        pending = e.get("pending") is True and e.get("completed") is None
        call = self.row("model_call", "model", ts, lane, src, k, status="pending" if pending else "")
        if not pending:
            self.row(
                "model_result",
                "model",
                self.when(e.get("completed"), ts),
                lane,
                src,
                k,
                status="failed" if e.get("error") else "ok",
                ref=call,
            )

    # -- tools ---------------------------------------------------------------------------------------
    def tool(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> Nested | None:
        function = string(e.get("function"))
        args = mapping(e.get("arguments"))
        path = changed_file(function, args)
        target = path or short(self.att.resolve_text(target_of(args)))
        call = self.row(
            "tool_call",
            "tool",
            ts,
            lane,
            src,
            k,
            tool=function,
            target=target,
            status="pending",
            flags=FILE if path else 0,
        )
        if path:
            self.file_calls[call] = path
        cid = e.get("id")
        if isinstance(cid, str):
            self.calls[cid] = call
            gate = self.gates.pop(cid, None)
            if gate is not None:
                self.b.session.gated[gate] = call
        if self.tool_span:
            self.span_call[self.tool_span] = call
            self.tool_span = ""
        spawned = e.get("agent_span_id")
        if isinstance(spawned, str):
            known = self.agent_spans.get(spawned)
            if known is not None:
                self.b.session.agents[known[2]].spawned_by = call
            else:
                self.handoffs[spawned] = call
        nested = e.get("events")
        if isinstance(nested, list) and nested:
            return nested, lane, lambda: self.tool_done(e, k, src, lane, ts, call)
        self.tool_done(e, k, src, lane, ts, call)
        return None

    def tool_done(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float, call: int) -> None:
        """The tool's result row (none while it is pending: a crash left it unanswered)."""
        if e.get("pending") is True and e.get("completed") is None:
            return
        error = e.get("error")
        if isinstance(error, dict) and error.get("type") == "approval":
            status = "denied"
        elif error is not None or e.get("failed") is True:
            status = "failed"
        else:
            status = "ok"
        self.b.set_status(call, status)
        self.row(
            "tool_result", "tool", self.when(e.get("completed"), ts), lane, src, k, status=status, ref=call
        )

    def sandbox(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        action = string(e.get("action"))
        tool = f"sandbox.{action}" if action else "sandbox"
        target, flags = "", 0
        if action == "exec":
            target = short(self.att.resolve_text(string(e.get("cmd"))))
        else:
            target = short(string(e.get("file")))
            if action == "write_file" and sandbox_written(e) is not None:
                sid = e.get("span_id")
                owner = self.span_call.get(sid, -1) if isinstance(sid, str) else -1
                flags = 0 if self.file_calls.get(owner) == target else FILE  # that call's own write
        call = self.row("tool_call", "sandbox", ts, lane, src, k, tool=tool, target=target, flags=flags)
        result = e.get("result")
        status = "ok" if result is None or (result.__class__ is int and result == 0) else "failed"
        self.b.set_status(call, status)
        self.row(
            "tool_result", "sandbox", self.when(e.get("completed"), ts), lane, src, k, status=status, ref=call
        )

    def approval(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        call = mapping(e.get("call"))
        decision = e.get("decision")
        status = DECISIONS.get(decision, "") if isinstance(decision, str) else ""
        target = short(self.att.resolve_text(target_of(mapping(call.get("arguments")))))
        req = self.row(
            "approval_request",
            "approval",
            ts,
            lane,
            src,
            k,
            tool=string(call.get("function")),
            target=target,
            status=status or "pending",
        )
        if status:
            self.row("approval_decision", "approval", ts, lane, src, k, status=status, ref=req)
        cid = call.get("id")
        if isinstance(cid, str):
            gated = self.calls.get(cid)
            if gated is not None:
                self.b.session.gated[req] = gated
            else:
                self.gates[cid] = req

    # -- spans and agents --------------------------------------------------------------------------
    def child(self, name: str) -> str:
        """A new subagent's id: the sample's root, then the span's name (numbered when repeated)."""
        base = f"{self.root}/{name or 'agent'}"
        n = self.names.get(base, 0) + 1
        self.names[base] = n
        return base if n == 1 else f"{base}-{n}"

    def span_begin(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        sid = e.get("id")
        parent = e.get("parent_id")
        root = self.intern(self.root)
        up = self.spans.get(parent, root) if isinstance(parent, str) else root
        kind = e.get("type")
        name = string(e.get("name"))
        if not isinstance(sid, str):
            self.row("other", "span_begin", ts, up, src, k, target=name)
            return
        if kind == "agent":
            child = self.child(name)
            spawn = self.row("agent_spawn", "span_begin", ts, up, src, k, target=child, status="running")
            self.b.agent(
                child,
                parent=self.b.pool.values[up],
                spawned_by=self.handoffs.pop(sid, spawn),
                run=self.run,
                label=name,
            )
            self.spans[sid] = self.intern(child)
            self.agent_spans[sid] = (spawn, up, child)
            return
        self.spans[sid] = up
        if kind == "tool":
            self.tool_span = sid
        elif kind == "scorer":
            self.scorers[sid] = name
        self.row("other", "span_begin", ts, up, src, k, target=name)

    def span_end(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> None:
        sid = e.get("id")
        agent = self.agent_spans.get(sid) if isinstance(sid, str) else None
        if agent is None:
            own = self.spans.get(sid, lane) if isinstance(sid, str) else lane
            self.row("other", "span_end", ts, own, src, k)
            return
        spawn, up, child = agent
        self.row("agent_end", "span_end", ts, up, src, k, target=child, status="completed", ref=spawn)
        self.b.set_status(spawn, "completed")
        self.b.session.agents[child].outcome = "completed"

    def subtask(self, e: dict[str, Any], k: int, src: int, lane: int, ts: float) -> Nested:
        """An older log's subtask: a subagent whose events are nested in the record."""
        child = self.child(string(e.get("name")))
        spawn = self.row("agent_spawn", "subtask", ts, lane, src, k, target=child, status="running")
        self.b.agent(
            child,
            parent=self.b.pool.values[lane],
            spawned_by=spawn,
            run=self.run,
            label=string(e.get("name")),
        )
        nested = e.get("events")
        return (
            (nested if isinstance(nested, list) else []),
            self.intern(child),
            lambda: self.subtask_done(e, k, src, lane, ts, spawn, child),
        )

    def subtask_done(
        self, e: dict[str, Any], k: int, src: int, lane: int, ts: float, spawn: int, child: str
    ) -> None:
        if e.get("completed") is None:
            return
        self.row(
            "agent_end",
            "subtask",
            self.when(e.get("completed"), ts),
            lane,
            src,
            k,
            target=child,
            status="completed",
            ref=spawn,
        )
        self.b.set_status(spawn, "completed")
        self.b.session.agents[child].outcome = "completed"


def _label(root: str) -> str:
    sid, _, epoch = root.rpartition("_epoch_")
    return f"sample {sid}, epoch {epoch}" if sid else root


def _hashable(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))
