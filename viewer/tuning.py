"""Process settings for a server whose work is building short-lived pages (many per second).

A page view creates thousands of small objects that live until its tab closes, and each full
collection walks every object of every open page plus everything imported at startup, stalling
every request waiting behind it. :class:`Collections` moves what exists once the server has
started (NiceGUI, pandas, plotly, the importers: most of the heap) out of the collector's sight
(``gc.freeze``) and times the full collections by the garbage rather than by the allocations: the
cycles this server leaves are the elements of closed tabs, so it collects fully after every
:data:`FULL_AFTER_DELETED` deleted clients, and at least every :data:`FULL_EVERY_SECONDS` for
anything else. CPython's own rule (a full collection whenever the heap grew by a quarter) walked
every open page's objects again and again while pages were being built: 13 pauses of about 350 ms
in 500 page loads, doubling the p95 (``bench/viewer_load``). Tried before and dropped: a larger
young generation kept closed tabs' memory longer (+120 MB after 300 tabs instead of +61 MB) for no
better p95; collecting only when no page had been built for a second (at least every 30 s) let
1,000 closed tabs' garbage pile up (+383 MB instead of +63 MB).

Memory once the tabs are gone: every object of a closed page is freed (300 more page loads add
nothing), yet the heap kept its high-water mark, +46 MB after 300 loads 10 at a time, because
pymalloc gives an arena back only when all of it is free and a few long-lived objects (caches,
interned names) sit in most arenas a page build touched. The viewer's server therefore runs on the
C allocator (``walkback view`` starts itself again with ``PYTHONMALLOC=malloc``,
:func:`walkback.cli.main`) and, after each full collection, asks glibc to give back the free pages
(:func:`give_back_free_pages`): +11 MB, for no measured latency cost. Without ``malloc_trim`` the C
allocator kept as much as pymalloc.

NiceGUI asks ``inspect.signature`` whether a change handler takes an argument each time it creates
an observed collection: three per element (its props, classes and style), about 300 per session
page and a third of the time a page view takes. The handlers are bound methods of a handful of
NiceGUI classes, and the answer depends only on the function, so :func:`remember_handler_shapes`
answers each function once. Everything that is not a bound method is asked as before. And it
escapes the page's element tree with five ``str.replace`` calls where ``str.translate`` took a
tenth of a page view (:func:`escape_pages_faster`).
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import sys
import time
from collections.abc import Callable
from typing import Any, ClassVar

from nicegui import Client, helpers

FULL_AFTER_DELETED = 16
"""Deleted clients (closed tabs) between two full collections."""
FULL_EVERY_SECONDS = 60.0
"""The longest time between two full collections (for cycles that are not closed tabs')."""
CHECK_SECONDS = 5.0
"""How often the server asks :meth:`Collections.tick` whether a full collection is due."""
UNCONNECTED_SECONDS = 15.0
"""A page whose socket has not connected this long after it was served is deleted (NiceGUI waits
60 s): a prefetch, a link preview, a tab closed while loading, a script fetching pages each hold
a whole session page's elements (~190 KB, 35 elements and ~1,400 objects for ``samples/demo``)
until then. A browser that connects later is told to reload, as after a server restart."""
NEVER = 2**31 - 1
"""A generation-2 threshold the count never reaches: no full collection on CPython's own rule."""


class Collections:
    """When this server's full garbage collections run: see the module docstring."""

    def __init__(self) -> None:
        self.deleted = 0
        self.last = time.monotonic()
        self.thresholds = gc.get_threshold()

    def start(self) -> None:
        """Call once the server has started."""
        gc.collect()
        gc.freeze()
        self.thresholds = gc.get_threshold()
        gc.set_threshold(self.thresholds[0], self.thresholds[1], NEVER)
        self.last = time.monotonic()

    def client_deleted(self) -> None:
        """A client was deleted: collect once it is gone, if enough of them have been."""
        self.deleted += 1
        if self.deleted >= FULL_AFTER_DELETED:
            try:
                asyncio.get_running_loop().call_soon(self.collect)
            except RuntimeError:  # deleted outside the event loop (a shutdown): at once, then
                self.collect()

    def tick(self) -> None:
        """Called periodically: a full collection if clients were deleted since the last one (the
        last few tabs closed wait one tick, not for 16 more), or if none ran for
        :data:`FULL_EVERY_SECONDS`."""
        if self.deleted or time.monotonic() - self.last >= FULL_EVERY_SECONDS:
            self.collect()

    def collect(self) -> None:
        self.deleted = 0
        gc.collect()
        give_back_free_pages()
        self.last = time.monotonic()

    def stop(self) -> None:
        """Call when the server stops: the collector's own rule again, and what was frozen is its
        again (one process may run many servers, as the tests do, and would otherwise never
        collect what each froze)."""
        gc.set_threshold(*self.thresholds)
        gc.unfreeze()


_MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None) if sys.platform == "linux" else None
"""glibc's ``malloc_trim`` (None on another C library: nothing to call)."""


def give_back_free_pages() -> None:
    """Return the C heap's free pages to the system (glibc), so memory freed stays freed in RSS."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def prune_unconnected() -> None:
    """Delete the pages served more than :data:`UNCONNECTED_SECONDS` ago whose socket never connected
    (NiceGUI's own pruning, sooner); call it every few seconds."""
    Client.prune_instances(client_age_threshold=UNCONNECTED_SECONDS)


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


class _Escapable(str):
    """A page's element tree as NiceGUI serialises it, escaped for the page by ``str.replace``.

    ``Client.build_response`` escapes the tree's JSON with ``str.translate`` and a table that maps
    five characters to entities. A table with multi-character replacements leaves CPython's fast
    path at the first such character, and every later character is then a failed dict lookup: 2.9
    ms for a 45 KB session page, a tenth of the page view, where five ``replace`` calls take 0.07 ms.
    """

    table: ClassVar[dict[int, str]] = {}
    pairs: ClassVar[tuple[tuple[str, str], ...]] = ()

    def translate(self, table: Any) -> str:
        if table is not self.table:
            return str.translate(self, table)
        text = str(self)
        for char, entity in self.pairs:
            text = text.replace(char, entity)
        return text


def sequential(table: dict[int, str]) -> tuple[tuple[str, str], ...] | None:
    """The table as ``replace`` steps giving what ``str.translate`` gives, or None if there is no
    such order: ``&`` first, and no replacement may hold any other character the table replaces."""
    if not all(isinstance(v, str) for v in table.values()):
        return None  # deletions or code points: not a replacement by text
    pairs = sorted(((chr(k), v) for k, v in table.items()), key=lambda kv: kv[0] != "&")
    if any(char != "&" and char in entity for char, _ in pairs for _, entity in pairs):
        return None
    return tuple(pairs)


class _PageJson:
    """``nicegui.json`` as ``nicegui.client`` sees it: the same, its ``dumps`` giving :class:`_Escapable`."""

    def __init__(self, json: Any) -> None:
        self.json = json
        self.loads = json.loads

    def dumps(self, *args: Any, **kwargs: Any) -> str:
        return _Escapable(self.json.dumps(*args, **kwargs))


def escape_pages_faster() -> None:
    """Let NiceGUI's page escaping run on ``str.replace`` (idempotent; a no-op if NiceGUI's table is
    not one that replacing in order reproduces)."""
    from nicegui import client
    from nicegui import json as nicegui_json

    names = vars(client)  # the module's own namespace: what build_response looks up
    if isinstance(names["json"], _PageJson):
        return
    pairs = sequential(client.HTML_ESCAPE_TABLE)
    if pairs is None:
        return
    _Escapable.table, _Escapable.pairs = client.HTML_ESCAPE_TABLE, pairs
    names["json"] = _PageJson(nicegui_json)
