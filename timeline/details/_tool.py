"""A tool call (the intent) and its result (the outcome)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import BaseDetail
from ._edit import FileEdit


class ToolCall(BaseDetail):
    """A tool the agent called, with everything needed to replay it without the model."""

    kind: Literal["tool_call"] = Field(default="tool_call")
    """Event kind."""
    name: str
    """The tool."""
    call_id: str = ""
    """The source's id pairing the call with its result (``toolu_...``, ``call_...``)."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """The arguments as given (a string when the source stores them unparsed)."""
    target: str = ""
    """What it acts on: a file, a command, a URL."""
    command: str | None = None
    """A shell command, for tools that run one."""
    url: str | None = None
    """The address of a network call."""
    idempotency_key: str | None = None
    """The key an external call was sent with (recovery may reissue it with the same key)."""
    edit: FileEdit | None = None
    """The file change this call makes, if it changes a file."""


class ToolResult(BaseDetail):
    """What came back from a tool call: its output, an error, whether the effect was verified."""

    kind: Literal["tool_result"] = Field(default="tool_result")
    """Event kind."""
    call_id: str = ""
    """The id of the call it answers."""
    ok: bool | None = None
    """True: it worked; False: it failed or was refused; None: not said."""
    output: str = ""
    """The tool's output as text (what the model saw)."""
    error: str = ""
    """The error text, when it failed."""
    exit_code: int | None = None
    """A command's exit code."""
    verification: str = ""
    """How the effect was checked (a journal commit: the post hash, a check command)."""
    recovered: bool = False
    """Committed by crash recovery rather than by the agent."""
    edit: FileEdit | None = None
    """The file change as the result reports it (a patch applied, a file's text before)."""
