"""Step detail: what one event was, the intent→commit pair with its verification, the raw record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from nicegui import ui

from timeline.changes import ChangeView, change_view
from timeline.model import Session
from timeline.query import columns

from .common import as_text, fmt_time, pre, status_badge
from .file_change import FileChangePanel

ENVELOPE = frozenset({"v", "lsn", "ts", "run", "agent", "type", "ref", "prev", "h"})
MAX_FIELDS = 40


@dataclass
class DetailContext:
    """What the detail panel needs besides the event: where files live and how to jump."""

    sid: str
    files: dict[str, np.ndarray]
    workspace: Path | None
    on_pick: Callable[[int], None]


def step_button(label: str, index: int, on_pick: Callable[[int], None]) -> ui.button:
    return ui.button(label, on_click=lambda: on_pick(index)).props("flat dense no-caps size=sm color=primary")


class StepDetail:
    """Rebuilt on every step; cheap because it holds only one event's worth of elements."""

    def __init__(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx
        self.root = ui.column().classes("w-full gap-2").mark("step-detail")
        with ui.column().classes("w-full") as self.change_box:
            self.changes = FileChangePanel(ctx.sid)

    def set_session(self, session: Session, ctx: DetailContext) -> None:
        self.session = session
        self.ctx = ctx

    def show(self, i: int) -> None:
        s = self.session
        self.root.clear()
        if not len(s):
            with self.root:
                ui.label("this session has no events")
            self.changes.show(None)
            return
        ev = s.event(i)
        raw = _raw(s, i)
        with self.root:
            with ui.row().classes("items-center gap-2"):
                ui.label(f"Step {i + 1}").classes("text-lg font-bold").mark("detail-step")
                ui.label(ev.kind).classes("wb-kind")
                ui.label(ev.type).classes("text-grey-7 font-mono")
                status_badge(ev.status)
            with ui.row().classes("gap-4 text-sm text-grey-8"):
                ui.label(f"agent {ev.agent}")
                if ev.lsn is not None:
                    ui.label(f"lsn {ev.lsn}")
                if ev.ts is not None:
                    ui.label(fmt_time(ev.ts, date=True) + fmt_time(ev.ts)[8:] + " UTC")
            if ev.tool or ev.target:
                with ui.row().classes("gap-2 items-baseline"):
                    if ev.tool:
                        ui.label(ev.tool).classes("font-mono font-bold")
                    if ev.target:
                        ui.label(ev.target).classes("font-mono wb-break")
            self._pair(i, ev.kind, ev.ref, raw)
            self._fields(raw)
            with ui.expansion(f"Raw record — {ev.source}:{ev.line}").classes("w-full wb-raw").mark("raw-record"):
                pre(as_text(raw))
        self.changes.show(self._change(i, ev.kind, ev.ref))

    def _change(self, i: int, kind: str, ref: int | None) -> ChangeView | None:
        call = i if kind == "tool_call" else (ref if kind == "tool_result" and ref is not None else None)
        if call is None:
            return None
        target = self.session.event(call).target
        return change_view(self.session, call, history=self.ctx.files.get(target), workspace=self.ctx.workspace)

    def _pair(self, i: int, kind: str, ref: int | None, raw: dict[str, Any]) -> None:
        s, pick = self.session, self.ctx.on_pick
        done = s.completion_of(i)
        with ui.card().tight().classes("w-full wb-pair").mark("pair"):
            with ui.column().classes("p-2 gap-1"):
                if kind == "tool_call":
                    ui.label("intent → commit").classes("text-xs uppercase text-grey-7")
                    if done is None:
                        ui.label("no commit or failure recorded: the effect is unconfirmed (pending)").classes(
                            "text-warning"
                        )
                    else:
                        with ui.row().classes("items-center gap-2"):
                            d = s.event(done)
                            ui.label(f"{d.type}")
                            status_badge(d.status)
                            step_button(f"step {done + 1}", done, pick).mark("pair-link")
                        _verification(_raw(s, done))
                elif ref is not None:
                    r = s.event(ref)
                    ui.label(f"answers {r.type}").classes("text-xs uppercase text-grey-7")
                    with ui.row().classes("items-center gap-2"):
                        ui.label(" ".join(x for x in (r.tool, r.target) if x) or r.kind).classes("font-mono wb-break")
                        step_button(f"step {ref + 1}", ref, pick).mark("pair-link")
                    _verification(raw)
                elif kind == "approval_request":
                    ui.label("approval").classes("text-xs uppercase text-grey-7")
                    if done is None:
                        ui.label("unanswered").classes("text-warning")
                    else:
                        step_button(f"decision at step {done + 1}", done, pick)
                    gated = s.gated.get(i)
                    if gated is not None:
                        step_button(f"gated action at step {gated + 1}", gated, pick)
                else:
                    ui.label("no paired record").classes("text-xs text-grey-6")
                if kind == "agent_spawn":
                    self._child_link(raw)

    def _child_link(self, raw: dict[str, Any]) -> None:
        child = raw.get("child_agent")
        agent = self.session.agents.get(child) if isinstance(child, str) else None
        if agent is None:
            ui.label("child journal not found").classes("text-grey-7")
            return
        code = self.session.table.pool.find(agent.id)
        first = np.flatnonzero(columns(self.session).agent == code)[:1]
        if len(first):
            step_button(f"first step of {agent.id}: {int(first[0]) + 1}", int(first[0]), self.ctx.on_pick)

    def _fields(self, raw: dict[str, Any]) -> None:
        fields = [(k, v) for k, v in raw.items() if k not in ENVELOPE and not k.startswith("_")]
        if not fields:
            return
        with ui.grid(columns="auto 1fr").classes("w-full gap-x-3 gap-y-1 wb-fields").mark("fields"):
            for k, v in fields[:MAX_FIELDS]:
                ui.label(str(k)).classes("font-mono text-grey-7")
                pre(as_text(v))
            if len(fields) > MAX_FIELDS:
                ui.label(f"… {len(fields) - MAX_FIELDS} more fields in the raw record").classes("col-span-2")


def _verification(rec: dict[str, Any]) -> None:
    verified = rec.get("verified")
    if isinstance(verified, dict):
        post_ok = verified.get("post")
        with ui.row().classes("items-center gap-2"):
            ui.label("verified post hash:")
            status_badge("ok" if post_ok is True else ("failed" if post_ok is False else "unknown"))
            check = verified.get("check")
            if isinstance(check, dict):
                code = check.get("exit_code")
                ui.label(f"check `{as_text(check.get('cmd', ''), 200)}` exit {code}").classes("font-mono")
                status_badge("ok" if code == 0 else "failed")
    if rec.get("recovered") is True:
        status_badge("recovered")
    if "error" in rec:
        pre(as_text(rec["error"], 2000)).classes("text-negative")


def _raw(session: Session, i: int) -> dict[str, Any]:
    try:
        return session.raw(i)
    except (OSError, ValueError):
        return {"_unreadable": "the record could not be read from its source"}
