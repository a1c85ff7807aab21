"""Typed details of OpenHands V0 trajectory events (``action``/``args``, ``observation``/``extras``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    AgentEnd,
    AgentSpawn,
    ApprovalDecision,
    ApprovalRequest,
    Compaction,
    Detail,
    Error,
    FileEdit,
    Message,
    Other,
    RunEnd,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.session import Event, Session

from ..fields import mapping, string, text
from ._common import editor_args, editor_edit, exit_code, observed_edit, token_usage

SHELL = {"run": "command", "run_ipython": "code"}
"""Actions whose command the detail names, and the argument holding it."""


def details(session: Session, i: int) -> Detail:
    ev_ = mapping(session.raw(i))
    ev = session.event(i)
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, ev_) if build is not None else _other(session, i, ev, ev_)


def _args(rec: dict[str, Any]) -> dict[str, Any]:
    return mapping(rec.get("args"))


def _message(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    args = _args(rec)
    if ev.type not in ("message", "system"):  # the thought of a tool call
        return Message(role="assistant", text=text(string(args.get("thought"))), model=_model(rec))
    role = "system" if ev.type == "system" else ("user" if rec.get("source") == "user" else "assistant")
    return Message(
        role=role, text=text(string(args.get("content")) or string(rec.get("message"))), model=_model(rec)
    )


def _model(rec: dict[str, Any]) -> str:
    return string(mapping(mapping(rec.get("tool_call_metadata")).get("model_response")).get("model"))


def _model_result(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    response = mapping(mapping(rec.get("tool_call_metadata")).get("model_response"))
    choices = response.get("choices")
    first = mapping(choices[0]) if isinstance(choices, list) and choices else {}
    return token_usage(
        mapping(response.get("usage")),
        string(response.get("model")),
        string(response.get("id")),
        stop_reason=string(first.get("finish_reason")),
        text=text(string(mapping(first.get("message")).get("content"))),
    )


def _tool_call(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    args = _args(rec)
    meta = mapping(rec.get("tool_call_metadata"))
    key = SHELL.get(ev.type)
    command = args.get(key) if key else None
    url = args.get("url")
    edit = None
    if session.table.flags[i] & FILE:
        path = string(args.get("path")) or ev.target
        if ev.type == "write":
            body = args.get("content")
            post = body if isinstance(body, str) else None
            edit = FileEdit(path=path, post=text_hash(post), post_text=post)
        else:
            edit = editor_edit(path, editor_args(args))
    return ToolCall(
        name=ev.tool or ev.type,
        call_id=string(meta.get("tool_call_id")),
        arguments={k: v for k, v in args.items() if k != "thought"},
        target=ev.target,
        command=command if isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        edit=edit,
    )


def _tool_result(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    extras = mapping(rec.get("extras"))
    content = string(rec.get("content"))
    edit = None
    if ev.type == "edit" and ev.ref is not None and session.table.flags[ev.ref] & FILE:
        edit = observed_edit(string(extras.get("path")), extras, content)
    return ToolResult(
        call_id=string(mapping(rec.get("tool_call_metadata")).get("tool_call_id")),
        ok=ev.status == "ok",
        output=text(content),
        error="" if ev.status == "ok" else text(content or string(rec.get("message")) or ev.status),
        exit_code=exit_code(rec),
        edit=edit,
    )


def _approval_request(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    risk = _args(rec).get("security_risk")
    reason = "confirmation requested" + (f" (security risk {risk})" if risk is not None else "")
    return ApprovalRequest(tool=ev.tool, target=ev.target, reason=reason, policy="confirmation mode")


def _approval_decision(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    inferred = bool(session.table.flags[i] & INFERRED)
    why = (
        "the action ran after the request"
        if inferred
        else (string(rec.get("content")) or string(rec.get("message")))
    )
    return ApprovalDecision(
        decision=ev.status, approver="" if inferred else "user", reason=text(why), inferred=inferred
    )


def _spawn(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    args = _args(rec)
    task = mapping(args.get("inputs")).get("task")
    return AgentSpawn(child=ev.target, task=text(task), agent_type=string(args.get("agent")))


def _end(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    outputs = mapping(rec.get("extras")).get("outputs")
    return AgentEnd(child=ev.target, outcome=ev.status, summary=text(string(rec.get("content")) or outputs))


def _run_end(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    args = _args(rec)
    said = string(args.get("final_thought")) or string(rec.get("message")) or string(args.get("reason"))
    return RunEnd(status=ev.status, reason=text(said))


def _error(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    return Error(message=text(string(rec.get("content")) or string(rec.get("message"))), error_type=ev.type)


def _compaction(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    return Compaction(summary=text(string(_args(rec).get("summary"))))


def _other(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    state = string(mapping(rec.get("extras")).get("agent_state")) or string(_args(rec).get("agent_state"))
    return Other(
        type=ev.type, summary=f"agent state: {state}" if state else text(string(rec.get("message")))[:200]
    )


_Build = Callable[[Session, int, Event, dict[str, Any]], Detail]
_BY_KIND: dict[str, _Build] = {
    "message": _message,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_request": _approval_request,
    "approval_decision": _approval_decision,
    "agent_spawn": _spawn,
    "agent_end": _end,
    "run_end": _run_end,
    "error": _error,
    "compaction": _compaction,
}
