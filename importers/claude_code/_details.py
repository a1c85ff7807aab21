"""Typed details of Claude Code records: the format's field names are read here (and in ``_edit``,
``_vocab``) only. A subagent's record copied into an ``agent_progress`` record is read from inside it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    ApprovalDecision,
    Branch,
    Checkpoint,
    Compaction,
    Detail,
    Error,
    Message,
    ModelResult,
    Other,
    ToolCall,
    ToolResult,
    Usage,
)
from walkback.timeline.session import Event, Session

from ..fields import integer, mapping, string, text
from ._edit import file_edit
from ._vocab import FILE_TOOLS, refusal, result_text

_EXIT = re.compile(r"Exit code (\d+)")
Rec = dict[str, Any]


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a Claude Code session."""
    ev = session.event(i)
    raw = mapping(session.raw(i))
    rec = inner(raw) if ev.kind != "other" else raw
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, rec) if build is not None else _other(ev, raw)


def inner(raw: Rec) -> Rec:
    """The record itself, or the subagent's record an ``agent_progress`` record carries."""
    data = raw.get("data")
    if raw.get("type") == "progress" and isinstance(data, dict) and data.get("type") == "agent_progress":
        return mapping(data.get("message"))
    return raw


def _content(rec: Rec) -> Any:
    return mapping(rec.get("message")).get("content")


def _block(rec: Rec, sub: int) -> Rec:
    content = _content(rec)
    return mapping(content[sub]) if isinstance(content, list) and 0 <= sub < len(content) else {}


def _said(content: Any) -> tuple[str, str]:
    """``(text, thinking)`` of a message's content (tool blocks left to their own events)."""
    if isinstance(content, str):
        return content, ""
    said, thought = [], []
    for c in content if isinstance(content, list) else ():
        c = mapping(c)
        t = c.get("type")
        if t == "text":
            said.append(string(c.get("text")))
        elif t == "thinking":
            thought.append(string(c.get("thinking")))
        elif t in ("image", "document"):
            said.append(f"[{t}]")
    return "\n".join(said), "\n".join(thought)


def _message(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    if ev.type == "local_command":
        return Message(role="system", text=text(rec.get("content")))
    m = mapping(rec.get("message"))
    said, thought = _said(m.get("content"))
    role = string(m.get("role")) or string(rec.get("type")) or "assistant"
    return Message(
        role=role,
        text=text(said),
        thinking=text(thought),
        model=string(m.get("model")) if role == "assistant" else "",
    )


def _model_result(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    m = mapping(rec.get("message"))
    u = mapping(m.get("usage"))
    cost = rec.get("costUSD")
    return ModelResult(
        model=string(m.get("model")),
        usage=Usage(
            input_tokens=integer(u.get("input_tokens")),
            output_tokens=integer(u.get("output_tokens")),
            cache_read_tokens=integer(u.get("cache_read_input_tokens")),
            cache_write_tokens=integer(u.get("cache_creation_input_tokens")),
        ),
        stop_reason=string(m.get("stop_reason")),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        response_id=string(m.get("id")),
    )


def _tool_call(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    block = _block(rec, session.table.sub[i])
    name = string(block.get("name")) or ev.tool
    args = block.get("input")
    edit = None
    if name in FILE_TOOLS and ev.target:
        j = session.completion_of(i)
        result = inner(mapping(session.raw(j))).get("toolUseResult") if j is not None else None
        edit = file_edit(name, args, result, ev.target)
    a = mapping(args)
    command, url = a.get("command"), a.get("url")
    return ToolCall(
        name=name,
        call_id=string(block.get("id")),
        arguments=args if isinstance(args, (dict, str)) else {},
        target=ev.target,
        command=command if isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        edit=edit,
    )


def _tool_result(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    block = _block(rec, session.table.sub[i])
    said = result_text(block.get("content"))
    code = _EXIT.match(said)
    return ToolResult(
        call_id=string(block.get("tool_use_id")),
        ok=ev.status == "ok",
        output=text(said),
        error=text(said) if ev.status != "ok" else "",
        exit_code=int(code.group(1)) if code else None,
    )


def _approval_decision(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    said = result_text(_block(rec, session.table.sub[i]).get("content"))
    who = refusal(rec.get("toolUseResult"), said) or "user"
    why = "refused in the permission dialog" if who == "user" else "denied by the permission settings"
    return ApprovalDecision(
        decision="denied", approver=who, reason=f"inferred: {why}: {said[:500]}", inferred=True
    )


def _compaction(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    if ev.type == "summary":
        return Compaction(summary=text(rec.get("summary")))
    if ev.type == "user":  # the summary message that starts a compacted context
        return Compaction(summary=text(_said(_content(rec))[0]))
    meta = mapping(rec.get("compactMetadata") or rec.get("microcompactMetadata"))
    return Compaction(
        trigger=string(meta.get("trigger")),
        summary=text(rec.get("content")),
        tokens_before=integer(meta.get("preTokens")),
    )


def _checkpoint(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    snap = mapping(rec.get("snapshot"))
    files = mapping(snap.get("trackedFileBackups"))
    what = "an update of the" if rec.get("isSnapshotUpdate") is True else "the"
    return Checkpoint(
        label=f"{what} file-history backups before the edits of message {string(rec.get('messageId'))[:40]}"
        f" ({len(files)} file{'s' if len(files) != 1 else ''})"
    )


def _branch(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    why = (
        "a second reply to the same record (regenerated)"
        if ev.type == "assistant"
        else ("a second prompt after the same record (an edited prompt or a rewind)")
    )
    return Branch(parent=string(rec.get("parentUuid")), reason=why)


def _error(session: Session, i: int, ev: Event, rec: Rec) -> Detail:
    if ev.type == "assistant":
        return Error(message=text(_said(_content(rec))[0]), error_type="api_error")
    err = rec.get("error")
    return Error(message=text(rec.get("content") or err), error_type=ev.type)


def _other(ev: Event, rec: Rec) -> Detail:
    return Other(type=ev.type, summary=_summary(ev.type, rec))


def _summary(typ: str, rec: Rec) -> str:
    data = mapping(rec.get("data"))
    if typ == "hook_progress":
        return f"hook {string(data.get('hookName'))}: {string(data.get('command'))[:300]}"
    if typ == "agent_progress":
        return f"progress of subagent {string(data.get('agentId'))} (read from its own file)"
    if typ == "bash_progress":
        return f"output of a running command: {string(data.get('output'))[-300:]}"
    if typ == "queue-operation":
        return f"queued input: {string(rec.get('operation'))} {string(rec.get('content'))[:300]}".strip()
    if typ == "stop_hook_summary":
        return f"{integer(rec.get('hookCount')) or 0} stop hooks ran"
    if typ == "turn_duration":
        return f"the turn took {integer(rec.get('durationMs'))} ms"
    return ""


_Build = Callable[[Session, int, Event, Rec], Detail]
_BY_KIND: dict[str, _Build] = {
    "message": _message,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_decision": _approval_decision,
    "compaction": _compaction,
    "checkpoint": _checkpoint,
    "branch": _branch,
    "error": _error,
}
