"""The minimal journaled agent loop: intent (durable) -> apply -> verify -> commit.

Entry points: :func:`start_run`, :func:`resume_run` and :func:`run_child` (what ``walkback agent``
calls); the pieces are :class:`~agent.harness.Harness`, the end-state tools in :mod:`agent.tools`,
the planners in :mod:`agent.planners`, approvals in :mod:`agent.approvals`, subagent fan-out in
:mod:`agent.subagents`, git checkpoints in :mod:`agent.checkpoints`, and the demo's release service
in :mod:`agent.demo_service`. The names load on first use (PEP 562): an agent's hook
(:mod:`agent.hooks`) runs on every tool call and must not pay for the loop it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from walkback.lazy import names

if TYPE_CHECKING:
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

_HOME = {
    **dict.fromkeys(("Action", "ChildSpec", "PlanError", "parse_action"), ".actions"),
    **dict.fromkeys(
        (
            "ApprovalPending",
            "ApprovalRequest",
            "Approver",
            "Decision",
            "Policy",
            "Rule",
            "approve_all",
            "deny_all",
        ),
        ".approvals",
    ),
    **dict.fromkeys(("Harness", "RunOptions"), ".harness"),
    **dict.fromkeys(
        ("PlannerOptions", "RunResult", "find_run", "resume_run", "run_child", "runs_root", "start_run"),
        ".runs",
    ),
    **dict.fromkeys(("Task", "load_task", "make_workspace"), ".task"),
}
"""Each public name -> the module that defines it."""

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


__getattr__ = names(__name__, globals(), _HOME)
