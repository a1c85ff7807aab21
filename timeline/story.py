"""The story of a session as a person tells it: where it crashed, how each agent fared, and which
step numbers need an agent name to be unambiguous. Pure functions over a :class:`Session`.

A crash leaves no record of its own: it is the gap between the last thing an agent wrote and the
recovery records written when the run was resumed (or the end of a run that was never resumed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .details import Recovery, RunEnd
from .kinds import KIND_INDEX, PLACEHOLDER
from .query import columns
from .session import Session

REPAIRS = (KIND_INDEX["recovery"],)
"""Kinds written when a crashed run is resumed."""


@dataclass(frozen=True)
class Crash:
    """One moment the run stopped without ending: after event ``after``."""

    after: int
    """Index of the last event written before the run stopped."""
    agents: tuple[str, ...]
    """The agents that stopped there."""
    running: tuple[int, ...]
    """Tool calls that were under way (no result when the run stopped)."""
    resumed: int | None
    """Index of the first record written on resuming (a recovery decision or brief), if any."""

    def text(self, session: Session, *, short: bool = False) -> str:
        """One sentence for the chart's hover and the Recovery tab (``short``: for the step list,
        without the targets)."""
        if self.running:
            what = "; ".join(_call(session, i, short=short) for i in self.running[:3])
            head = f"crash: the run stopped while {what} was running"
        else:
            head = "crash: the run stopped here"
        names = ", ".join(self.agents[:6])
        tail = f" (agents {names})" if len(self.agents) > 1 else (f" (agent {names})" if names else "")
        if self.resumed is not None:
            return f"{head}{tail}; resumed at step {self.resumed + 1}"
        return f"{head}{tail}; not recovered yet"


def _call(session: Session, i: int, *, short: bool = False) -> str:
    ev = session.event(i)
    who = f"{ev.agent}:{ev.lsn}" if ev.lsn is not None else ev.agent
    target = "" if short else (ev.target if len(ev.target) <= 60 else ev.target[:59] + "…")
    return " ".join(p for p in (f"step {i + 1} ({who})", ev.tool, target) if p)


def _agent_rows(session: Session) -> dict[str, np.ndarray]:
    c = columns(session)
    out: dict[str, np.ndarray] = {}
    for a in session.agents:
        code = session.table.pool.find(a)
        if code is not None:
            out[a] = np.flatnonzero(c.agent == code)
    return out


def crashes(session: Session) -> list[Crash]:
    """Every crash of the session, in order.

    For each agent, each run of recovery records after other events is a resume, and the agent's
    last event before it is where it stopped. Stops whose resumes overlap are one crash (one kill
    stops every agent of the run), placed after the last of their events. A crashed run that was
    never resumed stopped after its last event.
    """
    c = columns(session)
    if not c.n:
        return []
    repair = np.isin(c.kind, REPAIRS) & (c.flags & PLACEHOLDER == 0)
    stops: list[tuple[int, int, str]] = []  # (last event before, first repair, agent)
    for agent, rows in _agent_rows(session).items():
        if not len(rows):
            continue
        rep = repair[rows]
        starts = np.flatnonzero(rep[1:] & ~rep[:-1]) + 1  # a repair right after a normal event
        stops += [(int(rows[k - 1]), int(rows[k]), agent) for k in starts]
    stops.sort()
    groups: list[list[tuple[int, int, str]]] = []
    for stop in stops:
        if groups and stop[0] < min(s[1] for s in groups[-1]):
            groups[-1].append(stop)
        else:
            groups.append([stop])
    out = [
        Crash(
            after=max(s[0] for s in g),
            agents=tuple(dict.fromkeys(s[2] for s in g)),
            running=_running(session, min(s[1] for s in g)),
            resumed=min(s[1] for s in g),
        )
        for g in groups
    ]
    if session.status == "crashed":
        pending = tuple(int(i) for i in np.flatnonzero(_pending(session)))
        agents = tuple(dict.fromkeys(session.event(i).agent for i in pending)) or (
            (session.event(c.n - 1).agent,)
        )
        out.append(Crash(after=_last_real(session), agents=agents, running=pending[-3:], resumed=None))
    return out


def _pending(session: Session) -> np.ndarray:
    c = columns(session)
    code = session.table.pool.find("pending")
    if code is None:
        return np.zeros(c.n, dtype=bool)
    return (c.kind == KIND_INDEX["tool_call"]) & (c.status == code)


def _last_real(session: Session) -> int:
    """The last event that is not a placeholder (a torn tail's row comes after the crash)."""
    c = columns(session)
    real = np.flatnonzero(c.flags & PLACEHOLDER == 0)
    return int(real[-1]) if len(real) else c.n - 1


def _running(session: Session, resumed: int) -> tuple[int, ...]:
    """The calls the recovery records from ``resumed`` on decide about (the interrupted ones)."""
    c = columns(session)
    out: list[int] = []
    for j in range(resumed, min(c.n, resumed + 200)):
        if c.kind[j] not in REPAIRS:
            continue
        ref = int(c.ref[j])
        if 0 <= ref < resumed and c.kind[ref] == KIND_INDEX["tool_call"] and ref not in out:
            out.append(ref)
    return tuple(out)


# -- per-agent history ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Moment:
    """One line of an agent's history: what happened at which step."""

    step: int
    """Event index (the step shown is ``step + 1``)."""
    what: str
    """``started``, ``spawned``, ``crashed``, ``recovered``, ``completed`` ..."""
    note: str = ""


@dataclass
class AgentStory:
    """An agent's life in the session, from its first event to its outcome."""

    agent: str
    parent: str | None
    events: int
    moments: list[Moment] = field(default_factory=list)
    outcome: str = ""
    """The last word: ``completed``, ``failed``, ``crashed`` or ``no end recorded``."""

    @property
    def line(self) -> str:
        """``crashed at step 12 → recovered at step 13 → completed``."""
        parts = [f"{m.what} at step {m.step + 1}" for m in self.moments if m.what != "started"]
        if self.outcome and not (self.moments and self.moments[-1].what == self.outcome):
            parts.append(self.outcome)
        return " → ".join(parts) if parts else self.outcome


def agent_stories(session: Session, crash_list: list[Crash] | None = None) -> list[AgentStory]:
    """Each agent's history: start, the crashes it was part of, its recoveries, its end."""
    crash_list = crashes(session) if crash_list is None else crash_list
    c = columns(session)
    end = KIND_INDEX["run_end"]
    out: list[AgentStory] = []
    for agent, rows in _agent_rows(session).items():
        a = session.agents[agent]
        story = AgentStory(agent=agent, parent=a.parent, events=len(rows))
        if not len(rows):
            story.outcome = a.outcome or "no events"
            out.append(story)
            continue
        story.moments.append(Moment(int(rows[0]), "started"))
        for cr in crash_list:
            if agent not in cr.agents:
                continue
            mine = [i for i in cr.running if session.event(i).agent == agent]
            last = int(rows[np.searchsorted(rows, cr.after, side="right") - 1])
            note = "; ".join(_call(session, i) for i in mine) if mine else ""
            story.moments.append(Moment(mine[0] if mine else last, "crashed", note))
            if cr.resumed is not None:
                back = rows[rows >= cr.resumed]
                first = int(back[0]) if len(back) else cr.resumed
                story.moments.append(Moment(first, "recovered", _recovery_note(session, first)))
        ends = rows[c.kind[rows] == end]
        status = (a.outcome or "").strip() or (_end_status(session, int(ends[-1])) if len(ends) else "")
        if len(ends):
            story.moments.append(Moment(int(ends[-1]), status or "ended"))
            story.outcome = status or "ended"
        elif session.status == "crashed" and any(agent in x.agents for x in crash_list if x.resumed is None):
            story.outcome = "crashed"
        else:
            story.outcome = status or ("completed" if session.status == "completed" else "no end recorded")
        out.append(story)
    return out


def _end_status(session: Session, i: int) -> str:
    d = session.detail(i)
    return d.status if isinstance(d, RunEnd) else ""


def _recovery_note(session: Session, i: int) -> str:
    d = session.detail(i)
    if isinstance(d, Recovery):
        if d.finding:
            return " → ".join(p for p in (d.finding.replace("_", " "), d.action.replace("_", " ")) if p)
        if d.brief:
            return "resume brief recorded"
    return ""


# -- lsn numbers ---------------------------------------------------------------------------------
def lsn_is_shared(session: Session) -> bool:
    """Whether lsn numbers repeat across agents (then a step is named ``agent:lsn``)."""
    return len(session.agents) > 1


def where(session: Session, i: int, *, shared: bool) -> str:
    """``auth:6`` when lsns repeat across agents, ``6`` otherwise, ``""`` without an lsn."""
    ev = session.event(i)
    if ev.lsn is None:
        return ev.agent if shared else ""
    return f"{ev.agent}:{ev.lsn}" if shared else str(ev.lsn)


def lsn_matches(session: Session, lsn: int) -> list[tuple[str, int]]:
    """Every ``(agent, index)`` whose journal has ``lsn`` (to make ``g 6`` unambiguous)."""
    out = []
    for agent in session.agents:
        i = session.index_of_lsn(lsn, agent)
        if i is not None:
            out.append((agent, i))
    return out
