"""The viewer's process settings: the memo of NiceGUI's handler signatures gives NiceGUI's own
answers, once per function; full collections run after closed tabs and on a clock, not on growth."""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
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


def test_deletions_outside_the_event_loop_collect_at_once(collector: Collections, seen: list[int]) -> None:
    for _ in range(tuning.FULL_AFTER_DELETED):
        collector.client_deleted()
    assert seen.count(2) == 1


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


def test_the_last_tabs_closed_are_collected_at_the_next_tick(collector: Collections, seen: list[int]) -> None:
    for _ in range(tuning.FULL_AFTER_DELETED - 1):
        collector.client_deleted()
    assert 2 not in seen
    collector.tick()
    assert seen.count(2) == 1
    collector.tick()
    assert seen.count(2) == 1  # nothing deleted since


def _rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(tuning._MALLOC_TRIM is None, reason="glibc's malloc_trim")
def test_freed_pages_between_survivors_go_back_to_the_system() -> None:
    blocks = [bytearray(4000) for _ in range(50_000)]  # 200 MB from the C heap (past pymalloc's 512 B)
    before = _rss()
    kept = blocks[::50]  # a survivor every 200 KB: the heap cannot shrink from its top
    del blocks
    still = _rss()
    tuning.give_back_free_pages()
    after = _rss()
    assert len(kept) == 1000
    assert still > before - 50e6 and after < still - 100e6, (before, still, after)


def test_escaping_by_replace_gives_what_nicegui_translate_gives() -> None:
    import random

    from nicegui.client import HTML_ESCAPE_TABLE
    from walkback.viewer.tuning import _Escapable, sequential

    pairs = sequential(HTML_ESCAPE_TABLE)
    assert pairs is not None and pairs[0][0] == "&"
    tuning.escape_pages_faster()  # what the server does (idempotent)
    assert _Escapable.pairs == pairs
    rng = random.Random(7)
    alphabet = "&<>`$;#a1 \"'\\\n…é\u2028" + "".join(chr(k) for k in HTML_ESCAPE_TABLE)
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert _Escapable(text).translate(HTML_ESCAPE_TABLE) == text.translate(HTML_ESCAPE_TABLE), text
    other = str.maketrans({"a": "b"})
    assert _Escapable("a&<").translate(other) == "b&<"  # any other table: str.translate itself


def test_a_table_replace_cannot_reproduce_is_left_to_translate() -> None:
    from walkback.viewer.tuning import sequential

    assert sequential(str.maketrans({"<": "&lt;", "l": "L"})) is None  # "l" inside "&lt;"
    assert sequential(str.maketrans({"<": None})) is None  # a deletion
    assert sequential(str.maketrans({"<": "&lt;", "&": "&amp;"})) == (("&", "&amp;"), ("<", "&lt;"))


async def test_a_served_page_escapes_model_text_in_its_element_tree(viewer, tmp_path: Path) -> None:
    """The page as served: text a model wrote sits in the element tree only as entities."""
    from sample_runs import XSS, build_run
    from walkback.viewer.store import entry_id

    run = build_run(tmp_path, xss=True, recovered=True)
    async with viewer([run.dir]) as user:
        page = (await user.http_client.get(f"/s/{entry_id(run.dir)}")).text
    from nicegui import client

    assert isinstance(client.json, tuning._PageJson)  # the server escaped with replace
    assert XSS["task"] not in page and "<script>window.__xss" not in page
    as_json = orjson.dumps(XSS["task"]).decode()[1:-1]  # the tree is JSON: its quotes are escaped
    assert as_json.translate(client.HTML_ESCAPE_TABLE) in page


async def test_a_page_whose_socket_never_connects_is_released(
    viewer, sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page served over HTTP whose socket never connects (a script's, a prefetch's) holds a whole
    session page: pruning deletes it, after which nothing (the store, a timer, NiceGUI) keeps its
    Client or SessionPage."""
    from nicegui import Client
    from walkback.viewer.session_page import SessionPage
    from walkback.viewer.store import entry_id

    async with viewer([sample.dir]) as user:
        known = set(Client.instances)
        page = await user.http_client.get(f"/s/{entry_id(sample.dir)}")
        assert page.status_code == 200
        (client,) = (c for cid, c in Client.instances.items() if cid not in known)
        (built,) = (o for o in gc.get_objects() if isinstance(o, SessionPage) and o.body.client is client)
        refs = weakref.ref(client), weakref.ref(built)
        del client, built
        tuning.prune_unconnected()
        assert refs[0]() is not None  # just served: its browser may still be connecting
        monkeypatch.setattr(tuning, "UNCONNECTED_SECONDS", 0.0)
        tuning.prune_unconnected()
        for _ in range(30):  # its timers notice the deletion at their next tick (<= 1 s)
            gc.collect()
            if refs[0]() is None and refs[1]() is None:
                break
            await asyncio.sleep(0.1)
        assert [r() for r in refs] == [None, None]
        assert set(Client.instances) == known
