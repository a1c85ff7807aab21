"""Typed details of Cline task events: the UI message (or API history message) each one came from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    ABSENT,
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
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
    text_hash,
)
from walkback.timeline.kinds import INFERRED
from walkback.timeline.session import Event, Session

from .. import edit_blocks
from ..fields import TEXT_LIMIT, embedded_json, integer, mapping, string, text
from ._read import FILE_TOOLS, SUBTASK_RESULT, tool_of
from ._results import final_content, in_request, result_text

USER_SAYS = frozenset({"say:task", "say:user_feedback"})


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a Cline session."""
    ev = session.event(i)
    m = mapping(session.raw(i))
    if ev.kind == "tool_result":
        return _tool_result(session, i, ev, m)
    if ev.kind == "approval_decision":
        return _decision(session, i, ev, m)
    build = _BY_KIND.get(ev.kind, _other)
    return build(session, i, ev, m)


def _model(session: Session, ev: Event, m: dict[str, Any]) -> str:
    """The model of a message: its own ``modelInfo``, else the task's model usage at its time."""
    own = string(mapping(m.get("modelInfo")).get("modelId"))
    if own:
        return own
    used = ""
    for u in session.header.get("model_usage", ()):
        when = integer(mapping(u).get("ts"))
        if when is None or ev.ts is None or when <= ev.ts * 1000 + 1:
            used = string(mapping(u).get("model_id")) or used
    return used


def _run_start(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    info = mapping(m.get("modelInfo"))
    settings = {"task_id": session.header.get("task_id", ""), "mode": string(info.get("mode"))}
    return RunStart(
        task=text(m.get("text")),
        producer=string(session.header.get("producer")) or "cline",
        workspace=string(session.header.get("workspace")),
        model=_model(session, ev, m),
        settings={k: v for k, v in settings.items() if v},
    )


def _message(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    said = m.get("text")
    if ev.type in USER_SAYS or i in session.header.get("task_messages", ()):
        return Message(role="user", text=text(said))
    if ev.type == "say:reasoning":
        return Message(
            role="assistant", thinking=text(said or m.get("reasoning")), model=_model(session, ev, m)
        )
    asked = mapping(embedded_json(said))
    if "question" in asked or "response" in asked:  # followup / plan_mode_respond: JSON with options
        options = asked.get("options")
        lines = [string(asked.get("question") or asked.get("response"))]
        lines += [f"- {string(o)}" for o in options] if isinstance(options, list) else []
        said = "\n".join(lines)
    return Message(
        role="assistant", text=text(said), thinking=text(m.get("reasoning")), model=_model(session, ev, m)
    )


def _model_call(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    asked = string(mapping(embedded_json(m.get("text"))).get("request"))
    return ModelCall(model=_model(session, ev, m), summary=asked.strip().split("\n", 1)[0][:500])


def _model_result(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    info = mapping(embedded_json(m.get("text")))
    cost = info.get("cost")
    return ModelResult(
        model=_model(session, ev, m),
        usage=Usage(
            input_tokens=integer(info.get("tokensIn")),
            output_tokens=integer(info.get("tokensOut")),
            cache_read_tokens=integer(info.get("cacheReads")),
            cache_write_tokens=integer(info.get("cacheWrites")),
        ),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        stop_reason=string(info.get("cancelReason")),
        text=text(info.get("streamingFailedMessage")),
    )


def file_edit(m: dict[str, Any]) -> FileEdit | None:
    """The file change a UI tool message describes (its ``content`` or ``diff``)."""
    info = mapping(embedded_json(m.get("text")))
    ui, path = string(info.get("tool")), string(info.get("path"))
    if ui not in FILE_TOOLS or not path:
        return None
    content, diff = info.get("content"), info.get("diff")
    body = diff if isinstance(diff, str) else content if isinstance(content, str) else None
    if ui == "fileDeleted":
        return FileEdit(path=path, operation="delete", post=ABSENT)
    if ui == "newFileCreated":
        return FileEdit(path=path, operation="create", pre=ABSENT, post_text=body, post=text_hash(body))
    blocks = edit_blocks.search_replace(body, filenames=False) if body else []
    if blocks:
        pairs = [(b.old or "", b.new) for b in blocks]
        if len(pairs) == 1:
            return FileEdit(path=path, old_string=pairs[0][0], new_string=pairs[0][1])
        return FileEdit(path=path, edits=pairs)
    if body is not None and body.lstrip().startswith(("@@", "--- ", "Index:", "diff ")):
        return FileEdit(path=path, patch=body)
    return FileEdit(path=path, post_text=body, post=text_hash(body))  # write_to_file of an existing file


def _tool_call(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    kind, name, _, target, _ = tool_of(m)
    args: dict[str, Any] | str = mapping(embedded_json(m.get("text")))
    command = url = None
    if kind == "command":
        command = string(m.get("text")).removesuffix("REQ_APP").strip()
        args = {"command": command}
    elif kind == "browser_action_launch":
        url = string(m.get("text"))
        args = {"action": "launch", "url": url}
    elif isinstance(args, dict) and isinstance(args.get("url"), str):
        url = args["url"]
    return ToolCall(name=name, arguments=args, target=target, command=command, url=url, edit=file_edit(m))


def _source_is_api(session: Session, i: int) -> bool:
    """Event ``i`` stands on an API history message (of the task or of one of its subtasks)."""
    src = session.table.src[i]
    return src == mapping(session.header.get("sources")).get("api") or src in session.header.get(
        "api_sources", ()
    )


def _evidence(session: Session, i: int, m: dict[str, Any], call: int | None) -> tuple[str, bool, str]:
    """``(text, is_error, call id)`` of the result event ``i`` stands on (an API history message, or
    the quote of it in the request that sent it), for tool call ``call``."""
    if _source_is_api(session, i):
        return result_text(m, session.table.sub[i])
    if call is None:
        return "", False, ""
    asked = string(mapping(embedded_json(m.get("text"))).get("request"))
    _, _, names, target, _ = tool_of(mapping(session.raw(call)))
    return in_request(asked, names, target) or "", False, ""


def _tool_result(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    if ev.type == f"say:{SUBTASK_RESULT}":  # Roo Code: what the subtask the call started reported
        return ToolResult(ok=True, output=text(m.get("text")), verification="the subtask's result")
    said, error, call_id = _evidence(session, i, m, None if session.table.flags[i] & INFERRED else ev.ref)
    ok = ev.status == "ok"
    edit = None
    saved = final_content(said)
    if saved is not None and ev.target:
        edit = FileEdit(path=ev.target, post_text=saved, post=text_hash(saved))
    return ToolResult(
        call_id=call_id,
        ok=ok,
        output=said[:TEXT_LIMIT] if ok else "",
        error="" if ok else said[:TEXT_LIMIT] or ev.status,
        verification="the file as saved, sent back to the model" if edit is not None else "",
        edit=edit,
    )


def _request(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    return ApprovalRequest(
        tool=ev.tool, target=ev.target, reason=f"Cline asks before {ev.tool} {ev.target}".strip()
    )


def _decision(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    if ev.type == "inferred":
        said = _evidence(session, i, m, session.gated.get(ev.ref) if ev.ref is not None else None)[0]
        if string(m.get("say")) == SUBTASK_RESULT:
            said = "the subtask ran and reported its result"
        why = said.split("\n", 1)[0][:500] or "the tool ran: a later request was sent"
        return ApprovalDecision(decision=ev.status, approver="user", reason=why, inferred=True)
    return ApprovalDecision(
        decision=ev.status, approver="policy", reason="auto-approved (autoApprovalDecision)"
    )


def _checkpoint(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    return Checkpoint(git=ev.target, label="Cline checkpoint (shadow git commit of the workspace)")


def _error(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    return Error(message=text(m.get("text")), error_type=ev.type.partition(":")[2])


def _compaction(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    return Compaction(trigger=ev.type.partition(":")[2], summary=text(m.get("text")))


def _run_end(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    if ev.type == "ask:tool":  # Roo Code's finishTask
        return RunEnd(status=ev.status, reason="attempt_completion: the subtask handed its result back")
    return RunEnd(status=ev.status, reason="attempt_completion: Cline presented its result")


def _other(session: Session, i: int, ev: Event, m: dict[str, Any]) -> Detail:
    said = text(m.get("text")).strip()
    return Other(type=ev.type, summary=said.split("\n", 1)[0][:500])


_Build = Callable[[Session, int, Event, dict[str, Any]], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "message": _message,
    "model_call": _model_call,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "approval_request": _request,
    "checkpoint": _checkpoint,
    "error": _error,
    "compaction": _compaction,
    "run_end": _run_end,
}
