"""Typed details of Copilot CLI events (``events.jsonl``) and legacy session entries: the two
layouts' field names are read here only. Legacy types have no dot (``user``, ``copilot``,
``tool_call_completed``, ``session``, ``chatMessage``); events.jsonl types always have one."""

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
    ModelCall,
    ModelResult,
    Other,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    Usage,
)
from walkback.timeline.kinds import FILE
from walkback.timeline.session import Event, Session

from ..fields import embedded_json, in_force, integer, mapping, string, text
from ._read import COUNTED, MODELS
from ._tools import exit_code, file_edit, result_text

ROLES = {
    "user.message": "user",
    "system.message": "system",
    "session.info": "info",
    "assistant.message": "assistant",
    "user": "user",
    "copilot": "assistant",
    "info": "info",
    "system": "system",
}


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a Copilot CLI session."""
    rec = mapping(session.raw(i))
    ev = session.event(i)
    legacy = "." not in ev.type
    data = rec if legacy else mapping(rec.get("data"))
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, data) if build is not None else _other(session, i, ev, data)


def _model(session: Session, i: int) -> str:
    return string(in_force(session.header.get(MODELS), session.table.line[i]))


def _run_start(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    if ev.type == "session":  # the legacy document: its id, the rest in the header
        head = session.header
        return RunStart(
            task=session.task,
            producer="copilot-cli (legacy session)",
            settings={k: head[k] for k in ("sessionId", "startTime") if k in head},
        )
    ctx = mapping(d.get("context"))
    models = session.header.get(MODELS)
    first = models[0] if isinstance(models, list) and models else None
    keep = ("branch", "repository", "gitRoot", "baseCommit", "hostType")
    version = string(d.get("copilotVersion"))
    return RunStart(
        task=session.task,
        producer=f"copilot-cli {version}".strip(),
        workspace=string(ctx.get("cwd")),
        base=string(ctx.get("headCommit")),
        model=string(first[1]) if isinstance(first, list) and len(first) == 2 else "",
        settings={"sessionId": string(d.get("sessionId")), **{k: ctx[k] for k in keep if k in ctx}},
    )


def _message(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    if ev.type == "chatMessage":
        content = d.get("content")
        said = content if isinstance(content, str) else text(content)
        return Message(role=string(d.get("role")) or "?", text=text(said))
    role = ROLES.get(ev.type, ev.type)
    said = string(d.get("content")) or string(d.get("message")) or string(d.get("text"))
    if not said and role == "user":
        said = string(d.get("transformedContent"))  # a prompt the CLI wrote itself (a nudge to go on)
    return Message(
        role=string(d.get("role")) if ev.type == "system.message" and d.get("role") else role,
        text=text(said),
        thinking=text(string(d.get("reasoningText"))),
        model=_model(session, i) if role == "assistant" else "",
    )


def _model_call(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    return ModelCall(model=_model(session, i), summary=f"turn {string(d.get('turnId'))}".strip())


def _model_result(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    if ev.type != "session.shutdown":
        return ModelResult(
            model=_model(session, i),
            usage=Usage(output_tokens=integer(d.get("outputTokens"))),
            response_id=string(d.get("requestId")) or string(d.get("messageId")),
        )
    metrics = mapping(d.get("modelMetrics"))
    names = list(metrics)
    k = session.table.sub[i]
    model = names[k] if 0 <= k < len(names) else ev.target
    m = mapping(metrics.get(model))
    u = mapping(m.get("usage"))
    given, cached, out = (integer(u.get(f)) for f in ("inputTokens", "cacheReadTokens", "outputTokens"))
    counted = integer(mapping(session.header.get(COUNTED)).get(model)) or 0
    requests = integer(mapping(m.get("requests")).get("count"))
    return ModelResult(
        model=model,
        usage=Usage(
            input_tokens=given - (cached or 0) if given is not None else None,
            output_tokens=max(out - counted, 0) if out is not None else None,
            cache_read_tokens=cached,
            cache_write_tokens=integer(u.get("cacheWriteTokens")),
            reasoning_tokens=integer(u.get("reasoningTokens")),
        ),
        stop_reason="shutdown",
        text=(
            f"session totals at shutdown: {requests if requests is not None else '?'} requests,"
            f" {given if given is not None else '?'} input tokens ({cached or 0} from the cache),"
            f" {out if out is not None else '?'} output tokens, {counted} of them already counted on"
            " the assistant messages"
        ),
    )


def _call_record(session: Session, i: int, ev: Event, d: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
    """``(call, name key, id key)``: the request, start, or legacy entry that an event's call is."""
    k = session.table.sub[i]
    if ev.type == "assistant.message":
        reqs = d.get("toolRequests")
        return (
            (mapping(reqs[k]) if isinstance(reqs, list) and 0 <= k < len(reqs) else {}),
            "name",
            "toolCallId",
        )
    if ev.type == "chatMessage":
        calls = d.get("tool_calls")
        tc = mapping(calls[k]) if isinstance(calls, list) and 0 <= k < len(calls) else {}
        return {**mapping(tc.get("function")), "id": tc.get("id")}, "name", "id"
    if "." not in ev.type:
        return d, "name", "callId"
    return d, "toolName", "toolCallId"


def _tool_call(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    call, name_key, id_key = _call_record(session, i, ev, d)
    name = string(call.get(name_key)) or ev.tool
    raw = embedded_json(call.get("arguments"))
    args = mapping(raw)
    command, url = args.get("command"), args.get("url")
    shell = name in ("bash", "powershell", "shell", "write_bash")
    edit = file_edit(name, args, ev.target) if session.table.flags[i] & FILE and ev.target else None
    return ToolCall(
        name=name,
        call_id=string(call.get(id_key)),
        arguments=args or string(raw),
        target=ev.target,
        command=command if shell and isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        edit=edit,
    )


def _tool_result(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    ref = ev.ref
    t = session.table
    changed = ref is not None and bool(t.flags[ref] & FILE)
    if ev.type == "chatMessage":
        return ToolResult(call_id=string(d.get("tool_call_id")), ok=True, output=text(d.get("content")))
    result = d.get("result")
    output = result_text(result)
    error = mapping(d.get("error"))
    message = string(error.get("message")) or string(d.get("error"))
    diff = string(mapping(result).get("detailedContent")) or (output if "." not in ev.type else "")
    patch = diff if changed and ("\n--- " in diff or diff.startswith("--- ") or "\n@@ " in diff) else None
    return ToolResult(
        call_id=string(d.get("toolCallId")) or string(d.get("callId")),
        ok=ev.status == "ok",
        output=text(output),
        error=text(message) if message else ("" if ev.status == "ok" else ev.status),
        exit_code=exit_code(output),
        edit=FileEdit(path=ev.target or (t.string(t.target, ref) if ref is not None else ""), patch=patch)
        if patch
        else None,
    )


def _approval_request(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    ask = mapping(d.get("permissionRequest"))
    return ApprovalRequest(
        tool=string(ask.get("kind")), target=ev.target, reason=text(string(ask.get("intention")))
    )


def _approval_decision(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    kind = string(mapping(d.get("result")).get("kind"))
    return ApprovalDecision(decision=ev.status, approver="user", reason=kind)


def _spawn(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    return AgentSpawn(
        child=ev.target, task=text(string(d.get("agentDescription"))), agent_type=string(d.get("agentName"))
    )


def _end(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    return AgentEnd(child=ev.target, outcome=ev.status, summary=text(d.get("summary") or d.get("error")))


def _run_end(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    changes = mapping(d.get("codeChanges"))
    files = changes.get("filesModified")
    listed = [string(f) for f in files] if isinstance(files, list) else []
    reason = string(d.get("shutdownType"))
    if changes:
        added, removed = integer(changes.get("linesAdded")) or 0, integer(changes.get("linesRemoved")) or 0
        reason += f"; code changes: +{added} -{removed} lines in {len(listed)} files"
        reason += (": " + ", ".join(listed[:20])) if listed else ""
    return RunEnd(status=ev.status, reason=text(reason))


def _error(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    return Error(
        message=text(string(d.get("message")) or string(d.get("text"))), error_type=string(d.get("errorType"))
    )


def _compaction(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    return Compaction(summary=text(string(d.get("summaryContent")) or string(d.get("summary"))))


def _other(session: Session, i: int, ev: Event, d: dict[str, Any]) -> Detail:
    return Other(type=ev.type, summary=_summary(ev, d))


def _summary(ev: Event, d: dict[str, Any]) -> str:
    if ev.type == "session.model_change":
        return f"model: {string(d.get('previousModel')) or '-'} -> {string(d.get('newModel'))}"
    if ev.type == "session.mode_changed":
        return f"mode: {string(d.get('previousMode'))} -> {string(d.get('newMode'))}"
    if ev.type == "assistant.turn_end":
        return f"turn {string(d.get('turnId'))} ended"
    if ev.type == "tool.execution_start":
        return f"{ev.tool} started (the call it runs is the event it refers to)"
    if ev.type == "session.task_complete":
        return "task complete: " + string(d.get("summary")).strip().split("\n", 1)[0][:200]
    if ev.type == "chatMessage":
        return f"the model's copy of a {string(d.get('role')) or '?'} message of the timeline"
    return ""


_Build = Callable[[Session, int, Event, dict[str, Any]], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "message": _message,
    "model_call": _model_call,
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
