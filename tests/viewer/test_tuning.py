"""The viewer's memo of NiceGUI's handler signatures gives NiceGUI's own answers, once per function."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any

import pytest
from nicegui import helpers
from nicegui.helpers.functions import expects_arguments as nicegui_answer
from walkback.viewer.tuning import remember_handler_shapes


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


def test_what_a_server_froze_is_collectable_again_once_it_stops() -> None:
    from walkback.viewer.tuning import quieter_collections, usual_collections

    quieter_collections()
    assert gc.get_freeze_count() > 0
    usual_collections()
    assert gc.get_freeze_count() == 0
