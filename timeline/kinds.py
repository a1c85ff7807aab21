"""The timeline's vocabulary: event kinds, statuses and row flags, defined once for every part."""

from __future__ import annotations

KINDS: tuple[str, ...] = (
    "run_start",
    "plan",
    "message",
    "model_call",
    "model_result",
    "tool_call",
    "tool_result",
    "approval_request",
    "approval_decision",
    "agent_spawn",
    "agent_end",
    "checkpoint",
    "test_result",
    "recovery",
    "compaction",
    "branch",
    "integrity",
    "error",
    "run_end",
    "other",
)
"""The timeline's event kinds. An importer maps every source record to one of them; a record it
cannot map becomes ``other`` with its raw source kept."""
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
OTHER = KIND_INDEX["other"]
COMPLETING = frozenset(
    KIND_INDEX[k] for k in ("tool_result", "model_result", "approval_decision", "agent_end")
)
"""Kinds whose ``ref`` completes the event it names (a recovery decision only refers to it)."""

STATUSES = ("completed", "crashed", "failed", "cancelled", "running", "unknown")
"""Session statuses. ``recovered`` is a separate flag: a recovered run can still complete."""

PROBLEM_STATUSES = frozenset(
    {"failed", "pending", "in_doubt", "torn", "recovered", "denied", "corrupt", "skipped", "error"}
)
"""Event statuses that "problems only" keeps."""

# Row flags: one byte per event for facts a view needs without building the event's detail.
FILE = 1
"""The event changes the file named by its ``target`` (a tool call that edits, writes or deletes)."""
INFERRED = 2
"""The event was inferred by the importer, not written by the source (an implicit approval)."""
PLACEHOLDER = 4
"""The row stands for a record that could not be read (damaged, torn, skipped): it has a reason."""
