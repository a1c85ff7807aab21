"""Replay controls: first/prev/play/next/last, speed, jump to lsn, live follow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nicegui import ui

from ..cursor import SPEEDS, ReplayCursor


@dataclass
class ControlActions:
    """What the buttons do (the page wires them to the cursor, history and URL)."""

    first: Callable[[], object]
    prev: Callable[[], object]
    toggle: Callable[[], object]
    next: Callable[[], object]
    last: Callable[[], object]
    jump: Callable[[str], None]
    speed: Callable[[float], None]


class Controls:
    def __init__(self, cursor: ReplayCursor, actions: ControlActions, *, live: bool) -> None:
        self.cursor = cursor
        with ui.row().classes("items-center gap-0 no-wrap wb-controls").mark("controls"):
            ui.button(icon="first_page", on_click=actions.first).props("flat dense").mark(
                "step-first"
            ).tooltip("first step")
            ui.button(icon="chevron_left", on_click=actions.prev).props("flat dense").mark(
                "step-prev"
            ).tooltip("previous (k, ←)")
            self.play = ui.button(icon="play_arrow", on_click=actions.toggle).props("flat dense").mark("play")
            self.play.tooltip("play / pause (space)")
            ui.button(icon="chevron_right", on_click=actions.next).props("flat dense").mark(
                "step-next"
            ).tooltip("next (j, →)")
            ui.button(icon="last_page", on_click=actions.last).props("flat dense").mark("step-last").tooltip(
                "last step"
            )
            ui.select(
                {s: f"{s:g}×" for s in SPEEDS},
                value=cursor.speed,
                on_change=lambda e: actions.speed(float(e.value)),
            ).props("dense options-dense borderless").classes("w-16").mark("speed").tooltip(
                "steps per second"
            )
            self.jump = (
                ui.input(placeholder="go to lsn, agent:lsn, #step (g)")
                .props("dense clearable")
                .classes("w-48 wb-jump")
            )
            self.jump.mark("jump")
            self.jump.on("keydown.enter", lambda: actions.jump(str(self.jump.value or "")))
            self.follow = (
                ui.switch("follow", value=live)
                .props("dense")
                .mark("follow")
                .tooltip("stay on the newest step while the journal grows")
            )
            self.follow.set_visibility(live)

    def show_playing(self, playing: bool) -> None:
        self.play.props(f"icon={'pause' if playing else 'play_arrow'}")
