"""Typed details of rollout records: Codex's field names are read here (and in ``_calls``) only."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from walkback.journal.v4a import PatchFile
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
    ModelResult,
    Other,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    text_hash,
)
from walkback.timeline.session import Event, Session

from ..diffs import added_text
from ..fields import embedded_json, integer, mapping, string, text, usage
from ._calls import exit_code, interpret, output_text


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a Codex session."""
    raw = session.raw(i)
    rec = mapping(raw)
    p = mapping(rec.get("payload"))
    ev = session.event(i)
    build = _BY_KIND.get(ev.kind)
    return build(session, i, ev, p) if build is not None else _other(session, i, ev, p)


def _texts(items: Any, key: str = "text") -> str:
    return "\n".join(string(mapping(c).get(key)) for c in items) if isinstance(items, list) else ""


def _at_line(session: Session, i: int, name: str) -> Any:
    """What a ``turn_context`` in force at event ``i``'s line said (the reader keeps the changes)."""
    t = session.table
    changes = mapping(session.header.get(name)).get(str(t.src[i]))
    if not isinstance(changes, list) or not changes:
        return None
    k = bisect_right([c[0] for c in changes], t.line[i]) - 1
    return changes[max(k, 0)][1]


def _settings(session: Session, i: int) -> dict[str, Any]:
    return mapping(mapping(session.header.get("turn_settings")).get(str(session.table.src[i])))


def _run_start(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    model = string(_at_line(session, i, "models"))
    if ev.type != "session_meta":  # task_started: a turn of the session
        keep = ("turn_id", "model_context_window", "collaboration_mode_kind")
        return RunStart(model=model, settings={k: p[k] for k in keep if k in p})
    git = mapping(p.get("git"))
    producer = " ".join(string(p.get(k)) for k in ("originator", "cli_version")).strip()
    settings: dict[str, Any] = {k: git[k] for k in ("branch", "repository_url") if git.get(k)}
    settings.update({k: p[k] for k in ("source", "model_provider", "forked_from_id") if p.get(k)})
    first = _settings(session, i)
    settings.update({k: v for k, v in first.items() if k not in ("model", "cwd")})
    agent = session.agents.get(ev.agent)
    return RunStart(
        task=agent.task if agent else session.task,
        producer=producer,
        workspace=string(p.get("cwd")),
        base=string(git.get("commit_hash")),
        model=string(first.get("model")) or model,
        settings=settings,
    )


def _run_end(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    if ev.type == "turn_aborted":
        return RunEnd(status="cancelled", reason=text(p.get("reason")))
    return RunEnd(status="completed", reason=text(p.get("last_agent_message")))


def _message(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    typ = ev.type
    if typ == "reasoning":
        return Message(thinking=text(_texts(p.get("summary")) or _texts(p.get("content"))))
    if typ == "agent_reasoning":
        return Message(thinking=text(p.get("text")))
    if typ in ("user_message", "agent_message"):
        return Message(role="user" if typ == "user_message" else "assistant", text=text(p.get("message")))
    role = string(p.get("role")) or "assistant"
    model = string(_at_line(session, i, "models")) if role == "assistant" else ""
    return Message(role=role, text=text(_texts(p.get("content"))), model=model)


def _edit(
    session: Session, i: int, ev: Event, change: dict[str, Any] | None, f: PatchFile | None
) -> FileEdit:
    """A file change from what the end record reports (``change``) and the patch text (``f``)."""
    diff = string(mapping(change).get("unified_diff")) or None
    kind = string(mapping(change).get("type"))
    op = {"add": "create", "delete": "delete", "update": "update"}.get(kind, f.operation if f else "update")
    moved = string(mapping(change).get("move_path")) or (f.moved_to if f else None)
    if moved and op == "update":
        op = "move"
    post_text: str | None = None
    if op == "create":  # the diff Codex reports is hunks alone
        post_text = added_text(diff.splitlines(keepends=True)) if diff else f.added_text if f else None
    return FileEdit(
        path=ev.target,
        operation=op,
        pre=ABSENT if op == "create" else None,
        post=ABSENT if op == "delete" else text_hash(post_text),
        post_text=post_text,
        patch=diff or (f.body if f and f.body else None),
        moved_to=moved or None,
    )


def _change(session: Session, j: int | None, target: str) -> dict[str, Any] | None:
    """The ``changes`` entry for ``target`` in the patch_apply_end that completes a call (if any)."""
    if j is None:
        return None
    p = mapping(mapping(session.raw(j)).get("payload"))
    return _change_at(p, target) if p.get("type") == "patch_apply_end" else None


def _tool_call(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    if ev.type == "patch_apply_end":
        change = _change_at(p, ev.target)
        edit = _edit(session, i, ev, change, None) if change is not None else None
        return ToolCall(
            name="apply_patch", call_id=string(p.get("call_id")), arguments={}, target=ev.target, edit=edit
        )
    if ev.type == "web_search_call":
        action = mapping(p.get("action"))
        return ToolCall(name="web_search", arguments=action, target=ev.target)
    c = interpret(p)
    edit = None
    if c.files:
        k = session.table.sub[i]
        f = c.files[k] if 0 <= k < len(c.files) else None
        edit = _edit(session, i, ev, _change(session, session.completion_of(i), ev.target), f)
    return ToolCall(
        name=c.name,
        call_id=c.call_id,
        arguments=c.arguments,
        target=ev.target,
        command=c.command,
        url=c.url,
        edit=edit,
    )


def _change_at(p: dict[str, Any], target: str) -> dict[str, Any] | None:
    """The entry of an end record's ``changes`` for the file ``target`` (a path relative to the
    workspace, or as given)."""
    for path, change in mapping(p.get("changes")).items():
        if path == target or path.endswith("/" + target):
            return mapping(change)
    return None


def _tool_result(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    call_id = string(p.get("call_id"))
    ok = ev.status == "ok"
    if ev.type == "exec_command_end":
        return ToolResult(
            call_id=call_id,
            ok=ok,
            output=text(p.get("aggregated_output") or p.get("stdout")),
            error=text(p.get("stderr")),
            exit_code=integer(p.get("exit_code")),
        )
    if ev.type == "patch_apply_end":
        change = _change_at(p, ev.target)
        edit = _edit(session, i, ev, change, None) if change is not None else None
        return ToolResult(
            call_id=call_id, ok=ok, output=text(p.get("stdout")), error=text(p.get("stderr")), edit=edit
        )
    if ev.type == "mcp_tool_call_end":
        return ToolResult(call_id=call_id, ok=ok, output=text(p.get("result")))
    out = p.get("output")
    said = output_text(out)
    inner = embedded_json(said)
    shown = string(mapping(inner).get("output")) if isinstance(inner, dict) else said
    return ToolResult(
        call_id=call_id,
        ok=ok,
        output=text(shown),
        error=text(shown) if ev.status == "failed" else "",
        exit_code=exit_code(said),
    )


def _approval_request(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    policy = string(_settings(session, i).get("approval_policy"))
    if ev.type in ("function_call", "custom_tool_call", "local_shell_call"):
        c = interpret(p)
        return ApprovalRequest(tool=c.name, target=ev.target, reason=text(c.escalation), policy=policy)
    return ApprovalRequest(
        tool=ev.tool, target=ev.target, reason=text(p.get("reason") or p.get("justification")), policy=policy
    )


def _approval_decision(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    why = (
        "its output says it was rejected"
        if ev.status == "denied"
        else "the action ran (its outcome followed)"
    )
    return ApprovalDecision(decision=ev.status, reason=f"inferred: {why}", inferred=True)


def _checkpoint(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    ghost = mapping(p.get("ghost_commit"))
    parent = string(ghost.get("parent"))
    return Checkpoint(
        git=string(ghost.get("id")), label=f"ghost commit of the work tree (parent {parent[:12]})"
    )


def _compaction(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    return Compaction(trigger=string(p.get("trigger")), summary=text(p.get("message")))


def _model_result(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    last = mapping(mapping(p.get("info")).get("last_token_usage"))
    return ModelResult(
        model=string(_at_line(session, i, "models")),
        usage=usage(
            last.get("input_tokens"),
            last.get("cached_input_tokens"),
            last.get("output_tokens"),
            last.get("reasoning_output_tokens"),
            last.get("total_tokens"),
        ),
    )


def _error(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    return Error(message=text(p.get("message")), error_type=ev.type)


_TWICE = {
    "message": "the same text as the event message next to it (Codex writes both)",
    "reasoning": "the same reasoning as the event next to it (Codex writes both)",
    "user_message": "the same prompt as the message next to it (Codex writes both)",
    "agent_message": "the same text as the message next to it (Codex writes both)",
    "agent_reasoning": "the same reasoning as the item next to it (Codex writes both)",
    "compacted": "the same compaction as the event next to it",
    "context_compacted": "the same compaction as the event next to it",
}


def _other(session: Session, i: int, ev: Event, p: dict[str, Any]) -> Detail:
    typ = ev.type
    if typ == "turn_context":
        parts = [f"{k} {text(p[k])[:80]}" for k in ("model", "approval_policy", "effort") if p.get(k)]
        sandbox = mapping(p.get("sandbox_policy"))
        if sandbox:
            parts.append(f"sandbox {string(sandbox.get('type') or sandbox.get('mode'))}")
        return Other(type=typ, summary="settings of the next request: " + ", ".join(parts))
    if typ == "token_count":
        total = mapping(mapping(p.get("info")).get("total_token_usage")).get("total_tokens")
        what = f"the same total as before ({total} tokens)" if total is not None else "rate limits only"
        return Other(type=typ, summary=what)
    if typ == "web_search_end":
        return Other(type=typ, summary=f"web search: {text(p.get('query'))[:200]}")
    return Other(type=typ, summary=_TWICE.get(typ, ""))


_Build = Callable[[Session, int, Event, dict[str, Any]], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "run_end": _run_end,
    "message": _message,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_request": _approval_request,
    "approval_decision": _approval_decision,
    "checkpoint": _checkpoint,
    "compaction": _compaction,
    "model_result": _model_result,
    "error": _error,
}
