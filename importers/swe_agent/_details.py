"""Typed details of SWE-agent and mini-swe-agent events: steps, history and chat messages, the
model stats and the submission (``info``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    ABSENT,
    Detail,
    FileEdit,
    Message,
    ModelResult,
    Other,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    Usage,
    text_hash,
)
from walkback.timeline.session import Event, Session

from ..describe import TOTALS
from ..diffs import split_diff
from ..fields import embedded_json, integer, mapping, string, text, usage
from ._common import SUBMIT
from ._mini import calls_of, return_code


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a SWE-agent or mini-swe-agent session."""
    raw = session.raw(i)
    ev = session.event(i)
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, raw) if build is not None else Other(type=ev.type)


def _content(value: Any) -> str:
    """A chat message's content: a string, or parts of which the text ones are joined."""
    if isinstance(value, list):
        return "".join(string(mapping(p).get("text")) for p in value)
    return string(value)


def _run_start(session: Session, i: int, ev: Event, raw: Any) -> Detail:
    config = mapping(embedded_json(raw))
    agent = mapping(config.get("agent"))
    repo = mapping(mapping(config.get("env")).get("repo"))
    problem = mapping(config.get("problem_statement"))
    settings = {k: v for k, v in (("environment", raw if isinstance(raw, str) else ""),
                                  ("instance", string(problem.get("id")))) if v}  # fmt: skip
    return RunStart(
        task=session.task,
        producer="swe-agent",
        workspace=string(repo.get("repo_name")),
        base=string(repo.get("base_commit")),
        model=string(mapping(agent.get("model")).get("name")),
        settings=settings,
    )


def _message(session: Session, i: int, ev: Event, raw: Any) -> Detail:
    m = mapping(raw)
    if ev.type == "step":  # the thought of a step the history does not show
        return Message(role="assistant", text=text(string(m.get("thought"))))
    role = string(m.get("role")) or ev.type
    thinking = m.get("thinking_blocks")
    thought = (
        "\n\n".join(string(mapping(b).get("thinking")) for b in thinking)
        if isinstance(thinking, list)
        else ""
    )
    model = string(mapping(mapping(m.get("extra")).get("response")).get("model"))
    return Message(role=role, text=text(_content(m.get("content"))), thinking=text(thought), model=model)


def _model_result(session: Session, i: int, ev: Event, raw: Any) -> Detail:
    m = mapping(raw)
    if ev.type == TOTALS:  # the totals of the whole run
        stats = mapping(m.get("model_stats"))
        cost = stats.get("instance_cost")
        calls = integer(stats.get("api_calls"))
        return ModelResult(
            model=string(session.header.get("model")),
            usage=Usage(
                input_tokens=integer(stats.get("tokens_sent")),
                output_tokens=integer(stats.get("tokens_received")),
            ),
            cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
            text=f"{calls if calls is not None else '?'} API calls (the run's totals)",
        )
    extra = mapping(m.get("extra"))
    response = mapping(extra.get("response"))
    u = mapping(response.get("usage"))
    cached = mapping(u.get("prompt_tokens_details")).get("cached_tokens")
    reasoning = mapping(u.get("completion_tokens_details")).get("reasoning_tokens")
    choices = response.get("choices")
    first = mapping(choices[0]) if isinstance(choices, list) and choices else {}
    cost = extra.get("cost")
    return ModelResult(
        model=string(response.get("model")),
        usage=usage(
            u.get("prompt_tokens"), cached, u.get("completion_tokens"), reasoning, u.get("total_tokens")
        ),
        stop_reason=string(first.get("finish_reason")),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        response_id=string(response.get("id")),
    )


def _tool_call(session: Session, i: int, ev: Event, raw: Any) -> Detail:
    m = mapping(raw)
    if ev.type == "submission":
        return _submission(session, i, ev, m)
    if ev.type == "step":
        action = string(m.get("action"))
        state = mapping(embedded_json(m.get("state")))
        done = session.completion_of(i)  # 1.x: the history's observation names the call
        cid = _first_id(mapping(session.raw(done)).get("tool_call_ids")) if done is not None else ""
        return ToolCall(
            name=ev.tool, call_id=cid, arguments={"action": action, **({"state": state} if state else {})},
            target=ev.target, command=action,
        )  # fmt: skip
    calls = calls_of(m)
    k = session.table.sub[i]
    cid, command = calls[k] if 0 <= k < len(calls) else ("", "")
    given = m.get("tool_calls")
    fn = mapping(mapping(given[k]).get("function")) if isinstance(given, list) and 0 <= k < len(given) else {}
    args = mapping(embedded_json(fn.get("arguments"))) or {"command": command}
    return ToolCall(
        name=string(fn.get("name")) or ev.tool, call_id=cid, arguments=args, target=ev.target, command=command
    )


def _submission(session: Session, i: int, ev: Event, info: dict[str, Any]) -> Detail:
    files = split_diff(string(info.get("submission")))
    k = session.table.sub[i]
    if not 0 <= k < len(files):
        return ToolCall(name=SUBMIT, target=ev.target)
    f = files[k]
    post_text = f.added_text
    edit = FileEdit(
        path=f.path,
        operation=f.operation,
        pre=ABSENT if f.operation == "create" else None,
        post=ABSENT if f.operation == "delete" else text_hash(post_text),
        post_text=post_text,
        patch=f.patch,
        moved_to=f.moved_to,
    )
    return ToolCall(
        name=SUBMIT, arguments={"exit_status": string(info.get("exit_status"))}, target=f.path, edit=edit
    )


def _tool_result(session: Session, i: int, ev: Event, raw: Any) -> Detail:
    m = mapping(raw)
    if ev.type == "step":
        output = string(m.get("observation"))
    else:
        output = _content(m.get("content"))
    error = string(mapping(m.get("extra")).get("exception_info"))
    return ToolResult(
        call_id=string(m.get("tool_call_id")) or _first_id(m.get("tool_call_ids")),
        ok=ev.status == "ok",
        output=text(output),
        error=text(error) or ("" if ev.status == "ok" else ev.status),
        exit_code=None if ev.type == "step" else return_code(m),
    )


def _first_id(ids: Any) -> str:
    return string(ids[0]) if isinstance(ids, list) and ids else ""


def _run_end(session: Session, i: int, ev: Event, raw: Any) -> Detail:
    m = mapping(raw)
    word = string(m.get("exit_status")) or string(mapping(m.get("extra")).get("exit_status"))
    return RunEnd(status=ev.status, reason=word)


_Build = Callable[[Session, int, Event, Any], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "message": _message,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "run_end": _run_end,
}
