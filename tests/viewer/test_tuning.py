"""The viewer's process settings: the memo of NiceGUI's handler signatures gives NiceGUI's own
answers, once per function; full collections run after closed tabs and on a clock, not on growth."""

from __future__ import annotations

import asyncio
import functools
import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from nicegui import helpers
from nicegui.helpers.functions import expects_arguments as nicegui_answer
from walkback.viewer import tuning
from walkback.viewer.tuning import Collections, remember_handler_shapes


class Thing:
    def update(self) -> None: ...

    def changed(self, event: object) -> None: ...

    def maybe(self, event: object = None) -> None: ...


def takes(event: object) -> None: ...


def test_same_answers_and_one_question_per_function(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Callable[..., Any]] = []

    def counting(func: Callable[..., Any]) -> bool:
        asked.append(func)
        return nicegui_answer(func)

    monkeypatch.setattr(helpers, "expects_arguments", counting)
    remember_handler_shapes()
    remember_handler_shapes()  # idempotent: not a memo of a memo
    memo = helpers.expects_arguments
    assert memo is not counting
    a, b = Thing(), Thing()
    handlers: list[Callable[..., Any]] = [
        a.update,
        a.changed,
        a.maybe,
        takes,
        lambda: None,
        lambda e: None,
        functools.partial(takes, 1),
        functools.partial(Thing.changed, a),
    ]
    for h in handlers:
        assert memo(h) == nicegui_answer(h), h
    asked.clear()
    for _ in range(3):
        assert memo(b.update) is False and memo(b.changed) is True and memo(a.maybe) is False
    assert asked == []  # bound methods: answered from the first question about their function
    memo(takes)
    memo(takes)
    assert asked == [takes, takes]  # anything else is asked every time, as NiceGUI does


class Cycle:
    """Garbage only a full collection frees once it has been frozen or aged into generation 2."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def seen() -> Iterator[list[int]]:
    """The generations of the collections that run during the test."""
    generations: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            generations.append(info["generation"])

    gc.callbacks.append(note)
    yield generations
    gc.callbacks.remove(note)


@pytest.fixture
def collector() -> Iterator[Collections]:
    before = gc.get_threshold()
    c = Collections()
    c.start()
    yield c
    c.stop()
    assert gc.get_threshold() == before


def test_start_freezes_and_leaves_full_collections_to_the_policy(
    collector: Collections, seen: list[int]
) -> None:
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[2] == tuning.NEVER
    junk = [Cycle() for _ in range(200_000)]  # far past CPython's own "a quarter more" rule
    for _ in range(20):
        gc.collect(1)
    del junk
    assert 2 not in seen


def test_what_a_server_froze_is_collectable_again_once_it_stops() -> None:
    c = Collections()
    c.start()
    assert gc.get_freeze_count() > 0
    c.stop()
    assert gc.get_freeze_count() == 0


def test_closed_tabs_garbage_is_collected_after_enough_deletions(collector: Collections) -> None:
    async def close_tabs() -> tuple[bool, bool]:
        c = Cycle()
        dead = weakref.ref(c)
        gc.collect(1)  # the cycle ages out of the young generations, as a tab's elements do
        del c
        for _ in range(tuning.FULL_AFTER_DELETED - 1):
            collector.client_deleted()
        await asyncio.sleep(0)
        alive_before = dead() is not None
        collector.client_deleted()
        await asyncio.sleep(0)  # the collection runs once the deleting callback has returned
        return alive_before, dead() is None

    alive_before, freed = asyncio.run(close_tabs())
    assert alive_before and freed


def test_a_full_collection_at_least_every_so_often(
    collector: Collections, seen: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    collector.tick()
    assert 2 not in seen  # just started
    now = tuning.time.monotonic()
    monkeypatch.setattr(tuning.time, "monotonic", lambda: now + tuning.FULL_EVERY_SECONDS)
    collector.tick()
    assert 2 in seen
    seen.clear()
    collector.tick()
    assert 2 not in seen  # the clock starts again from that collection
