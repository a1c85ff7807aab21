"""Replay controls: first/prev/play/next/last, speed, jump to lsn, live follow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nicegui import events, ui

from ..cursor import SPEEDS, ReplayCursor
from .common import Component, hint


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


class ReplayButtons(Component, component="controls.js"):
    """First / previous / play / next / last, the speed and the jump box, as one element (a page
    view built ninety-odd elements; these seven were a tenth of its time)."""

    def __init__(self, speed: float) -> None:
        super().__init__()
        self._props["speed"] = speed
        self._props["speeds"] = [{"label": f"{s:g}×", "value": s} for s in SPEEDS]
        self._props["playing"] = False


class Controls:
    def __init__(self, cursor: ReplayCursor, actions: ControlActions, *, live: bool) -> None:
        self.cursor = cursor
        self.actions = actions
        with ui.row().classes("items-center gap-0 no-wrap wb-controls").mark("controls") as self.row:
            self.buttons = ReplayButtons(cursor.speed).mark("replay")
            self.buttons.on("act", self._act)
            self.buttons.on("speed", self._speed)
            self.buttons.on("jump", lambda e: actions.jump(str(e.args or "")[:200]))
        self.follow: ui.switch | None = None
        if live:
            self.show_follow()

    def show_follow(self) -> None:
        """The live-follow switch, on (a journal still being written; most sessions are not)."""
        if self.follow is None:
            with self.row:
                self.follow = ui.switch("follow", value=True).props("dense").mark("follow")
                hint(self.follow, "stay on the newest step while the journal grows")

    @property
    def following(self) -> bool:
        return self.follow is not None and bool(self.follow.value)

    def focus_jump(self) -> None:
        self.buttons.run_method("focusJump")

    def _act(self, e: events.GenericEventArguments) -> None:
        if e.args in ACTS:
            getattr(self.actions, e.args)()

    def _speed(self, e: events.GenericEventArguments) -> None:
        if e.args in SPEEDS:
            self.buttons.send(speed=float(e.args))
            self.actions.speed(float(e.args))

    def show_playing(self, playing: bool) -> None:
        self.buttons.send(playing=playing)
