"""Outcomes and findings: a test, a recovery decision, an integrity note, an error."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import BaseDetail


class TestResult(BaseDetail):
    """A test or check run and its verdict."""

    __test__ = False  # not a pytest test class
    kind: Literal["test_result"] = Field(default="test_result")
    """Event kind."""
    command: str = ""
    """What was run."""
    passed: bool | None = None
    exit_code: int | None = None
    output: str = ""


class Recovery(BaseDetail):
    """A recovery decision about one unfinished intent (journal/recovery words)."""

    kind: Literal["recovery"] = Field(default="recovery")
    """Event kind."""
    finding: str = ""
    """``applied``, ``not_applied``, ``torn``, ``in_doubt`` ..."""
    action: str = ""
    """``commit``, ``redo``, ``restore_redo``, ``reissue``, ``ask_human`` ..."""
    target: str = ""
    tool: str = ""
    detail: str = ""
    """Why, in the recovery's own words."""
    brief: str = ""
    """The resume brief recorded with the decision, if any."""


class Integrity(BaseDetail):
    """What the reader says about the record itself: a repair, a continuation, damage."""

    kind: Literal["integrity"] = Field(default="integrity")
    """Event kind."""
    what: str = ""
    """``torn tail repaired``, ``continued from a segment``, ``damaged record`` ..."""
    reason: str = ""
    """Why a record could not be read (for a placeholder row)."""
    detail: str = ""
    """More: the broken copy kept, the segment named."""


class Error(BaseDetail):
    """An error the agent or its harness reported."""

    kind: Literal["error"] = Field(default="error")
    """Event kind."""
    message: str = ""
    error_type: str = ""
