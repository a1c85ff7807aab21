"""The plotly timeline: one lane per agent, one colour per kind, spawns, crash and recovery marks.

Big sessions are decimated on the server (at most :data:`MAX_POINTS` markers; problems, spawns and
recovery records are always kept), and zooming in fetches the events of the visible range.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
from nicegui import events, ui
from walkback.timeline.kinds import KIND_INDEX, KINDS
from walkback.timeline.query import columns, problems_mask
from walkback.timeline.session import Session

MAX_POINTS = 12_000
KIND_COLORS = {
    "run_start": "#4b5563",
    "plan": "#0ea5e9",
    "message": "#64748b",
    "model_call": "#8b5cf6",
    "model_result": "#a78bfa",
    "tool_call": "#2563eb",
    "tool_result": "#16a34a",
    "approval_request": "#f59e0b",
    "approval_decision": "#d97706",
    "agent_spawn": "#0d9488",
    "agent_end": "#14b8a6",
    "checkpoint": "#78716c",
    "test_result": "#65a30d",
    "recovery": "#c026d3",
    "compaction": "#94a3b8",
    "branch": "#94a3b8",
    "integrity": "#dc2626",
    "run_end": "#111827",
    "other": "#9ca3af",
}
ALWAYS = ("agent_spawn", "agent_end", "recovery", "integrity", "run_start", "run_end")
CLICK_JS = "(e) => emit({s: e.points && e.points.length ? e.points[0].customdata : null})"
RELAYOUT_JS = (
    "(e) => emit({x0: e['xaxis.range[0]'] ?? null, x1: e['xaxis.range[1]'] ?? null,"
    " auto: !!e['xaxis.autorange']})"
)


def _plot_text(value: str) -> str:
    """Plotly renders a subset of HTML in labels; show model-written names as plain text."""
    return html.escape(value, quote=True)


class Axis:
    """Where each event sits: x (time in ms, or the step number when times are missing), lane."""

    def __init__(self, session: Session) -> None:
        c = columns(session)
        self.n = c.n
        self.use_time = bool(c.n) and bool(np.isfinite(c.ts).all())
        self.x = c.ts * 1000.0 if self.use_time else np.arange(1, c.n + 1, dtype=np.float64)
        vals = session.table.pool.values
        present = [int(a) for a in np.unique(c.agent)] if c.n else []
        ordered = [a for a in session.agents if session.table.pool.find(a) in present]
        ordered += [vals[a] for a in present if vals[a] not in ordered]
        self.lanes = ordered
        lane_of = np.zeros(len(vals), dtype=np.float64)
        for k, name in enumerate(ordered):
            code = session.table.pool.find(name)
            if code is not None:
                lane_of[code] = k
        self.y = lane_of[c.agent] if c.n else np.zeros(0)

    def at(self, i: int) -> float:
        return float(self.x[i])


def _decimate(rows: np.ndarray, budget: int) -> np.ndarray:
    if len(rows) <= budget:
        return rows
    pick = np.linspace(0, len(rows) - 1, num=max(budget, 2)).astype(np.int64)
    return rows[np.unique(pick)]


def traces(session: Session, axis: Axis, x_range: tuple[float, float] | None = None) -> list[dict[str, Any]]:
    """One scattergl trace per kind, decimated to the point budget within ``x_range``."""
    c = columns(session)
    in_range = np.ones(c.n, dtype=bool)
    if x_range is not None:
        in_range = (axis.x >= x_range[0]) & (axis.x <= x_range[1])
    keep = problems_mask(session) & in_range
    counts = np.bincount(c.kind[in_range], minlength=len(KINDS))
    total = int(counts.sum()) or 1
    out: list[dict[str, Any]] = []
    for k, name in enumerate(KINDS):
        if not counts[k]:
            continue
        rows = np.flatnonzero((c.kind == k) & in_range)
        if name not in ALWAYS:
            budget = max(50, int(MAX_POINTS * counts[k] / total))
            rows = np.union1d(_decimate(rows, budget), np.flatnonzero(keep & (c.kind == k))[:MAX_POINTS])
        big = name in ("recovery", "integrity", "agent_spawn")
        out.append(
            {
                "type": "scattergl",
                "mode": "markers",
                "name": name,
                "x": axis.x[rows],
                "y": axis.y[rows],
                "customdata": rows + 1,
                "marker": {
                    "color": KIND_COLORS.get(name, "#9ca3af"),
                    "size": 11 if big else 7,
                    "symbol": "x" if name in ("recovery", "integrity") else "circle",
                },
                "hovertemplate": f"step %{{customdata}}<extra>{name}</extra>",
            }
        )
    spawn = spawn_lines(session, axis)
    if spawn is not None:
        out.append(spawn)
    return out


def spawn_lines(session: Session, axis: Axis) -> dict[str, Any] | None:
    """Parent→child segments from each spawn event to the child's first event."""
    c = columns(session)
    xs: list[float | None] = []
    ys: list[float | None] = []
    for agent in session.agents.values():
        if agent.spawned_by is None or agent.spawned_by >= c.n:
            continue
        code = session.table.pool.find(agent.id)
        if code is None:
            continue
        first = np.flatnonzero(c.agent == code)[:1]
        if not len(first):
            continue
        i, j = agent.spawned_by, int(first[0])
        xs += [axis.at(i), axis.at(j), None]
        ys += [float(axis.y[i]), float(axis.y[j]), None]
    if not xs:
        return None
    return {
        "type": "scatter",
        "mode": "lines",
        "name": "spawn",
        "x": xs,
        "y": ys,
        "line": {"color": "#0d9488", "dash": "dot", "width": 1.5},
        "hoverinfo": "skip",
    }


def marks(session: Session, axis: Axis) -> list[tuple[float, str, str]]:
    """``(x, label, colour)`` of the crash and recovery moments."""
    c = columns(session)
    out: list[tuple[float, str, str]] = []
    if not c.n:
        return out
    repairs = np.flatnonzero(np.isin(c.kind, [KIND_INDEX["recovery"], KIND_INDEX["integrity"]]))
    if len(repairs):
        first = int(repairs[0])
        if first > 0:
            out.append((axis.at(first - 1), "crash", "#dc2626"))
        out.append((axis.at(first), "recovery", "#c026d3"))
    if session.status == "crashed":
        out.append((axis.at(c.n - 1), "crash", "#dc2626"))
    if session.integrity.torn_tail:
        out.append((axis.at(c.n - 1), "torn tail", "#dc2626"))
    return out


def layout(
    session: Session,
    axis: Axis,
    current: int | None,
    fixed: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The layout; ``fixed`` (from :func:`mark_shapes`) saves recomputing the crash/recovery marks."""
    shapes, notes = fixed if fixed is not None else mark_shapes(session, axis)
    shapes = list(shapes)
    if current is not None and current < axis.n:
        shapes.append(_vline(axis.at(current), "#111827", "solid"))
    return {
        "height": max(160, 70 + 26 * len(axis.lanes)),
        "margin": {"l": 110, "r": 10, "t": 22, "b": 28},
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.25, "font": {"size": 10}},
        "uirevision": "keep",
        "hovermode": "closest",
        "xaxis": {"type": "date" if axis.use_time else "linear", "title": None},
        "yaxis": {
            "tickvals": list(range(len(axis.lanes))),
            "ticktext": [_plot_text(a) for a in axis.lanes],
            "range": [-0.6, len(axis.lanes) - 0.4],
            "fixedrange": True,
        },
        "shapes": shapes,
        "annotations": notes,
    }


def mark_shapes(session: Session, axis: Axis) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Dashed lines and labels for the crash and recovery moments."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for k, (x, label, colour) in enumerate(marks(session, axis)):
        shapes.append(_vline(x, colour, "dash"))
        notes.append(
            {
                "x": x,
                "y": 1 - 0.2 * k,
                "yref": "paper",
                "text": label,
                "showarrow": False,
                "yanchor": "top",
                "xanchor": "right",
                "bgcolor": "rgba(255,255,255,0.8)",
                "font": {"color": colour, "size": 11},
            }
        )
    return shapes, notes


def _vline(x: float, colour: str, dash: str) -> dict[str, Any]:
    return {
        "type": "line",
        "x0": x,
        "x1": x,
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "width": 1.5, "dash": dash},
    }


CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


def figure(
    session: Session,
    axis: Axis,
    current: int | None,
    x_range: tuple[float, float] | None = None,
    fixed: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The whole figure as a plain dict (the fast path of ``ui.plotly``)."""
    return {
        "data": traces(session, axis, x_range),
        "layout": layout(session, axis, current, fixed),
        "config": CONFIG,
    }


class TimelineChart:
    """The chart element; ``on_pick(index)`` is called when an event is clicked."""

    def __init__(self, session: Session, on_pick: Callable[[int], None], current: int) -> None:
        self.session = session
        self.on_pick = on_pick
        self.axis = Axis(session)
        self.fixed = mark_shapes(session, self.axis)
        self.current = current
        self.plot = ui.plotly(self._figure()).classes("w-full wb-timeline").mark("timeline")
        self.plot.on("plotly_click", self._click, js_handler=CLICK_JS)
        if self.axis.n > MAX_POINTS:
            self.plot.on("plotly_relayout", self._zoom, js_handler=RELAYOUT_JS, throttle=0.3)

    def _figure(self, x_range: tuple[float, float] | None = None) -> dict[str, Any]:
        return figure(self.session, self.axis, self.current, x_range, self.fixed)

    def _click(self, e: events.GenericEventArguments) -> None:
        step = e.args.get("s") if isinstance(e.args, dict) else None
        if isinstance(step, (int, float)) and 1 <= step <= self.axis.n:
            self.on_pick(int(step) - 1)

    def _zoom(self, e: events.GenericEventArguments) -> None:
        args = e.args if isinstance(e.args, dict) else {}
        if args.get("auto"):
            self.plot.update_figure(self._figure())
            return
        x0, x1 = args.get("x0"), args.get("x1")
        if x0 is None or x1 is None:
            return
        try:
            lo, hi = (_to_x(x0, self.axis.use_time), _to_x(x1, self.axis.use_time))
        except ValueError:
            return
        self.plot.update_figure(self._figure((min(lo, hi), max(lo, hi))))

    def mark(self, index: int) -> None:
        """Move the current-step line (a relayout of the shapes, not a redraw)."""
        self.current = index
        fig = self.plot.figure
        fig["layout"] = layout(self.session, self.axis, index, self.fixed)
        shapes = orjson.dumps(fig["layout"]["shapes"]).decode()  # numbers and fixed colours only
        ui.run_javascript(
            f"(() => {{ const c = getElement({self.plot.id}); "
            f"if (c && c.Plotly && c.$el.data) c.Plotly.relayout(c.$el, {{shapes: {shapes}}}); }})()"
        )


def _to_x(value: Any, use_time: bool) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if use_time and isinstance(value, str):
        from datetime import UTC, datetime

        text = value.replace(" ", "T")
        dt = datetime.fromisoformat(text)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp() * 1000.0
    raise ValueError(value)
