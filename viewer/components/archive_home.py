"""The home page over the archive (``walkback view --archive``): search with filters and facets,
the sessions with status and cost, and a dashboard of sessions, tokens and cost per day.

Everything it shows comes from :class:`~walkback.importers.archive.store.Archive`'s queries; the
page's state is its URL (``/?q=…&agent=…``), so a search is a link to share and reload.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

import plotly.graph_objects as go
from nicegui import events, ui
from plotly.subplots import make_subplots
from walkback.importers.archive.store import Archive, ArchiveError, Filters

FACETS = ("agent", "status", "workspace", "day")
"""The session columns the page filters by (each a select with its counts)."""
HITS = 100
SESSIONS = 200

SESSION_COLUMNS: list[dict[str, Any]] = [
    {"name": "start", "label": "Start (UTC)", "field": "start", "align": "left", "sortable": True},
    {"name": "agent", "label": "Agent", "field": "agent", "align": "left", "sortable": True},
    {"name": "status", "label": "Status", "field": "status", "align": "left", "sortable": True},
    {"name": "task", "label": "Task", "field": "task", "align": "left", "classes": "wb-wrap"},
    {"name": "workspace", "label": "Workspace", "field": "workspace", "align": "left"},
    {"name": "events", "label": "Events", "field": "events", "sortable": True},
    {"name": "tokens", "label": "Tokens", "field": "tokens", "sortable": True},
    {"name": "cost", "label": "Cost (USD)", "field": "cost", "sortable": True},
]


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts)) if ts is not None else ""


def _cost(row: dict[str, Any]) -> str:
    return f"{row['cost']:.2f}" + (" (est.)" if row["cost_estimated"] and row["cost"] else "")


class ArchiveHome:
    """The page, built once per request from the URL's query."""

    def __init__(self, archive: Archive, params: dict[str, str]) -> None:
        self.archive = archive
        self.params = {k: params.get(k, "") for k in ("q", *FACETS)}

    def build(self) -> None:
        facets = self.archive.facets()
        with ui.row().classes("w-full items-center gap-2 no-wrap"):
            self.query = ui.input(placeholder='search every session: words, "a phrase", prefix*, NOT …')
            self.query.props("dense outlined clearable").classes("grow").mark("archive-query")
            self.query.value = self.params["q"]
            self.query.on("keydown.enter", self._go)
            self.selects = {}
            for name in FACETS:
                options = {"": f"any {name}"} | {v: f"{v or '(none)'} · {n}" for v, n in facets[name] if v}
                select = ui.select(options, value=self.params[name] if self.params[name] in options else "")
                select.props("dense outlined options-dense").classes("w-48").mark(f"facet-{name}")
                select.on_value_change(self._go)
                self.selects[name] = select
            ui.button("search", on_click=self._go).props("dense unelevated").mark("archive-search")
        if self.params["q"]:
            self._hits()
        with ui.row().classes("w-full gap-4 no-wrap items-start"):
            with ui.column().classes("grow min-w-0"):
                self._sessions()
            with ui.column().classes("w-[38rem] shrink-0"):
                self._dashboard()

    def _go(self, _: events.UiEventArguments | None = None) -> None:
        chosen = {"q": self.query.value or ""} | {k: s.value or "" for k, s in self.selects.items()}
        ui.navigate.to("/?" + urlencode({k: v for k, v in chosen.items() if v}))

    def _hits(self) -> None:
        p = self.params
        try:
            hits = self.archive.search(
                p["q"], Filters(agent=p["agent"], workspace=p["workspace"]), limit=HITS
            )
        except ArchiveError as e:
            ui.label(str(e)).classes("text-negative").mark("archive-error")
            return
        if p["status"] or p["day"]:
            keep = {s["id"] for s in self.archive.sessions(limit=10**9, status=p["status"], day=p["day"])}
            hits = [h for h in hits if h.session in keep]
        ui.label(f"{len(hits)} matching steps" + (" (the newest)" if len(hits) == HITS else "")).classes(
            "text-subtitle2"
        )
        with ui.column().classes("w-full gap-0").mark("archive-hits"):
            for h in hits:
                with ui.row().classes("w-full items-baseline gap-2 no-wrap wb-hit"):
                    ui.link(f"step {h.step}", f"/s/{h.session}/step/{h.step}").classes("font-mono shrink-0")
                    ui.label(_when(h.ts)).classes("text-xs text-grey-7 shrink-0")
                    ui.label(h.agent).classes("text-xs shrink-0")
                    ui.label(" ".join(p for p in (h.kind, h.tool) if p)).classes(
                        "text-xs text-grey-7 shrink-0"
                    )
                    ui.label(h.snippet).classes("wb-break min-w-0")

    def _sessions(self) -> None:
        p = self.params
        rows = self.archive.sessions(
            limit=SESSIONS, agent=p["agent"], status=p["status"], workspace=p["workspace"], day=p["day"]
        )
        ui.label(f"{len(rows)} sessions" + (" (the newest)" if len(rows) == SESSIONS else "")).classes(
            "text-h6"
        )
        table = ui.table(
            columns=SESSION_COLUMNS,
            rows=[
                {
                    "id": r["id"],
                    "start": _when(r["start_ts"]),
                    "agent": r["agent"],
                    "status": r["status"]
                    + (" · crashed" if r["crashed"] and r["status"] != "crashed" else ""),
                    "task": r["task"][:200],
                    "workspace": r["workspace"],
                    "events": r["events"],
                    "tokens": (r["input_tokens"] or 0) + (r["output_tokens"] or 0),
                    "cost": _cost(r),
                }
                for r in rows
            ],
            row_key="id",
            pagination=20,
        )
        table.props("dense flat").classes("w-full").mark("archive-sessions")
        table.on("rowClick", lambda e: ui.navigate.to(f"/s/{e.args[1]['id']}"), args=[[], ["id"], None])

    def _dashboard(self) -> None:
        ui.label("sessions, tokens and cost per day").classes("text-subtitle2")
        ui.plotly(_figure(self.archive.sessions_per_day(), self.archive.usage_per_day())).classes(
            "w-full h-[34rem]"
        ).mark("archive-dashboard")
        rates = self.archive.rates()
        with ui.row().classes("w-full gap-6 items-start"):
            with ui.column().classes("gap-0").mark("archive-rates"):
                ui.label("failure and crash rates").classes("text-subtitle2")
                for agent, n, crashed, failed, _events in rates:
                    rate = f"{100 * crashed / n:.0f}% crashed · {100 * failed / n:.0f}% with failures"
                    ui.label(f"{agent}: {n} sessions · {rate}")
            with ui.column().classes("gap-0 min-w-0").mark("archive-files"):
                ui.label("most-edited files").classes("text-subtitle2")
                for path, changes, sessions in self.archive.most_edited():
                    ui.label(f"{path} · {changes} changes in {sessions} sessions").classes(
                        "font-mono text-xs wb-break"
                    )


def _figure(
    sessions: list[tuple[str, str, int]], usage: list[tuple[str, str, str, int, int, float]]
) -> go.Figure:
    """Three stacked bar charts sharing the day axis: sessions by agent, tokens by model, cost by
    agent and model."""
    series: list[dict[str, dict[str, float]]] = [defaultdict(dict), defaultdict(dict), defaultdict(dict)]
    for day, agent, n in sessions:
        series[0][agent][day] = n
    for day, agent, model, n_in, n_out, usd in usage:
        series[1][model][day] = series[1][model].get(day, 0) + n_in + n_out
        series[2][f"{agent} · {model}"][day] = usd
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=("sessions by agent", "tokens by model", "cost (USD) by agent and model"),
    )
    for row, by_name in enumerate(series, 1):
        for name, by_day in sorted(by_name.items()):
            days = sorted(by_day)
            bar = go.Bar(x=days, y=[by_day[d] for d in days], name=name, legendgroup=str(row))
            fig.add_trace(bar, row=row, col=1)
    fig.update_xaxes(type="category", categoryorder="category ascending")  # a bar per day, seen on any span
    fig.update_layout(
        barmode="stack",
        margin={"l": 40, "r": 10, "t": 30, "b": 30},
        legend={"font": {"size": 10}},
        template="plotly_white",
    )
    return fig
