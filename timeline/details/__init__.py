"""Typed details: the content of one event, one small tagged model per kind (as inspect_ai's
``event/``). An importer builds them lazily from raw records (:meth:`Session.detail`); every view
and exporter reads these instead of a format's field names."""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import Field

from ._agent import AgentEnd, AgentSpawn
from ._approval import ApprovalDecision, ApprovalRequest
from ._base import BaseDetail
from ._edit import ABSENT, FileEdit, text_hash
from ._message import Message
from ._model import ModelCall, ModelResult, Usage
from ._other import Other
from ._outcome import Error, Integrity, Recovery, TestResult
from ._run import Plan, RunEnd, RunStart
from ._state import Branch, Checkpoint, Compaction
from ._tool import ToolCall, ToolResult

Detail: TypeAlias = (
    RunStart
    | Plan
    | Message
    | ModelCall
    | ModelResult
    | ToolCall
    | ToolResult
    | ApprovalRequest
    | ApprovalDecision
    | AgentSpawn
    | AgentEnd
    | Checkpoint
    | TestResult
    | Recovery
    | Compaction
    | Branch
    | Integrity
    | Error
    | RunEnd
    | Other
)
"""Every detail; its ``kind`` is the event's kind (:data:`timeline.kinds.KINDS`)."""
DiscriminatedDetail: TypeAlias = Annotated[Detail, Field(discriminator="kind")]
"""Parse details with this (a keyed lookup on ``kind``), never against the bare union."""

__all__ = [
    "ABSENT",
    "AgentEnd",
    "AgentSpawn",
    "ApprovalDecision",
    "ApprovalRequest",
    "BaseDetail",
    "Branch",
    "Checkpoint",
    "Compaction",
    "Detail",
    "DiscriminatedDetail",
    "Error",
    "FileEdit",
    "Integrity",
    "Message",
    "ModelCall",
    "ModelResult",
    "Other",
    "Plan",
    "Recovery",
    "RunEnd",
    "RunStart",
    "TestResult",
    "ToolCall",
    "ToolResult",
    "Usage",
    "text_hash",
]
