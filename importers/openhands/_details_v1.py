"""Typed details of OpenHands V1 conversation events (one event file each, ``kind``-tagged) and of
its ``base_state.json`` (the run, and each response's token usage)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    ApprovalDecision,
    ApprovalRequest,
    Compaction,
    Detail,
    Error,
    Message,
    Other,
    RunStart,
    ToolCall,
    ToolResult,
)
from walkback.timeline.kinds import FILE, INFERRED
from walkback.timeline.session import Event, Session

from ..fields import embedded_json, integer, mapping, string, text
from ._common import editor_edit, observed_edit, token_usage
from ._v1 import text_of


def details(session: Session, i: int) -> Detail:
    rec = mapping(session.raw(i))
    ev = session.event(i)
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, rec) if build is not None else _other(session, i, ev, rec)


def _run_start(session: Session, i: int, ev: Event, state: dict[str, Any]) -> Detail:
    agent = mapping(state.get("agent"))
    tools = agent.get("tools")
    names = [string(mapping(t).get("name")) for t in tools] if isinstance(tools, list) else []
    settings: dict[str, Any] = {
        "confirmation_policy": string(mapping(state.get("confirmation_policy")).get("kind")),
        "execution_status": string(state.get("execution_status")),
        "tools": names,
    }
    if integer(state.get("max_iterations")) is not None:
        settings["max_iterations"] = state["max_iterations"]
    return RunStart(
        task=session.task,
        producer="openhands-sdk",
        workspace=string(mapping(state.get("workspace")).get("working_dir")),
        model=string(mapping(agent.get("llm")).get("model")),
        settings=settings,
    )


def _thinking(rec: dict[str, Any]) -> str:
    blocks = rec.get("thinking_blocks")
    parts = [string(mapping(b).get("thinking")) for b in blocks] if isinstance(blocks, list) else []
    return "\n\n".join(p for p in (string(rec.get("reasoning_content")), *parts) if p)


def _message(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    if ev.type == "SystemPromptEvent":
        return Message(role="system", text=text(text_of(mapping(rec.get("system_prompt")).get("text"))))
    if ev.type == "ActionEvent":  # the thought of a tool call
        return Message(
            role="assistant", text=text(text_of(rec.get("thought"))), thinking=text(_thinking(rec))
        )
    msg = mapping(rec.get("llm_message"))
    return Message(
        role=string(msg.get("role")) or string(rec.get("source")) or "?",
        text=text(text_of(msg.get("content"))),
        thinking=text(_thinking(msg) or _thinking(rec)),
    )


def _model_result(session: Session, i: int, ev: Event, u: dict[str, Any]) -> Detail:
    return token_usage(u, string(u.get("model")), string(u.get("response_id")))


def _tool_call(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    action = mapping(rec.get("action"))
    call = mapping(rec.get("tool_call"))
    given = embedded_json(call.get("arguments"))
    command, url = action.get("command"), action.get("url")
    terminal = "Terminal" in string(action.get("kind")) or "Bash" in string(action.get("kind"))
    edit = None
    if session.table.flags[i] & FILE:
        edit = editor_edit(ev.target, action)
    return ToolCall(
        name=ev.tool,
        call_id=string(rec.get("tool_call_id")),
        arguments=mapping(given) or action,
        target=ev.target,
        command=command if terminal and isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        edit=edit,
    )


def _tool_result(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    obs = mapping(rec.get("observation"))
    output = text_of(obs.get("content")) or string(obs.get("output"))
    error = string(rec.get("rejection_reason")) or string(rec.get("error"))
    edit = None
    if ev.ref is not None and session.table.flags[ev.ref] & FILE and ev.type == "ObservationEvent":
        edit = observed_edit(string(obs.get("path")), obs, string(obs.get("diff")))
    code = integer(obs.get("exit_code"))
    return ToolResult(
        call_id=string(rec.get("tool_call_id")),
        ok=ev.status == "ok",
        output=text(output),
        error=text(error or ("" if ev.status == "ok" else output or ev.status)),
        exit_code=None if code == -1 else code,
        edit=edit,
    )


def _approval_request(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    policy = string(session.header.get("policy"))
    risk = string(rec.get("security_risk")) or "UNKNOWN"
    return ApprovalRequest(
        tool=ev.tool,
        target=ev.target,
        reason=f"the confirmation policy asks for this action (security risk {risk}); no request is written",
        policy=policy,
    )


def _approval_decision(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    inferred = bool(session.table.flags[i] & INFERRED)
    reason = "the action ran, so it was confirmed" if inferred else string(rec.get("rejection_reason"))
    return ApprovalDecision(
        decision=ev.status, approver="" if inferred else "user", reason=text(reason), inferred=inferred
    )


def _error(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    return Error(message=text(string(rec.get("error"))), error_type=ev.type)


def _compaction(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    forgotten = rec.get("forgotten_event_ids")
    n = len(forgotten) if isinstance(forgotten, list) else None
    summary = string(rec.get("summary"))
    return Compaction(summary=text(summary or (f"{n} events forgotten" if n is not None else "")))


def _other(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    if ev.type == "ConversationStateUpdateEvent":
        return Other(type=ev.type, summary=f"{string(rec.get('key'))} = {text(rec.get('value'))[:120]}")
    return Other(type=ev.type)


_Build = Callable[[Session, int, Event, dict[str, Any]], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "message": _message,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_request": _approval_request,
    "approval_decision": _approval_decision,
    "error": _error,
    "compaction": _compaction,
}
