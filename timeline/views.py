"""Views derived from a session's details: file changes, approvals, and their summaries.

Pure functions over :class:`Session`; each reads typed details (never a format's field names), so
every importer's sessions get the same views.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .details import ApprovalDecision, ApprovalRequest, FileEdit, ToolCall, ToolResult
from .kinds import FILE, INFERRED, KIND_INDEX
from .session import Session

APPROVED = frozenset({"approved", "approve", "yes", "allow", "allowed", "accepted"})


@dataclass
class FileChange:
    """One change of one file: the tool call that made it, what completed it, its hashes."""

    path: str
    event: int
    """Index of the tool call (intent)."""
    result: int | None
    """Index of the completing event, if any."""
    tool: str
    pre: str | None
    """``sha256:<hex>``, ``absent`` or None when the source does not say."""
    post: str | None
    """The verified post hash when the result gives one, else the intended one."""
    edit: FileEdit
    """Everything the source knows about the change (texts, patch, replaced strings)."""

    @property
    def pre_text(self) -> bytes | None:
        return _bytes(self.edit.pre_text)

    @property
    def post_text(self) -> bytes | None:
        return _bytes(self.edit.post_text)

    @property
    def patch(self) -> str | None:
        return self.edit.patch


def _bytes(text: str | None) -> bytes | None:
    return text.encode("utf-8") if text is not None else None


def file_change(session: Session, i: int) -> FileChange | None:
    """The file change made by tool call ``i`` (None if it is not a file-changing call)."""
    t = session.table
    if t.kind[i] != KIND_INDEX["tool_call"] or not t.flags[i] & FILE:
        return None
    call = session.detail(i)
    if not isinstance(call, ToolCall) or call.edit is None:
        return None
    edit = call.edit
    res = session.completion_of(i)
    post = edit.post
    if res is not None:
        done = session.detail(res)
        if isinstance(done, ToolResult) and done.edit is not None:
            edit = _merge(edit, done.edit)
            post = done.edit.post or post
    return FileChange(path=edit.path, event=i, result=res, tool=call.name, pre=edit.pre, post=post, edit=edit)


def _merge(call: FileEdit, result: FileEdit) -> FileEdit:
    """The call's edit completed by what the result adds (a text, a patch, a verified hash)."""
    update: dict[str, object] = {
        k: v
        for k in FileEdit.model_fields
        if k != "path"
        and (v := getattr(result, k)) not in (None, [], "")
        and getattr(call, k) in (None, [], "")
    }
    if result.post:
        update["post"] = result.post
    return call.model_copy(update=update) if update else call


def file_calls(session: Session) -> np.ndarray:
    """Indices of the tool calls that change a file, in session order."""
    t = session.table
    n = len(t)
    if not n:
        return np.zeros(0, np.int64)
    kind = np.frombuffer(t.kind, dtype=np.uint8)[:n]
    flags = np.frombuffer(t.flags, dtype=np.uint8)[:n]
    return np.flatnonzero((kind == KIND_INDEX["tool_call"]) & (flags & FILE != 0))


def files_summary(session: Session) -> list[dict[str, Any]]:
    """One entry per changed path: ``{path, changes, first_pre, last_post}`` (``show --json``)."""
    out: dict[str, dict[str, Any]] = {}
    for i in map(int, file_calls(session)):
        fc = file_change(session, i)
        if fc is None:
            continue
        entry = out.get(fc.path)
        if entry is None:
            entry = out[fc.path] = {"path": fc.path, "changes": 0, "first_pre": fc.pre, "last_post": None}
        entry["changes"] += 1
        entry["last_post"] = fc.post
    return list(out.values())


@dataclass
class Approval:
    """An approval request with its decision (None while unanswered).

    ``request`` is the request event, or for a decision the source wrote without a request (a
    user's rejection of a tool call) the event the decision answers."""

    request: int
    decision_event: int | None
    decision: str | None
    approver: str | None
    time: str | None
    reason: str | None
    tool: str
    target: str
    gated: int | None = None
    """Index of the action the approval gated, if it ran."""
    inferred: bool = False
    """The importer inferred it (no approval record in the source)."""

    @property
    def approved(self) -> bool | None:
        if self.decision is None:
            return None
        return self.decision.lower() in APPROVED


def approvals(session: Session) -> list[Approval]:
    """Every approval of the session, in the order of their requests."""
    t = session.table
    req = KIND_INDEX["approval_request"]
    dec = KIND_INDEX["approval_decision"]
    out: dict[int, Approval] = {}
    kinds = np.frombuffer(t.kind, dtype=np.uint8, count=len(t))
    for i in np.flatnonzero((kinds == req) | (kinds == dec)).tolist():
        k = t.kind[i]
        if k == req:
            d = session.detail(i)
            tool = d.tool if isinstance(d, ApprovalRequest) and d.tool else t.string(t.tool, i)
            target = d.target if isinstance(d, ApprovalRequest) and d.target else t.string(t.target, i)
            out[i] = Approval(i, None, None, None, None, None, tool, target, session.gated.get(i))
            out[i].inferred = bool(t.flags[i] & INFERRED)
        elif k == dec:
            ref = t.ref[i]
            a = out.get(ref)
            if a is None:
                if ref < 0:
                    continue
                a = out[ref] = Approval(
                    ref,
                    None,
                    None,
                    None,
                    None,
                    None,
                    t.string(t.tool, ref),
                    t.string(t.target, ref),
                    gated=ref if t.kind[ref] == KIND_INDEX["tool_call"] else None,
                )
            d = session.detail(i)
            ev = session.event(i)
            a.decision_event = i
            if isinstance(d, ApprovalDecision):
                a.decision = d.decision
                a.approver = d.approver or None
                a.reason = d.reason or None
                a.inferred = a.inferred or d.inferred
            else:
                a.decision = ev.status
            a.time = ev.time or None
    return sorted(out.values(), key=lambda a: a.request)


def approval_counts(items: list[Approval]) -> dict[str, int]:
    """``{requested, approved, denied, unanswered}`` (``show --json``)."""
    return {
        "requested": len(items),
        "approved": sum(1 for a in items if a.approved is True),
        "denied": sum(1 for a in items if a.approved is False),
        "unanswered": sum(1 for a in items if a.decision is None),
    }
