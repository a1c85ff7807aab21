"""Postmortem of a crashed foreign session: its unfinished tool calls against the workspace.

Any importer whose tool calls carry a :class:`~walkback.timeline.details.FileEdit` gets this for
free: a crash leaves the last calls ``pending``, :func:`analyze` classifies each one from what the
workspace holds now (``_classify``), and the resume brief says so in sentences built from facts
(``_brief``). :func:`apply` (``_act``) redoes what is safe to redo and journals every decision in
a walkback journal beside the session, never in the agent's own file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..details import RunStart, ToolCall
from ..kinds import KIND_INDEX
from ..session import Session
from ._act import apply, beside
from ._brief import make_brief
from ._classify import Verdict, classify
from ._hooked import HookedRecovery, recover_hooked

__all__ = [
    "CallFinding",
    "HookedRecovery",
    "Postmortem",
    "analyze",
    "apply",
    "beside",
    "recorded_workspace",
    "recover_hooked",
]


@dataclass
class CallFinding:
    """One unfinished tool call and the decision about it."""

    index: int
    """The call's event index in the session."""
    call: int
    """Its number among the session's tool calls (1-based)."""
    tool: str
    target: str
    finding: str
    """``applied``, ``not_applied``, ``torn`` or ``in_doubt`` (journal/recovery's words)."""
    action: str
    """``commit``, ``redo`` or ``ask_human``."""
    detail: str
    verdict: Verdict
    command: str | None = None
    url: str | None = None
    arguments: dict[str, Any] | str = field(default_factory=dict)
    outcome: str = ""
    """What :func:`apply` did about it."""
    done: bool = False
    """Settled: recorded as applied, or redone and verified (by this run or an earlier one)."""
    write_error: str = ""
    """Why the redo's write failed (``FILE: cannot write: ...``); a later run tries again."""

    @property
    def step(self) -> int:
        """The call's step, as the viewer numbers them."""
        return self.index + 1

    def to_json(self) -> dict[str, Any]:
        """The stable ``--json`` shape."""
        return {
            "step": self.step,
            "call": self.call,
            "tool": self.tool,
            "target": self.target,
            "finding": self.finding,
            "action": self.action,
            "detail": self.detail,
            "outcome": self.outcome,
        }


@dataclass
class Postmortem:
    """The findings of one foreign session and the resume brief."""

    source: str
    """The session as given (a file, a folder, ``file#part``)."""
    format: str
    task: str
    workspace: Path
    calls: int
    """Tool calls in the session."""
    completed_through: int
    """Every tool call up to this number has its result (0: not even the first)."""
    findings: list[CallFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    brief: str = ""
    journal: Path | None = None
    """The walkback journal the decisions went to (after :func:`apply`)."""
    applied: bool = False

    @property
    def needs_human(self) -> bool:
        """Something is left that only a person can settle (``walkback recover`` exits 3)."""
        return any(not f.done and f.action == "ask_human" for f in self.findings)

    @property
    def write_errors(self) -> list[str]:
        """The redos whose write failed, each naming its file (``walkback recover`` exits 4)."""
        return [f.write_error for f in self.findings if f.write_error]

    def all_findings(self) -> list[CallFinding]:
        """The findings (a foreign session has no subagent journals to add)."""
        return self.findings

    def to_json(self) -> dict[str, Any]:
        """``{format, session, findings, completed_through, calls, journal, brief}`` exactly."""
        return {
            "format": self.format,
            "session": self.source,
            "findings": [f.to_json() for f in self.findings],
            "completed_through": self.completed_through,
            "calls": self.calls,
            "journal": str(self.journal) if self.journal is not None else None,
            "brief": self.brief,
        }


WORKSPACE_KEYS = ("cwd", "workspace", "directory")
"""Header fields in which importers keep the session's working directory."""


def recorded_workspace(session: Session) -> str:
    """The working directory the session recorded: its start's, else its header's ("" if none)."""
    starts = session.indices_where(kind="run_start")
    d = session.detail(starts[0]) if starts else None
    if isinstance(d, RunStart) and d.workspace:
        return d.workspace
    for key in WORKSPACE_KEYS:
        value = session.header.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def analyze(session: Session, workspace: Path, *, source: str = "") -> Postmortem:
    """Classify every unfinished tool call of ``session`` against ``workspace``; change nothing."""
    t = session.table
    tool_call = KIND_INDEX["tool_call"]
    calls = [i for i in range(len(t)) if t.kind[i] == tool_call]
    number = {i: k + 1 for k, i in enumerate(calls)}
    pending = session.pending()
    pm = Postmortem(
        source=source,
        format=session.format,
        task=session.task,
        workspace=workspace,
        calls=len(calls),
        completed_through=number[pending[0]] - 1 if pending else len(calls),
    )
    recorded = recorded_workspace(session)
    for i in pending:
        d = session.detail(i)
        ev = session.event(i)
        call = d if isinstance(d, ToolCall) else ToolCall(name=ev.tool or ev.type, target=ev.target)
        v = classify(call, workspace, recorded)
        f = CallFinding(
            i, number[i], call.name, call.target or ev.target, v.finding, v.action, v.detail, v,
            command=call.command, url=call.url, arguments=call.arguments,
        )  # fmt: skip
        if v.effect == "none":
            pm.notes.append(
                f"Tool call {f.call} (step {f.step}) {f.tool} {f.target} had no result; {v.detail}."
            )
        else:
            pm.findings.append(f)
    pm.brief = make_brief(pm)
    return pm
