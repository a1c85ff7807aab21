"""Step detail: what one event was, the intent→commit pair with its verification, the raw record.

The panel is built once and updated in place on every step (texts, colours, visibility): creating
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
from walkback.timeline.details import AgentSpawn, Detail, Integrity, ToolResult
from walkback.timeline.query import columns
from walkback.timeline.session import Session

from .common import as_text, fmt_time, pre, status_color
from .file_change import FileChangePanel

MAX_FIELDS = 40
KEY_WIDTH = 14


@dataclass
class DetailContext:
    """What the detail panel needs besides the event: where files live and how to jump."""

    sid: str
    files: dict[str, np.ndarray]
    workspace: Path | None
    on_pick: Callable[[int], None]


def step_button(label: str, index: int, on_pick: Callable[[int], None]) -> ui.button:
    return ui.button(label, on_click=lambda: on_pick(index)).props("flat dense no-caps size=sm color=primary")


def fields_text(detail: Detail) -> str:
    """The event's content as aligned ``key  value`` lines (the fields its detail sets)."""
    fields = [(k, v) for k, v in detail.model_dump(exclude_defaults=True).items() if k != "kind"]
    lines = []
    for k, v in fields[:MAX_FIELDS]:
        pad = " " * max(KEY_WIDTH - len(k), 1)
        value = as_text(v).replace("\n", "\n" + " " * (max(KEY_WIDTH, len(k) + 1)))
        lines.append(f"{k}{pad}{value}")
    if len(fields) > MAX_FIELDS:
        lines.append(f"… {len(fields) - MAX_FIELDS} more fields in the raw record")
    return "\n".join(lines)


def _outcome(detail: Detail) -> tuple[str, str]:
    """The verification line and the error text of a result."""
    if isinstance(detail, ToolResult):
        return detail.verification + (" · committed by recovery" if detail.recovered else ""), detail.error
    return "", ""


class StepDetail:
    """One step's detail; :meth:`show` only changes texts unless the file change differs."""

    def __init__(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.targets: list[int | None] = [None, None]
        with ui.column().classes("w-full gap-2").mark("step-detail") as self.root:
            with ui.row().classes("items-center gap-2"):
                self.title = ui.label().classes("text-lg font-bold").mark("detail-step")
                self.kind = ui.label().classes("wb-kind")
                self.type = ui.label().classes("text-grey-7 font-mono")
                self.status = ui.badge().classes("wb-status")
            self.meta = ui.label().classes("text-sm text-grey-8")
            self.what = ui.label().classes("font-mono wb-break")
            with ui.card().tight().classes("w-full wb-pair").mark("pair"):
                with ui.column().classes("p-2 gap-1"):
                    self.pair_head = ui.label().classes("text-xs uppercase text-grey-7")
                    with ui.row().classes("items-center gap-2"):
                        self.pair_line = ui.label().classes("font-mono wb-break")
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
                    self.error = pre("").classes("text-negative")
            self.fields = pre("").classes("wb-fields").mark("fields")
            with ui.expansion().classes("w-full wb-raw").mark("raw-record") as self.raw_box:
                self.raw = pre("")
        self.changes = FileChangePanel(ctx.sid)

    def set_session(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
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
        raw = _raw(s, i)
        detail = _detail(s, i)
        self.title.set_text(f"Step {i + 1}")
        self.kind.set_text(ev.kind)
        self.type.set_text(ev.type)
        _badge(self.status, ev.status)
        meta = [f"agent {ev.agent}"]
        if ev.lsn is not None:
            meta.append(f"lsn {ev.lsn}")
        if ev.ts is not None:
            meta.append(fmt_time(ev.ts, date=True) + fmt_time(ev.ts)[8:] + " UTC")
        self.meta.set_text(" · ".join(meta))
        self.what.set_text(" ".join(x for x in (ev.tool, ev.target) if x))
        self.what.set_visibility(bool(ev.tool or ev.target))
        self._pair(i, ev.kind, ev.ref, detail)
        self.fields.set_text(fields_text(detail))
        self.raw_box.set_text(f"Raw record — {s.where(i)}")
        self.raw.set_text(as_text(raw))
        self.changes.show(self._change(i, ev.kind, ev.ref))

    def _change(self, i: int, kind: str, ref: int | None) -> ChangeView | None:
        call = i if kind == "tool_call" else (ref if kind == "tool_result" and ref is not None else None)
        if call is None:
            return None
        if self.changes.showing(call):
            return self.changes.view
        target = self.session.event(call).target
        return change_view(
            self.session, call, history=self.ctx.files.get(target), workspace=self.ctx.workspace
        )

    def _pair(self, i: int, kind: str, ref: int | None, detail: Detail) -> None:
        s = self.session
        done = s.completion_of(i)
        head, line, status, error, verify = "no paired record", "", None, "", ""
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
