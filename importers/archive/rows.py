"""A session as the archive's rows: one for the session, one per event (its searchable text), one
per file change (what blame matches the file's lines against).

Everything is read from the typed details (never a format's field names), so every importer's
sessions index alike; the details are built in bulk (:func:`walkback.timeline.facts.details`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
from walkback.timeline import details as d
from walkback.timeline.facts import details
from walkback.timeline.kinds import FILE, KIND_INDEX, KINDS, PROBLEM_STATUSES
from walkback.timeline.query import columns
from walkback.timeline.session import Session
from walkback.timeline.summary import summary
from walkback.timeline.views import FileChange, approvals, file_change

from ..folders import entry_id
from .prices import estimate

TEXT_CHARS = 4000
"""Characters of one event's text that search finds it by (a message's first pages)."""
ARGUMENT_CHARS = 1000
"""Characters of a tool call's arguments kept in its text, beyond its command and target."""


@dataclass
class Rows:
    """One session in the archive's tables (:mod:`.store` names their columns)."""

    session: dict[str, Any]
    events: list[tuple[Any, ...]]
    changes: list[tuple[Any, ...]]
    usage: list[tuple[Any, ...]]
    """Tokens and cost per model."""


def session_rows(session: Session, path: Path, agent: str) -> Rows:
    """The session's rows. Its id is the viewer's id of ``path``
    (:func:`~walkback.importers.folders.entry_id`), so a hit links to the viewer's step."""
    c = columns(session)
    sid = entry_id(path)
    workspace = str(session.header.get("workspace") or session.header.get("cwd") or "")
    pool = session.table.pool.values
    agents = [pool[a] for a in c.agent.tolist()]
    tools = [pool[t] for t in c.tool.tolist()]
    targets = [pool[t] for t in c.target.tolist()]
    statuses = [pool[s] for s in c.status.tolist()]
    stamps = [None if t != t else t for t in c.ts.tolist()]  # NaN: no time
    texts = [""] * len(session)
    costed = False
    tokens: dict[str, list[float]] = {}
    """Model -> input tokens, output tokens, recorded cost."""
    for i, detail in details(session, np.flatnonzero(_worded(c.kind, c.status, session))):
        texts[i] = _text(session, i, detail)
        if isinstance(detail, d.ModelResult):
            counts = tokens.setdefault(detail.model, [0, 0, 0.0])
            counts[0] += detail.usage.input_tokens or 0
            counts[1] += detail.usage.output_tokens or 0
            if detail.cost is not None:
                counts[2] += detail.cost
                costed = True
    types = [pool[t] for t in c.type.tolist()]
    other = KIND_INDEX["other"]
    events = [
        (
            sid,
            i + 1,
            stamps[i],
            KINDS[k],
            agents[i],
            tools[i],
            targets[i],
            statuses[i],
            texts[i] or (types[i] if k == other else ""),
            f"{agent} {agents[i]} {tools[i]}",
        )
        for i, k in enumerate(c.kind.tolist())
    ]
    approved = _approvals(session)
    changes = []
    for fc in _changes(session):
        where = relative(fc.path, workspace)
        changes.append(
            (
                sid,
                fc.event + 1,
                stamps[fc.event],
                agents[fc.event],
                fc.tool,
                where,
                PurePosixPath(where).name,
                fc.pre,
                fc.post,
                written(fc),
                approved.get(fc.event, ""),
            )
        )
    unnamed = tokens.pop("", None)
    if not costed:
        for model, counts in tokens.items():
            counts[2] = estimate(model, int(counts[0]), int(counts[1]))
    elif unnamed is not None:  # a cost the source recorded without naming the model
        tokens.setdefault("unknown", [0, 0, 0.0])[2] += unnamed[2]
    known = [t for t in stamps if t is not None]
    start = min(known) if known else None
    day = time.strftime("%Y-%m-%d", time.gmtime(start)) if start is not None else ""
    usage = [
        (sid, day, agent, model, int(n_in), int(n_out), round(cost, 6), int(not costed))
        for model, (n_in, n_out, cost) in sorted(tokens.items())
    ]
    row = {
        "id": sid,
        "path": os.path.abspath(path),
        "format": session.format,
        "agent": agent,
        "workspace": workspace,
        "task": " ".join(session.task.split())[:500],
        "start_ts": start,
        "end_ts": max(known) if known else None,
        "day": day,
        "status": session.status,
        "crashed": int(session.status == "crashed" or session.recovered),
        "models": ",".join(u[3] for u in usage),
        "input_tokens": sum(u[4] for u in usage),
        "output_tokens": sum(u[5] for u in usage),
        "cost": round(sum(u[6] for u in usage), 6),
        "cost_estimated": int(not costed),
        "events": len(session),
        "failures": sum(1 for s in statuses if s in PROBLEM_STATUSES),
        "files_changed": len({ch[5] for ch in changes}),
    }
    return Rows(row, events, changes, usage)


_WORDLESS = np.array([KIND_INDEX[k] for k in ("tool_result", "model_call", "other")])


def _worded(kind: np.ndarray, status: np.ndarray, session: Session) -> np.ndarray:
    """The events whose details are read: all but a tool's results that went well (a file read,
    a command's output: what the session saw, not what it did), model calls (their prompt is a
    message) and records of no known kind (found by their type, the column)."""
    known = session.table.pool.index
    problems = np.isin(status, [known[s] for s in PROBLEM_STATUSES if s in known])
    return ~np.isin(kind, _WORDLESS) | ((kind == KIND_INDEX["tool_result"]) & problems)


def _text(session: Session, i: int, x: d.Detail) -> str:
    """What search finds event ``i`` by: what was said, asked, run, touched, or went wrong (tool
    outputs are left out: a file's content read is not what this session did)."""
    if isinstance(x, d.Message):
        text = x.text or x.thinking
    elif isinstance(x, d.ToolCall):
        args = x.arguments if isinstance(x.arguments, str) else " ".join(_strings(x.arguments))
        edited = x.edit.path if x.edit else ""
        parts = [x.name, x.target, x.command or "", x.url or "", edited, args[:ARGUMENT_CHARS]]
        text = " ".join(dict.fromkeys(p for p in parts if p))
    elif isinstance(x, d.ToolResult):
        text = x.error if x.error or x.ok is False else ""
        if x.ok is False and not text:
            text = x.output
    else:
        text = summary(session.event(i), x, limit=TEXT_CHARS)
    return text[:TEXT_CHARS]


def _strings(value: Any) -> list[str]:
    """The string leaves of a JSON value, in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _changes(session: Session) -> list[FileChange]:
    c = columns(session)
    calls = np.flatnonzero((c.kind == KIND_INDEX["tool_call"]) & (c.flags & FILE != 0))
    return [fc for i in calls.tolist() if (fc := file_change(session, i)) is not None]


def _approvals(session: Session) -> dict[int, str]:
    """Tool call index -> the decision and approver of the approval that gated it."""
    return {
        a.gated: " ".join(p for p in (a.decision or "", a.approver or "") if p)
        for a in approvals(session)
        if a.gated is not None
    }


def relative(path: str, workspace: str) -> str:
    """``path`` relative to ``workspace`` when it lies in it, else as given (POSIX separators)."""
    p = PurePosixPath(path.replace("\\", "/"))
    if workspace and p.is_absolute():
        try:
            return str(p.relative_to(PurePosixPath(workspace)))
        except ValueError:
            return str(p)
    return str(p)


def written(fc: FileChange) -> str:
    """The text a change put in its file: a whole file's new content, an edit's replacements (in
    order, one after the other), or a patch's added lines."""
    e = fc.edit
    if e.post_text is not None and not (e.new_string or e.edits):
        return e.post_text
    if e.edits:
        return "\n".join(new for _, new in e.edits)
    if e.new_string is not None:
        return e.new_string
    if e.patch:
        return "\n".join(
            line[1:] for line in e.patch.splitlines() if line.startswith("+") and not line.startswith("+++")
        )
    return e.post_text or ""
