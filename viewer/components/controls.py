"""Replay controls: first/prev/play/next/last, speed, jump to lsn, live follow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nicegui import events, ui

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


ACTS = ("first", "prev", "toggle", "next", "last")


class ReplayButtons(ui.element, component="controls.js"):
    """First / previous / play / next / last and the speed, as one element (a page view builds
    ninety-odd elements; six buttons and a select were a tenth of its time)."""

    def __init__(self, speed: float) -> None:
        super().__init__()
        self._props["speed"] = speed
        self._props["speeds"] = [{"label": f"{s:g}×", "value": s} for s in SPEEDS]
        self._props["playing"] = False


class Controls:
    def __init__(self, cursor: ReplayCursor, actions: ControlActions, *, live: bool) -> None:
        self.cursor = cursor
        self.actions = actions
        with ui.row().classes("items-center gap-0 no-wrap wb-controls").mark("controls"):
            self.buttons = ReplayButtons(cursor.speed).mark("replay")
            self.buttons.on("act", self._act)
            self.buttons.on("speed", self._speed)
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

    def _act(self, e: events.GenericEventArguments) -> None:
        if e.args in ACTS:
            getattr(self.actions, e.args)()

    def _speed(self, e: events.GenericEventArguments) -> None:
        if e.args in SPEEDS:
            self.buttons.props["speed"] = float(e.args)
            self.actions.speed(float(e.args))

    def show_playing(self, playing: bool) -> None:
        self.buttons.props["playing"] = playing
