"""Typed details of journal records (v1 and the seed dialects): the journal's field names are read
here and nowhere else."""

from __future__ import annotations

from typing import Any, Literal

from walkback.journal.errors import BlobError
from walkback.journal.images import intent_image
from walkback.journal.record import ENVELOPE, changes_file, target_of
from walkback.timeline.details import (
    AgentEnd,
    AgentSpawn,
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
    Compaction,
    Detail,
    FileEdit,
    Integrity,
    Message,
    ModelCall,
    ModelResult,
    Other,
    Plan,
    Recovery,
    RunEnd,
    RunStart,
    TestResult,
    ToolCall,
    ToolResult,
    Usage,
)
from walkback.timeline.kinds import KINDS
from walkback.timeline.session import Session

from ..fields import integer, string, text
from ._vocab import APPROVE_WORDS


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of a journal session."""
    raw = session.raw(i)
    d: dict[str, Any] = raw if isinstance(raw, dict) else {}
    t = session.table
    typ = t.pool.values[t.type[i]]
    build = _BY_KIND.get(KINDS[t.kind[i]])
    return build(d, typ) if build is not None else Other(type=typ, summary=text(d.get("summary")))


def own_fields(d: dict[str, Any]) -> dict[str, Any]:
    """The record's own fields (the envelope taken off)."""
    return {k: v for k, v in d.items() if k not in ENVELOPE}


def _run_start(d: dict[str, Any], typ: str) -> Detail:
    producer = d.get("producer")
    if isinstance(producer, dict):
        producer = " ".join(str(producer.get(k, "")) for k in ("name", "version")).strip()
    keep = ("planner", "policy", "task_file", "parent_run", "parent_lsn")
    return RunStart(
        task=string(d.get("task") or d.get("task_id")),
        producer=string(producer),
        workspace=string(d.get("workspace")),
        base=string(d.get("base_ref") or d.get("base")),
        model=string(d.get("model")),
        settings={k: d[k] for k in keep if k in d},
    )


def _plan(d: dict[str, Any], typ: str) -> Detail:
    steps = d.get("steps")
    listed = (
        [text(s.get("tool") if isinstance(s, dict) else s) for s in steps] if isinstance(steps, list) else []
    )
    return Plan(text=text(d.get("task") or d.get("plan") or d.get("text")), steps=listed)


def _message(d: dict[str, Any], typ: str) -> Detail:
    return Message(
        role=string(d.get("role")) or "assistant",
        text=text(d.get("text") or d.get("content")),
        thinking=text(d.get("thinking")),
        model=string(d.get("model")),
    )


def usage_of(d: dict[str, Any]) -> dict[str, Any]:
    """Where a model result's token counts are: under ``usage``, or on the record itself."""
    given = d.get("usage")
    return given if given.__class__ is dict else d


def hashes(d: dict[str, Any]) -> tuple[str | None, str | None]:
    """A file-changing intent's content hashes before and after (``absent``: no file)."""
    pre, post = d.get("pre"), d.get("post")
    return (pre if isinstance(pre, str) else None, post if isinstance(post, str) else None)


def _model_call(d: dict[str, Any], typ: str) -> Detail:
    messages = d.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    asked = last.get("content") if isinstance(last, dict) else last
    return ModelCall(model=string(d.get("model")), summary=text(d.get("prompt") or d.get("summary") or asked))


def _model_result(d: dict[str, Any], typ: str) -> Detail:
    u = usage_of(d)
    return ModelResult(
        model=string(d.get("model")),
        usage=Usage(
            input_tokens=integer(u.get("input_tokens")),
            output_tokens=integer(u.get("output_tokens")),
            total_tokens=integer(u.get("total_tokens")),
        ),
        stop_reason=string(d.get("stop_reason")),
        text=text(d.get("output") or d.get("text") or d.get("content")),
    )


def _edit(d: dict[str, Any], target: str) -> FileEdit | None:
    if not target or not changes_file(d):
        return None
    pre, post = hashes(d)
    patch = d.get("patch")
    op = "delete" if post == "absent" else ("create" if pre == "absent" else "update")
    return FileEdit(
        path=target,
        operation=op,
        pre=pre,
        post=post,
        pre_text=_inline(d, "pre"),
        post_text=_inline(d, "post"),
        patch=patch if isinstance(patch, str) else None,
    )


def _inline(d: dict[str, Any], which: Literal["pre", "post"]) -> str | None:
    """A small image the intent carries itself (hash-checked), as text; None when it is in the
    blob store (the view fetches it by hash), binary, or does not match."""
    if not isinstance(d.get(f"{which}_image"), dict) and not isinstance(d.get("pre_image"), dict):
        return None
    try:
        data = intent_image(d, which)
    except BlobError:
        return None
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _tool_call(d: dict[str, Any], typ: str) -> Detail:
    args = d.get("args")
    target = target_of(d)
    cmd = args.get("cmd") if isinstance(args, dict) else None
    url = args.get("url") if isinstance(args, dict) else None
    return ToolCall(
        name=string(d.get("tool")),
        arguments=args
        if isinstance(args, (dict, str))
        else {k: v for k, v in own_fields(d).items() if k not in ("tool", "pre", "post", "target")},
        target=target,
        command=" ".join(map(str, cmd)) if isinstance(cmd, list) else (cmd if isinstance(cmd, str) else None),
        url=url if isinstance(url, str) else None,
        idempotency_key=string(d.get("idempotency_key")) or None,
        edit=_edit(d, target),
    )


def verification(d: dict[str, Any]) -> str:
    """How a commit says its effect was checked, in a line."""
    parts = []
    verified = d.get("verified")
    if isinstance(verified, dict):
        ok = verified.get("post")
        parts.append(
            "post hash verified"
            if ok is True
            else ("post hash NOT verified" if ok is False else "post hash not checked")
        )
        check = verified.get("check")
        if isinstance(check, dict):
            code = check.get("exit_code")
            parts.append(
                f"check `{text(check.get('cmd', ''))[:200]}` exit {code}" + (" ✓" if code == 0 else " ✗")
            )
    elif isinstance(verified, str):
        parts.append(verified)
    return " · ".join(parts)


def _tool_result(d: dict[str, Any], typ: str) -> Detail:
    result = d.get("result")
    output = result.get("output_tail") if isinstance(result, dict) else result
    exit_code = integer(result.get("exit_code")) if isinstance(result, dict) else None
    post = d.get("post")
    failed = typ == "fail" or (
        str(d.get("status", "ok")).lower() not in ("ok", "success", "done", "committed")
    )
    return ToolResult(
        ok=not failed,
        output=text(output),
        error=text(d.get("error")),
        exit_code=exit_code,
        verification=verification(d),
        recovered=d.get("recovered") is True,
        edit=FileEdit(path="", post=post) if isinstance(post, str) else None,
    )


def _approval_request(d: dict[str, Any], typ: str) -> Detail:
    return ApprovalRequest(
        tool=string(d.get("tool")),
        target=target_of(d),
        reason=text(d.get("reason")),
        policy=text(d.get("policy")),
    )


def _approval_decision(d: dict[str, Any], typ: str) -> Detail:
    word = str(d.get("decision"))
    return ApprovalDecision(
        decision="approved" if word in APPROVE_WORDS else "denied",
        approver=string(d.get("approver")),
        reason=text(d.get("reason")),
    )


def _spawn(d: dict[str, Any], typ: str) -> Detail:
    return AgentSpawn(child=string(d.get("child_agent")), task=text(d.get("task")))


def _end(d: dict[str, Any], typ: str) -> Detail:
    return AgentEnd(
        child=string(d.get("child_agent")),
        outcome=string(d.get("outcome")) or "completed",
        summary=text(d.get("summary")),
    )


def _checkpoint(d: dict[str, Any], typ: str) -> Detail:
    covers = integer(d.get("covers_lsn"))
    return Checkpoint(
        git=string(d.get("git")),
        covers=covers if covers is not None else integer(d.get("lsn")),
        label=string(d.get("branch")),
    )


def _test(d: dict[str, Any], typ: str) -> Detail:
    passed = d.get("passed")
    return TestResult(
        command=text(d.get("cmd")),
        passed=passed if isinstance(passed, bool) else None,
        exit_code=integer(d.get("exit_code")),
        output=text(d.get("output_tail") or d.get("output")),
    )


def _recovery(d: dict[str, Any], typ: str) -> Detail:
    return Recovery(
        finding=string(d.get("finding")),
        action=string(d.get("action")),
        target=string(d.get("target")),
        tool=string(d.get("tool")),
        detail=text(d.get("detail")),
        brief=text(d.get("brief")),
    )


def _integrity(d: dict[str, Any], typ: str) -> Detail:
    if typ == "journal.recovered":
        return Integrity(
            what="torn tail cut off by repair", detail=text(d.get("broken_copy") or d.get("detail"))
        )
    if typ == "journal.continued":
        return Integrity(what="continued from an archived segment", detail=text(d.get("segment")))
    return Integrity(what=typ, detail=text(d.get("detail")))


def _run_end(d: dict[str, Any], typ: str) -> Detail:
    return RunEnd(
        status=string(d.get("status")) or ("cancelled" if typ == "cancel" else "completed"),
        reason=text(d.get("reason")),
    )


def _compaction(d: dict[str, Any], typ: str) -> Detail:
    return Compaction(trigger=string(d.get("trigger")), summary=text(d.get("summary")))


_BY_KIND = {
    "run_start": _run_start,
    "plan": _plan,
    "message": _message,
    "model_call": _model_call,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_request": _approval_request,
    "approval_decision": _approval_decision,
    "agent_spawn": _spawn,
    "agent_end": _end,
    "checkpoint": _checkpoint,
    "test_result": _test,
    "recovery": _recovery,
    "integrity": _integrity,
    "run_end": _run_end,
    "compaction": _compaction,
}
