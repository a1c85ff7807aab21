"""Typed details of OTLP spans, span events and log records: the GenAI attribute names are read
here (and in ``_spans``) only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    AgentEnd,
    AgentSpawn,
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
    Detail,
    Error,
    FileEdit,
    Integrity,
    Message,
    ModelCall,
    ModelResult,
    Other,
    Recovery,
    RunEnd,
    RunStart,
    TestResult,
    ToolCall,
    ToolResult,
)
from walkback.timeline.kinds import FILE
from walkback.timeline.session import Event, Session

from ..fields import TEXT_LIMIT, embedded_json, integer, mapping, string, text
from ._attrs import attributes, usage, value

SUMMARY = 500
ROLES = {
    "gen_ai.user.message": "user",
    "gen_ai.system.message": "system",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a session read from OTLP."""
    rec = mapping(session.raw(i))
    ev = session.event(i)
    sub = int(session.table.sub[i])
    if sub >= 0:
        events = rec.get("events")
        e = mapping(events[sub]) if isinstance(events, list) and sub < len(events) else {}
        return _span_event(ev, string(e.get("name")), attributes(e.get("attributes")))
    a = attributes(rec.get("attributes"))
    if ev.kind in ("message", "error") or (ev.kind == "other" and "startTimeUnixNano" not in rec):
        return _log(ev, rec, a)  # spans give neither: a log record
    build = _BY_KIND.get(ev.kind)
    return build(ev, rec, a) if build is not None else Other(type=ev.type, summary=string(rec.get("name")))


def messages_text(v: Any, limit: int = TEXT_LIMIT) -> str:
    """The text of GenAI messages: ``[{role, parts: [{type: text, content}]}]`` (a JSON string
    as spans carry it), older ``{content}`` bodies, or plain text."""
    v = embedded_json(v)
    if isinstance(v, str):
        return v[:limit]
    if isinstance(v, dict):
        v = [v.get("message", v)]
    if not isinstance(v, list):
        return ""
    out: list[str] = []
    for m in v:
        m = mapping(m)
        parts = m.get("parts")
        if isinstance(parts, list):
            out += [string(mapping(p).get("content")) for p in parts if mapping(p).get("type") == "text"]
        elif m.get("content") is not None:
            out.append(text(m.get("content")))
    return "\n".join(x for x in out if x)[:limit]


def _last_message(v: Any) -> Any:
    v = embedded_json(v)
    return v[-1:] if isinstance(v, list) else v


def _status_message(rec: dict[str, Any]) -> str:
    return string(mapping(rec.get("status")).get("message"))


def _run_start(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    settings = {
        k: a[k]
        for k in ("gen_ai.conversation.id", "gen_ai.provider.name", "gen_ai.system", "gen_ai.agent.id")
        if isinstance(a.get(k), (str, int))
    }
    return RunStart(
        task=string(a.get("gen_ai.agent.description")) or string(a.get("gen_ai.agent.name")),
        model=string(a.get("gen_ai.request.model")),
        settings=settings,
    )


def _run_end(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    return RunEnd(status=ev.status, reason=_status_message(rec))


def _agent_spawn(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    return AgentSpawn(
        child=ev.target,
        task=string(a.get("gen_ai.agent.description")),
        agent_type=string(a.get("gen_ai.agent.name")),
    )


def _agent_end(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    return AgentEnd(
        child=ev.target,
        outcome=ev.status,
        summary=messages_text(a.get("gen_ai.output.messages")) or _status_message(rec),
    )


def _tool_call(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    args = embedded_json(a.get("gen_ai.tool.call.arguments", a.get("input.value")))
    given = args if isinstance(args, (dict, str)) else {}
    fields = given if isinstance(given, dict) else {}
    command, url = fields.get("cmd", fields.get("command")), fields.get("url")
    edit = None
    if ev.flags & FILE:
        pre, post = (a.get(f"walkback.file.{side}_sha256") for side in ("pre", "post"))
        edit = FileEdit(
            path=string(a.get("walkback.file.path")) or ev.target,
            operation=string(a.get("walkback.file.operation")) or "update",
            pre=_hash(pre),
            post=_hash(post),
        )
    return ToolCall(
        name=ev.tool,
        call_id=string(a.get("gen_ai.tool.call.id")),
        arguments=given,
        target=ev.target,
        command=command if isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        edit=edit,
    )


def _hash(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return None
    return v if v == "absent" or v.startswith("sha256:") else f"sha256:{v}"


def _tool_result(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    ok = {"ok": True, "failed": False, "denied": False}.get(ev.status)
    result = a.get("gen_ai.tool.call.result", a.get("output.value"))
    error = _status_message(rec) or string(a.get("error.type")) if ok is False else ""
    return ToolResult(call_id=string(a.get("gen_ai.tool.call.id")), ok=ok, output=text(result), error=error)


def _model_call(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    prompt = a.get("gen_ai.input.messages", a.get("gen_ai.prompt.0.content"))
    return ModelCall(
        model=string(a.get("gen_ai.request.model")) or string(a.get("llm.model_name")),
        summary=messages_text(_last_message(prompt), SUMMARY),
    )


def _model_result(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    reasons = a.get("gen_ai.response.finish_reasons")
    stop = reasons[0] if isinstance(reasons, list) and reasons else reasons
    cost = a.get("walkback.cost_usd")
    said = a.get("gen_ai.output.messages", a.get("gen_ai.completion.0.content"))
    return ModelResult(
        model=string(a.get("gen_ai.response.model")) or string(a.get("gen_ai.request.model")),
        usage=usage(a, includes_cache="walkback.source.file" not in a),
        stop_reason=string(stop),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        response_id=string(a.get("gen_ai.response.id")),
        text=messages_text(said),
    )


def _log(ev: Event, rec: dict[str, Any], a: dict[str, Any]) -> Detail:
    body = value(rec.get("body"))
    if ev.kind == "message":
        return Message(
            role=string(mapping(body).get("role")) or ROLES.get(ev.type, "assistant"),
            text=messages_text(body),
        )
    if ev.kind == "error":
        return Error(message=text(body), error_type=string(rec.get("severityText")))
    return Other(type=ev.type, summary=text(body)[:SUMMARY])


def _span_event(ev: Event, name: str, a: dict[str, Any]) -> Detail:
    """A span event: a GenAI message, an exception, or one of walkback's own (its attributes)."""

    def w(key: str) -> str:
        return string(a.get(f"walkback.{key}"))

    k = ev.kind
    if k == "message":
        said = a.get("content", a.get("message"))
        return Message(role=ROLES.get(name, "assistant"), text=messages_text(said))
    if k == "error":
        return Error(message=string(a.get("exception.message")), error_type=string(a.get("exception.type")))
    if k == "approval_request":
        return ApprovalRequest(
            tool=w("approval.tool"),
            target=w("approval.target"),
            reason=w("approval.reason"),
            policy=w("approval.policy"),
        )
    if k == "approval_decision":
        return ApprovalDecision(
            decision=w("approval.decision") or ev.status or "unknown",
            approver=w("approval.approver"),
            reason=w("approval.reason"),
            inferred=a.get("walkback.approval.inferred") is True,
        )
    if k == "checkpoint":
        return Checkpoint(
            git=w("checkpoint.git"),
            covers=integer(a.get("walkback.checkpoint.covers_lsn")),
            label=w("checkpoint.label"),
        )
    if k == "recovery":
        return Recovery(
            finding=w("recovery.finding"),
            action=w("recovery.action"),
            target=w("recovery.target"),
            tool=w("recovery.tool"),
            detail=w("recovery.detail"),
        )
    if k == "integrity":
        return Integrity(what=w("integrity.what"), reason=w("integrity.reason"), detail=w("integrity.detail"))
    if k == "test_result":
        passed = a.get("walkback.test.passed")
        return TestResult(
            command=w("test.command"),
            passed=passed if isinstance(passed, bool) else None,
            exit_code=integer(a.get("walkback.test.exit_code")),
        )
    return Other(type=name, summary=", ".join(f"{key}={text(v)[:80]}" for key, v in list(a.items())[:6]))


_BY_KIND: dict[str, Callable[[Event, dict[str, Any], dict[str, Any]], Detail]] = {
    "run_start": _run_start,
    "run_end": _run_end,
    "agent_spawn": _agent_spawn,
    "agent_end": _agent_end,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "model_call": _model_call,
    "model_result": _model_result,
}
