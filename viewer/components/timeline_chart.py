"""The plotly timeline: one lane per agent, a few kinds of marks that look different, the crashes.

Kinds are grouped into categories with their own colour, symbol and row within the lane (calls,
results, model, messages ...), so marks that share a time do not pile on one spot; the x axis is
time or the step number. Up to :data:`MAX_MARKERS` events in view are drawn one by one, with a
hover that says step, kind, agent:lsn, tool and target; beyond that each lane shows the density
of events, and problems, recovery records, spawns and damaged records are still drawn one by one.
Zooming in fetches the events of the visible range. The legend is a row of chips above the chart
(plotly's own legend, mode bar and tips are off: they covered the axis and the header).
"""

from __future__ import annotations

import html
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from nicegui import events, ui
from plotly.graph_objects import Figure  # noqa: F401 - see below
from walkback.timeline.kinds import KIND_INDEX, KINDS, PLACEHOLDER
from walkback.timeline.query import columns, problems_mask
from walkback.timeline.session import Session
from walkback.timeline.story import Crash, lsn_is_shared

from .common import Component

# NiceGUI's chart asks ``isinstance(figure, go.Figure)`` when it draws, and plotly imports its
# figure classes on that first touch (~0.2 s, more without cached bytecode). Importing them with the
# viewer puts that in the server's start rather than in the first page someone opens.

MAX_MARKERS = 3000
DENSITY_BINS = 240
HOVER_CHARS = 70


@dataclass(frozen=True)
class Category:
    label: str
    colour: str
    symbol: str
    row: float
    """Offset from the lane's centre (so categories do not overlap at shared times)."""
    kinds: tuple[str, ...]


CATEGORIES = (
    Category("tool call", "#0072B2", "circle", 0.22, ("tool_call",)),
    Category("tool result", "#56B4E9", "circle-open", 0.22, ("tool_result",)),
    Category("model", "#CC79A7", "diamond", -0.05, ("model_call", "model_result")),
    Category("message", "#6B7280", "square", -0.05, ("message",)),
    Category("approval", "#E69F00", "star", 0.08, ("approval_request", "approval_decision")),
    Category("agent", "#009E73", "triangle-right", -0.2, ("agent_spawn", "agent_end")),
    Category("checkpoint / test", "#8C6D1F", "square-open", -0.2, ("checkpoint", "test_result")),
    Category("recovery", "#D55E00", "x", 0.08, ("recovery",)),
    Category("damage / error", "#DC2626", "x-thin-open", 0.08, ("integrity", "error")),
    Category(
        "run",
        "#111827",
        "line-ns-open",
        -0.32,
        ("run_start", "run_end", "plan", "compaction", "branch", "other"),
    ),
)
CATEGORY_OF = np.zeros(len(KINDS), dtype=np.int64)
for _k, _cat in enumerate(CATEGORIES):
    for _kind in _cat.kinds:
        CATEGORY_OF[KIND_INDEX[_kind]] = _k
ROW_OF_KIND = np.array([c.row for c in CATEGORIES], dtype=np.float64)[CATEGORY_OF]
"""Each kind's row within its agent's lane."""
ALWAYS = np.array([KIND_INDEX[k] for k in ("agent_spawn", "agent_end", "recovery", "integrity", "error")])
CLICK_JS = "(e) => emit({s: e.points && e.points.length ? e.points[0].customdata : null})"
RELAYOUT_JS = (
    "(e) => emit({x0: e['xaxis.range[0]'] ?? null, x1: e['xaxis.range[1]'] ?? null,"
    " auto: !!e['xaxis.autorange']})"
)
CONFIG = {"displayModeBar": False, "showTips": False, "doubleClick": "reset", "responsive": True}
CRASH = "#DC2626"


def _plot_text(value: str) -> str:
    """Plotly renders a subset of HTML in labels; show model-written names as plain text."""
    return html.escape(value, quote=True)


class Axis:
    """Where each event sits: x (time in ms, or the step number), lane and row within it.

    A million-event session's axis is a few arrays of a million: only what every event needs is
    computed for all of them (x for the range and the density, the lane for the density); the y
    of a mark, :meth:`y`, only for the marks drawn."""

    def __init__(self, session: Session, *, by_step: bool = False) -> None:
        c = columns(session)
        self.n = c.n
        self.has_time = bool(c.n) and bool(np.isfinite(c.ts).all())
        self.use_time = self.has_time and not by_step
        self.x = c.ts * 1000.0 if self.use_time else np.arange(1, c.n + 1, dtype=np.float64)
        vals = session.table.pool.values
        present = np.flatnonzero(np.bincount(c.agent)).tolist() if c.n else []
        ordered = [a for a in session.agents if session.table.pool.find(a) in present]
        ordered += [vals[a] for a in present if vals[a] not in ordered]
        self.lanes = ordered
        lane_of = np.zeros(len(vals), dtype=np.intp)
        for k, name in enumerate(ordered):
            code = session.table.pool.find(name)
            if code is not None:
                lane_of[code] = k
        self.lane = lane_of[c.agent]
        self._kind = c.kind

    def at(self, i: int) -> float:
        return float(self.x[i])

    def y(self, rows: Any) -> Any:
        """The y of the events ``rows`` (an index or an index array): lane, then the kind's row."""
        return self.lane[rows] + ROW_OF_KIND[self._kind[rows]]


def hover_texts(session: Session, rows: np.ndarray) -> tuple[str, ...]:
    """``step 13 · recovery · auth:7<br>run_command python -m …`` from the event table (no parsing);
    a tuple, which NiceGUI sends as it is rather than copying it into an observed list per page."""
    t = session.table
    vals = t.pool.values
    shared = lsn_is_shared(session)
    out = []
    for i in map(int, rows):
        lsn = t.lsn[i]
        agent = vals[t.agent[i]]
        who = (f"{agent}:{lsn}" if shared else f"lsn {lsn}") if lsn >= 0 else agent
        head = f"step {i + 1} · {KINDS[t.kind[i]].replace('_', ' ')} · {who}"
        status = vals[t.status[i]]
        if status:
            head += f" · {status}"
        what = " ".join(p for p in (vals[t.tool[i]], vals[t.target[i]]) if p)
        if len(what) > HOVER_CHARS:
            what = what[: HOVER_CHARS - 1] + "…"
        out.append(_plot_text(head) + ("<br>" + _plot_text(what) if what else ""))
    return tuple(out)


def traces(
    session: Session, axis: Axis, x_range: tuple[float, float] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """The traces within ``x_range``, and whether they show density (too many events to draw)."""
    c = columns(session)
    in_range = None if x_range is None else (axis.x >= x_range[0]) & (axis.x <= x_range[1])
    problem = problems_mask(session) | (c.flags & PLACEHOLDER != 0)
    dense = (c.n if in_range is None else int(in_range.sum())) > MAX_MARKERS
    out: list[dict[str, Any]] = []
    if dense:
        out.append(_density(axis, in_range))
        keep = problem | np.isin(c.kind, ALWAYS)
        picked = np.flatnonzero(keep if in_range is None else keep & in_range)[:MAX_MARKERS]
    else:
        picked = np.arange(c.n) if in_range is None else np.flatnonzero(in_range)
    cats = CATEGORY_OF[c.kind[picked]]
    for k, cat in enumerate(CATEGORIES):
        rows = picked[cats == k]
        if len(rows):
            out.append(_markers(session, axis, rows, cat))
    bad = picked[problem[picked]]
    if len(bad):
        out.append(
            {
                "type": "scattergl",
                "mode": "markers",
                "name": "problem",
                "x": axis.x[bad],
                "y": axis.y(bad),
                "customdata": bad + 1,
                "text": hover_texts(session, bad),
                "hovertemplate": "%{text}<extra></extra>",
                "marker": {"color": "rgba(0,0,0,0)", "size": 14, "line": {"color": CRASH, "width": 2}},
            }
        )
    spawn = spawn_lines(session, axis)
    if spawn is not None:
        out.append(spawn)
    return out, dense


def _markers(session: Session, axis: Axis, rows: np.ndarray, cat: Category) -> dict[str, Any]:
    return {
        "type": "scattergl",
        "mode": "markers",
        "name": cat.label,
        "x": axis.x[rows],
        "y": axis.y(rows),
        "customdata": rows + 1,
        "text": hover_texts(session, rows),
        "hovertemplate": "%{text}<extra></extra>",
        "marker": {
            "color": cat.colour,
            "size": 10 if cat.label in ("recovery", "damage / error", "agent") else 7,
            "symbol": cat.symbol,
            "line": {"color": cat.colour, "width": 1.5},
        },
    }


def _density(axis: Axis, in_range: np.ndarray | None) -> dict[str, Any]:
    """Events per lane and time bin (of those in range; None: all), as a heatmap under the marks.
    The bin is computed, not searched for, and the whole session is not copied: at a million events
    this is the bulk of drawing the chart."""
    xs = axis.x if in_range is None else axis.x[in_range]
    lanes = axis.lane if in_range is None else axis.lane[in_range]
    lo, hi = float(xs.min()), float(xs.max())
    hi = hi if hi > lo else lo + 1.0
    edges = np.linspace(lo, hi, DENSITY_BINS + 1)
    cell = xs - lo
    cell *= DENSITY_BINS / (hi - lo)
    cell = cell.astype(np.intp)
    np.minimum(cell, DENSITY_BINS - 1, out=cell)  # x == hi: the last bin
    cell += lanes * DENSITY_BINS
    cells = len(axis.lanes) * DENSITY_BINS
    z = np.bincount(cell, minlength=cells).reshape(len(axis.lanes), DENSITY_BINS)
    return {
        "type": "heatmap",
        "name": "density",
        "x": (edges[:-1] + edges[1:]) / 2,
        "y": np.arange(len(axis.lanes), dtype=np.float64),
        "z": np.where(z > 0, z, np.nan).astype(np.float64),
        "colorscale": [[0, "#dbeafe"], [1, "#1e3a8a"]],
        "showscale": False,
        "hovertemplate": "%{z:,} events here (zoom in to see them)<extra></extra>",
        "zsmooth": False,
    }


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
        ys += [float(axis.y(i)), float(axis.y(j)), None]
    if not xs:
        return None
    return {
        "type": "scatter",
        "mode": "lines",
        "name": "spawn",
        "x": xs,
        "y": ys,
        "line": {"color": "#009E73", "dash": "dot", "width": 1.2},
        "hoverinfo": "skip",
    }


def crash_marks(
    session: Session, axis: Axis, crashes: list[Crash]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """Dashed lines and labels where the run crashed and resumed, and a trace that gives the crash
    line a hover (shapes have none): what was running, and where it resumed."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    xs: list[float] = []
    ys: list[float] = []
    texts: list[str] = []
    steps: list[int] = []
    for cr in crashes:
        if cr.after >= axis.n:
            continue
        x = axis.at(cr.after)
        if cr.resumed is not None and cr.resumed < axis.n:
            x = (x + axis.at(cr.resumed)) / 2 if axis.use_time else x + 0.5
        shapes.append(_vline(x, CRASH, "dash"))
        notes.append(_note(x, "crash", CRASH))
        text = _plot_text(cr.text(session))
        for lane in range(len(axis.lanes)):
            xs.append(x)
            ys.append(float(lane))
            texts.append(text)
            steps.append((cr.running[0] if cr.running else cr.after) + 1)
        if cr.resumed is not None and cr.resumed < axis.n:
            shapes.append(_vline(axis.at(cr.resumed), "#D55E00", "dot"))
    trace = None
    if xs:
        trace = {
            "type": "scatter",
            "mode": "markers",
            "name": "crash",
            "x": xs,
            "y": ys,
            "customdata": steps,
            "text": texts,
            "hovertemplate": "%{text}<extra></extra>",
            "marker": {
                "color": CRASH,
                "size": 12,
                "symbol": "line-ns-open",
                "line": {"width": 2, "color": CRASH},
            },
        }
    if session.integrity.torn_tail and axis.n:
        x = axis.at(axis.n - 1)
        shapes.append(_vline(x, CRASH, "dot"))
        last = crashes[-1] if crashes else None
        if last is not None and last.resumed is None and last.after >= axis.n - 2 and notes:
            # the run stopped while writing its last record: one label, the two would overlap
            notes[-1] = _note(x, "crash · torn tail", CRASH, anchor="right")
        else:
            notes.append(_note(x, "torn tail", CRASH, anchor="right"))
    return shapes, notes, trace


def _note(x: float, text: str, colour: str, anchor: str = "center") -> dict[str, Any]:
    """A label above the plot at ``x`` (``anchor="right"``: ending there, for the last step)."""
    return {
        "x": x,
        "y": 1,
        "yref": "paper",
        "text": text,
        "showarrow": False,
        "yanchor": "bottom",
        "xanchor": anchor,
        "font": {"color": colour, "size": 10},
    }


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


def chart_height(lanes: int) -> int:
    """The chart box's height in px: 30 per lane and the axes (two lines of date ticks), at most 200.
    The figure fills the box (autosize), so a short window can cap it in CSS."""
    return min(200, 62 + 30 * max(lanes, 1))


def layout(
    axis: Axis, shapes: tuple[dict[str, Any], ...], notes: tuple[dict[str, Any], ...], current: int | None
) -> dict[str, Any]:
    """The figure's layout, the current step's line among its shapes (lists as tuples: NiceGUI
    sends those as they are)."""
    if current is not None and current < axis.n:
        shapes = (*shapes, _vline(axis.at(current), "#111827", "solid"))
    return {
        "autosize": True,
        "margin": {"l": 96, "r": 8, "t": 14, "b": 32},
        "showlegend": False,
        "uirevision": "keep",
        "hovermode": "closest",
        "hoverlabel": {"align": "left", "font": {"size": 11}},
        "xaxis": {"type": "date" if axis.use_time else "linear", "title": None, "tickfont": {"size": 10}},
        "yaxis": {
            "tickvals": tuple(range(len(axis.lanes))),
            "ticktext": tuple(_plot_text(a if len(a) <= 14 else a[:13] + "…") for a in axis.lanes),
            "range": (-0.5, len(axis.lanes) - 0.5),
            "fixedrange": True,
            "tickfont": {"size": 10},
        },
        "shapes": shapes,
        "annotations": notes,
    }


@dataclass(frozen=True)
class Drawing:
    """What every page of a session draws alike on one x axis (time or step), built once: the
    axis, the traces of the whole session, the crash marks."""

    axis: Axis
    data: tuple[dict[str, Any], ...]
    dense: bool
    shapes: tuple[dict[str, Any], ...]
    notes: tuple[dict[str, Any], ...]
    crash: dict[str, Any] | None


_drawings: weakref.WeakKeyDictionary[Session, dict[bool, Drawing]] = weakref.WeakKeyDictionary()


def drawing(session: Session, crashes: list[Crash], *, by_step: bool) -> Drawing:
    """The session's drawing (its crashes are the session's own: one list per session)."""
    kept = _drawings.setdefault(session, {})
    found = kept.get(by_step)
    if found is None:
        axis = Axis(session, by_step=by_step)
        data, dense = traces(session, axis)
        shapes, notes, crash = crash_marks(session, axis, crashes)
        found = kept[by_step] = Drawing(axis, tuple(data), dense, tuple(shapes), tuple(notes), crash)
    return found


class ChartKey(Component, component="chart_key.js"):
    """The chips, how to zoom, and the time / step switch, as one element."""

    def __init__(self, chips: list[tuple[str, str, str]], note: str, *, time: bool) -> None:
        super().__init__()
        self._props.update(chips=chips, note=note, time=time, step=False)


class TimelineChart:
    """The chart element with its legend row; ``on_pick(index)`` is called when a mark is clicked."""

    def __init__(
        self, session: Session, on_pick: Callable[[int], None], current: int, crashes: list[Crash]
    ) -> None:
        self.session = session
        self.on_pick = on_pick
        self.crashes = crashes
        self.current = current
        self.by_step = False
        self.drawn = drawing(session, crashes, by_step=False)
        self.axis = self.drawn.axis
        self.dense = False
        figure = self._figure()  # before the legend, which says whether the lanes show density
        self.key = ChartKey(self._chips(), self._note(self.dense), time=self.axis.has_time)
        self.key.classes("wb-legend").mark("legend")
        self.key.on("mode", lambda e: self._mode(bool(e.args)))
        # every change to the element re-sends (and NiceGUI re-wraps) its figure: set it last, once
        self.plot = ui.plotly({"data": [], "layout": {}}).classes("w-full wb-timeline").mark("timeline")
        # the box has its height before plotly draws, so nothing below it moves afterwards
        self.plot.style(f"height: {chart_height(len(self.axis.lanes))}px")
        self.plot.on("plotly_click", self._click, js_handler=CLICK_JS)
        self.plot.on("plotly_relayout", self._zoom, js_handler=RELAYOUT_JS, throttle=0.3)
        self.plot.update_figure(figure)

    def _chips(self) -> list[tuple[str, str, str]]:
        """``(colour, symbol, name)`` of each category the session has, and of the crash line."""
        c = columns(self.session)
        present = set(CATEGORY_OF[np.unique(c.kind)].tolist()) if c.n else set()
        chips = [(cat.colour, "●", cat.label) for k, cat in enumerate(CATEGORIES) if k in present]
        if self.crashes:
            chips.append((CRASH, "┆", "crash"))
        return chips

    @staticmethod
    def _note(dense: bool) -> str:
        note = "drag to zoom · double-click to reset"
        return "density: zoom in to see each event · " + note if dense else note

    def _figure(self, x_range: tuple[float, float] | None = None) -> dict[str, Any]:
        drawn = self.drawn
        if x_range is None:
            data, dense = drawn.data, drawn.dense
        else:
            found, dense = traces(self.session, self.axis, x_range)
            data = tuple(found)
        if hasattr(self, "key") and dense != self.dense:
            self.key.send(note=self._note(dense))
        self.dense = dense
        return {
            # a tuple: NiceGUI sends it as it is instead of copying every trace into observed dicts
            "data": (*data, drawn.crash) if drawn.crash else data,
            "layout": layout(self.axis, drawn.shapes, drawn.notes, self.current),
            "config": CONFIG,
        }

    def _mode(self, by_step: bool) -> None:
        self.by_step = by_step
        self.key.send(step=by_step)
        self.drawn = drawing(self.session, self.crashes, by_step=by_step)
        self.axis = self.drawn.axis
        self.plot.update_figure(self._figure())

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
        if x0 is None or x1 is None or self.axis.n <= MAX_MARKERS:
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
        fig["layout"] = layout(self.axis, self.drawn.shapes, self.drawn.notes, index)
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
