"""Typed details of Aider chat history events, built from each event's byte span of the markdown."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from walkback.timeline.details import (
    ApprovalDecision,
    ApprovalRequest,
    Checkpoint,
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
    text_hash,
)
from walkback.timeline.session import Event, Session

from .. import edit_blocks
from ..fields import TEXT_LIMIT, mapping, string, usage
from . import _lines as L


def details(session: Session, i: int) -> Detail:
    """The detail of event ``i`` of an Aider session."""
    ev = session.event(i)
    raw = string(mapping(session.raw(i)).get("text"))
    build = _BY_KIND.get(ev.kind, _other)
    return build(session, i, ev, raw)


def _at(session: Session, key: str, i: int) -> int:
    """Position in ``header[key]`` (event indices, ascending) of the last entry at or before ``i``."""
    events = session.header.get(key)
    return bisect_right(events, i) - 1 if isinstance(events, list) else -1


def _run_of(session: Session, i: int) -> dict[str, Any]:
    runs = session.header.get("runs")
    k = _at(session, "run_events", i)
    run = runs[k] if isinstance(runs, list) and 0 <= k < len(runs) else None
    return run if isinstance(run, dict) and run.get("event") == i else {}


def _model_at(session: Session, i: int) -> str:
    """The model in use at event ``i`` (the last banner or ``/model`` line before it)."""
    models = session.header.get("models")
    k = _at(session, "model_events", i)
    return str(models[k]) if isinstance(models, list) and 0 <= k < len(models) else ""


def _run_start(session: Session, i: int, ev: Event, raw: str) -> Detail:
    run = _run_of(session, i)
    banner = L.tool_text(raw.split("\n", 1)[1] if "\n" in raw else "").split("\n")
    version = string(run.get("version")).removeprefix("Aider ").removeprefix("v")
    settings = {"started": string(run.get("started")), "edit_format": string(run.get("edit_format"))}
    if banner and banner[0].strip():
        settings["command"] = banner[0].strip()[:TEXT_LIMIT]
    return RunStart(
        task=string(run.get("task")),
        producer=f"aider {version}".strip(),
        model=string(run.get("model")),
        settings={k: v for k, v in settings.items() if v},
    )


def _message(session: Session, i: int, ev: Event, raw: str) -> Detail:
    if ev.type == "assistant":
        return Message(role="assistant", text=raw[:TEXT_LIMIT], model=_model_at(session, i))
    return Message(role="user", text=L.user_text(raw)[:TEXT_LIMIT])


def _model_call(session: Session, i: int, ev: Event, raw: str) -> Detail:
    asked = [line[5:] for line in raw.split("\n") if line.startswith("USER ")]
    return ModelCall(model=ev.tool, summary=asked[-1][:500] if asked else "")


def _model_result(session: Session, i: int, ev: Event, raw: str) -> Detail:
    counts = L.tokens(raw)
    used = usage(counts.get("sent"), counts.get("cache hit"), counts.get("received"), None, None)
    cost = counts.get("cost")
    return ModelResult(
        model=ev.tool or _model_at(session, i),
        usage=used.model_copy(update={"cache_write_tokens": counts.get("cache write")}),
        cost=float(cost) if cost is not None else None,
        text=L.tool_text(raw)[:TEXT_LIMIT],
    )


def file_edit(kind: str, path: str, text: str) -> FileEdit:
    """The change a reply's blocks make to ``path`` (``text``: the blocks, as the call's span has them)."""
    if kind == "whole":
        found = [b for b in edit_blocks.whole_files(text) if b.path == path]
        body = found[-1].new if found else None
        return FileEdit(path=path, post_text=body, post=text_hash(body))
    if kind == "patch":
        diffs = [b.new for b in edit_blocks.file_diffs(text) if b.path == path]
        return FileEdit(path=path, patch="".join(diffs) or None)
    blocks = [b for b in edit_blocks.search_replace(text) if b.path == path]
    pairs = [(b.old or "", b.new) for b in blocks]
    if len(pairs) == 1:
        return FileEdit(path=path, old_string=pairs[0][0], new_string=pairs[0][1])
    return FileEdit(path=path, edits=pairs)


def _tool_call(session: Session, i: int, ev: Event, raw: str) -> Detail:
    if ev.type in ("replace", "whole", "patch"):
        edit = file_edit(ev.type, ev.target, raw)
        return ToolCall(name=ev.tool, arguments={"path": ev.target}, target=ev.target, edit=edit)
    if ev.type == "applied edit":
        return ToolCall(
            name=ev.tool, arguments={"path": ev.target}, target=ev.target, edit=FileEdit(path=ev.target)
        )
    if ev.type == "running":
        cmd = L.tool_text(raw).removeprefix("Running ").strip()
    else:
        found = L.command(L.user_text(raw))
        cmd = found[1] if found is not None else ev.target
    return ToolCall(name=ev.tool, arguments={"command": cmd}, target=ev.target, command=cmd)


def _tool_result(session: Session, i: int, ev: Event, raw: str) -> Detail:
    said = L.tool_text(raw)[:TEXT_LIMIT]
    ok = ev.status == "ok"
    if ev.type == "no output" and not ok:
        return ToolResult(ok=False, error="interrupted before any output was recorded")
    return ToolResult(ok=ok, output=said if ok else "", error="" if ok else said)


def _approval_request(session: Session, i: int, ev: Event, raw: str) -> Detail:
    asked = L.question(raw.encode("utf-8", "replace").split(b"\n", 1)[0])
    return ApprovalRequest(tool=ev.tool, target=ev.target, reason=asked[0] if asked else L.tool_text(raw))


def _approval_decision(session: Session, i: int, ev: Event, raw: str) -> Detail:
    answer = raw.rstrip()[-1:] if raw.strip() else ""
    return ApprovalDecision(decision=ev.status or "denied", approver="user", reason=f"answered {answer!r}")


def _checkpoint(session: Session, i: int, ev: Event, raw: str) -> Detail:
    said = L.tool_text(raw).removeprefix("Commit ").strip()
    return Checkpoint(git=ev.target, label=said.partition(" ")[2][:TEXT_LIMIT] or "aider commit")


def _error(session: Session, i: int, ev: Event, raw: str) -> Detail:
    return Error(message=L.tool_text(raw)[:TEXT_LIMIT], error_type=ev.type)


def _run_end(session: Session, i: int, ev: Event, raw: str) -> Detail:
    if ev.type == "no end":
        return RunEnd(
            status=ev.status, reason="the next run started while edits or a command were unfinished"
        )
    return RunEnd(status=ev.status, reason=L.tool_text(raw))


def _other(session: Session, i: int, ev: Event, raw: str) -> Detail:
    said = [line for line in L.tool_text(raw).split("\n") if line.strip()]
    return Other(type=ev.type, summary=said[0][:500] if said else "")


_Build = Callable[[Session, int, Event, str], Detail]
_BY_KIND: dict[str, _Build] = {
    "run_start": _run_start,
    "message": _message,
    "model_call": _model_call,
    "model_result": _model_result,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "approval_request": _approval_request,
    "approval_decision": _approval_decision,
    "checkpoint": _checkpoint,
    "error": _error,
    "run_end": _run_end,
}
