"""The detail pane's tabs: a strip of names; the page shows the panel of the one picked."""

from __future__ import annotations

from collections.abc import Callable

from nicegui import events

from .common import Component


class TabStrip(Component, component="tab_strip.js"):
    """One element for the strip; ``on_change(name)`` is called when the user picks a tab."""

    def __init__(self, tabs: tuple[str, ...], value: str, on_change: Callable[[str], None]) -> None:
        super().__init__()
        self.tabs = tabs
        self._props["tabs"] = list(tabs)
        self._props["value"] = value
        self.on("change", lambda e: self._picked(e, on_change))

    @property
    def value(self) -> str:
        return str(self._props["value"])

    def set_value(self, value: str) -> None:
        """Show ``value`` as picked (the page shows its panel)."""
        if value in self.tabs:
            self.send(value=value)

    def _picked(self, e: events.GenericEventArguments, on_change: Callable[[str], None]) -> None:
        if e.args in self.tabs:
            self.keep(value=e.args)  # the strip shows it already
            on_change(e.args)
