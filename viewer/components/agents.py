"""The agents: parent and subagents, each with its history (started, spawned, crashed, recovered,
how it ended) as links to the steps where each happened."""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui
from walkback.timeline.session import Session
from walkback.timeline.story import AgentStory

from .common import plural, status_color

COLOURS = {"crashed": "negative", "recovered": "purple", "started": "grey-7", "ended": "grey-7"}


def agents_panel(session: Session, stories: list[AgentStory], on_pick: Callable[[int], None]) -> None:
    """One card per agent, children indented under their parent."""
    by_parent: dict[str | None, list[AgentStory]] = {}
    for s in stories:
        parent = s.parent if s.parent in session.agents else None
        by_parent.setdefault(parent, []).append(s)

    def draw(parent: str | None, depth: int) -> None:
        for s in by_parent.get(parent, []):
            _card(session, s, depth, on_pick)
            draw(s.agent, depth + 1)

    with ui.column().classes("w-full gap-1").mark("agent-tree"):
        draw(None, 0)


def _card(session: Session, s: AgentStory, depth: int, on_pick: Callable[[int], None]) -> None:
    a = session.agents[s.agent]
    with ui.column().classes("gap-0 wb-agent").style(f"margin-left: {min(depth, 6) * 1.25}rem"):
        with ui.row().classes("items-center gap-2"):
            ui.label(s.agent).classes("font-bold").mark("agent-name")
            if a.label:
                ui.label(a.label).classes("text-grey-7 text-xs")
            ui.badge(s.outcome or "—", color=status_color(s.outcome)).mark("agent-outcome")
            ui.label(plural(s.events, "event")).classes("text-xs text-grey-7")
            if a.spawned_by is not None:
                spawn = a.spawned_by
                ui.button(f"spawned at step {spawn + 1}", on_click=lambda: on_pick(spawn)).props(
                    "flat dense no-caps size=sm color=primary"
                )
        if a.task:
            ui.label(a.task).classes("text-xs text-grey-8 wb-break")
        with ui.row().classes("items-center gap-1").mark("agent-history"):
            for k, m in enumerate(s.moments):
                if k:
                    ui.label("→").classes("text-grey-6")
                b = ui.button(f"{m.what} at step {m.step + 1}", on_click=lambda i=m.step: on_pick(i)).props(
                    f"flat dense no-caps size=sm color={COLOURS.get(m.what, 'positive')}"
                )
                if m.note:
                    b.tooltip(m.note)
            if s.moments and s.outcome and s.moments[-1].what != s.outcome:
                ui.label("→").classes("text-grey-6")
                ui.label(s.outcome).classes(f"text-sm text-{status_color(s.outcome)}")
