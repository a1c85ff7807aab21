"""The run itself: its start (task, workspace), its plan, its end."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import BaseDetail


class RunStart(BaseDetail):
    """The start of a run or session."""

    kind: Literal["run_start"] = Field(default="run_start")
    """Event kind."""
    task: str = ""
    """What the agent was asked to do."""
    producer: str = ""
    """The program that wrote the log, with its version."""
    workspace: str = ""
    """The working directory or repository."""
    base: str = ""
    """The git commit the run started from."""
    model: str = ""
    """The model, when the source names one at the start."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Other facts of the start worth showing (branch, approval policy, sandbox)."""


class Plan(BaseDetail):
    """A plan or a change of plan (a reframe)."""

    kind: Literal["plan"] = Field(default="plan")
    """Event kind."""
    text: str = ""
    """The plan as stated."""
    steps: list[str] = Field(default_factory=list)
    """Its steps, when listed."""


class RunEnd(BaseDetail):
    """The end of a run: completed, failed, cancelled, aborted."""

    kind: Literal["run_end"] = Field(default="run_end")
    """Event kind."""
    status: str = ""
    """How it ended."""
    reason: str = ""
    """Why, when said (a final message, an abort reason)."""
