"""Tabs that list one thing each: files changed, approvals."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from nicegui import events, ui
from walkback.timeline.session import Session
from walkback.timeline.views import Approval

from .common import fmt_when
from .step_detail import step_button

MAX_HISTORY = 200
TABLE_PROPS = "dense flat wrap-cells"


def _on_row(table: ui.table, field: str, on_pick: Callable[[int], None]) -> None:
    def handler(e: events.GenericEventArguments) -> None:
        row = e.args[1] if isinstance(e.args, list) and len(e.args) > 1 else None
        value = row.get(field) if isinstance(row, dict) else None
        if isinstance(value, int) and value >= 1:
            on_pick(value - 1)

    table.on("rowClick", handler, args=[[], [field], None])


# -- files --------------------------------------------------------------------------------------
def files_panel(
    session: Session,
    files: dict[str, np.ndarray],
    on_pick: Callable[[int], None],
    on_filter: Callable[[str], Awaitable[None] | None],
) -> None:
    """Every file touched, and on selection its history of changes as links to steps."""
    rows = [
        {
            "path": path,
            "changes": len(idx),
            "first": int(idx[0]) + 1,
            "last": int(idx[-1]) + 1,
            "status": session.event(int(idx[-1])).status,
        }
        for path, idx in sorted(files.items())
    ]
    cols: list[dict[str, Any]] = [
        {"name": "path", "label": "File", "field": "path", "align": "left", "sortable": True},
        {"name": "changes", "label": "Changes", "field": "changes", "sortable": True},
        {"name": "first", "label": "First step", "field": "first", "sortable": True},
        {"name": "last", "label": "Last step", "field": "last", "sortable": True},
        {"name": "status", "label": "Last status", "field": "status", "align": "left"},
    ]
    if not rows:
        ui.label("no file was touched").classes("text-grey-7")
        return

    def show(e: events.GenericEventArguments) -> None:
        row = e.args[1] if isinstance(e.args, list) and len(e.args) > 1 else None
        path = row.get("path") if isinstance(row, dict) else None
        if not isinstance(path, str) or path not in files:
            return
        history.clear()
        idx = files[path]
        with history:
            with ui.row().classes("items-center gap-2"):
                ui.label(path).classes("font-mono font-bold wb-break")
                ui.button("filter steps to this file", on_click=lambda: on_filter(path)).props(
                    "flat dense no-caps size=sm"
                ).mark("filter-to-file")
            with ui.row().classes("gap-1"):
                for i in idx[:MAX_HISTORY]:
                    ev = session.event(int(i))
                    step_button(f"{int(i) + 1} {ev.tool}", int(i), on_pick)
                if len(idx) > MAX_HISTORY:
                    ui.label(f"… {len(idx) - MAX_HISTORY:,} more (filter the step list)")

    table = ui.table(columns=cols, rows=rows, row_key="path", pagination=15).props(TABLE_PROPS)
    table.classes("w-full").mark("files-table")
    table.on("rowClick", show, args=[[], ["path"], None])
    history = ui.column().classes("w-full gap-1").mark("file-history")


# -- approvals ----------------------------------------------------------------------------------
def approval_rows(session: Session, approvals: list[Approval]) -> list[dict[str, Any]]:
    rows = []
    for a in approvals:
        rows.append(
            {
                "step": a.request + 1,
                "tool": a.tool,
                "target": a.target,
                "decision": a.decision or "unanswered",
                "approver": a.approver or "",
                "time": fmt_when(session.event(a.decision_event).ts) if a.decision_event is not None else "",
                "reason": a.reason or "",
                "decided": a.decision_event + 1 if a.decision_event is not None else "",
                "gated": a.gated + 1 if a.gated is not None else "",
            }
        )
    return rows


def approvals_panel(
    session: Session, approvals: list[Approval] | None, on_pick: Callable[[int], None]
) -> None:
    if approvals is None:
        ui.label("reading approvals …").classes("text-grey-7")
        return
    if not approvals:
        ui.label("no approval was requested").classes("text-grey-7")
        return
    cols: list[dict[str, Any]] = [
        {"name": "step", "label": "Request step", "field": "step", "sortable": True},
        {"name": "tool", "label": "Tool", "field": "tool", "align": "left"},
        {"name": "target", "label": "Target", "field": "target", "align": "left"},
        {"name": "decision", "label": "Decision", "field": "decision", "align": "left", "sortable": True},
        {"name": "approver", "label": "Approver", "field": "approver", "align": "left"},
        {"name": "time", "label": "Time", "field": "time", "align": "left"},
        {
            "name": "reason",
            "label": "Reason",
            "field": "reason",
            "align": "left",
            "classes": "wb-col-reason",
            "headerClasses": "wb-col-reason",
        },
        {"name": "gated", "label": "Gated step", "field": "gated"},
    ]
    table = ui.table(columns=cols, rows=approval_rows(session, approvals), row_key="step", pagination=15)
    table.props(TABLE_PROPS).classes("w-full wb-table").mark("approvals-table")
    _on_row(table, "step", on_pick)
