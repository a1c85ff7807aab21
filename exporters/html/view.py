"""What the HTML replay's page knows beyond the bundle it carries: each step's card (the one the
viewer shows, :func:`walkback.timeline.step_card.step_card`), its one-line summary, the agents and
their lanes, the file changes with their diffs and hash badges, approvals, crashes, recoveries and
the resume brief. The records themselves are not repeated: the page reads each raw record from the
bundle's artifacts by its ``(artifact, line)``.

The data comes in two parts so that a page of any size draws its first step at once: the index
(what the header, the lanes, the step list and the ledgers need, a few bytes a step) and the
steps' cards and diffs in blocks of :data:`BLOCK` steps, each unpacked only when a step in it is
shown (or a search reads them all).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from walkback.timeline.changes import MAX_DIFF_LINES, change_view
from walkback.timeline.details import Recovery
from walkback.timeline.kinds import PLACEHOLDER
from walkback.timeline.query import file_rows
from walkback.timeline.session import Session
from walkback.timeline.step_card import detail_of, step_card
from walkback.timeline.story import agent_stories, crashes, lsn_is_shared
from walkback.timeline.summary import summary
from walkback.timeline.views import approvals

PROBLEMS = frozenset({"failed", "pending", "denied", "in_doubt", "torn", "corrupt", "skipped", "recovered"})
BLOCK = 1000
"""Steps per block of cards and diffs: small enough to unpack in a few milliseconds, large enough
that gzip still finds the repeats between steps."""


@dataclass(frozen=True)
class View:
    """The page's data: the ``index`` (header, agents, ledgers, each step's summary, kind, lane and
    raw record's place) and the ``blocks`` (per :data:`BLOCK` steps: ``card`` and ``changes``)."""

    index: dict[str, Any]
    blocks: list[dict[str, Any]]


def view_data(session: Session, root: Path | None, head: dict[str, Any]) -> View:
    """The page's data for ``session`` (read from a bundle extracted under ``root``)."""
    shared = lsn_is_shared(session)
    names = [_name(s.path, root) for s in session.sources]
    agents = list(session.agents)
    lane = {a: k for k, a in enumerate(agents)}
    history = file_rows(session)
    steps: dict[str, list[Any]] = {k: [] for k in ("sum", "agent", "kind", "src", "line", "problem")}
    blocks: list[dict[str, Any]] = []
    brief = session.brief
    for i in range(len(session)):
        ev = session.event(i)
        detail = detail_of(session, i)
        card = step_card(session, i, shared=shared, detail=detail)
        t = session.table
        card["raw_label"] = f"Raw record — {names[t.src[i]]}:{t.line[i]}" if names else ""
        if i % BLOCK == 0:
            blocks.append({"card": [], "changes": {}})
        blocks[-1]["card"].append(card)
        steps["sum"].append(summary(ev, detail))
        steps["agent"].append(lane.get(ev.agent, 0))
        steps["kind"].append(ev.kind)
        steps["src"].append(int(t.src[i]))
        steps["line"].append(int(t.line[i]))
        steps["problem"].append(int(ev.status in PROBLEMS or ev.kind in ("recovery", "integrity")))
        if ev.kind == "tool_call" and not ev.flags & PLACEHOLDER:
            change = _change(session, i, history.get(ev.target))
            if change is not None:
                blocks[-1]["changes"][str(i)] = change
        if not brief and isinstance(detail, Recovery) and detail.brief:
            brief = detail.brief
    stories = {s.agent: s for s in agent_stories(session)}
    index = {
        "head": head,
        "block": BLOCK,
        "artifacts": names,
        "agents": [
            {
                "id": a.id,
                "label": a.label or a.id,
                "parent": a.parent,
                "outcome": a.outcome,
                "events": a.events,
                "story": stories[a.id].line if a.id in stories else a.outcome,
            }
            for a in session.agents.values()
        ],
        "steps": steps,
        "approvals": [
            {
                "request": x.request,
                "decision": x.decision,
                "at": x.decision_event,
                "approver": x.approver,
                "reason": x.reason,
                "what": " ".join(p for p in (x.tool, x.target) if p),
                "gated": x.gated,
            }
            for x in approvals(session)
        ],
        "crashes": [
            {"after": c.after, "text": c.text(session), "resumed": c.resumed} for c in crashes(session)
        ],
        "brief": brief,
    }
    return View(index, blocks)


def _name(path: Path, root: Path | None) -> str:
    """A source's name in the bundle (never a path of the exporting machine)."""
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.name


def _change(session: Session, i: int, history: Any) -> dict[str, Any] | None:
    """A file change's hashes, badges and unified diff (clipped to ``MAX_DIFF_LINES`` lines)."""
    view = change_view(session, i, history=history)
    if view is None:
        return None
    diff: list[str] = []
    if view.binary:
        note = "binary content: no text diff"
    elif view.too_large:
        note = "too large to diff here"
    elif view.pre_text is None and view.post_text is None:
        note = view.change.patch or "the source records neither image: no diff"
    else:
        note = ""
        pre = (view.pre_text or b"").decode("utf-8", "replace").splitlines(keepends=True)
        post = (view.post_text or b"").decode("utf-8", "replace").splitlines(keepends=True)
        diff = list(difflib.unified_diff(pre, post, "pre", "post", n=3))[:MAX_DIFF_LINES]
    return {
        "path": view.change.path,
        "pre": view.change.pre,
        "post": view.change.post,
        "badges": [[b.label, b.ok, b.detail] for b in view.badges],
        "diff": "".join(diff),
        "note": note,
        "previous": view.previous,
    }
