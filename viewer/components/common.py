"""Shared bits: escaped text blocks, status colours, time formatting, plurals.

Everything a journal contains was written by a model, so it is only ever shown through elements
that render text (labels, badges, table cells, ``text.Lines``), or as markdown with HTML disabled
(``conversation.markdown``): never raw HTML.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson
from nicegui import ui

E = TypeVar("E", bound=ui.element)
_UNSET: Any = object()

MAX_TEXT = 20_000
"""Characters of one field shown before it is cut (the raw record keeps the rest)."""


class Component(ui.element):
    """One of our small Vue components (a ``.js`` file beside its module): what it shows is its
    props, sent in one update; :meth:`texts` is what NiceGUI's simulated user reads of it."""

    def send(self, **props: Any) -> None:
        """Show ``props`` in the browser (nothing is sent if they are what it shows already)."""
        if any(self._props.get(k, _UNSET) != v for k, v in props.items()):
            with self._props.suspend_updates():
                self._props.update(props)
            self.update()

    def keep(self, **props: Any) -> None:
        """What the browser shows already (set there by the user, or by a method call): keep it
        for the next update, send nothing now."""
        with self._props.suspend_updates():
            self._props.update(props)

    def texts(self) -> list[Any]:
        """The texts the component shows, for ``should_see`` in tests."""
        return []

    def _displayed_contents(self, *, only_visible: bool) -> list[Any]:
        return [*super()._displayed_contents(only_visible=only_visible), *(t for t in self.texts() if t)]


STATUS_COLORS = {
    "ok": "positive",
    "approved": "positive",
    "completed": "positive",
    "committed": "positive",
    "applied": "positive",
    "pending": "warning",
    "running": "info",
    "in_doubt": "deep-orange",
    "recovered": "purple",
    "torn": "negative",
    "failed": "negative",
    "denied": "negative",
    "crashed": "negative",
    "corrupt": "negative",
    "cancelled": "grey",
}


def hint(element: E, text: str) -> E:
    """A one-line tooltip as the element's ``title`` attribute: a page has a dozen of them, and a
    ``ui.tooltip`` each would be a dozen more elements to build and send per page view (Vue sets
    the attribute as text)."""
    element.props["title"] = text
    return element


def status_color(status: str) -> str:
    return STATUS_COLORS.get(status, "grey-7")


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def as_text(value: Any, limit: int = MAX_TEXT) -> str:
    """A value as readable text: strings as they are, everything else as indented JSON."""
    if isinstance(value, str):
        return clip(value, limit)
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode()
    except TypeError:
        text = repr(value)
    return clip(text, limit)


def pre(text: str) -> ui.label:
    """A block of preformatted, escaped text."""
    return ui.label(text).classes("wb-pre")


def fmt_time(ts: float | None, *, date: bool = False) -> str:
    if ts is None or (isinstance(ts, float) and math.isnan(ts)):
        return ""
    fmt = "%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S.%f"
    text = datetime.fromtimestamp(ts, UTC).strftime(fmt)
    return text if date else text[:-3]


def fmt_when(ts: float | None, *, now: float | None = None) -> str:
    """A time as people read it: ``Dec 1 22:21:12 UTC`` (the year only when it is not this one)."""
    if ts is None or (isinstance(ts, float) and math.isnan(ts)):
        return ""
    dt = datetime.fromtimestamp(ts, UTC)
    this_year = datetime.fromtimestamp(now, UTC).year if now is not None else datetime.now(UTC).year
    fmt = "%b %-d %H:%M:%S UTC" if dt.year == this_year else "%b %-d %Y %H:%M:%S UTC"
    return dt.strftime(fmt)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 agent``, ``2 agents``, ``1,000 events``."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.1f} s"
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m" if h else f"{m}m {s:02d}s"
