"""The replay cursor: which step is shown, which steps the filter keeps, whether it is playing.

Pure state (no UI): the page subscribes with :meth:`ReplayCursor.subscribe` and redraws what
changed. Stepping is O(log n) in the filtered view (a binary search), so it costs the same at a
thousand events and at a million.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Listener = Callable[[int, bool], None]
"""Called with ``(index, push)``: push is False for moves that must not add a history entry."""

SPEEDS = (0.5, 1.0, 2.0, 4.0, 10.0, 25.0)
"""Playback speeds in steps per second."""


@dataclass
class ReplayCursor:
    """Position in a session of ``total`` events, stepping through ``view`` (filtered indices)."""

    total: int
    view: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    index: int = 0
    """The current event (0-based); may lie outside ``view`` after a deep link or a filter change."""
    playing: bool = False
    speed: float = 1.0
    _listeners: list[Listener] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if not len(self.view) and self.total:
            self.view = np.arange(self.total, dtype=np.int64)
        self.index = self.clamp(self.index)

    # -- observers ----------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _emit(self, push: bool) -> None:
        for listener in list(self._listeners):
            listener(self.index, push)

    # -- positions ----------------------------------------------------------------------------
    def clamp(self, i: int) -> int:
        return max(0, min(int(i), self.total - 1)) if self.total else 0

    @property
    def step(self) -> int:
        """1-based step number shown to people and used in URLs."""
        return self.index + 1

    @property
    def position(self) -> int | None:
        """0-based position of the current event in the filtered view (None if filtered out)."""
        k = int(np.searchsorted(self.view, self.index))
        return k if k < len(self.view) and self.view[k] == self.index else None

    @property
    def at_end(self) -> bool:
        return not len(self.view) or self.index >= int(self.view[-1])

    # -- moves --------------------------------------------------------------------------------
    def seek(self, i: int, *, push: bool = True) -> bool:
        """Go to event ``i`` (clamped). Returns whether the cursor moved."""
        i = self.clamp(i)
        if i == self.index:
            return False
        self.index = i
        self._emit(push)
        return True

    def next(self, n: int = 1, *, push: bool = True) -> bool:
        """Go ``n`` filtered steps forward (stays put at the end)."""
        if not len(self.view):
            return False
        k = int(np.searchsorted(self.view, self.index, side="right"))
        if k >= len(self.view):
            return False
        return self.seek(int(self.view[min(k + n - 1, len(self.view) - 1)]), push=push)

    def prev(self, n: int = 1, *, push: bool = True) -> bool:
        if not len(self.view):
            return False
        k = int(np.searchsorted(self.view, self.index, side="left"))
        if k == 0:
            return False
        return self.seek(int(self.view[max(k - n, 0)]), push=push)

    def first(self, *, push: bool = True) -> bool:
        return self.seek(int(self.view[0]), push=push) if len(self.view) else False

    def last(self, *, push: bool = True) -> bool:
        return self.seek(int(self.view[-1]), push=push) if len(self.view) else False

    def set_view(self, view: np.ndarray, total: int | None = None) -> None:
        """Replace the filtered view (and the session size, after a reload); keeps the index."""
        self.view = view
        if total is not None:
            self.total = total
            self.index = self.clamp(self.index)

    # -- playback -----------------------------------------------------------------------------
    def toggle(self) -> bool:
        """Start or stop playback; playing from the end restarts at the first step."""
        self.playing = not self.playing
        if self.playing and self.at_end:
            self.first(push=False)
        return self.playing

    def tick(self) -> None:
        """One playback step (no history entry); stops at the end."""
        if not self.playing:
            return
        if not self.next(push=False) or self.at_end:
            self.playing = False
