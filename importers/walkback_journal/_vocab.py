"""The journal's record types in timeline words: kinds, fixed statuses, and what needs a closer look."""

from __future__ import annotations

from typing import Any

from walkback.timeline.kinds import KIND_INDEX
from walkback.timeline.table import StringPool

NAME = "walkback"

TYPE_KIND = {
    "run.start": "run_start",
    "plan": "plan",
    "reframe": "plan",
    "message": "message",
    "model.call": "model_call",
    "model.result": "model_result",
    "intent": "tool_call",
    "commit": "tool_result",
    "fail": "tool_result",
    "approval.request": "approval_request",
    "approval.decision": "approval_decision",
    "agent.spawn": "agent_spawn",
    "agent.end": "agent_end",
    "checkpoint": "checkpoint",
    "test.result": "test_result",
    "recovery": "recovery",
    "recovery.brief": "recovery",
    "journal.recovered": "integrity",
    "journal.continued": "integrity",
    "compaction": "compaction",
    "cancel": "run_end",
    "run.end": "run_end",
}
OK_WORDS = frozenset({"ok", "success", "succeeded", "completed", "done", "committed", "passed"})
APPROVE_WORDS = frozenset({"approve", "approved", "yes"})

FIXED_STATUS = {
    "intent": "pending",
    "fail": "failed",
    "approval.request": "pending",
    "agent.spawn": "running",
    "journal.recovered": "torn",
}
"""Statuses that follow from the record type alone (an intent is pending until completed)."""
DERIVED_STATUS = frozenset({"commit", "approval.decision", "agent.end", "recovery", "test.result", "run.end"})
NOTABLE = frozenset(
    {"agent.spawn", "agent.end", "run.end", "cancel", "recovery", "recovery.brief", "journal.recovered"}
)
"""Types that say something about the session beyond their own event."""
COMPLETING_TYPES = frozenset({"commit", "fail", "approval.decision", "agent.end", "recovery"})

TOOL_CALL = KIND_INDEX["tool_call"]
TARGETED, COMPLETES, OTHER_GROUP = 1, 2, 3
"""Record groups off the plain path: with a target (tool calls, approval requests), completing
another record, or notable / commit (session facts)."""


class TypeCache:
    """Per record type: kind id, interned type, fixed status id (-1: derived) and its group."""

    LIMIT = 4096
    """Types are the journal author's words: an unbounded variety is not cached."""

    def __init__(self, pool: StringPool) -> None:
        self.pool = pool
        self.cache: dict[str, tuple[int, int, int, int]] = {}

    def add(self, typ: str) -> tuple[int, int, int, int]:
        kind = TYPE_KIND.get(typ, "other")
        fixed = -1 if typ in DERIVED_STATUS else self.pool.id(FIXED_STATUS.get(typ, ""))
        if kind in ("tool_call", "approval_request"):
            group = TARGETED
        elif typ in COMPLETING_TYPES:
            group = COMPLETES
        elif typ in NOTABLE:
            group = OTHER_GROUP
        else:
            group = 0
        info = (KIND_INDEX[kind], self.pool.id(typ or "?"), fixed, group)
        if len(self.cache) < self.LIMIT:
            self.cache[typ] = info
        return info


def status(typ: str, d: dict[str, Any]) -> str:
    """The status of a record whose type alone does not say it."""
    if typ == "commit":
        return "recovered" if d.get("recovered") else "ok"
    if typ == "approval.decision":
        return "approved" if str(d.get("decision")) in APPROVE_WORDS else "denied"
    if typ == "agent.end":
        return str(d.get("outcome") or "completed")
    if typ == "recovery":
        return str(d.get("finding") or "")
    if typ == "test.result":
        return "ok" if d.get("passed", d.get("exit_code") == 0) else "failed"
    if typ == "run.end":
        return str(d.get("status") or "completed")
    return ""


def completed_status(typ: str, d: dict[str, Any], own: str) -> str:
    """The status a completing record gives the record it completes ('' for none)."""
    if typ in ("commit", "fail", "approval.decision", "agent.end"):
        return own
    if typ == "recovery" and d.get("action") == "ask_human":
        return "in_doubt"
    return ""
