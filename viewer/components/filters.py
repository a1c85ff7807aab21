"""The filter bar, one line: text search, "problems only", and kind/agent/tool/file/status in a
menu (its button counts the filters set), so the list and the detail get the height."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from inspect import isawaitable
from typing import Any

from nicegui import events, ui
from walkback.timeline.query import Facets, Query

from .common import Component

MAX_OPTIONS = 1000


def _options(pairs: list[tuple[str, int]], selected: frozenset[str]) -> dict[str, str]:
    opts = {name: f"{name} ({n:,})" for name, n in pairs[:MAX_OPTIONS]}
    for name in selected:
        opts.setdefault(name, name)
    return opts


class FilterInputs(Component, component="filter_bar.js"):
    """The search, "problems only", the other filters' button and "clear" as one element; the
    other filters' selects are its children, shown in that button's menu."""

    def __init__(self, query: Query, problems: int, set_count: str) -> None:
        super().__init__()
        self._props.update(
            text=query.text, problems=query.problems, problem_count=f"({problems:,})", set=set_count
        )

    def texts(self) -> list[Any]:
        return [self._props["text"], "problems only", self._props["problem_count"], self._props["set"]]


class FilterBar:
    """Calls ``on_change(query)`` whenever the user changes a filter."""

    def __init__(
        self, facets: Facets, query: Query, on_change: Callable[[Query], Awaitable[None] | None]
    ) -> None:
        self.query = query
        self.on_change = on_change
        self.facets = facets
        self.selects: dict[str, ui.select] = {}
        self.bar = FilterInputs(query, facets.problems, self._set_count())
        self.bar.classes("w-full wb-filters").mark("filters")
        self.bar.on("text", self._text)
        self.bar.on("problems", self._problems)
        self.bar.on("opened", self._opened)
        self.bar.on("clear", self._clear)

    def focus_search(self) -> None:
        self.bar.run_method("focus")

    def _opened(self) -> None:
        """The menu's selects are built when it first opens: five selects with up to
        :data:`MAX_OPTIONS` options each are most of a page's cost, and most views never open it."""
        if self.selects:
            return
        facets, query = self.facets, self.query
        with self.bar, ui.column().classes("p-2 gap-1 w-80"):
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

    async def _text(self, e: events.GenericEventArguments) -> None:
        text = str(e.args or "")[:500]
        self.bar.keep(text=text)
        if text != self.query.text:
            await self._emit(self.query.with_(text=text))

    async def _problems(self, e: events.GenericEventArguments) -> None:
        self.bar.keep(problems=bool(e.args))
        if bool(e.args) != self.query.problems:
            await self._emit(self.query.with_(problems=bool(e.args)))

    async def _clear(self) -> None:
        self.set_query(Query())
        await self._emit(Query())

    def _set_count(self) -> str:
        """How many of the menu's filters are set ("" for none), for its button."""
        n = sum(bool(getattr(self.query, f)) for f in ("kinds", "agents", "tools", "files", "statuses"))
        return str(n) if n else ""

    async def _emit(self, query: Query) -> None:
        self.query = query
        self.bar.send(set=self._set_count())
        result = self.on_change(query)
        if isawaitable(result):
            await result

    def set_query(self, query: Query) -> None:
        """Show ``query`` (after back/forward) without calling ``on_change``."""
        self.query = query
        self.bar.send(text=query.text, problems=query.problems, set=self._set_count())
        for field, sel in self.selects.items():
            sel.set_value(sorted(getattr(query, field)))
