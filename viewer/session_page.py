"""The session page: wires the cursor, the URL, the keyboard and the components together.

State lives in :class:`~viewer.cursor.ReplayCursor` and a :class:`~timeline.query.Query`; this
module only connects them. The step is kept in Python and mirrored into the URL with
``history.pushState`` (``replaceState`` while playing or holding a key), and ``popstate`` comes
back as an event, so stepping never reloads the page and back/forward still work.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
from nicegui import events, run, ui
from walkback.timeline.query import Query, locate, problems_mask, select

from .components.agents import agent_tree
from .components.controls import ControlActions, Controls
from .components.filters import FilterBar
from .components.header import loading_text, session_header
from .components.ledgers import approvals_panel, files_panel, recovery_panel
from .components.step_detail import DetailContext, StepDetail
from .components.step_list import StepList
from .components.timeline_chart import TimelineChart
from .cursor import ReplayCursor
from .store import Entry, SessionStore

STEP_KEYS = {"j": 1, "ArrowRight": 1, "ArrowDown": 1, "k": -1, "ArrowLeft": -1, "ArrowUp": -1}
PATH = re.compile(r"^/s/([0-9a-f]{12})(?:/step/(\d{1,12}))?/?$")
TABS = ("step", "agents", "files", "approvals", "recovery")


def step_url(sid: str, index: int, query: Query) -> str:
    params = query.to_params()
    return f"/s/{sid}/step/{index + 1}" + (f"?{urlencode(params)}" if params else "")


def parse_step(text: str | None) -> int | None:
    """1-based step text to a 0-based index (None if it is not a positive number)."""
    if text is None or not text.isdigit() or len(text) > 12:
        return None
    n = int(text)
    return n - 1 if n >= 1 else None


class SessionPage:
    """One browser tab showing one session."""

    def __init__(self, store: SessionStore, entry: Entry, index: int | None, query: Query) -> None:
        self.store = store
        self.entry = entry
        self.sid = entry.id
        self.wanted = index
        self.query = query
        self.version = -1
        self.cursor: ReplayCursor | None = None
        self.built: set[str] = set()
        self.panels: dict[str, ui.column] = {}
        self.loading_label: ui.label | None = None
        entry.viewed = True  # a page shows it: keep it in memory once it is read

    # -- building -----------------------------------------------------------------------------
    def build(self) -> None:
        self.body = ui.column().classes("w-full gap-2")
        self.player = ui.timer(1.0, self._tick, active=False)
        ui.timer(0.25, self._watch)
        ui.on("wb_key", self._key)
        ui.on("wb_popstate", self._popstate)
        with self.store.building_page():
            self._render()

    def _render(self) -> None:
        e = self.entry
        self.body.clear()
        self.version = e.version
        with self.body:
            if e.session is None:
                if e.error:
                    ui.label(e.error).classes("text-negative wb-break").mark("load-error")
                    ui.link("all sessions", "/")
                else:
                    with ui.row().classes("items-center gap-2").mark("loading"):
                        ui.spinner()
                        self.progress = ui.label(f"reading {e.label} …")
                return
            self._build_session()

    def _build_session(self) -> None:
        session = self.entry.session
        assert session is not None and self.entry.derived is not None
        self.session = session
        self.problems = problems_mask(session)
        start = self.wanted if self.wanted is not None else 0
        if self.wanted is not None and not 0 <= self.wanted < max(len(session), 1):
            ui.notify(f"step {self.wanted + 1} does not exist; showing the nearest", type="warning")
        self.cursor = ReplayCursor(total=len(session), view=select(session, self.query), index=start)
        self.cursor.subscribe(self._moved)
        self.header_box = ui.column().classes("w-full gap-0")
        live = session.status == "running"
        c = self.cursor  # the same cursor for the life of the page (reloads only change its view)
        self.controls = Controls(
            c,
            ControlActions(
                first=lambda: c.first(),
                prev=lambda: c.prev(),
                toggle=self._toggle,
                next=lambda: c.next(),
                last=lambda: c.last(),
                jump=self._jump,
                speed=self._speed,
            ),
            live=live,
        )
        self.chart_box = ui.column().classes("w-full gap-0")
        with ui.splitter(value=48).classes("w-full wb-split-main") as split:
            with split.before:
                with ui.column().classes("w-full gap-1 pr-2"):
                    self.filters_box = ui.column().classes("w-full")
                    self.steps = StepList(session, self.cursor, self._pick, self.problems)
            with split.after:
                with ui.column().classes("w-full pl-2"):
                    with ui.tabs(on_change=self._tab).props("dense align=left no-caps") as self.tabs:
                        for t in TABS:
                            ui.tab(t, label=t.capitalize()).mark(f"tab-{t}")
                    with ui.tab_panels(self.tabs, value="step").classes("w-full"):
                        with ui.tab_panel("step").classes("p-1"):
                            self.detail = StepDetail(session, self._detail_ctx())
                        for t in TABS[1:]:
                            with ui.tab_panel(t).classes("p-1"):
                                self.panels[t] = ui.column().classes("w-full gap-2").mark(f"panel-{t}")
        self._fill()
        self._moved(self.cursor.index, False)

    def _detail_ctx(self) -> DetailContext:
        assert self.entry.derived is not None
        return DetailContext(
            sid=self.sid, files=self.entry.derived.files, workspace=self.store.workspace, on_pick=self._pick
        )

    def _fill(self) -> None:
        """(Re)draw everything that depends on the loaded session."""
        derived = self.entry.derived
        assert derived is not None and self.cursor is not None
        self.header_box.clear()
        with self.header_box:
            self.loading_label = session_header(self.session, derived.facets, loading=self.entry.partial)
        self.chart_box.clear()
        with self.chart_box:
            self.chart = TimelineChart(self.session, self._pick, self.cursor.index)
        self.filters_box.clear()
        with self.filters_box:
            self.filters = FilterBar(derived.facets, self.query, self._filter)
        self.built.clear()
        self._fill_tab(str(self.tabs.value or "step"))

    def _fill_tab(self, tab: str) -> None:
        if tab not in self.panels or tab in self.built:
            return
        self.built.add(tab)
        box = self.panels[tab]
        box.clear()
        derived = self.entry.derived
        assert derived is not None
        with box:
            if tab == "agents":
                agent_tree(self.session, self._pick)
            elif tab == "files":
                files_panel(self.session, derived.files, self._pick, self._filter_file)
            elif tab == "approvals":
                approvals_panel(self.session, derived.approvals, self._pick)
            elif tab == "recovery":
                recovery_panel(self.session, self.entry.plan, self.store.analyzer is not None, self._pick)

    def _tab(self, e: events.ValueChangeEventArguments[Any]) -> None:
        self._fill_tab(str(e.value))

    # -- moving -------------------------------------------------------------------------------
    def _pick(self, index: int) -> None:
        """A click on a step anywhere: go there and show its detail."""
        if self.cursor is None:
            return
        self.tabs.set_value("step")
        self.cursor.seek(index)

    def _moved(self, index: int, push: bool) -> None:
        # run in the page's own slot: the element that triggered the move may just have been cleared
        with self.body:
            self.detail.show(index)
            self.steps.follow_cursor()
            self.chart.mark(index)
            url = step_url(self.sid, index, self.query)
            (ui.navigate.history.push if push else ui.navigate.history.replace)(url)

    def _key(self, e: events.GenericEventArguments) -> None:
        args = e.args if isinstance(e.args, dict) else {}
        key = str(args.get("key", ""))
        c = self.cursor
        if c is None:
            return
        repeat = bool(args.get("repeat"))
        if key in STEP_KEYS:
            (c.next if STEP_KEYS[key] > 0 else c.prev)(push=not repeat)
        elif key == " ":
            self._toggle()
        elif key == "Home":
            c.first()
        elif key in ("End", "G"):
            c.last()
        elif key == "/":
            self.filters.search.run_method("focus")
        elif key == "g":
            self.controls.jump.run_method("focus")

    def _toggle(self) -> None:
        if self.cursor is None:
            return
        playing = self.cursor.toggle()
        self.player.interval = 1.0 / self.cursor.speed
        self.player.active = playing
        self.controls.show_playing(playing)

    def _tick(self) -> None:
        if self.cursor is None:
            return
        self.cursor.tick()
        if not self.cursor.playing:
            self.player.active = False
            self.controls.show_playing(False)

    def _speed(self, speed: float) -> None:
        if self.cursor is not None:
            self.cursor.speed = speed
            self.player.interval = 1.0 / speed

    def _jump(self, text: str) -> None:
        text = text.strip()
        if self.cursor is None or not text:
            return
        if text.startswith("#") and text[1:].isdigit():
            self.cursor.seek(int(text[1:]) - 1)
            return
        agent, _, lsn = text.rpartition(":")
        if not lsn.isdigit():
            ui.notify("type an lsn (e.g. 42), agent:lsn, or #step", type="warning")
            return
        i = self.session.index_of_lsn(int(lsn), agent or None)
        if i is None:
            ui.notify(f"no event with lsn {lsn}" + (f" in agent {agent}" if agent else ""), type="warning")
            return
        self.cursor.seek(i)

    # -- filtering ----------------------------------------------------------------------------
    async def _filter(self, query: Query) -> None:
        await self._apply(query)
        assert self.cursor is not None
        ui.navigate.history.replace(step_url(self.sid, self.cursor.index, self.query))

    async def _filter_file(self, path: str) -> None:
        query = self.query.with_(files=frozenset({path}))
        self.filters.set_query(query)
        await self._filter(query)
        self.tabs.set_value("step")

    async def _apply(self, query: Query) -> None:
        self.query = query
        session = self.session
        view = await run.io_bound(select, session, query) if query.text else select(session, query)
        if view is None or self.cursor is None or session is not self.session or query != self.query:
            return  # shutting down, or a newer filter or reload superseded this one
        self.cursor.set_view(view)
        if len(view) == 0:
            ui.notify("no step matches these filters", type="info")
        elif self.cursor.position is None:
            k = min(int(np.searchsorted(view, self.cursor.index)), len(view) - 1)
            self.cursor.seek(int(view[k]), push=False)
        self.steps.follow_cursor()

    async def _popstate(self, e: events.GenericEventArguments) -> None:
        parts = urlsplit(str(e.args or ""))
        m = PATH.match(parts.path)
        if not m or m.group(1) != self.sid or self.cursor is None:
            return
        query = Query.from_params(dict(parse_qsl(parts.query)))
        if query != self.query:
            self.filters.set_query(query)
            await self._apply(query)
        index = parse_step(m.group(2))
        self.cursor.seek(index if index is not None else 0, push=False)

    # -- live follow --------------------------------------------------------------------------
    def _watch(self) -> None:
        e = self.entry
        if e.version == self.version:
            if e.session is None and not e.error and hasattr(self, "progress"):
                self.progress.set_text(f"reading {e.label} … {e.progress:,} records")
            elif e.partial and self.loading_label is not None:
                self.loading_label.set_text(loading_text(e.progress))
            return
        with self.store.building_page():
            if self.cursor is None or e.session is None:
                self._render()
            else:
                self._reload()

    def _reload(self) -> None:
        """The session was re-read (it grew, or slower views arrived): keep the step and filters."""
        e = self.entry
        assert self.cursor is not None and e.session is not None
        self.version = e.version
        old, new = self.session, e.session
        if new is old:
            self.built.discard("approvals")
            self.built.discard("recovery")
            self._fill_tab(str(self.tabs.value))
            return
        at_end = self.cursor.at_end
        i = self.cursor.index
        t = old.table
        same = locate(new, int(t.src[i]), int(t.offset[i])) if len(old) else None
        self.session = new
        if old.status == "pending" and new.status == "running":  # first read done: a live run
            self.controls.follow.set_value(True)
            self.controls.follow.set_visibility(True)
        self.problems = problems_mask(new)
        self.cursor.set_view(select(new, self.query), total=len(new))
        self.steps.set_session(new, self.problems)
        self.detail.set_session(new, self._detail_ctx())
        self._fill()
        if self.controls.follow.value and at_end:
            self.cursor.last(push=False)
        elif same is not None and same != self.cursor.index:
            self.cursor.seek(same, push=False)
        self._moved(self.cursor.index, False)
