"""The filter bar, one line: text search, "problems only", and kind/agent/tool/file/status in a
menu (its button counts the filters set), so the list and the detail get the height."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from inspect import isawaitable
from typing import Any

from nicegui import events, ui
from walkback.timeline.query import Facets, Query

from .common import hint

MAX_OPTIONS = 1000


def _options(pairs: list[tuple[str, int]], selected: frozenset[str]) -> dict[str, str]:
    opts = {name: f"{name} ({n:,})" for name, n in pairs[:MAX_OPTIONS]}
    for name in selected:
        opts.setdefault(name, name)
    return opts


class FilterBar:
    """Calls ``on_change(query)`` whenever the user changes a filter."""

    def __init__(
        self, facets: Facets, query: Query, on_change: Callable[[Query], Awaitable[None] | None]
    ) -> None:
        self.query = query
        self.on_change = on_change
        with ui.row().classes("w-full items-center gap-2 no-wrap wb-filters").mark("filters"):
            self.search = ui.input(
                placeholder="search raw records (/)", value=query.text, on_change=self._text
            ).props("dense clearable debounce=400 hide-bottom-space")
            self.search.classes("grow wb-search").mark("search")
            self.problems = (
                ui.switch("problems only", value=query.problems, on_change=self._problems)
                .props("dense")
                .classes("whitespace-nowrap")
                .mark("problems")
            )
            ui.label(f"({facets.problems:,})").classes("text-xs text-grey-7")
            with (
                ui.button(icon="filter_list")
                .props("flat dense no-caps size=sm")
                .mark("more-filters") as self.more
            ):
                hint(self.more, "filter by kind, agent, tool, file, status")
                self.menu = ui.menu().props("max-height=70vh")
                self.menu.on_value_change(self._opened)
            clear = ui.button(icon="filter_alt_off", on_click=self._clear).props("flat dense size=sm")
            hint(clear.mark("clear-filters"), "clear all filters")
        self.facets = facets
        self.selects: dict[str, ui.select] = {}
        self._count()

    def _opened(self, e: events.ValueChangeEventArguments[Any]) -> None:
        """The menu's selects are built when it first opens: five selects with up to
        :data:`MAX_OPTIONS` options each are most of a page's cost, and most views never open it."""
        if not e.value or self.selects:
            return
        facets, query = self.facets, self.query
        with self.menu, ui.column().classes("p-2 gap-1 w-80"):
            self.selects = {
                "kinds": self._select("kind", facets.kinds, query.kinds),
                "agents": self._select("agent", facets.agents, query.agents),
                "tools": self._select("tool", facets.tools, query.tools),
                "files": self._select("file", facets.files, query.files),
                "statuses": self._select("status", facets.statuses, query.statuses),
            }

    def _select(self, label: str, pairs: list[tuple[str, int]], selected: frozenset[str]) -> ui.select:
        field = {"kind": "kinds", "agent": "agents", "tool": "tools", "file": "files", "status": "statuses"}[
            label
        ]
        sel = ui.select(
            _options(pairs, selected),
            label=label,
            multiple=True,
            value=sorted(selected),
            on_change=lambda e, f=field: self._set(f, e.value),
        )
        sel.props("dense options-dense use-input input-debounce=200 clearable").classes("w-full")
        return sel.mark(f"filter-{label}")

    async def _set(self, field: str, value: Any) -> None:
        values = frozenset(str(v) for v in (value or []))
        if values != getattr(self.query, field):
            await self._emit(self.query.with_(**{field: values}))

    async def _text(self, e: events.ValueChangeEventArguments[Any]) -> None:
        text = str(e.value or "")[:500]
        if text != self.query.text:
            await self._emit(self.query.with_(text=text))

    async def _problems(self, e: events.ValueChangeEventArguments[Any]) -> None:
        if bool(e.value) != self.query.problems:
            await self._emit(self.query.with_(problems=bool(e.value)))

    async def _clear(self) -> None:
        self.set_query(Query())
        await self._emit(Query())

    def _count(self) -> None:
        n = sum(bool(getattr(self.query, f)) for f in ("kinds", "agents", "tools", "files", "statuses"))
        self.more.set_text(str(n) if n else "")

    async def _emit(self, query: Query) -> None:
        self.query = query
        self._count()
        result = self.on_change(query)
        if isawaitable(result):
            await result

    def set_query(self, query: Query) -> None:
        """Show ``query`` (after back/forward) without calling ``on_change``."""
        self.query = query
        self._count()
        self.search.set_value(query.text)
        self.problems.set_value(query.problems)
        for field, sel in self.selects.items():
            sel.set_value(sorted(getattr(query, field)))
