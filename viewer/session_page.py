"""The session page: wires the cursor, the URL, the keyboard and the components together.

State lives in :class:`~viewer.cursor.ReplayCursor` and a :class:`~timeline.query.Query`; this
module only connects them. The step is kept in Python and mirrored into the URL with
``history.pushState`` (``replaceState`` while playing or holding a key), and ``popstate`` comes
back as an event, so stepping never reloads the page and back/forward still work.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
from nicegui import events, run, ui
from walkback.timeline.query import Query, locate, select
from walkback.timeline.story import lsn_matches

from .components.agents import agents_panel
from .components.common import hint
from .components.controls import ControlActions, Controls
from .components.conversation import ConversationPanel, is_conversation
from .components.filters import FilterBar
from .components.header import SessionHead
from .components.ledgers import approvals_panel, files_panel
from .components.recovery import recovery_panel
from .components.step_detail import DetailContext, StepDetail
from .components.step_list import StepList
from .components.tab_strip import TabStrip
from .components.timeline_chart import TimelineChart
from .cursor import ReplayCursor
from .store import Entry, SessionStore

STEP_KEYS = {"j": 1, "ArrowRight": 1, "ArrowDown": 1, "k": -1, "ArrowLeft": -1, "ArrowUp": -1}
PATH = re.compile(r"^/s/([0-9a-f]{12})(?:/step/(\d{1,12}))?/?$")
TABS = ("step", "conversation", "agents", "files", "approvals", "recovery")
DETAIL_TOP_JS = "setTimeout(() => { const p = getElement(%d); if (p && p.$el) p.$el.scrollTop = 0; }, 0)"
"""Scrolls the detail pane back to its top on a new step (the diff's first line is in view)."""


def step_url(sid: str, index: int, query: Query) -> str:
    params = query.to_params()
    return f"/s/{sid}/step/{index + 1}" + (f"?{urlencode(params)}" if params else "")


def parse_step(text: str | None) -> int | None:
    """1-based step text to a 0-based index (None if it is not a positive number)."""
    if text is None or not text.isdigit() or len(text) > 12:
        return None
    n = int(text)
    return n - 1 if n >= 1 else None


WATCH_SECONDS = 0.1
"""How often a page asks whether its session was read again (a version compare): with the store's
poll, a step a live session's journal fsyncs is shown within a second (docs/hooks.md)."""


class SessionPage:
    """One browser tab showing one session."""

    def __init__(
        self, store: SessionStore, entry: Entry, index: int | None, query: Query, top: ui.element
    ) -> None:
        self.store = store
        self.top = top
        self.entry = entry
        self.sid = entry.id
        self.wanted = index
        self.query = query
        self.version = -1
        self.cursor: ReplayCursor | None = None
        self.built: set[str] = set()
        self.panels: dict[str, ui.column] = {}
        self.head: SessionHead | None = None
        entry.viewed = True  # a page shows it: keep it in memory once it is read

    # -- building -----------------------------------------------------------------------------
    def build(self) -> None:
        self.body = ui.column().classes("w-full gap-1 wb-page")
        self.player = ui.timer(1.0, self._tick, active=False)
        ui.timer(WATCH_SECONDS, self._watch)
        ui.on("wb_key", self._key)
        ui.on("wb_popstate", self._popstate)
        ui.on("wb_pick", self._link_pick)
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
        self.panels = {}
        self._story()
        start = self.wanted if self.wanted is not None else 0
        if self.wanted is not None and not 0 <= self.wanted < max(len(session), 1):
            ui.notify(f"step {self.wanted + 1} does not exist; showing the nearest", type="warning")
        self.cursor = ReplayCursor(total=len(session), view=select(session, self.query), index=start)
        self.cursor.subscribe(self._moved)
        self.top.clear()
        with self.top:
            self.header_box = ui.row().classes("items-center gap-2 no-wrap grow min-w-0")
            self.chart_toggle = hint(
                ui.button(icon="timeline", on_click=self._toggle_chart)
                .props("flat dense round size=sm color=white")
                .mark("chart-toggle"),
                "show or hide the timeline",
            )
        live = session.status == "running"
        c = self.cursor  # the same cursor for the life of the page (reloads only change its view)
        with ui.row().classes("w-full items-center gap-2 no-wrap wb-toolbar"):
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
            self.filters_box = ui.row().classes("grow min-w-0 no-wrap")
        self.choices = ui.row().classes("items-center gap-1 wb-choices").mark("lsn-choices")
        self.choices.set_visibility(False)
        self.chart_box = ui.column().classes("w-full gap-0 wb-chart")
        with ui.element("div").classes("wb-main w-full"):
            with ui.column().classes("wb-pane wb-list-pane gap-1"):
                self.steps = StepList(session, self.entry.derived, self.cursor, self._pick)
            with ui.column().classes("wb-pane wb-detail-pane gap-0") as self.detail_pane:
                first = "conversation" if is_conversation(session) else "step"
                self.tabs = TabStrip(TABS, first, self._tab).mark("detail-tabs")
                with ui.column().classes("w-full gap-0") as self.panel_box:
                    with self._panel("step"):
                        self.detail = StepDetail(session, self._detail_ctx())
                    with self._panel("conversation"):
                        self.conversation = ConversationPanel(session, self.sid)
        self._fill()
        self._moved(self.cursor.index, False, drawn=True)

    def _story(self) -> None:
        """The views of the crash story and the problems, computed once per session by the loader."""
        derived = self.entry.derived
        assert derived is not None
        self.problems, self.crashes, self.stories = derived.problems, derived.crashes, derived.stories

    def _toggle_chart(self) -> None:
        self.chart_box.set_visibility(not self.chart_box.visible)

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
            self.head = SessionHead(
                self.session,
                files=len(derived.files),
                problems=int(self.problems.sum()),
                loading=self.entry.partial,
            )
            self.head.classes("wb-header min-w-0 grow").mark("session-header")
        self.chart_box.clear()
        with self.chart_box:
            self.chart = TimelineChart(self.session, self._pick, self.cursor.index, self.crashes)
        self.filters_box.clear()
        with self.filters_box:
            self.filters = FilterBar(derived.facets, self.query, self._filter)
        self.built.clear()
        self._fill_tab(self.tabs.value)

    def _fill_tab(self, tab: str) -> None:
        """Build a side tab's panel when it is first shown (most page views never open them)."""
        if tab not in TABS[2:] or tab in self.built:
            return
        self.built.add(tab)
        box = self.panels.get(tab)
        if box is None:
            with self.panel_box:
                box = self._panel(tab).classes("gap-2").mark(f"panel-{tab}")
        box.clear()
        derived = self.entry.derived
        assert derived is not None
        with box:
            if tab == "agents":
                agents_panel(self.session, self.stories, self._pick)
            elif tab == "files":
                files_panel(self.session, derived.files, self._pick, self._filter_file)
            elif tab == "approvals":
                approvals_panel(self.session, derived.approvals, self._pick)
            elif tab == "recovery":
                recovery_panel(
                    self.session,
                    self.crashes,
                    self.stories,
                    self.entry.analysis,
                    self.store.analyzer is not None,
                    self._pick,
                )

    def _panel(self, tab: str) -> ui.column:
        """The panel of ``tab``, shown only while its tab is picked."""
        panel = self.panels[tab] = ui.column().classes("w-full p-1")
        panel.set_visibility(tab == self.tabs.value)
        return panel

    def _tab(self, tab: str) -> None:
        """Show ``tab``'s panel (built on its first visit)."""
        self.tabs.set_value(tab)
        for name, panel in self.panels.items():
            panel.set_visibility(name == tab)
        self._fill_tab(tab)
        if tab == "conversation" and self.cursor is not None:
            self.conversation.show(self.cursor.index)

    # -- moving -------------------------------------------------------------------------------
    def _pick(self, index: int) -> None:
        """A click on a step anywhere: go there and show its detail."""
        if self.cursor is None:
            return
        if self.tabs.value not in ("step", "conversation"):
            self._tab("step")
        self.cursor.seek(index)

    def _link_pick(self, e: events.GenericEventArguments) -> None:
        """A click on a step link inside rendered content (the conversation's ``#n``)."""
        step = e.args if isinstance(e.args, int) else None
        if step is not None and self.cursor is not None and 1 <= step <= self.cursor.total:
            self.cursor.seek(step - 1)

    def _moved(self, index: int, push: bool, *, drawn: bool = False) -> None:
        """Show step ``index`` (``drawn``: the list, the chart and the scroll were just built there)."""
        # run in the page's own slot: the element that triggered the move may just have been cleared
        with self.body:
            self.detail.show(index)
            if self.tabs.value == "conversation":
                self.conversation.show(index)
            elif not drawn:
                ui.run_javascript(DETAIL_TOP_JS % self.detail_pane.id)
            if not drawn:
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
            self.filters.focus_search()
        elif key == "g":
            self.controls.focus_jump()

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
        if agent:
            i = self.session.index_of_lsn(int(lsn), agent)
            if i is None:
                ui.notify(f"no event with lsn {lsn} in agent {agent}", type="warning")
                return
            self._choose([])
            self.cursor.seek(i)
            return
        matches = lsn_matches(self.session, int(lsn))
        if not matches:
            ui.notify(f"no event with lsn {lsn}", type="warning")
        elif len(matches) == 1:
            self._choose([])
            self.cursor.seek(matches[0][1])
        else:
            self._choose(matches, int(lsn))

    def _choose(self, matches: list[tuple[str, int]], lsn: int = 0) -> None:
        """lsn ``lsn`` is in several agents' journals: offer each, jump to none."""
        self.choices.clear()
        self.choices.set_visibility(bool(matches))
        if not matches:
            return
        with self.choices:
            ui.label(f"lsn {lsn} is in {len(matches)} agents:").classes("text-sm")
            for agent, i in matches:
                ui.button(f"{agent}:{lsn} (step {i + 1})", on_click=lambda i=i: self._chosen(i)).props(
                    "flat dense no-caps size=sm color=primary"
                ).mark("lsn-choice")

    def _chosen(self, i: int) -> None:
        self._choose([])
        if self.cursor is not None:
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
        self._tab("step")

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
            elif e.partial and self.head is not None:
                self.head.show_loading(e.progress)
            return
        with self.store.building_page():
            if self.cursor is None or e.session is None:
                self._render()
            else:
                self._reload()

    def _reload(self) -> None:
        """The session was re-read (it grew, or slower views arrived): keep the step and filters."""
        e = self.entry
        assert self.cursor is not None and e.session is not None and e.derived is not None
        self.version = e.version
        old, new = self.session, e.session
        if new is old:
            self.built.discard("approvals")
            self.built.discard("recovery")
            self.built.discard("agents")
            self._fill_tab(self.tabs.value)
            return
        at_end = self.cursor.at_end
        i = self.cursor.index
        t = old.table
        same = locate(new, int(t.src[i]), int(t.offset[i])) if len(old) else None
        self.session = new
        if old.status == "pending" and new.status == "running":  # first read done: a live run
            self.controls.show_follow()
        self._story()
        self.cursor.set_view(select(new, self.query), total=len(new))
        self.steps.set_session(new, e.derived)
        self.detail.set_session(new, self._detail_ctx())
        self.conversation.set_session(new)
        self._fill()
        if self.controls.following and at_end:
            self.cursor.last(push=False)
        elif same is not None and same != self.cursor.index:
            self.cursor.seek(same, push=False)
        self._moved(self.cursor.index, False)
