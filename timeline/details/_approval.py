"""Approvals: a request for permission and the decision that answered it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class ApprovalRequest(BaseDetail):
    """A request for a human's (or a policy's) permission before an action."""

    kind: Literal["approval_request"] = Field(default="approval_request")
    """Event kind."""
    tool: str = ""
    """The tool of the action to approve."""
    target: str = ""
    """What the action acts on."""
    reason: str = ""
    """Why it needs approval, or what the prompt said."""
    policy: str = ""
    """The approval policy in force, when the source says."""


class ApprovalDecision(BaseDetail):
    """The answer to an approval request."""

    kind: Literal["approval_decision"] = Field(default="approval_decision")
    """Event kind."""
    decision: str
    """``approved`` or ``denied`` (or the source's word: ``modify``, ``escalate`` ...)."""
    approver: str = ""
    """Who decided: a person, ``policy``, a hook."""
    reason: str = ""
    """The reason given."""
    inferred: bool = False
    """True when the source has no decision record and the importer inferred it (a rejected call)."""
