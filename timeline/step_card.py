"""One step as the viewer and the HTML replay both show it: its head, the damage noted at it, and
the pair it belongs to (intent→commit, request→decision, spawn→child). One function, so the two
renderings of a step never tell different stories.

Plain data only (strings, numbers, step indices); how it is drawn is each renderer's business,
and every string is shown as text, never as markup (a journal's content is written by a model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from walkback.journal.errors import WalkbackError

from .details import AgentSpawn, Detail, Integrity, ToolResult
from .kinds import PLACEHOLDER
from .query import columns
from .session import Session
from .story import where


def detail_of(session: Session, i: int) -> Detail:
    """Event ``i``'s detail, or an integrity note when its record cannot be read."""
    try:
        return session.detail(i)
    except (OSError, ValueError, WalkbackError) as e:
        return Integrity(what="unreadable record", reason=str(e))


def step_card(session: Session, i: int, *, shared: bool, detail: Detail | None = None) -> dict[str, Any]:
    """What step ``i`` shows above its content: ``title``, ``kind``, ``type``, ``status``, ``where``
    (agent:lsn), ``ts``, ``what`` (tool and target), ``badge`` and ``damage`` (notes), and
    ``pair`` (``head``, ``line``, ``status``, ``links``: ``[label, step index]``, ``verify``,
    ``error``). ``shared``: lsns repeat across agents (:func:`~.story.lsn_is_shared`)."""
    ev = session.event(i)
    detail = detail if detail is not None else detail_of(session, i)
    badge, damage = _damage(session, i, ev.flags, detail)
    return {
        "title": f"Step {i + 1}",
        "kind": ev.kind.replace("_", " "),
        "type": ev.type,
        "status": ev.status or "—",
        "where": where(session, i, shared=shared) or ev.agent,
        "ts": ev.ts,
        "what": " ".join(x for x in (ev.tool, ev.target) if x),
        "badge": badge,
        "damage": damage,
        "pair": _pair(session, i, ev.kind, ev.ref, detail),
        "raw_label": f"Raw record — {session.where(i)}",
    }


def _outcome(detail: Detail) -> tuple[str, str]:
    """The verification line and the error text of a result."""
    if isinstance(detail, ToolResult):
        return detail.verification + (" · committed by recovery" if detail.recovered else ""), detail.error
    return "", ""


def _damage(session: Session, i: int, flags: int, detail: Detail) -> tuple[str, str]:
    """The badge and the notes: a placeholder's reason, a bundle's damage at this step, a redacted
    line."""
    notes: list[str] = []
    if flags & PLACEHOLDER and isinstance(detail, Integrity):
        reason = detail.reason or detail.what
        notes.append(f"This record could not be read: {reason}. Its raw text is below.")
    v = session.verification
    bad = getattr(v, "damage", None) if v is not None else None
    badge = ""
    if bad is not None and getattr(bad, "event", None) == i:
        badge = "bundle check failed here"
        notes.append(f"{bad.name}: {bad.reason} (at {bad.at})")
    redaction = redaction_at(session, i)
    if redaction is not None:
        notes.append(
            "This line was redacted before signing ("
            + ", ".join(map(str, redaction.get("rules", [])))
            + f"); its hash: sha256 leaf {redaction.get('leaf', '')}"
        )
    return badge, "\n".join(notes)


def redaction_at(session: Session, i: int) -> dict[str, Any] | None:
    """The redaction of event ``i``'s line when the session came from a bundle that redacted it."""
    v = session.verification
    folder = getattr(v, "folder", None)
    if v is None or folder is None or not session.sources:
        return None
    ev = session.event(i)
    try:
        name = Path(ev.source).relative_to(folder).as_posix()
    except ValueError:
        return None
    found = v.redacted(name, ev.line)
    return found if isinstance(found, dict) else None


def _pair(session: Session, i: int, kind: str, ref: int | None, detail: Detail) -> dict[str, Any]:
    s = session
    done = s.completion_of(i)
    head, line, status, error, verify = "", "", None, "", ""
    links: list[list[Any]] = []
    if kind == "tool_call":
        head = "intent → commit"
        if done is None:
            line = "no commit or failure recorded: the effect is unconfirmed (pending)"
        else:
            d = s.event(done)
            line, status = d.type, d.status
            links.append([f"step {done + 1}", done])
            verify, error = _outcome(detail_of(s, done))
    elif ref is not None:
        r = s.event(ref)
        head = f"answers {r.type}"
        line = " ".join(x for x in (r.tool, r.target) if x) or r.kind
        links.append([f"step {ref + 1}", ref])
        verify, error = _outcome(detail)
    elif kind == "approval_request":
        head = "approval"
        line = "unanswered" if done is None else "decided"
        if done is not None:
            links.append([f"decision at step {done + 1}", done])
        gated = s.gated.get(i)
        if gated is not None:
            links.append([f"gated action at step {gated + 1}", gated])
    elif kind == "agent_spawn":
        head = "subagent"
        child = detail.child if isinstance(detail, AgentSpawn) else ""
        first = first_step_of(s, child) if child else None
        line = f"{child}" if first is not None else "child journal not found"
        if first is not None:
            links.append([f"its first step: {first + 1}", first])
    return {"head": head, "line": line, "status": status, "links": links, "verify": verify, "error": error}


def first_step_of(session: Session, agent_id: str) -> int | None:
    """The index of an agent's first event, if it has any."""
    agent = session.agents.get(agent_id)
    code = session.table.pool.find(agent.id) if agent else None
    if code is None:
        return None
    first = np.flatnonzero(columns(session).agent == code)[:1]
    return int(first[0]) if len(first) else None
