"""The session header: task, status, integrity badge and counts."""

from __future__ import annotations

from nicegui import ui
from walkback.timeline.query import Facets
from walkback.timeline.session import Session

from .common import status_color


def integrity_color(badge: str) -> str:
    if badge == "chain ok":
        return "positive"
    if badge == "no hashes":
        return "grey-7"
    return "negative"


def session_header(session: Session, facets: Facets, *, loading: bool = False) -> ui.label | None:
    """The header; while the session is still being read (``loading``), says so and returns the
    label that counts the events read so far."""
    progress = None
    with ui.row().classes("items-center gap-3 w-full wb-header").mark("session-header"):
        ui.label(session.task or "(no task)").classes("text-h6 wb-break").mark("task")
        ui.badge(session.status, color=status_color(session.status)).mark("status")
        if session.recovered:
            ui.badge("recovered", color="purple").mark("recovered")
        ui.badge(session.integrity.badge, color=integrity_color(session.integrity.badge)).mark("integrity")
        if loading:
            ui.spinner(size="sm")
            progress = (
                ui.label(loading_text(len(session))).classes("text-sm text-warning").mark("loading-progress")
            )
        ui.space()
        files = len(facets.files)
        parts = [
            f"{len(session):,} events",
            f"{len(session.agents)} agents",
            f"{files} files",
            f"{facets.problems:,} problems",
            session.format,
        ]
        ui.label(" · ".join(parts)).classes("text-sm text-grey-8").mark("counts")
    skipped = session.integrity.skipped
    corrupt = session.integrity.corrupt
    if corrupt or skipped or session.integrity.torn_tail:
        with ui.column().classes("gap-0 text-sm text-negative").mark("integrity-notes"):
            if session.integrity.torn_tail:
                t = session.integrity.torn_tail
                ui.label(f"torn tail: {t.get('bytes', 0)} bytes at offset {t.get('offset', 0)} not shown")
            for d in corrupt[:5]:
                ui.label(f"corrupt line {d.get('line')} (lsn {d.get('lsn')}): {d.get('reason')}")
            for d in skipped[:5]:
                ui.label(f"skipped {d.get('file')}:{d.get('line')}: {d.get('reason')}")
    return progress


def loading_text(events: int) -> str:
    return f"loading… {events:,} events so far (status and integrity pending until the whole journal is read)"
