"""OTLP spans and log records as timeline rows, in time order, in their agents' lanes.

Spans arrive in the order they ended (children before parents), from any number of files; they
are collected first (compactly, :mod:`._spans`), joined by trace id and parent span id, then each
gets the lane of the nearest ``invoke_agent`` span above it. A root agent span is the run's start
and end; a nested one a subagent's spawn and end in its parent's lane (spawned by the tool call
when it runs under an ``execute_tool`` span). A span's start, its events and its end are
moments: sorted by time, they become rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.kinds import FILE, KIND_INDEX
from walkback.timeline.sources import JsonSpan

from ..documents import Damaged, placeholder
from ..fields import string
from ._files import batches
from ._spans import AGENT, MODEL, TOOL, Span, log_kind, log_record, span

OPENS = {AGENT: "agent", TOOL: "tool_call", MODEL: "model_call"}
"""Span kinds that also have an end row (a result, an agent's end)."""
START, EVENT, END = 0, 1, 2
TOOL_STATUSES = frozenset({"ok", "failed", "denied"})
"""``walkback.status`` values a tool span may carry back from walkback's export."""
_K = KIND_INDEX


class Collected:
    """Every span and log record of the input, and what their batches said."""

    def __init__(self) -> None:
        self.items: list[Span] = []
        self.services: dict[int, str] = {}
        """src -> the ``service.name`` of its resource."""
        self.lines: dict[int, int] = {}
        """src -> its line, for JSON-lines sources."""
        self.resource: dict[str, object] = {}
        """The first resource's attributes."""


def collect(path: Path, b: SessionBuilder) -> Collected:
    c = Collected()
    for batch in batches(path, b):
        src = b.source(batch.source)
        c.services[src] = string(batch.resource.get("service.name"))
        if isinstance(batch.source, JsonSpan):
            c.lines[src] = batch.source.line
        if not c.resource:
            c.resource = batch.resource
        read = log_record if batch.logs else span
        for k, rec in enumerate(batch.records):
            if isinstance(rec, dict):
                c.items.append(read(rec, src, k))
            elif isinstance(rec, Damaged):
                placeholder(b, src, k, rec, "")
            else:
                b.placeholder(
                    src=src,
                    line=c.lines.get(src, 0),
                    offset=k,
                    length=0,
                    reason=f"a JSON {type(rec).__name__}, not a span or log record",
                )
    return c


def traces(c: Collected) -> list[str]:
    """The trace ids of the input, in order of first appearance."""
    return list(dict.fromkeys(s.trace for s in c.items if s.trace))


class Emitter:
    """Lanes, agents and rows for the collected spans (see the module docstring)."""

    def __init__(self, b: SessionBuilder, c: Collected, items: list[Span], *, several: bool) -> None:
        self.b = b
        self.c = c
        self.items = items
        self.several = several
        """More than one trace: lanes are named with their trace."""
        self.by_id = {(s.trace, s.id): n for n, s in enumerate(items) if s.id}
        self.inner: dict[int, str | None] = {}
        """item -> the lane its children's rows go to."""
        self.used: dict[str, str | None] = {}
        """agent id -> its parent's lane (an id seen under another parent is told apart)."""
        self.opened: dict[str, list[int]] = {}
        """lane -> approval requests still waiting for their decision."""

    def lanes(self) -> None:
        """Every item's depth, lane and (for an agent span) agent, walking up each chain once."""
        items, inner, by_id = self.items, self.inner, self.by_id
        for n in range(len(items)):
            if n in inner:
                continue
            chain: list[int] = []
            seen: set[int] = set()
            cur: int | None = n
            while cur is not None and cur not in inner and cur not in seen:
                seen.add(cur)
                chain.append(cur)
                p = items[cur]
                cur = by_id.get((p.trace, p.parent)) if p.parent else None
            if cur is not None and cur in seen:
                cur = None  # a cycle of parents (damage): the loop's first span is a root
            lane = inner[cur] if cur is not None else None
            depth = items[cur].depth + 1 if cur is not None else 0
            for m in reversed(chain):
                it = items[m]
                it.depth, it.lane = depth, lane
                if it.what == AGENT:
                    lane = self.agent(it, lane)
                inner[m] = lane
                depth += 1

    def agent(self, s: Span, parent: str | None) -> str:
        base = s.agent or s.agent_name or f"agent-{s.id[:8]}"
        if self.several:
            base = f"{s.trace[:8]}/{base}"
        aid = base
        if aid in self.used and self.used[aid] != parent:
            aid = f"{base}#{s.id[:8]}"
        self.used[aid] = parent
        self.b.agent(aid, parent=parent, run=s.trace, task=s.task, label=s.agent_name)
        return aid

    def lane_of(self, s: Span) -> str:
        if s.what == "log":
            n = self.by_id.get((s.trace, s.parent)) if s.parent else None
            if n is not None and self.inner.get(n):
                return self.inner[n] or ""
        if s.lane:
            return s.lane
        service = self.c.services.get(s.src) or "main"
        lane = f"{s.trace[:8]}/{service}" if self.several and s.trace else service
        if lane not in self.b.session.agents:
            self.b.agent(lane, run=s.trace, label=service)
        return lane

    def rows(self) -> Iterator[None]:
        moments: list[tuple[int, int, int, int, int]] = []
        add = moments.append
        for n, s in enumerate(self.items):
            t = s.start if s.start is not None else (s.end or 0)
            add((t, START, s.depth, n, -1))
            if s.what in OPENS:
                add((max(s.end or t, t), END, -s.depth, n, -1))
            for j, _, ns, _, _ in s.events:
                add((ns if ns is not None else t, EVENT, s.depth, n, j))
        moments.sort()
        self.started = [-1] * len(self.items)
        """item -> its start row (-1: not started yet)."""
        b = self.b
        for t, phase, _, n, j in moments:
            s = self.items[n]
            if phase == START:
                self.started[n] = self.start(s, n, t / 1e9)
            elif phase == END:
                self.end(s, n, t / 1e9)
            else:
                self.event(s, n, j, t / 1e9)
            if b.due():
                yield

    def row(
        self,
        kind: str,
        typ: str,
        ts: float,
        lane: str,
        s: Span,
        *,
        tool: str = "",
        target: str = "",
        status: str = "",
        ref: int = -1,
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        p = self.b.intern
        lsn = s.lsn if s.lsn is not None else -1
        return self.b.row(
            _K[kind],
            p(typ),
            lsn,
            ts,
            p(lane),
            p(tool),
            p(target),
            p(status),
            ref,
            s.src,
            self.c.lines.get(s.src, 0),
            s.k,
            0,
            sub,
            flags,
        )

    def start(self, s: Span, n: int, ts: float) -> int:
        if s.what == AGENT:
            child = self.inner[n] or ""
            if s.lane is None:
                return self.row("run_start", s.op, ts, child, s, target=child, status="running")
            row = self.row("agent_spawn", s.op, ts, s.lane, s, target=child, status="running")
            up = self.by_id.get((s.trace, s.parent))
            by_tool = up is not None and self.items[up].what == TOOL and self.started[up] >= 0
            self.b.session.agents[child].spawned_by = self.started[up] if by_tool and up is not None else row
            return row
        lane = self.lane_of(s)
        if s.what == TOOL:
            return self.row(
                "tool_call",
                s.op,
                ts,
                lane,
                s,
                tool=s.tool,
                target=s.target,
                status="pending",
                flags=FILE if s.file else 0,
            )
        if s.what == MODEL:
            return self.row("model_call", s.op, ts, lane, s)
        if s.what == "log":
            kind = log_kind(s)
            return self.row(
                kind, s.name or "log", ts, lane, s, target=s.target, status="error" if kind == "error" else ""
            )
        return self.row("other", s.op, ts, lane, s, target=s.name)

    def end(self, s: Span, n: int, ts: float) -> None:
        start = self.started[n]
        b = self.b
        status = "failed" if s.failed else "ok"
        if s.what == AGENT:
            child = self.inner[n] or ""
            outcome = "failed" if s.failed else "completed"
            b.session.agents[child].outcome = outcome
            b.set_status(start, outcome)
            if s.lane is None:
                self.row("run_end", s.op, ts, child, s, target=child, status=outcome)
            else:
                self.row("agent_end", s.op, ts, self.lane_of(s), s, target=child, status=outcome, ref=start)
            return
        if s.what == TOOL:
            if s.status == "pending":
                return  # walkback exported a call that never completed
            status = s.status if s.status in TOOL_STATUSES else status
            b.set_status(start, status)
            self.row("tool_result", s.op, ts, self.lane_of(s), s, status=status, ref=start)
            return
        self.row("model_result", s.op, ts, self.lane_of(s), s, status=status, ref=start)

    def event(self, s: Span, n: int, j: int, ts: float) -> None:
        """A span event: in the agent's own lane for an agent span, else in the span's lane."""
        _, kind, _, name, status = s.events[j]
        lane = (self.inner[n] or "") if s.what == AGENT else self.lane_of(s)
        ref = -1
        if kind == "approval_decision":
            waiting = self.opened.get(lane)
            ref = waiting.pop() if waiting else -1
            if ref >= 0 and status:
                self.b.set_status(ref, status)
        elif kind == "error":
            status = "error"
        if kind == "approval_request" and not status:
            status = "pending"
        row = self.row(kind, name, ts, lane, s, status=status, ref=ref, sub=j)
        if kind == "approval_request":
            self.opened.setdefault(lane, []).append(row)


def read_traces(path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
    """Read ``path`` (a file or a folder) into ``b``: one trace (``part``) or all of them."""
    c = collect(path, b)
    found = traces(c)
    items = c.items
    if part is not None:
        if part not in found:
            shown = ", ".join(found[:10]) or "none"
            raise ImporterError(f"no trace {part!r} here; the traces are: {shown}", path=path)
        items = [s for s in items if s.trace == part]
    e = Emitter(b, c, items, several=part is None and len(found) > 1)
    e.lanes()
    yield from e.rows()
    _facts(b, c, found if part is None else [part], items)


def _facts(b: SessionBuilder, c: Collected, found: list[str], items: list[Span]) -> None:
    s = b.session
    r = c.resource
    s.header = {
        "traces": found,
        "services": sorted({v for v in c.services.values() if v}),
        "resource": {k: v for k, v in r.items() if isinstance(v, (str, int, float, bool))},
    }
    roots = [it for it in items if it.what == AGENT and it.lane is None]
    task = r.get("walkback.session.task")
    ids = {(it.trace, it.id) for it in items if it.id}
    tops = [it for it in items if it.what != "log" and (it.trace, it.parent) not in ids]
    s.task = (
        task
        if isinstance(task, str)
        else next((it.task or it.agent_name for it in roots), "") or next((it.name for it in tops), "")
    )
    status = r.get("walkback.session.status")
    if isinstance(status, str) and status:
        s.status = status
    elif items:
        s.status = "failed" if any(it.failed for it in tops) else "completed"
