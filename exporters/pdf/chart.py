"""The report's timeline chart: one lane per agent, drawn as plain SVG (no browser, deterministic).

WeasyPrint renders SVG as vectors; the chart keeps to rectangles, lines and text so it renders
the same everywhere. Every label comes from a log a model wrote: it is escaped here.
"""

from __future__ import annotations

from html import escape

from .report import Lane

WIDTH = 680
LABEL = 110
LANE = 22
TOP = 18
COLORS = {
    "call": "#1f6feb",
    "model": "#8250df",
    "message": "#57606a",
    "approval": "#bf8700",
    "other": "#afb8c1",
    "problem": "#cf222e",
}
ORDER = ("other", "message", "model", "call", "approval", "problem")
"""Drawing order: problems last, on top of everything."""
LEGEND = (
    ("call", "tool call / result"),
    ("model", "model call"),
    ("message", "message"),
    ("approval", "approval"),
    ("problem", "problem"),
    ("other", "other"),
)


TICKS = (
    (1, "s", 1),
    (5, "s", 1),
    (10, "s", 1),
    (30, "s", 1),
    (60, "min", 60),
    (300, "min", 60),
    (600, "min", 60),
    (1800, "min", 60),
    (3600, "h", 3600),
    (6 * 3600, "h", 3600),
    (86400, "d", 86400),
)
"""Tick steps (seconds), their unit and its length: the first step giving at most 8 ticks is used."""


def _ticks(span: float) -> list[tuple[float, str]]:
    step, unit, div = next((t for t in TICKS if span / t[0] <= 8), TICKS[-1])
    count = int(span // step) + 1
    return [(k * step, f"{k * step / div:g} {unit}") for k in range(count)]


def timeline_svg(lanes: list[Lane], span: float) -> str:
    """The chart as an ``<svg>`` element (a string, every text escaped)."""
    span = span if span > 0 else 1.0
    plot = WIDTH - LABEL - 10
    height = TOP + LANE * max(len(lanes), 1) + 40

    def x(t: float) -> float:
        return LABEL + plot * min(max(t / span, 0.0), 1.0)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans" font-size="9">',
        "<title>Timeline of the session, one lane per agent</title>",
    ]
    bottom = TOP + LANE * max(len(lanes), 1)
    for t, label in _ticks(span):
        parts.append(
            f'<line x1="{x(t):.1f}" y1="{TOP - 4}" x2="{x(t):.1f}" y2="{bottom}" stroke="#d0d7de" '
            'stroke-width="0.5"/>'
        )
        parts.append(
            f'<text x="{x(t):.1f}" y="{bottom + 11}" text-anchor="middle" fill="#57606a">'
            f"{escape(label)}</text>"
        )
    for k, lane in enumerate(lanes):
        y = TOP + LANE * k
        name = lane.agent if len(lane.agent) <= 16 else lane.agent[:15] + "…"
        indent = 8 if lane.parent else 0
        parts.append(f'<text x="{4 + indent}" y="{y + 14}" fill="#24292f">{escape(name)}</text>')
        parts.append(
            f'<rect x="{x(lane.start):.1f}" y="{y + 8}" width="{max(x(lane.end) - x(lane.start), 1):.1f}" '
            'height="6" fill="#eaeef2"/>'
        )
        for cat in ORDER:
            tall = cat == "problem"
            for t, c in lane.marks:
                if c == cat:
                    parts.append(
                        f'<rect x="{x(t) - 0.6:.1f}" y="{y + (3 if tall else 6)}" width="1.2" '
                        f'height="{16 if tall else 10}" fill="{COLORS[cat]}"/>'
                    )
    lx = float(LABEL)
    for cat, label in LEGEND:
        parts.append(f'<rect x="{lx}" y="{bottom + 20}" width="8" height="8" fill="{COLORS[cat]}"/>')
        parts.append(f'<text x="{lx + 11}" y="{bottom + 27}" fill="#24292f">{escape(label)}</text>')
        lx += 18 + 5.6 * len(label)
    parts.append("</svg>")
    return "".join(parts)
