"""The session list: every session the viewer was given, sortable and filterable."""

from __future__ import annotations

from typing import Any

from nicegui import events, ui

from ..store import Entry, SessionStore
from .common import fmt_duration, fmt_time

COLUMNS: list[dict[str, Any]] = [
    {
        "name": "task",
        "label": "Task",
        "field": "task",
        "align": "left",
        "sortable": True,
        "classes": "wb-wrap",
    },
    {"name": "format", "label": "Format", "field": "format", "align": "left", "sortable": True},
    {"name": "agents", "label": "Agents", "field": "agents", "sortable": True},
    {"name": "events", "label": "Events", "field": "events", "sortable": True},
    {"name": "status", "label": "Status", "field": "status", "align": "left", "sortable": True},
    {"name": "integrity", "label": "Integrity", "field": "integrity", "align": "left", "sortable": True},
    {"name": "start", "label": "Start (UTC)", "field": "start", "align": "left", "sortable": True},
    {"name": "duration", "label": "Duration", "field": "duration", "align": "left"},
    {"name": "source", "label": "Source", "field": "source", "align": "left", "sortable": True},
]


SOURCE_CELL = r"""
<q-td :props="props" class="wb-source" :title="props.value"><span dir="ltr">{{ props.value }}</span></q-td>
"""
"""A long path keeps its end (the file's name) in view; the whole path is its hover text."""


def row(e: Entry) -> dict[str, Any]:
    s = e.summary
    base = {"id": e.id, "source": str(e.path)}
    if s is None:
        return {
            **base,
            "task": e.label,
            "format": "",
            "agents": "",
            "events": "",
            "status": e.error or "loading …",
            "integrity": "",
            "start": "",
            "duration": "",
        }
    status = s.status + (" (recovered)" if s.recovered and s.status != "recovered" else "")
    return {
        **base,
        "task": s.task or e.label,
        "format": s.format,
        "agents": s.agents,
        "events": s.events,
        "status": status,
        "integrity": s.integrity,
        "start": fmt_time(s.start, date=True),
        "duration": fmt_duration(s.duration),
    }


class SessionList:
    def __init__(self, store: SessionStore) -> None:
        self.store = store
        with ui.row().classes("w-full items-center"):
            ui.label(f"{len(store.entries)} sessions").classes("text-h6")
            ui.space()
            self.filter = ui.input(placeholder="filter").props("dense clearable").mark("list-filter")
        self.table = ui.table(columns=COLUMNS, rows=self.rows(), row_key="id", pagination=25)
        self.table.props("dense flat").classes("w-full").mark("session-list")
        self.table.add_slot("body-cell-source", SOURCE_CELL)
        self.table.bind_filter_from(self.filter, "value")
        self.table.on("rowClick", self._open, args=[[], ["id"], None])
        self.timer = ui.timer(0.5, self._refresh)

    def rows(self) -> list[dict[str, Any]]:
        return [row(e) for e in self.store.entries.values()]

    def _refresh(self) -> None:
        rows = self.rows()
        if rows != self.table.rows:
            self.table.rows = rows

    def _open(self, e: events.GenericEventArguments) -> None:
        r = e.args[1] if isinstance(e.args, list) and len(e.args) > 1 else None
        sid = r.get("id") if isinstance(r, dict) else None
        if isinstance(sid, str) and sid in self.store.entries:
            ui.navigate.to(f"/s/{sid}")
