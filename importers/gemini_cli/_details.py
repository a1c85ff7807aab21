"""Typed details of Gemini CLI chat records: the chat's field names are read here only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    ABSENT,
    Branch,
    Compaction,
    Detail,
    Error,
    FileEdit,
    Message,
    ModelResult,
    Other,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.session import Event, Session

from ..fields import embedded_json, mapping, string, text, usage
from ._read import EDIT_TOOLS, content_text

ROLES = {"user": "user", "gemini": "assistant"}


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a Gemini CLI session."""
    rec = mapping(session.raw(i))
    ev = session.event(i)
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, rec) if build is not None else _other(session, i, ev, rec)


def _call_of(session: Session, i: int, rec: dict[str, Any]) -> dict[str, Any]:
    """The tool call an event stands for: the ``sub``-th of its message's ``toolCalls``."""
    calls = rec.get("toolCalls")
    k = session.table.sub[i]
    return mapping(calls[k]) if isinstance(calls, list) and 0 <= k < len(calls) else {}


def _run_start(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    dirs = rec.get("directories")
    keep = ("sessionId", "projectHash", "kind", "startTime", "summary")
    return RunStart(
        task=session.task,
        producer="gemini-cli",
        workspace=string(dirs[0]) if isinstance(dirs, list) and dirs else "",
        settings={k: rec[k] for k in keep if k in rec},
    )


def _message(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    thoughts = rec.get("thoughts")
    thinking = "\n\n".join(_thought(mapping(t)) for t in (thoughts if isinstance(thoughts, list) else ()))
    return Message(
        role=ROLES.get(ev.type, ev.type),
        text=text(content_text(rec.get("content"))),
        thinking=text(thinking),
        model=string(rec.get("model")),
    )


def _thought(t: dict[str, Any]) -> str:
    """One thought summary: its subject in bold, then its description."""
    subject, description = string(t.get("subject")), string(t.get("description"))
    return f"**{subject}** {description}".strip() if subject else description


def _model_result(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    t = mapping(rec.get("tokens"))
    return ModelResult(
        model=string(rec.get("model")),
        usage=usage(t.get("input"), t.get("cached"), t.get("output"), t.get("thoughts"), t.get("total")),
    )


def _new_file(display: dict[str, Any]) -> bool | None:
    flag = display.get("isNewFile")
    if isinstance(flag, bool):
        return flag
    return flag.lower() == "true" if isinstance(flag, str) else None


def _edit(name: str, target: str, args: dict[str, Any], display: dict[str, Any]) -> FileEdit:
    """A file change from the call's arguments and the diff the result displays."""
    before, after = display.get("originalContent"), display.get("newContent")
    new = _new_file(display)
    pre_text = before if isinstance(before, str) and not new else None
    post_text = after if isinstance(after, str) else args.get("content") if name == "write_file" else None
    post_text = post_text if isinstance(post_text, str) else None
    return FileEdit(
        path=target,
        operation="create" if new else "update",
        pre=ABSENT if new else text_hash(pre_text),
        post=text_hash(post_text),
        pre_text=pre_text,
        post_text=post_text,
        patch=string(display.get("fileDiff")) or None,
        old_string=args["old_string"] if isinstance(args.get("old_string"), str) else None,
        new_string=args["new_string"] if isinstance(args.get("new_string"), str) else None,
    )


def _tool_call(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    tc = _call_of(session, i, rec)
    name = string(tc.get("name")) or ev.tool
    raw_args = embedded_json(tc.get("args"))
    args = mapping(raw_args)
    display = mapping(embedded_json(tc.get("resultDisplay")))
    command = args.get("command")
    url = args.get("url")
    return ToolCall(
        name=name,
        call_id=string(tc.get("id")),
        arguments=args or string(raw_args),
        target=ev.target,
        command=command if isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        edit=_edit(name, ev.target, args, display) if name in EDIT_TOOLS and ev.target else None,
    )


def _responses(result: Any) -> list[dict[str, Any]]:
    parts = embedded_json(result)
    parts = parts if isinstance(parts, list) else [parts]
    return [mapping(mapping(mapping(p).get("functionResponse")).get("response")) for p in parts]


def _tool_result(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    tc = _call_of(session, i, rec)
    responses = _responses(tc.get("result"))
    output = "\n".join(text(r.get("output")) for r in responses if "output" in r)
    error = "\n".join(text(r.get("error")) for r in responses if "error" in r)
    display = embedded_json(tc.get("resultDisplay"))
    if not output and isinstance(display, str):
        output = display
    if ev.status != "ok" and not error:
        error = string(tc.get("status"))
    return ToolResult(
        call_id=string(tc.get("id")), ok=ev.status == "ok", output=text(output), error=text(error)
    )


def _error(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    return Error(message=text(content_text(rec.get("content"))), error_type="error")


def _branch(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    return Branch(
        parent=string(rec.get("$rewindTo")), reason="rewind: this message and those after it were removed"
    )


def _compaction(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    messages = mapping(rec.get("$set")).get("messages")
    n = len(messages) if isinstance(messages, list) else 0
    return Compaction(trigger="history update", summary=f"the history was replaced by {n} messages")


def _other(session: Session, i: int, ev: Event, rec: dict[str, Any]) -> Detail:
    if ev.type == "$set":
        changes = mapping(rec.get("$set"))
        return Other(
            type=ev.type, summary="header: " + ", ".join(f"{k} = {text(v)[:80]}" for k, v in changes.items())
        )
    if isinstance(rec.get("id"), str):
        return Other(type=ev.type, summary="a new version of a message, with nothing new to show")
    return Other(type=ev.type)


_Build = Callable[[Session, int, Event, dict[str, Any]], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "message": _message,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "error": _error,
    "branch": _branch,
    "compaction": _compaction,
}
