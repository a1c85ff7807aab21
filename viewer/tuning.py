"""Process settings for a server whose work is building short-lived pages (many per second).

A page view creates thousands of small objects that live until its tab closes, and each full
collection walks every object of every open page plus everything imported at startup, stalling
every request waiting behind it. :func:`quieter_collections` moves what exists once the server has
started (NiceGUI, pandas, plotly, the importers: most of the heap) out of the collector's sight
(``gc.freeze``). A larger young generation was tried too: it kept closed tabs' memory longer
(+120 MB after 300 tabs instead of +61 MB) for no better p95 (``bench/viewer_load``). So did
collecting the oldest generation only when no page had been built for a second (at least every
30 s): p95 1132 -> 605 ms, but +383 MB after 1,000 tabs instead of +63 MB; every 5-10 s kept
neither.

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


def quieter_collections() -> None:
    """Call once the server has started: see the module docstring."""
    gc.collect()
    gc.freeze()


def usual_collections() -> None:
    """Call when the server stops: what was frozen is the collector's again (one process may run
    many servers, as the tests do, and would otherwise never collect what each froze)."""
    gc.unfreeze()


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
