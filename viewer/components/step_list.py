"""The step list: one page of the filtered events at a time, so a million events cost one page.

Only the visible page (``PAGE_SIZE`` rows) is ever sent to the browser; the current step's page
follows the cursor, and the pager can browse away from it. A crash, which leaves no record of its
own, is a row between the last step before it and the first one after (it is not a step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from nicegui import events
from walkback.journal.errors import WalkbackError
from walkback.timeline.kinds import PLACEHOLDER
from walkback.timeline.session import Session
from walkback.timeline.story import Crash, lsn_is_shared, where
from walkback.timeline.summary import summary

from ..cursor import ReplayCursor
from ..entry import Derived
from .common import Component, fmt_time

PAGE_SIZE = 50
ROWS_KEPT = 10_000
"""Rows kept per session for the next page views (the pages browsed most, not a million)."""
SUMMARY_CHARS = 90
COLUMNS = [
    {"name": "step", "label": "Step", "field": "step", "align": "right"},
    {
        "name": "where",
        "label": "lsn",
        "field": "where",
        "align": "left",
        "classes": "wb-col-where",
        "headerClasses": "wb-col-where",
    },
    {
        "name": "time",
        "label": "Time",
        "field": "time",
        "align": "left",
        "classes": "wb-col-time",
        "headerClasses": "wb-col-time",
    },
    {"name": "kind", "label": "Kind", "field": "kind", "align": "left"},
    {
        "name": "status",
        "label": "Status",
        "field": "status",
        "align": "left",
        "classes": "wb-col-status",
        "headerClasses": "wb-col-status",
    },
    {"name": "what", "label": "What", "field": "what", "align": "left", "classes": "wb-what"},
]


class StepTable(Component, component="step_table.js"):
    """The count line, one page of rows and the pager, as one element."""

    def __init__(self, columns: list[dict[str, Any]]) -> None:
        super().__init__()
        self._props.update(rows=(), columns=columns, count="", page=1, pages=1, current=0)

    @property
    def rows(self) -> tuple[dict[str, Any], ...]:
        return self._props["rows"]

    def show(self, rows: tuple[dict[str, Any], ...] | None, **props: Any) -> None:
        """Show the ``count``, ``page``, ``pages`` and ``current`` step; with ``rows`` (a new page)
        everything is sent, without them only the current step and the count."""
        if rows is not None:
            self.send(rows=rows, **props)
            return
        self.keep(**props)
        self.run_method("mark", props["current"], props["count"])

    def texts(self) -> list[Any]:
        cells = [str(r[c["field"]]) for r in self._props["rows"] for c in self._props["columns"]]
        return [self._props["count"], *cells]


class StepList:
    """A table of one page of ``cursor.view`` plus a pager."""

    def __init__(
        self,
        session: Session,
        derived: Derived,
        cursor: ReplayCursor,
        on_pick: Callable[[int], None],
    ):
        self.cursor = cursor
        self.on_pick = on_pick
        self.set_session(session, derived)
        self.page = 1
        self._page_key: tuple[int, int, int] | None = None
        columns = [dict(c, label="agent:lsn") if c["name"] == "where" and self.shared else c for c in COLUMNS]
        self.table = StepTable(columns).classes("wb-step-list").mark("step-list")
        self.table.on("pick", self._row_click)
        self.table.on("page", self._paged)
        self.follow_cursor()

    def set_session(self, session: Session, derived: Derived) -> None:
        self.session = session
        self.derived = derived
        self.crashes = derived.crashes
        self.shared = lsn_is_shared(session)
        self._page_key = None

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.cursor.view) // PAGE_SIZE))

    def follow_cursor(self) -> None:
        """Show the page holding the current step (or the nearest one if it is filtered out)."""
        k = int(np.searchsorted(self.cursor.view, self.cursor.index))
        self.show_page(min(k // PAGE_SIZE, self.pages - 1) + 1)

    def show_page(self, page: int) -> None:
        self.page = max(1, min(page, self.pages))
        view = self.cursor.view
        lo = (self.page - 1) * PAGE_SIZE
        key = (id(view), len(view), self.page)
        rows = None
        if key != self._page_key:  # a new page: read its records and send them
            page_rows = [self._row(int(i)) for i in view[lo : lo + PAGE_SIZE]]
            # a tuple: NiceGUI sends it as it is instead of copying each row into observed dicts
            rows = tuple(self._with_crashes(view, lo, page_rows))
            self._page_key = key
        total = len(self.session)
        shown = len(view)
        pos = self.cursor.position
        where = f"step {self.cursor.step:,} of {total:,}"
        if shown != total:
            where += f" · {shown:,} match" + (
                f" · #{pos + 1:,} of them" if pos is not None else " · current step hidden"
            )
        self.table.show(rows, count=where, page=self.page, pages=self.pages, current=self.cursor.step)

    def _with_crashes(self, view: np.ndarray, lo: int, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Put a crash row after the last shown step before each crash on this page."""
        if not rows or not self.crashes:
            return rows
        out: list[dict[str, Any]] = []
        crashes = sorted(self.crashes, key=lambda c: c.after)
        before = int(view[lo - 1]) if lo > 0 else -1  # the last step of the previous page
        k = 0
        for r in rows:
            i = r["step"] - 1
            while k < len(crashes) and crashes[k].after < i:
                if crashes[k].after >= before:
                    out.append(self._crash_row(crashes[k]))
                k += 1
            out.append(r)
            before = i
        last_page = lo + len(rows) >= len(view)
        while last_page and k < len(crashes):
            if crashes[k].after >= before:
                out.append(self._crash_row(crashes[k]))
            k += 1
        return out

    def _crash_row(self, crash: Crash) -> dict[str, Any]:
        goto = (crash.running[0] if crash.running else crash.after) + 1
        return {
            "key": f"crash-{crash.after}",
            "step": "",
            "where": "",
            "time": "",
            "kind": "crash",
            "status": "recovered" if crash.resumed is not None else "crashed",
            "what": crash.text(self.session, short=True),
            "problem": True,
            "crash": True,
            "goto": goto,
        }

    def _row(self, i: int) -> dict[str, Any]:
        """Step ``i``'s row, built once per session (every page view of it shows the same rows)."""
        row = self.derived.rows.get(i)
        if row is None:
            if len(self.derived.rows) >= ROWS_KEPT:
                self.derived.rows.clear()
            row = self.derived.rows[i] = self._new_row(i)
        return row

    def _new_row(self, i: int) -> dict[str, Any]:
        ev = self.session.event(i)
        try:
            what = summary(ev, self.session.detail(i), SUMMARY_CHARS)
        except WalkbackError as e:
            what = f"(unreadable: {e.message})"
        return {
            "key": i + 1,
            "step": i + 1,
            "where": where(self.session, i, shared=self.shared),
            "time": fmt_time(ev.ts)[:8],
            "kind": ev.kind.replace("_", " "),
            "status": ev.status,
            "what": what,
            "problem": bool(self.derived.problems[i]) if i < len(self.derived.problems) else False,
            "damaged": bool(ev.flags & PLACEHOLDER),
        }

    def _paged(self, e: events.GenericEventArguments) -> None:
        if isinstance(e.args, int) and e.args != self.page:
            self.show_page(e.args)

    def _row_click(self, e: events.GenericEventArguments) -> None:
        step = e.args
        if isinstance(step, int) and 1 <= step <= len(self.session):
            self.on_pick(step - 1)
