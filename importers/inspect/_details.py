"""Typed details of Inspect events: Inspect's field names are read here (and in ``_tools``) only.

A detail is built from the event's record (``session.raw``) and, where the record points into its
sample, the sample's ``attachments`` and ``message_pool`` (read from the same document, which the
source keeps parsed for the next read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from walkback.journal.errors import ImporterError
from walkback.timeline.details import (
    AgentEnd,
    AgentSpawn,
    ApprovalDecision,
    ApprovalRequest,
    Branch,
    Checkpoint,
    Compaction,
    Detail,
    Error,
    Message,
    ModelCall,
    ModelResult,
    Other,
    RunStart,
    TestResult,
    ToolCall,
    ToolResult,
    Usage,
)
from walkback.timeline.kinds import FILE
from walkback.timeline.session import Event, Session
from walkback.timeline.sources import JsonItems, JsonSpan

from ..fields import integer, mapping, string, text
from ._text import Attachments, content_text, reasoning_text
from ._tools import file_edit, sandbox_written

SUMMARY = 500
"""Characters of a prompt kept as a model call's summary."""


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of an Inspect session."""
    e = mapping(session.raw(i))
    ev = session.event(i)
    build = _BY_KIND.get(ev.kind, _other)
    return build(_Context(session, i), e, ev)


class _Context:
    """What a detail may need besides its record: the sample's attachments and message pool."""

    def __init__(self, session: Session, i: int) -> None:
        self.session = session
        self.i = i
        self.sub = int(session.table.sub[i])
        self._att: Attachments | None = None

    def sample(self, pointer: str) -> Any:
        """The value at ``pointer`` in the event's sample (None if there is none)."""
        src = self.session.sources[self.session.table.src[self.i]]
        try:
            if isinstance(src, JsonItems):
                return JsonItems(src.path, pointer, member=src.member).read(-1, 0)
            if isinstance(src, JsonSpan):
                return JsonSpan(src.path, src.start, src.length, pointer).read(-1, 0)
        except ImporterError:
            return None
        return None

    @property
    def att(self) -> Attachments:
        if self._att is None:
            self._att = Attachments(self.sample("/attachments"))
        return self._att

    def text(self, value: Any) -> str:
        return content_text(self.att.resolve(value))

    @property
    def header(self) -> dict[str, Any]:
        return self.session.header


def _run_start(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    sample = mapping(e.get("sample"))
    spec = mapping(c.header.get("eval"))
    version = string(c.header.get("inspect_ai"))
    settings = {
        k: v
        for k, v in (
            ("sample", sample.get("id")),
            ("epoch", c.sample("/epoch")),
            ("target", c.text(sample.get("target"))),
            ("task", spec.get("task")),
        )
        if v
    }
    return RunStart(
        task=c.text(sample.get("input")),
        producer=f"inspect_ai {version}".strip(),
        model=string(spec.get("model")),
        settings=settings,
    )


def _message(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    if ev.type == "input":
        return Message(role="user", text=text(e.get("input")))
    messages = mapping(e.get("state")).get("messages")
    m = mapping(messages[c.sub]) if isinstance(messages, list) and 0 <= c.sub < len(messages) else {}
    return Message(
        role=string(m.get("role")) or "user",
        text=c.text(m),
        thinking=reasoning_text(m),
        model=string(m.get("model")),
    )


def _inputs(c: _Context, e: dict[str, Any]) -> list[Any]:
    """The model call's input messages, expanded from the sample's message pool when deduplicated."""
    given = e.get("input")
    refs = e.get("input_refs")
    if isinstance(given, list) and given or not isinstance(refs, list):
        return given if isinstance(given, list) else []
    pool = c.sample("/message_pool")
    if not isinstance(pool, list):
        return []
    out: list[Any] = []
    for r in refs:
        if isinstance(r, list) and len(r) == 2 and all(integer(x) is not None for x in r):
            out.extend(pool[r[0] : r[1]])
    return out


def _model_call(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    inputs = _inputs(c, e)
    last = c.text(inputs[-1]) if inputs else ""
    return ModelCall(model=string(e.get("model")), summary=last[:SUMMARY])


def _usage(u: dict[str, Any]) -> Usage:
    """Inspect's usage in the contract's terms: input tokens without the cache reads when Inspect's
    count includes them (its total is then input + output, as it writes it for OpenAI)."""
    given, read = integer(u.get("input_tokens")), integer(u.get("input_tokens_cache_read"))
    out, total = integer(u.get("output_tokens")), integer(u.get("total_tokens"))
    if given is not None and read and out is not None and total == given + out and given >= read:
        given -= read
    return Usage(
        input_tokens=given,
        output_tokens=out,
        cache_read_tokens=read,
        cache_write_tokens=integer(u.get("input_tokens_cache_write")),
        reasoning_tokens=integer(u.get("reasoning_tokens")),
        total_tokens=total,
    )


def _model_result(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    output = mapping(e.get("output"))
    choices = output.get("choices")
    first = mapping(choices[0]) if isinstance(choices, list) and choices else {}
    message = mapping(first.get("message"))
    said = c.text(message) or string(output.get("completion"))
    error = text(e.get("error"))
    u = mapping(output.get("usage"))
    cost = u.get("total_cost")
    return ModelResult(
        model=string(output.get("model")) or string(e.get("model")),
        usage=_usage(u),
        stop_reason=string(first.get("stop_reason")),
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        response_id=string(message.get("id")),
        text=f"error: {error}" if error else said,
    )


def _tool_call(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    if ev.type == "sandbox":
        action = string(e.get("action"))
        cmd = string(e.get("cmd"))
        args = {k: e[k] for k in ("cmd", "file", "input", "options") if e.get(k) not in (None, "", {})}
        edit = sandbox_written(e) if action == "write_file" and ev.flags & FILE else None
        return ToolCall(name=ev.tool, arguments=args, target=ev.target, command=cmd or None, edit=edit)
    function = string(e.get("function"))
    args = c.att.resolve(mapping(e.get("arguments")))
    command = args.get("cmd", args.get("command"))
    url = args.get("url")
    return ToolCall(
        name=function,
        call_id=string(e.get("id")),
        arguments=args,
        target=ev.target,
        command=command if isinstance(command, str) and function not in ("text_editor",) else None,
        url=url if isinstance(url, str) else None,
        edit=file_edit(function, args) if ev.flags & FILE else None,
    )


def _tool_result(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    ok = {"ok": True, "failed": False, "denied": False}.get(ev.status)
    if ev.type == "sandbox":
        code = integer(e.get("result"))
        return ToolResult(ok=ok, output=text(e.get("output")), exit_code=code)
    error = mapping(e.get("error"))
    result = e.get("result")
    output = c.text(result) if isinstance(result, (str, list, dict)) else text(result)
    return ToolResult(
        call_id=string(e.get("id")),
        ok=ok,
        output=output,
        error=string(error.get("message")) or (text(e.get("error")) if e.get("error") else ""),
    )


def _approval_request(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    call = mapping(e.get("call"))
    return ApprovalRequest(
        tool=string(call.get("function")), target=ev.target, reason=c.text(e.get("message"))
    )


def _approval_decision(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    word = string(e.get("decision"))
    reason = string(e.get("explanation"))
    if word in ("modify", "terminate"):
        reason = f"{word}: {reason}" if reason else word
    return ApprovalDecision(decision=ev.status or word, approver=string(e.get("approver")), reason=reason)


def _agent_spawn(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    task = c.text(mapping(e.get("input")).get("input", "")) if ev.type == "subtask" else ""
    kind = string(e.get("type")) or ev.type
    return AgentSpawn(child=ev.target, task=task, agent_type=f"{kind}: {string(e.get('name'))}")


def _agent_end(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    summary = text(e.get("result")) if ev.type == "subtask" else ""
    return AgentEnd(child=ev.target, outcome=ev.status, summary=summary)


def _test_result(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    score = mapping(e.get("score"))
    lines = [f"{k}: {text(score[k])}" for k in ("value", "answer", "explanation") if score.get(k) is not None]
    passed = {"ok": True, "failed": False}.get(ev.status)
    return TestResult(
        command=f"scorer {ev.target}" if ev.target else "score", passed=passed, output="\n".join(lines)
    )


def _error(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    if ev.type == "sample_limit":
        return Error(message=string(e.get("message")), error_type=f"{string(e.get('type'))} limit")
    if ev.type == "sample.limit":
        return Error(message=f"{string(e.get('type'))} limit {text(e.get('limit'))}", error_type="limit")
    if ev.type == "logger":
        m = mapping(e.get("message"))
        return Error(message=string(m.get("message")), error_type=string(m.get("level")))
    err = mapping(e.get("error")) if ev.type == "error" else e
    return Error(message=string(err.get("message")), error_type=ev.type)


def _checkpoint(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    label = " ".join(string(e.get(k)) for k in ("checkpoint_id", "trigger") if e.get(k))
    return Checkpoint(label=label)


def _compaction(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    return Compaction(trigger=string(e.get("source")), tokens_before=integer(e.get("tokens_before")))


def _branch(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    return Branch(parent=string(e.get("from_span")), reason=f"from anchor {string(e.get('from_anchor'))}")


def _other(c: _Context, e: dict[str, Any], ev: Event) -> Detail:
    return Other(type=ev.type, summary=_summary(e, ev))


def _summary(e: dict[str, Any], ev: Event) -> str:
    """A line saying what an event no kind covers is."""
    if ev.type == "span_begin":
        return f"{string(e.get('type')) or 'span'} {string(e.get('name'))} begins"
    if ev.type == "span_end":
        return "span ends"
    if ev.type == "step":
        return f"{string(e.get('type'))} {string(e.get('name'))} {string(e.get('action'))}".strip()
    if ev.type in ("state", "store"):
        changes = e.get("changes")
        return f"{len(changes) if isinstance(changes, list) else 0} changes to the sample's {ev.type}"
    if ev.type == "logger":
        return string(mapping(e.get("message")).get("message"))[:SUMMARY]
    if ev.type == "info":
        return text(e.get("data"))[:SUMMARY]
    return ""


_BY_KIND: dict[str, Callable[[_Context, dict[str, Any], Event], Detail]] = {
    "run_start": _run_start,
    "message": _message,
    "model_call": _model_call,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_request": _approval_request,
    "approval_decision": _approval_decision,
    "agent_spawn": _agent_spawn,
    "agent_end": _agent_end,
    "test_result": _test_result,
    "error": _error,
    "checkpoint": _checkpoint,
    "compaction": _compaction,
    "branch": _branch,
}
