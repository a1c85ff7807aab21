"""Subagents: a spawn and the end of a child agent."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class AgentSpawn(BaseDetail):
    """A child agent started by this one."""

    kind: Literal["agent_spawn"] = Field(default="agent_spawn")
    """Event kind."""
    child: str = ""
    """The child agent's id in this session."""
    task: str = ""
    """What the child was asked to do."""
    agent_type: str = ""
    """The kind of subagent, when the source says (``Explore``, a role)."""


class AgentEnd(BaseDetail):
    """A child agent finished."""

    kind: Literal["agent_end"] = Field(default="agent_end")
    """Event kind."""
    child: str = ""
    """The child agent's id."""
    outcome: str = ""
    """``completed``, ``failed`` ..."""
    summary: str = ""
    """What the child reported back."""
