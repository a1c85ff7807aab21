"""Replay controls: first/prev/play/next/last, speed, jump to lsn, live follow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nicegui import ui

from ..cursor import SPEEDS, ReplayCursor
from .common import hint


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
            _button("first_page", actions.first, "step-first", "first step")
            _button("chevron_left", actions.prev, "step-prev", "previous (k, ←)")
            self.play = _button("play_arrow", actions.toggle, "play", "play / pause (space)")
            _button("chevron_right", actions.next, "step-next", "next (j, →)")
            _button("last_page", actions.last, "step-last", "last step")
            speed = ui.select(
                {s: f"{s:g}×" for s in SPEEDS},
                value=cursor.speed,
                on_change=lambda e: actions.speed(float(e.value)),
            )
            hint(
                speed.props("dense options-dense borderless").classes("w-16").mark("speed"),
                "steps per second",
            )
            self.jump = (
                ui.input(placeholder="go to lsn, agent:lsn, #step (g)")
                .props("dense clearable")
                .classes("w-48 wb-jump")
            )
            self.jump.mark("jump")
            self.jump.on("keydown.enter", lambda: actions.jump(str(self.jump.value or "")))
            self.follow = ui.switch("follow", value=live).props("dense").mark("follow")
            hint(self.follow, "stay on the newest step while the journal grows")
            self.follow.set_visibility(live)

    def show_playing(self, playing: bool) -> None:
        self.play.props(f"icon={'pause' if playing else 'play_arrow'}")


def _button(icon: str, action: Callable[[], object], mark: str, tip: str) -> ui.button:
    return hint(ui.button(icon=icon, on_click=action).props("flat dense").mark(mark), tip)
