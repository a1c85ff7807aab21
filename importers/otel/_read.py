"""OTLP spans and log records as timeline rows, in time order, in their agents' lanes.

Spans arrive in the order they ended (children before parents), from any number of files; they
are collected first (compactly, :mod:`._spans`), joined by trace id and parent span id, then each
gets the lane of the nearest ``invoke_agent`` span above it. A root agent span is the run's start
and end; a nested one a subagent's spawn and end in its parent's lane (spawned by the tool call
when it runs under an ``execute_tool`` span). A span's start, its events and its end are
moments: sorted by time, they become rows.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from walkback.journal.errors import ImporterError
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.kinds import FILE, KIND_INDEX
from walkback.timeline.sources import JsonSpan

from ..documents import Damaged, placeholder
from ..fields import string
from ._files import batches
from ._spans import AGENT, MODEL, NONE, TOOL, Spans, log_kind, log_record, span

OPENS = {AGENT: "agent", TOOL: "tool_call", MODEL: "model_call"}
"""Span kinds that also have an end row (a result, an agent's end)."""
START, EVENT, END = 0, 1, 2
TOOL_STATUSES = frozenset({"ok", "failed", "denied"})
"""``walkback.status`` values a tool span may carry back from walkback's export."""
_K = KIND_INDEX


class Collected:
    """Every span and log record of the input, and what their batches said."""

    def __init__(self) -> None:
        self.items = Spans()
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
                c.items.add(read(rec, src, k))
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
    return [t for t in c.items.traces if t]


class Emitter:
    """Lanes, agents and rows for the collected spans (see the module docstring)."""

    def __init__(self, b: SessionBuilder, c: Collected, items: Spans, *, several: bool) -> None:
        self.b = b
        self.c = c
        self.items = items
        self.several = several
        """More than one trace: lanes are named with their trace."""
        self.up = parents(items)
        """item -> its parent's item (-1: none here)."""
        n = len(items)
        self.depth = array("q", [0]) * n
        self.lane: list[str | None] = [None] * n
        """item -> the agent whose lane its rows go to (None: no agent above it, the service's lane)."""
        self.inner: list[str | None] = [None] * n
        """item -> the lane its children's rows go to."""
        self.done = bytearray(n)
        """item -> whether :attr:`inner` is known."""
        self.used: dict[str, str | None] = {}
        """agent id -> its parent's lane (an id seen under another parent is told apart)."""
        self.opened: dict[str, list[int]] = {}
        """lane -> approval requests still waiting for their decision."""
        self.started = array("q", [-1]) * n
        """item -> its start row (-1: not started yet)."""

    def lanes(self) -> None:
        """Every item's depth, lane and (for an agent span) agent, walking up each chain once."""
        what, up, inner, done, depth = self.items.what, self.up, self.inner, self.done, self.depth
        for n in range(len(done)):
            if done[n]:
                continue
            chain: list[int] = []
            seen: set[int] = set()
            cur = n
            while cur >= 0 and not done[cur] and cur not in seen:
                seen.add(cur)
                chain.append(cur)
                cur = up[cur]
            if cur in seen:
                cur = -1  # a cycle of parents (damage): the loop's first span is a root
            lane = inner[cur] if cur >= 0 else None
            d = depth[cur] + 1 if cur >= 0 else 0
            for m in reversed(chain):
                depth[m], self.lane[m] = d, lane
                if what[m] == AGENT:
                    lane = self.agent(m, lane)
                inner[m], done[m] = lane, 1
                d += 1

    def agent(self, n: int, parent: str | None) -> str:
        it = self.items
        trace, name = it.traces[it.trace[n]], it.agent_name[n]
        base = it.agent[n] or name or f"agent-{it.id[n][:8]}"
        if self.several:
            base = f"{trace[:8]}/{base}"
        aid = base
        if aid in self.used and self.used[aid] != parent:
            aid = f"{base}#{it.id[n][:8]}"
        self.used[aid] = parent
        self.b.agent(aid, parent=parent, run=trace, task=it.task[n], label=name)
        return aid

    def lane_of(self, n: int) -> str:
        it = self.items
        up = self.up[n]
        if it.what[n] == "log" and up >= 0 and self.inner[up]:
            return self.inner[up] or ""
        lane = self.lane[n]
        if lane:
            return lane
        trace = it.traces[it.trace[n]]
        service = self.c.services.get(it.src[n]) or "main"
        lane = f"{trace[:8]}/{service}" if self.several and trace else service
        if lane not in self.b.session.agents:
            self.b.agent(lane, run=trace, label=service)
        return lane

    def moments(self) -> Iterator[tuple[int, int, int, int]]:
        """``(time, phase, item, event)`` of every start, end and span event, in time order (ties:
        by phase, then outer spans first at a start, inner first at an end, then by item and event).
        Kept as columns and sorted by numpy, not as a list of tuples."""
        it = self.items
        t, phase, depth, item, event = (array("q") for _ in range(5))
        exact: dict[int, int] = {}  # moment -> its time when an int64 cannot hold it (t: clamped)

        def add(when: int, ph: int, d: int, n: int, j: int) -> None:
            if not NONE < when < -NONE:
                exact[len(t)] = when
                when = NONE if when < 0 else -NONE - 1
            t.append(when)
            phase.append(ph)
            depth.append(d)
            item.append(n)
            event.append(j)

        for n in range(len(it)):
            start, end, d = it.start[n], it.end[n], self.depth[n]
            when = start if start is not None else (end or 0)
            add(when, START, d, n, -1)
            if it.what[n] in OPENS:
                add(max(end or when, when), END, -d, n, -1)
            for j, _, ns, _, _ in it.events.get(n, ()):
                add(ns if ns is not None else when, EVENT, d, n, j)
        rank = np.zeros(len(t), np.int64)
        values = {v: r for r, v in enumerate(sorted(set(exact.values())), 1)}
        for m, v in exact.items():
            rank[m] = values[v]
        keys = [np.frombuffer(a, np.int64) for a in (event, item, depth, phase)]
        order = np.lexsort((*keys, rank, np.frombuffer(t, np.int64)))
        del rank, keys
        for m in order.tolist():
            yield exact.get(m, t[m]), phase[m], item[m], event[m]

    def rows(self) -> Iterator[None]:
        b = self.b
        for t, phase, n, j in self.moments():
            if phase == START:
                self.started[n] = self.start(n, t / 1e9)
            elif phase == END:
                self.end(n, t / 1e9)
            else:
                self.event(n, j, t / 1e9)
            if b.due():
                yield

    def row(
        self,
        kind: str,
        typ: str,
        ts: float,
        lane: str,
        n: int,
        *,
        tool: str = "",
        target: str = "",
        status: str = "",
        ref: int = -1,
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        p = self.b.intern
        lsn = self.items.lsn[n]
        src = self.items.src[n]
        return self.b.row(
            _K[kind],
            p(typ),
            lsn if lsn is not None else -1,
            ts,
            p(lane),
            p(tool),
            p(target),
            p(status),
            ref,
            src,
            self.c.lines.get(src, 0),
            self.items.k[n],
            0,
            sub,
            flags,
        )

    def start(self, n: int, ts: float) -> int:
        it = self.items
        what, op = it.what[n], it.op[n]
        if what == AGENT:
            child = self.inner[n] or ""
            lane = self.lane[n]
            if lane is None:
                return self.row("run_start", op, ts, child, n, target=child, status="running")
            row = self.row("agent_spawn", op, ts, lane, n, target=child, status="running")
            up = self.up[n]
            by_tool = up >= 0 and it.what[up] == TOOL and self.started[up] >= 0
            self.b.session.agents[child].spawned_by = self.started[up] if by_tool else row
            return row
        lane = self.lane_of(n)
        if what == TOOL:
            return self.row(
                "tool_call",
                op,
                ts,
                lane,
                n,
                tool=it.tool[n],
                target=it.target[n],
                status="pending",
                flags=FILE if it.file[n] else 0,
            )
        if what == MODEL:
            return self.row("model_call", op, ts, lane, n)
        name = it.name[n]
        if what == "log":
            kind = log_kind(name, bool(it.failed[n]))
            status = "error" if kind == "error" else ""
            return self.row(kind, name or "log", ts, lane, n, target=it.target[n], status=status)
        return self.row("other", op, ts, lane, n, target=name)

    def end(self, n: int, ts: float) -> None:
        it = self.items
        start = self.started[n]
        b = self.b
        what, op, failed = it.what[n], it.op[n], it.failed[n]
        status = "failed" if failed else "ok"
        if what == AGENT:
            child = self.inner[n] or ""
            outcome = "failed" if failed else "completed"
            b.session.agents[child].outcome = outcome
            b.set_status(start, outcome)
            if self.lane[n] is None:
                self.row("run_end", op, ts, child, n, target=child, status=outcome)
            else:
                self.row("agent_end", op, ts, self.lane_of(n), n, target=child, status=outcome, ref=start)
            return
        if what == TOOL:
            said = it.status[n]
            if said == "pending":
                return  # walkback exported a call that never completed
            status = said if said in TOOL_STATUSES else status
            b.set_status(start, status)
            self.row("tool_result", op, ts, self.lane_of(n), n, status=status, ref=start)
            return
        self.row("model_result", op, ts, self.lane_of(n), n, status=status, ref=start)

    def event(self, n: int, j: int, ts: float) -> None:
        """A span event: in the agent's own lane for an agent span, else in the span's lane."""
        _, kind, _, name, status = self.items.events[n][j]
        lane = (self.inner[n] or "") if self.items.what[n] == AGENT else self.lane_of(n)
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
        row = self.row(kind, name, ts, lane, n, status=status, ref=ref, sub=j)
        if kind == "approval_request":
            self.opened.setdefault(lane, []).append(row)


def parents(items: Spans) -> array[int]:
    """Each item's parent's item (-1: none here); the last of a repeated id is the one named."""
    by_id = {}
    for n in range(len(items)):
        key = items.key(n)
        if key is not None:
            by_id[key] = n
    get = by_id.get
    return array("q", (get(items.parent_key(n), -1) for n in range(len(items))))


def read_traces(path: Path, b: SessionBuilder, part: str | None) -> Iterator[None]:
    """Read ``path`` (a file or a folder) into ``b``: one trace (``part``) or all of them."""
    c = collect(path, b)
    found = traces(c)
    items = c.items
    if part is not None:
        if part not in found:
            shown = ", ".join(found[:10]) or "none"
            raise ImporterError(f"no trace {part!r} here; the traces are: {shown}", path=path)
        items = items.only(part)
    e = Emitter(b, c, items, several=part is None and len(found) > 1)
    e.lanes()
    yield from e.rows()
    _facts(b, c, found if part is None else [part], e)


def _facts(b: SessionBuilder, c: Collected, found: list[str], e: Emitter) -> None:
    s = b.session
    r = c.resource
    s.header = {
        "traces": found,
        "services": sorted({v for v in c.services.values() if v}),
        "resource": {k: v for k, v in r.items() if isinstance(v, (str, int, float, bool))},
    }
    it = e.items
    items = range(len(it))
    roots = [n for n in items if it.what[n] == AGENT and e.lane[n] is None]
    tops = [n for n in items if it.what[n] != "log" and e.up[n] < 0]
    task = r.get("walkback.session.task")
    s.task = (
        task
        if isinstance(task, str)
        else next((it.task[n] or it.agent_name[n] for n in roots), "") or next((it.name[n] for n in tops), "")
    )
    status = r.get("walkback.session.status")
    if isinstance(status, str) and status:
        s.status = status
    elif items:
        s.status = "failed" if any(it.failed[n] for n in tops) else "completed"
