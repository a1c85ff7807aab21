"""ReplayCursor: stepping through a filtered view, seeking, playback, history flags."""

from __future__ import annotations

import numpy as np
from walkback.viewer.cursor import ReplayCursor


def make(total: int = 10, view: list[int] | None = None, index: int = 0) -> tuple[ReplayCursor, list]:
    c = ReplayCursor(
        total=total, view=np.array(view if view is not None else range(total), dtype=np.int64), index=index
    )
    seen: list[tuple[int, bool]] = []
    c.subscribe(lambda i, push: seen.append((i, push)))
    return c, seen


def test_steps_through_the_whole_session() -> None:
    c, seen = make()
    assert c.next() and c.index == 1 and c.step == 2
    assert c.next(3) and c.index == 4
    assert c.prev() and c.index == 3
    assert c.last() and c.index == 9 and c.at_end
    assert not c.next() and c.index == 9
    assert c.first() and c.index == 0
    assert not c.prev()
    assert seen == [(1, True), (4, True), (3, True), (9, True), (0, True)]


def test_filtered_view_skips_hidden_steps_and_handles_a_hidden_current_step() -> None:
    c, _ = make(view=[2, 5, 7], index=4)
    assert c.position is None
    assert c.next() and c.index == 5 and c.position == 1
    assert c.next() and c.index == 7
    assert not c.next()
    c.seek(6)
    assert c.prev() and c.index == 5
    c.seek(0)
    assert not c.prev() and c.next() and c.index == 2
    c.seek(8)
    assert not c.next() and c.index == 8


def test_seek_clamps_and_reports_moves_without_push_when_asked() -> None:
    c, seen = make()
    assert c.seek(1000, push=False) and c.index == 9
    assert not c.seek(9)
    assert c.seek(-5) and c.index == 0
    assert seen == [(9, False), (0, True)]


def test_empty_view_and_empty_session() -> None:
    c, seen = make(view=[])
    c.view = np.zeros(0, np.int64)
    assert not c.next() and not c.prev() and not c.first() and not c.last()
    e = ReplayCursor(total=0)
    assert e.index == 0 and not e.next() and e.at_end
    assert seen == []


def test_playback_moves_without_history_and_stops_at_the_end() -> None:
    c, seen = make(total=4, index=3)
    assert c.toggle() and c.index == 0  # playing from the end restarts at the first step
    c.tick()
    c.tick()
    assert c.index == 2 and c.playing
    c.tick()
    assert c.index == 3 and not c.playing  # reached the end: stopped
    c.tick()
    assert c.index == 3
    assert all(push is False for _, push in seen)


def test_set_view_after_reload_keeps_index_and_clamps() -> None:
    c, _ = make(total=10, index=8)
    c.set_view(np.arange(5, dtype=np.int64), total=5)
    assert c.index == 4 and c.total == 5
