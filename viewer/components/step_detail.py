"""Step detail: what one event was (content first), the intent→commit pair, the raw record folded.

The panel is built once and updated in place on every step: its card (``step_card.js``: head,
pair, raw record) takes one dict, the fields and the message their own. Creating NiceGUI elements
is what costs time, so stepping creates none unless a file change is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from nicegui import events, ui
from walkback.journal.errors import WalkbackError
from walkback.timeline.changes import ChangeView, change_view
from walkback.timeline.details import (
    AgentSpawn,
    Detail,
    Integrity,
    Message,
    ModelResult,
    ToolCall,
    ToolResult,
)
from walkback.timeline.kinds import PLACEHOLDER
from walkback.timeline.query import columns
from walkback.timeline.session import Session
from walkback.timeline.story import lsn_is_shared, where

from .common import Component, as_text, fmt_when, status_color
from .conversation import prose_html
from .file_change import FileChangePanel
from .text import Fields, flatten

MAX_FIELDS = 60
SHOWN_ELSEWHERE = {"kind", "text", "thinking"}
"""Fields the panel shows above the list (a message's text as markdown, its thinking folded)."""
IN_THE_DIFF = {"edit.pre_text", "edit.post_text"}
"""A file change's whole images: the diff shows them (and the blobs download them)."""


@dataclass
class DetailContext:
    """What the detail panel needs besides the event: where files live and how to jump."""

    sid: str
    files: dict[str, np.ndarray]
    workspace: Path | None
    on_pick: Callable[[int], None]


def step_button(label: str, index: int, on_pick: Callable[[int], None]) -> ui.button:
    return ui.button(label, on_click=lambda: on_pick(index)).props("flat dense no-caps size=sm color=primary")


def field_pairs(detail: Detail) -> list[tuple[str, Any]]:
    """The fields the detail sets, nested ones as dotted keys (each string shown as text); an empty
    one says nothing (a commit's change knows its hashes, not the path its intent names)."""
    data = {k: v for k, v in detail.model_dump(exclude_defaults=True).items() if k not in SHOWN_ELSEWHERE}
    if isinstance(detail, ToolCall):
        data.pop("name", None)  # in the "what" line
    pairs = [(k, v) for k, v in flatten(data) if k not in IN_THE_DIFF and v not in ("", [], {})]
    if len(pairs) > MAX_FIELDS:
        pairs = pairs[:MAX_FIELDS] + [("…", f"{len(pairs) - MAX_FIELDS} more fields in the raw record")]
    return pairs


def _outcome(detail: Detail) -> tuple[str, str]:
    """The verification line and the error text of a result."""
    if isinstance(detail, ToolResult):
        return detail.verification + (" · committed by recovery" if detail.recovered else ""), detail.error
    return "", ""


def _prose(detail: Detail) -> tuple[str, str]:
    """A message's (or a model answer's) text and thinking."""
    if isinstance(detail, Message):
        return detail.text, detail.thinking
    if isinstance(detail, ModelResult):
        return detail.text, ""
    return "", ""


class StepCard(Component, component="step_card.js"):
    """The card around a step (head, pair, raw record) as one element; children go in its middle."""

    def __init__(self) -> None:
        super().__init__()
        self._props["card"] = {}

    def texts(self) -> list[Any]:
        card = self._props["card"]
        pair = card.get("pair") or {}
        texts = [card.get(k) for k in ("title", "kind", "type", "status", "badge", "meta", "what", "damage")]
        texts += [pair.get(k) for k in ("head", "line", "status", "verify", "error")]
        return [*texts, *(label for label, _ in pair.get("links", [])), card.get("raw_label")]


class StepDetail:
    """One step's detail; :meth:`show` sends one card and the fields, and builds elements only
    for a file change it has not shown yet."""

    def __init__(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.shared = lsn_is_shared(session)
        self.targets: list[int] = []
        with StepCard().classes("w-full gap-2").mark("step-detail") as self.card:
            self.changes = FileChangePanel(ctx.sid)
            self.prose = ui.html("", sanitize=True).classes("wb-md w-full").mark("prose")
            self.fields = Fields().classes("w-full").mark("fields")
        self.card.on("go", self._go)

    def set_session(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.shared = lsn_is_shared(session)
        self.changes.forget()

    def _go(self, e: events.GenericEventArguments) -> None:
        k = e.args
        if isinstance(k, int) and 0 <= k < len(self.targets):
            self.ctx.on_pick(self.targets[k])

    def show(self, i: int) -> None:
        s = self.session
        if not len(s):
            self.card.send(card={"title": "this session has no events"})
            self.changes.show(None)
            return
        ev = s.event(i)
        detail = _detail(s, i)
        meta = [m for m in (where(s, i, shared=self.shared) or ev.agent, fmt_when(ev.ts)) if m]
        badge, damage = self._damage(i, ev.flags, detail)
        self.changes.show(self._change(i, ev.kind, ev.ref))
        text, thinking = _prose(detail)
        self.prose.set_content(prose_html(text, thinking) if (text or thinking) else "")
        self.prose.set_visibility(bool(text or thinking))
        self.fields.show(field_pairs(detail))
        self.card.send(
            card={
                "title": f"Step {i + 1}",
                "kind": ev.kind.replace("_", " "),
                "type": ev.type,
                "status": ev.status or "—",
                "color": status_color(ev.status),
                "badge": badge,
                "meta": " · ".join(meta),
                "what": " ".join(x for x in (ev.tool, ev.target) if x),
                "damage": damage,
                "pair": self._pair(i, ev.kind, ev.ref, detail),
                "raw_label": f"Raw record — {s.where(i)}",
                "raw": as_text(_raw(s, i)),
            }
        )

    def _damage(self, i: int, flags: int, detail: Detail) -> tuple[str, str]:
        """The badge and the notes: a placeholder's reason, a bundle's damage at this step, a
        redacted line."""
        notes: list[str] = []
        if flags & PLACEHOLDER and isinstance(detail, Integrity):
            reason = detail.reason or detail.what
            notes.append(f"This record could not be read: {reason}. Its raw text is below.")
        v = self.session.verification
        bad = getattr(v, "damage", None) if v is not None else None
        here = bad is not None and getattr(bad, "event", None) == i
        badge = ""
        if bad is not None and here:
            badge = "bundle check failed here"
            notes.append(f"{bad.name}: {bad.reason} (at {bad.at})")
        redaction = _redaction(self.session, i)
        if redaction is not None:
            notes.append(
                "This line was redacted before signing ("
                + ", ".join(map(str, redaction.get("rules", [])))
                + f"); its hash: sha256 leaf {redaction.get('leaf', '')}"
            )
        return badge, "\n".join(notes)

    def _change(self, i: int, kind: str, ref: int | None) -> ChangeView | None:
        call = i if kind == "tool_call" else (ref if kind == "tool_result" and ref is not None else None)
        if call is None:
            return None
        if self.changes.showing(call):
            return self.changes.view
        target = self.session.event(call).target
        try:
            return change_view(
                self.session, call, history=self.ctx.files.get(target), workspace=self.ctx.workspace
            )
        except (OSError, ValueError, WalkbackError):
            return None

    def _pair(self, i: int, kind: str, ref: int | None, detail: Detail) -> dict[str, Any]:
        """The intent→commit pair (or the request→decision, the spawn→child); its links go to
        ``self.targets``."""
        s = self.session
        done = s.completion_of(i)
        head, line, status, error, verify = "", "", None, "", ""
        links: list[tuple[str, int]] = []
        if kind == "tool_call":
            head = "intent → commit"
            if done is None:
                line = "no commit or failure recorded: the effect is unconfirmed (pending)"
            else:
                d = s.event(done)
                line, status = d.type, d.status
                links.append((f"step {done + 1}", done))
                verify, error = _outcome(_detail(s, done))
        elif ref is not None:
            r = s.event(ref)
            head = f"answers {r.type}"
            line = " ".join(x for x in (r.tool, r.target) if x) or r.kind
            links.append((f"step {ref + 1}", ref))
            verify, error = _outcome(detail)
        elif kind == "approval_request":
            head = "approval"
            line = "unanswered" if done is None else "decided"
            if done is not None:
                links.append((f"decision at step {done + 1}", done))
            gated = s.gated.get(i)
            if gated is not None:
                links.append((f"gated action at step {gated + 1}", gated))
        elif kind == "agent_spawn":
            head = "subagent"
            child = detail.child if isinstance(detail, AgentSpawn) else ""
            first = self._first_of(child) if child else None
            line = f"{child}" if first is not None else "child journal not found"
            if first is not None:
                links.append((f"its first step: {first + 1}", first))
        self.targets = [target for _, target in links]
        return {
            "head": head,
            "line": line,
            "status": status,
            "color": status_color(status or ""),
            "links": [[label, k] for k, (label, _) in enumerate(links)],
            "verify": verify,
            "error": as_text(error, 2000),
        }

    def _first_of(self, agent_id: str) -> int | None:
        agent = self.session.agents.get(agent_id)
        code = self.session.table.pool.find(agent.id) if agent else None
        if code is None:
            return None
        first = np.flatnonzero(columns(self.session).agent == code)[:1]
        return int(first[0]) if len(first) else None


def _redaction(session: Session, i: int) -> dict[str, Any] | None:
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


def _raw(session: Session, i: int) -> Any:
    try:
        return session.raw(i)
    except (OSError, ValueError, WalkbackError):
        return {"_unreadable": "the record could not be read from its source"}


def _detail(session: Session, i: int) -> Detail:
    try:
        return session.detail(i)
    except (OSError, ValueError, WalkbackError) as e:
        return Integrity(what="unreadable record", reason=str(e))
