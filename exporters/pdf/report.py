"""What the compliance report says, as plain data built from a session and its bundle's verification.

The report summarises instead of printing every event (a 100,000-event session gives a report of
a few dozen pages): counts come from the table's columns, details are built only for the events
a section lists (file changes, commands, approvals, recovery, damage), and each list is cut at a
limit with a pointer to the bundle that carries everything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from walkback.timeline import details as d
from walkback.timeline.changes import change_view, unified
from walkback.timeline.facts import details, measures
from walkback.timeline.kinds import FILE, KIND_INDEX, KINDS, PLACEHOLDER, PROBLEM_STATUSES
from walkback.timeline.query import columns, file_rows
from walkback.timeline.session import Session
from walkback.timeline.summary import summary
from walkback.timeline.views import Approval, approval_counts, approvals, file_change

MAX_CHANGES = 200
"""File changes printed with their diff; the rest are listed in the bundle."""
MAX_FILES = 2000
"""Changed files listed (a session may touch more: the bundle lists every one)."""
MAX_DIFF_LINES = 60
MAX_COMMANDS = 400
MAX_APPROVALS = 1000
MAX_PROBLEMS = 200
TEXT = 400
"""Characters of one free-text cell (a command's output, a reason) printed."""


@dataclass
class Evidence:
    """The signed bundle embedded in the report, and what verifying it found."""

    file_name: str
    sha256: str
    size: int
    signed: bool
    verified: bool
    keyid: str | None
    merkle_root: str
    merkle_size: int
    checks: list[tuple[str, bool, str]]
    redactions: list[dict[str, Any]]
    in_archives: int
    """How many of ``redactions`` are inside an archive's members (their leaves are not in the tree)."""
    created: str


@dataclass
class Change:
    step: int
    agent: str
    path: str
    tool: str
    operation: str
    pre: str
    post: str
    status: str
    diff: list[tuple[str, str]]
    cut: int
    """Diff lines not printed (0: the whole diff is here)."""
    where: str


@dataclass
class Command:
    step: int
    agent: str
    command: str
    exit_code: str
    status: str
    output: str


@dataclass
class Problem:
    step: int
    agent: str
    kind: str
    status: str
    what: str
    where: str


@dataclass
class Lane:
    """One agent's events on the timeline chart (times in seconds since the session start)."""

    agent: str
    parent: str | None
    marks: list[tuple[float, str]]
    """``(time, category)``: ``call``, ``model``, ``message``, ``approval``, ``problem``, ``other``."""
    start: float
    end: float


@dataclass
class Report:
    """Everything the template prints (all of it untrusted text: the template escapes it)."""

    title: str
    task: str
    format: str
    status: str
    recovered: bool
    start: str
    end: str
    duration: str
    generated: str
    generator: str
    evidence: Evidence
    agents: list[dict[str, Any]]
    figures: list[tuple[str, str]]
    kinds: list[tuple[str, int]]
    lanes: list[Lane]
    span: float
    changes: list[Change]
    changes_total: int
    files: list[dict[str, Any]]
    commands: list[Command]
    commands_total: int
    approvals: list[Approval]
    approval_counts: dict[str, int]
    findings: list[dict[str, str]]
    brief: str
    problems: list[Problem]
    problems_total: int
    integrity: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _relative(session: Session, root: Path | None) -> Callable[[int], str]:
    """``where(i)`` naming the source as the bundle does (``journal.jsonl:12``), not by a temp path."""

    def where(i: int) -> str:
        text = session.where(i)
        if root is not None:
            text = text.replace(str(root.resolve()) + "/", "").replace(str(root) + "/", "")
        return text

    return where


def _time(ts: float | None) -> str:
    if ts is None or not np.isfinite(ts):
        return "unknown"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(seconds: float | None) -> str:
    if seconds is None or not np.isfinite(seconds):
        return "unknown"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h} h {m:02d} min {sec:02d} s" if h else (f"{m} min {sec:02d} s" if m else f"{seconds:.1f} s")


def _cut(text: str, limit: int = TEXT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def build(
    session: Session, evidence: Evidence, *, generated: datetime, version: str, root: Path | None = None
) -> Report:
    """The report of ``session`` whose bundle is ``evidence``; sources are named relative to
    ``root`` (where the bundle's files were extracted), as the bundle names them."""
    where = _relative(session, root)
    c = columns(session)
    finite = c.ts[np.isfinite(c.ts)]
    t0 = float(finite.min()) if len(finite) else None
    t1 = float(finite.max()) if len(finite) else None
    items = approvals(session)
    changes, files, changes_total = _changes(session, where)
    commands, commands_total = _commands(session)
    problems, problems_total = _problems(session, where)
    findings, brief, notes = _recovery(session)
    status = session.status + (" (recovered)" if session.recovered else "")
    return Report(
        title="Agent session report",
        task=session.task,
        format=session.format,
        status=status,
        recovered=session.recovered,
        start=_time(t0),
        end=_time(t1),
        duration=_duration(t1 - t0 if t0 is not None and t1 is not None else None),
        generated=generated.strftime("%Y-%m-%d %H:%M:%S UTC"),
        generator=f"walkback {version}",
        evidence=evidence,
        agents=_agents(session),
        figures=_figures(session, items, changes_total, commands, commands_total, problems_total),
        kinds=sorted(session.kinds().items(), key=lambda kv: -kv[1]),
        lanes=_lanes(session, t0),
        span=(t1 - t0) if t0 is not None and t1 is not None and t1 > t0 else 1.0,
        changes=changes,
        changes_total=changes_total,
        files=files[:MAX_FILES],
        commands=commands,
        commands_total=commands_total,
        approvals=items[:MAX_APPROVALS],
        approval_counts=approval_counts(items),
        findings=findings,
        brief=brief,
        problems=problems,
        problems_total=problems_total,
        integrity=_integrity(session),
        notes=notes,
    )


def _agents(session: Session) -> list[dict[str, Any]]:
    out = []
    for a in session.agents.values():
        spawned = f"step {a.spawned_by + 1}" if a.spawned_by is not None else ""
        out.append(
            {
                "id": a.id,
                "label": a.label,
                "parent": a.parent or "",
                "spawned": spawned,
                "task": _cut(a.task, 200),
                "events": a.events,
                "outcome": a.outcome or "",
            }
        )
    return out


def _figures(
    session: Session,
    items: list[Approval],
    changes: int,
    commands: list[Command],
    n_commands: int,
    problems: int,
) -> list[tuple[str, str]]:
    kinds = session.kinds()
    counts = approval_counts(items)
    m = measures(session)
    tokens_in, tokens_out = sum(n for n in m.input if n > 0), sum(n for n in m.output if n > 0)
    failed = sum(1 for cmd in commands if cmd.status in ("failed", "denied"))
    return [
        ("events", f"{len(session):,}"),
        ("agents", f"{len(session.agents):,}"),
        ("model calls", f"{kinds.get('model_result', kinds.get('model_call', 0)):,}"),
        ("tool calls", f"{kinds.get('tool_call', 0):,}"),
        ("file changes", f"{changes:,} in {len(file_rows(session)):,} files"),
        ("commands run", f"{n_commands:,}" + (f" ({failed} failed)" if failed else "")),
        (
            "approvals",
            f"{counts['requested']} requested: {counts['approved']} approved, "
            f"{counts['denied']} denied, {counts['unanswered']} unanswered",
        ),
        ("tokens", f"{tokens_in:,} in / {tokens_out:,} out" if tokens_in or tokens_out else "not recorded"),
        ("problems", f"{problems:,}"),
        (
            "recovery",
            "recovered after a crash"
            if session.recovered
            else ("crashed, not recovered" if session.status == "crashed" else "none needed"),
        ),
    ]


CATEGORY = {
    "tool_call": "call",
    "tool_result": "call",
    "model_call": "model",
    "model_result": "model",
    "message": "message",
    "approval_request": "approval",
    "approval_decision": "approval",
    "recovery": "problem",
    "integrity": "problem",
    "error": "problem",
}


def _lanes(session: Session, t0: float | None) -> list[Lane]:
    """Per agent: its events as marks (thinned to at most 400 per lane: the chart shows density)."""
    c = columns(session)
    bad = {code for s in PROBLEM_STATUSES if (code := session.table.pool.find(s)) is not None}
    lanes = []
    for a in list(session.agents.values())[:24]:
        code = session.table.pool.find(a.id)
        rows = (
            np.flatnonzero((c.agent == code) & np.isfinite(c.ts))
            if code is not None
            else np.zeros(0, np.int64)
        )
        if t0 is None or not len(rows):
            lanes.append(Lane(a.id, a.parent, [], 0.0, 0.0))
            continue
        step = max(1, len(rows) // 400)
        shown = set(rows[::step].tolist()) | set(rows[np.isin(c.status[rows], list(bad))].tolist())
        marks = []
        for i in sorted(shown):
            cat = "problem" if c.status[i] in bad else CATEGORY.get(KINDS[c.kind[i]], "other")
            marks.append((float(c.ts[i] - t0), cat))
        lanes.append(Lane(a.id, a.parent, marks, float(c.ts[rows[0]] - t0), float(c.ts[rows[-1]] - t0)))
    return lanes


def _changes(
    session: Session, where: Callable[[int], str]
) -> tuple[list[Change], list[dict[str, Any]], int]:
    """The first file changes with their diffs, and a per-file table of every changed path (its
    first and last change read, not all of them: a big session has tens of thousands)."""
    c = columns(session)
    calls = np.flatnonzero((c.kind == KIND_INDEX["tool_call"]) & (c.flags & FILE != 0))
    rows = file_rows(session)
    files = []
    for path, idx in rows.items():
        first, last = file_change(session, int(idx[0])), file_change(session, int(idx[-1]))
        files.append({"path": path, "changes": len(idx),
                      "first_pre": (first.pre if first else None) or "unknown",
                      "last_post": (last.post if last else None) or "unknown"})
    out: list[Change] = []
    for i in map(int, calls[:MAX_CHANGES]):
        fc = file_change(session, i)
        if fc is None:
            continue
        ev = session.event(i)
        view = change_view(session, i, history=rows.get(fc.path))
        lines = unified(view) if view is not None and not view.binary and not view.too_large else []
        out.append(Change(
            step=i + 1, agent=ev.agent, path=fc.path, tool=fc.tool, operation=fc.edit.operation,
            pre=fc.pre or "unknown", post=fc.post or "unknown", status=ev.status,
            diff=lines[:MAX_DIFF_LINES], cut=max(0, len(lines) - MAX_DIFF_LINES), where=where(i),
        ))
    return out, sorted(files, key=lambda f: f["path"]), int(len(calls))


def _commands(session: Session) -> tuple[list[Command], int]:
    """Tool calls that run a command, with the exit code their result gives."""
    calls = np.flatnonzero(
        (columns(session).kind == KIND_INDEX["tool_call"]) & (columns(session).flags & FILE == 0)
    )
    out: list[Command] = []
    total = 0
    for i, x in details(session, calls):
        if not isinstance(x, d.ToolCall) or not x.command:
            continue
        total += 1
        if len(out) >= MAX_COMMANDS:
            continue
        done = session.completion_of(i)
        res = session.detail(done) if done is not None else None
        code = res.exit_code if isinstance(res, d.ToolResult) else None
        output = (res.error or res.output) if isinstance(res, d.ToolResult) else ""
        ev = session.event(i)
        out.append(
            Command(
                step=i + 1,
                agent=ev.agent,
                command=_cut(x.command, 300),
                exit_code="" if code is None else str(code),
                status=ev.status if done is not None or ev.status else "pending",
                output=_cut(output),
            )
        )
    return out, total


def _problems(session: Session, where: Callable[[int], str]) -> tuple[list[Problem], int]:
    """Failed, pending, in-doubt, torn, denied and unreadable events, and integrity notes."""
    c = columns(session)
    bad = np.array([i for s in PROBLEM_STATUSES if (i := session.table.pool.find(s)) is not None], np.uint32)
    rows = np.flatnonzero(np.isin(c.status, bad) | (c.flags & PLACEHOLDER != 0))
    out = []
    for i, x in details(session, rows[:MAX_PROBLEMS]):
        ev = session.event(i)
        out.append(
            Problem(
                step=i + 1,
                agent=ev.agent,
                kind=ev.kind,
                status=ev.status or "",
                what=summary(ev, x, 200),
                where=where(i),
            )
        )
    return out, int(len(rows))


def _recovery(session: Session) -> tuple[list[dict[str, str]], str, list[str]]:
    """Recovery decisions the session records, its resume brief, and what a crashed run still needs."""
    findings = [
        {
            "lsn": str(f.lsn),
            "target": f.target,
            "tool": f.tool,
            "finding": f.finding,
            "action": f.action,
            "detail": _cut(f.detail, 300),
        }
        for f in session.recovery_findings
    ]
    notes = []
    pending = session.pending()
    if session.status == "crashed" and not session.recovered:
        notes.append(
            f"The session ended in a crash and no recovery is recorded; {len(pending)} tool call(s) "
            "have no result. `walkback recover` classifies them against the workspace."
        )
    elif pending:
        notes.append(f"{len(pending)} tool call(s) have no recorded result.")
    return findings, session.brief, notes


def _integrity(session: Session) -> dict[str, Any]:
    integ = session.integrity
    return {
        "chain": integ.chain,
        "badge": integ.badge,
        "torn_tail": integ.torn_tail,
        "first_bad_lsn": integ.first_bad_lsn,
        "corrupt": [
            {
                "line": str(x.get("line", "")),
                "lsn": str(x.get("lsn", "")),
                "reason": str(x.get("reason", "")),
                "file": Path(str(x.get("file", ""))).name,
            }
            for x in integ.corrupt[:MAX_PROBLEMS]
        ],
        "skipped": len(integ.skipped),
    }
