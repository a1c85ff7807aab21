"""Process settings for a server whose work is building short-lived pages (many per second).

A page view creates thousands of small objects that live until its tab closes. With CPython's
default thresholds a collection of the oldest generation runs every few page views and walks every
object of every open page plus everything imported at startup, stalling all requests waiting behind
it (the p95 of ``bench/viewer_load`` was four times its p50). :func:`quieter_collections` moves
what exists once the server has started out of the collector's sight (``gc.freeze``) and lets the
youngest generation grow to :data:`YOUNG` objects before it is collected, so full collections are
rarer; cyclic garbage is still collected, later.

NiceGUI asks ``inspect.signature`` whether a change handler takes an argument each time it creates
an observed collection: three per element (its props, classes and style), about 300 per session
page and a third of the time a page view takes. The handlers are bound methods of a handful of
NiceGUI classes, and the answer depends only on the function, so :func:`remember_handler_shapes`
answers each function once. Everything that is not a bound method is asked as before.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from nicegui import helpers

YOUNG = 10_000
"""Allocations between two collections of the youngest generation (CPython's default: 700)."""


def quieter_collections() -> None:
    """Call once the server has started: see the module docstring."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG, older, oldest)


def remember_handler_shapes() -> None:
    """Answer ``nicegui.helpers.expects_arguments`` once per function of a bound method (idempotent)."""
    ask = helpers.expects_arguments
    if getattr(ask, "remembers", False):
        return
    known: dict[Callable[..., Any], bool] = {}

    def expects_arguments(func: Callable[..., Any]) -> bool:
        f = getattr(func, "__func__", None)
        if f is None:
            return ask(func)
        answer = known.get(f)
        if answer is None:
            answer = known[f] = ask(func)
        return answer

    expects_arguments.remembers = True  # type: ignore[attr-defined]
    helpers.expects_arguments = expects_arguments
