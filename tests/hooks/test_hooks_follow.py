"""Following a hooked session that is running: a step the hook fsyncs shows within a second.

At the loader level, the viewer's own store (``viewer.store.SessionStore``) polled at the viewer's
own interval (``viewer.app.POLL_SECONDS``) on a transcript with its hook journal; then once in a real
headless Chromium on ``walkback view``, a real server on 127.0.0.1."""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from hookjournal_helpers import HookJournal, Transcript, h, make_repo
from walkback.timeline.details import ToolCall
from walkback.viewer.app import POLL_SECONDS
from walkback.viewer.entry import Entry
from walkback.viewer.store import SessionStore

from walkback import importers

FOLLOW_LIMIT = 1.0
"""Seconds from the hook's fsync to the step being there (issue 26)."""
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
URL = re.compile(r"(http://\S+)")
SAMPLES = 3
"""Steps appended one after another in the browser check; their median is held to the limit (one
sample on a loaded 2-core machine can miss a poll)."""


def _running(tmp_path: Path, home: Path) -> tuple[Transcript, HookJournal]:
    """A session in progress: one Edit done and committed, the journal's writer still open."""
    ws = tmp_path / "ws"
    make_repo(ws, {"a.py": b"a = 1\n"})
    t = Transcript(tmp_path / "live.jsonl", ws)
    hj = HookJournal.create(home, t.session, ws, transcript=t.path)
    hj.w._group_interval = 0.0  # every record durable when appended, as the hook command leaves it
    t.prompt("keep going")
    args = {"file_path": str(ws / "a.py"), "old_string": "a = 1", "new_string": "a = 2"}
    t.tool_use("toolu_f1", "Edit", args)
    lsn = hj.file_intent("toolu_f1", "Edit", args, "a.py", b"a = 2\n")
    (ws / "a.py").write_bytes(b"a = 2\n")
    hj.commit(lsn, "toolu_f1", h(b"a = 2\n"), "a.py")
    t.tool_result("toolu_f1", "The file a.py has been updated.")
    return t, hj


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "wbhome"
    monkeypatch.setenv("WALKBACK_HOME", str(home))
    return home


def _poller(store: SessionStore, stop: threading.Event) -> threading.Thread:
    """What the viewer's ``app.timer(POLL_SECONDS, store.poll)`` does."""

    def run() -> None:
        while not stop.wait(POLL_SECONDS):
            store.poll()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


def _waited(cond: object, limit: float) -> float:
    """Seconds until ``cond()`` holds (fails past ``limit`` + a margin to report the figure)."""
    t0 = time.monotonic()
    while not cond():  # type: ignore[operator]
        assert time.monotonic() - t0 < limit + 5, "the new step never showed"
        time.sleep(0.01)
    return time.monotonic() - t0


def test_the_store_shows_a_hooked_step_within_a_second(tmp_path: Path, home: Path) -> None:
    t, hj = _running(tmp_path, home)
    store = SessionStore([t.path], loader=importers.load_chunks)
    e = next(iter(store.entries.values()))
    store.load_now(e)
    assert e.session is not None and e.session.hooked is not None
    n = len(e.session)
    journal_only: list[float] = []
    both: list[float] = []
    stop = threading.Event()
    store.start()
    poller = _poller(store, stop)
    try:
        time.sleep(2 * POLL_SECONDS)
        assert e.session is not None and len(e.session) == n, "nothing changed: nothing new"
        for k in range(SAMPLES):
            name, call = f"b{k}.py", f"toolu_w{k}"
            # Only the journal has it: the PreToolUse hook fsynced an intent the transcript has not yet.
            lsn = hj.file_intent(call, "Write", {"content": "b\n"}, name, b"b\n")
            journal_only.append(_waited(partial(_longer, e, n), FOLLOW_LIMIT))
            # The transcript line and the hook's commit of the same call: merged by call id.
            t.tool_use(call, "Write", {"file_path": str(hj.ws / name), "content": "b\n"})
            (hj.ws / name).write_bytes(b"b\n")
            hj.commit(lsn, call, h(b"b\n"), name)
            both.append(_waited(partial(_done, e, t.path, name), FOLLOW_LIMIT))
            assert e.session is not None
            n = len(e.session)
            time.sleep(0.13 * (k + 1))  # the next fsync at another phase of the poll
    finally:
        stop.set()
        poller.join()
        store.stop()
        hj.close()
    s = e.session
    assert s is not None and s.status == "running"
    calls = [i for i in s.indices_where(kind="tool_call") if s.event(i).target == "b0.py"]
    assert len(calls) == 1 and s.event(calls[0]).source == str(t.path), "the call is the transcript's"
    d = s.detail(calls[0])
    assert isinstance(d, ToolCall) and d.edit is not None and d.edit.post == h(b"b\n")
    print("follow latency: journal-only steps " + ", ".join(f"{x:.3f}" for x in journal_only)
          + " s; transcript+commit " + ", ".join(f"{x:.3f}" for x in both) + " s")  # fmt: skip
    assert statistics.median(journal_only) < FOLLOW_LIMIT and statistics.median(both) < FOLLOW_LIMIT


def _longer(e: Entry, n: int) -> bool:
    return e.session is not None and len(e.session) > n


def _done(e: Entry, transcript: Path, target: str) -> bool:
    """The transcript's call on ``target`` is there and closed by the journal's commit."""
    s = e.session
    if s is None:
        return False
    return any(
        (ev := s.event(i)).target == target and ev.source == str(transcript) and ev.status == "ok"
        for i in s.indices_where(kind="tool_call")
    )


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def browser() -> Iterator[object]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("chromium/chromedriver not installed (./run test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
    ):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


def test_the_viewer_in_chromium_shows_the_hooked_step(tmp_path: Path, home: Path, browser: object) -> None:
    t, hj = _running(tmp_path, home)
    seen: list[float] = []
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "walkback", "view", "--no-open", "--port", str(_port()), str(t.path)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        m = URL.search(proc.stderr.readline())
        assert m, "the viewer printed no URL"
        page = m.group(1)
        deadline = time.monotonic() + 30
        while True:
            try:
                browser.get(page)  # type: ignore[attr-defined]
                if "a.py" in browser.page_source:  # type: ignore[attr-defined]
                    break
            except Exception:  # noqa: BLE001 - the server is still starting
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "the viewer did not show the session"
            time.sleep(0.2)
        time.sleep(3)  # past the store's pause after a slow first read (its imports): a live follow
        for k in range(SAMPLES):
            name = f"late_step_{k}.py"
            hj.file_intent(f"toolu_late{k}", "Write", {"content": "c\n"}, name, b"c\n")
            shown = f"return document.body.innerText.includes({name!r})"
            seen.append(_waited(lambda: browser.execute_script(shown), FOLLOW_LIMIT))  # type: ignore[attr-defined]  # noqa: B023
            time.sleep(0.17 * (k + 1))  # the next fsync at another phase of the poll
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        hj.close()
    print("follow latency in Chromium: " + ", ".join(f"{x:.3f}" for x in seen) + " s")
    assert statistics.median(seen) < FOLLOW_LIMIT
