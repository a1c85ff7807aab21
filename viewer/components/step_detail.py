"""Step detail: what one event was (content first), the intent→commit pair, the raw record folded.

The panel is built once and updated in place on every step (texts, props, visibility): creating
NiceGUI elements is what costs time, so stepping creates none unless a file change is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from nicegui import ui
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

from .common import as_text, fmt_when, status_color
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


class StepDetail:
    """One step's detail; :meth:`show` only changes texts unless the file change differs."""

    def __init__(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.shared = lsn_is_shared(session)
        self.targets: list[int | None] = [None, None]
        with ui.column().classes("w-full gap-2").mark("step-detail") as self.root:
            with ui.row().classes("items-center gap-2 w-full no-wrap"):
                title = ui.label().classes("wb-step-title text-base font-bold whitespace-nowrap")
                self.title = title.mark("detail-step")
                self.kind = ui.label().classes("wb-kind")
                self.type = ui.label().classes("text-grey-7 font-mono text-xs")
                self.status = ui.badge().classes("wb-status")
                self.badge = ui.badge(color="negative").mark("verify-badge")
                self.meta = ui.label().classes("text-xs text-grey-8 wb-ellipsis")
            self.what = ui.label().classes("font-mono wb-break text-sm").mark("detail-what")
            self.damage = ui.label().classes("text-negative text-sm wb-break").mark("damage")
            self.changes = FileChangePanel(ctx.sid)
            self.prose = ui.html("", sanitize=True).classes("wb-md w-full").mark("prose")
            self.fields = Fields().classes("w-full").mark("fields")
            with ui.card().tight().classes("w-full wb-pair").mark("pair") as self.pair_card:
                with ui.column().classes("p-2 gap-1"):
                    self.pair_head = ui.label().classes("text-xs uppercase text-grey-7")
                    with ui.row().classes("items-center gap-2"):
                        self.pair_line = ui.label().classes("font-mono wb-break text-sm")
                        self.pair_status = ui.badge()
                        self.links = [
                            ui.button(on_click=lambda: self._go(0))
                            .props("flat dense no-caps size=sm color=primary")
                            .mark("pair-link"),
                            ui.button(on_click=lambda: self._go(1))
                            .props("flat dense no-caps size=sm color=primary")
                            .mark("pair-link-2"),
                        ]
                    self.verify = ui.label().classes("text-sm").mark("verification")
                    self.error = ui.label().classes("wb-pre text-negative")
            with ui.expansion().classes("w-full wb-raw").mark("raw-record") as self.raw_box:
                self.raw = ui.label().classes("wb-pre")

    def set_session(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.shared = lsn_is_shared(session)
        self.changes.forget()

    def _go(self, k: int) -> None:
        target = self.targets[k]
        if target is not None:
            self.ctx.on_pick(target)

    def _link(self, k: int, label: str | None, target: int | None) -> None:
        self.targets[k] = target
        button = self.links[k]
        button.set_visibility(target is not None)
        if target is not None and label is not None:
            button.set_text(label)

    def show(self, i: int) -> None:
        s = self.session
        if not len(s):
            self.title.set_text("this session has no events")
            self.changes.show(None)
            return
        ev = s.event(i)
        detail = _detail(s, i)
        self.title.set_text(f"Step {i + 1}")
        self.kind.set_text(ev.kind.replace("_", " "))
        self.type.set_text(ev.type)
        _badge(self.status, ev.status)
        meta = [m for m in (where(s, i, shared=self.shared) or ev.agent, fmt_when(ev.ts)) if m]
        self.meta.set_text(" · ".join(meta))
        self.what.set_text(" ".join(x for x in (ev.tool, ev.target) if x))
        self.what.set_visibility(bool(ev.tool or ev.target))
        self._damage(i, ev.flags, detail)
        self.changes.show(self._change(i, ev.kind, ev.ref))
        text, thinking = _prose(detail)
        self.prose.set_content(prose_html(text, thinking) if (text or thinking) else "")
        self.prose.set_visibility(bool(text or thinking))
        self.fields.show(field_pairs(detail))
        self._pair(i, ev.kind, ev.ref, detail)
        self.raw_box.set_text(f"Raw record — {s.where(i)}")
        self.raw.set_text(as_text(_raw(s, i)))

    def _damage(self, i: int, flags: int, detail: Detail) -> None:
        """A placeholder's reason, a bundle's damage at this step, a redacted line."""
        notes: list[str] = []
        if flags & PLACEHOLDER and isinstance(detail, Integrity):
            reason = detail.reason or detail.what
            notes.append(f"This record could not be read: {reason}. Its raw text is below.")
        v = self.session.verification
        bad = getattr(v, "damage", None) if v is not None else None
        here = bad is not None and getattr(bad, "event", None) == i
        self.badge.set_visibility(here)
        if bad is not None and here:
            self.badge.set_text("bundle check failed here")
            notes.append(f"{bad.name}: {bad.reason} (at {bad.at})")
        redaction = _redaction(self.session, i)
        if redaction is not None:
            notes.append(
                "This line was redacted before signing ("
                + ", ".join(map(str, redaction.get("rules", [])))
                + f"); its hash: sha256 leaf {redaction.get('leaf', '')}"
            )
        self.damage.set_text("\n".join(notes))
        self.damage.set_visibility(bool(notes))

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

    def _pair(self, i: int, kind: str, ref: int | None, detail: Detail) -> None:
        s = self.session
        done = s.completion_of(i)
        head, line, status, error, verify = "", "", None, "", ""
        links: list[tuple[str | None, int | None]] = [(None, None), (None, None)]
        if kind == "tool_call":
            head = "intent → commit"
            if done is None:
                line = "no commit or failure recorded: the effect is unconfirmed (pending)"
            else:
                d = s.event(done)
                line, status = d.type, d.status
                links[0] = (f"step {done + 1}", done)
                verify, error = _outcome(_detail(s, done))
        elif ref is not None:
            r = s.event(ref)
            head = f"answers {r.type}"
            line = " ".join(x for x in (r.tool, r.target) if x) or r.kind
            links[0] = (f"step {ref + 1}", ref)
            verify, error = _outcome(detail)
        elif kind == "approval_request":
            head = "approval"
            line = "unanswered" if done is None else "decided"
            if done is not None:
                links[0] = (f"decision at step {done + 1}", done)
            gated = s.gated.get(i)
            if gated is not None:
                links[1] = (f"gated action at step {gated + 1}", gated)
        elif kind == "agent_spawn":
            head = "subagent"
            child = detail.child if isinstance(detail, AgentSpawn) else ""
            first = self._first_of(child) if child else None
            line = f"{child}" if first is not None else "child journal not found"
            if first is not None:
                links[0] = (f"its first step: {first + 1}", first)
        self.pair_card.set_visibility(bool(head))
        self.pair_head.set_text(head)
        self.pair_line.set_text(line)
        self.pair_status.set_visibility(status is not None)
        if status is not None:
            _badge(self.pair_status, status)
        for k, (label, target) in enumerate(links):
            self._link(k, label, target)
        self.verify.set_text(verify)
        self.verify.set_visibility(bool(verify))
        self.error.set_text(as_text(error, 2000))
        self.error.set_visibility(bool(error))

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


def _badge(badge: ui.badge, status: str) -> None:
    badge.set_text(status or "—")
    badge.props(f"color={status_color(status)}")


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
