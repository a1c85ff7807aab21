"""One line saying what an event did, from its typed detail (lists, reports, terminal output)."""

from __future__ import annotations

from typing import Any

from . import details as d
from .session import Event

SUMMARY_CHARS = 160


def _flat(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(f"{k}={_flat(v)}" for k, v in list(value.items())[:4])
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value[:4])
    return "" if value is None else str(value)


def _usage(u: d.Usage) -> str:
    parts = [f"{n} {w}" for n, w in ((u.input_tokens, "in"), (u.output_tokens, "out")) if n is not None]
    return " / ".join(parts) + " tokens" if parts else ""


def _line(ev: Event, x: d.Detail) -> str:  # noqa: C901 - one branch per kind, flat
    if isinstance(x, d.ToolCall):
        return " ".join(p for p in (x.name, x.target) if p) or _flat(x.arguments)
    if isinstance(x, d.ToolResult):
        verdict = "ok" if x.ok else ("failed" if x.ok is False else "")
        code = f"exit {x.exit_code}" if x.exit_code is not None else ""
        return " · ".join(
            p
            for p in (verdict, x.verification, "recovered" if x.recovered else "", code, x.error or x.output)
            if p
        )
    if isinstance(x, d.Message):
        text = x.text or (f"(thinking) {x.thinking}" if x.thinking else "")
        return f"{x.role}: {text}" if text else x.role
    if isinstance(x, d.ModelResult):
        return " · ".join(p for p in (x.model, _usage(x.usage), x.stop_reason, x.text) if p)
    if isinstance(x, d.ModelCall):
        return " · ".join(p for p in (x.model, x.summary) if p)
    if isinstance(x, d.ApprovalRequest):
        return " · ".join(p for p in (" ".join(q for q in (x.tool, x.target) if q), x.reason) if p)
    if isinstance(x, d.ApprovalDecision):
        return " · ".join(
            p for p in (x.decision, x.approver, x.reason, "inferred" if x.inferred else "") if p
        )
    if isinstance(x, d.AgentSpawn):
        return " · ".join(p for p in (x.child, x.agent_type, x.task) if p)
    if isinstance(x, d.AgentEnd):
        return " · ".join(p for p in (x.child, x.outcome, x.summary) if p)
    if isinstance(x, d.Recovery):
        if x.brief and not x.finding:
            return "resume brief: " + x.brief
        return " · ".join(p for p in (x.finding, x.action, x.target) if p)
    if isinstance(x, d.Checkpoint):
        return " · ".join(p for p in (x.git[:12], x.label) if p)
    if isinstance(x, d.TestResult):
        verdict = "passed" if x.passed else ("failed" if x.passed is False else "")
        return " · ".join(p for p in (x.command, verdict) if p)
    if isinstance(x, d.RunStart):
        return x.task
    if isinstance(x, d.Plan):
        return x.text or (f"{len(x.steps)} steps: " + ", ".join(x.steps) if x.steps else "")
    if isinstance(x, d.RunEnd):
        return " · ".join(p for p in (x.status, x.reason) if p)
    if isinstance(x, d.Compaction):
        return " · ".join(p for p in (x.trigger, x.summary) if p)
    if isinstance(x, d.Branch):
        return " · ".join(p for p in (x.reason, x.parent) if p)
    if isinstance(x, d.Integrity):
        return " · ".join(p for p in (x.what, x.reason, x.detail) if p)
    if isinstance(x, d.Error):
        return " · ".join(p for p in (x.error_type, x.message) if p)
    if isinstance(x, d.Other):
        return " · ".join(p for p in (x.type, x.summary) if p)
    return ev.type


def summary(ev: Event, detail: d.Detail, limit: int = SUMMARY_CHARS) -> str:
    """What ``ev`` did, in one line of at most ``limit`` characters (plain text)."""
    text = " ".join((_line(ev, detail) or ev.type).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
