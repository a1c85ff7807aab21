"""The minimal journaled agent loop: intent (durable) -> apply -> verify -> commit.

Entry points: :func:`start_run`, :func:`resume_run` and :func:`run_child` (what ``walkback agent``
calls); the pieces are :class:`~agent.harness.Harness`, the end-state tools in :mod:`agent.tools`,
the planners in :mod:`agent.planners`, approvals in :mod:`agent.approvals`, subagent fan-out in
:mod:`agent.subagents`, git checkpoints in :mod:`agent.checkpoints`, and the demo's release service
in :mod:`agent.demo_service`.
"""

from __future__ import annotations

from .actions import Action, ChildSpec, PlanError, parse_action
from .approvals import (
    ApprovalPending,
    ApprovalRequest,
    Approver,
    Decision,
    Policy,
    Rule,
    approve_all,
    deny_all,
)
from .harness import Harness, RunOptions
from .runs import PlannerOptions, RunResult, find_run, resume_run, run_child, runs_root, start_run
from .task import Task, load_task, make_workspace

__all__ = [
    "Action",
    "ApprovalPending",
    "ApprovalRequest",
    "Approver",
    "ChildSpec",
    "Decision",
    "Harness",
    "PlanError",
    "PlannerOptions",
    "Policy",
    "Rule",
    "RunOptions",
    "RunResult",
    "Task",
    "approve_all",
    "deny_all",
    "find_run",
    "load_task",
    "make_workspace",
    "parse_action",
    "resume_run",
    "run_child",
    "runs_root",
    "start_run",
]
