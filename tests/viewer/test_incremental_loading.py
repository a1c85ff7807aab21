"""A first read in chunks: the store shows the session so far (status and integrity pending), the
page says it is still loading, and both fill in when the whole journal is read."""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nicegui.testing import user_simulation
from walkback.journal.testing import synth_journal
from walkback.timeline.session import Session
from walkback.viewer.store import SessionStore

from walkback import importers

MAIN = """
import sys
from nicegui import ui
from walkback.viewer.app import build
build(sys.modules["_walkback_incremental"].store, poll=None, host="test")  # the simulated user's Host
ui.run(reload=False, show=False, show_welcome_message=False)
"""


def paused_loader(reached: threading.Event, release: threading.Event) -> Callable[..., Iterator[Session]]:
    """The journal importer in chunks of 100 records, pausing after its second chunk until released."""

    def load(path: Path, *, progress: Callable[[int], None] | None = None) -> Iterator[Session]:
        for k, s in enumerate(importers.load_chunks(path, chunk=100, progress=progress)):
            yield s
            if k == 1:
                reached.set()
                assert release.wait(30)

    return load


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "run" / "journal.jsonl"
    path.parent.mkdir()
    synth_journal(path, 500)
    return path


def test_the_store_shows_a_snapshot_while_reading_then_the_whole(journal: Path) -> None:
    reached, release = threading.Event(), threading.Event()
    store = SessionStore([journal], loader=paused_loader(reached, release))
    entry = next(iter(store.entries.values()))
    store.start()
    try:
        assert reached.wait(30)
        partial = entry.session
        assert partial is not None and entry.partial and entry.loading
        assert len(partial) == 200 and entry.summary is not None and entry.summary.events == 200
        assert partial.status == "pending" and partial.integrity.badge == "integrity pending"
        assert partial.task  # known from the first record
        release.set()
        assert store.wait(entry, timeout=30)
    finally:
        release.set()
        store.stop()
    assert entry.session is not None and entry.session is not partial and not entry.partial
    assert len(entry.session) == 500 and entry.session.integrity.badge == "chain ok"
    assert entry.session.status not in ("pending", "unknown")
    assert len(partial) == 200 and partial.status == "pending"  # the snapshot was never touched again
    assert entry.session.complete and not partial.complete
    assert 0 < entry.first_seconds <= entry.load_seconds


def test_the_complete_session_is_not_copied_for_a_snapshot(
    journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read whose next yield is already the whole session (a big journal read in two parts has
    its second half joined at once) shows that session itself: copying it as a snapshot first
    would cost a copy of the whole session (~0.1 s at a million events) for nothing."""

    def first_chunk_then_all(
        path: Path, *, progress: Callable[[int], None] | None = None
    ) -> Iterator[Session]:
        chunks = importers.load_chunks(path, chunk=100, progress=progress)
        yield next(chunks)
        *_, whole = chunks
        yield whole

    copied: list[int] = []
    snapshot = Session.snapshot
    monkeypatch.setattr(Session, "snapshot", lambda s: copied.append(len(s)) or snapshot(s))
    store = SessionStore([journal], loader=first_chunk_then_all)
    entry = next(iter(store.entries.values()))
    store.load_now(entry)
    assert copied == [] and not entry.partial
    assert entry.session is not None and entry.session.complete and len(entry.session) == 500
    assert entry.first_seconds == entry.load_seconds > 0


def test_a_failed_read_drops_the_snapshot_it_showed(journal: Path) -> None:
    def failing(path: Path, *, progress: object = None) -> Iterator[Session]:
        from walkback.journal.errors import JournalError

        for k, s in enumerate(importers.load_chunks(path, chunk=100)):
            yield s
            if k == 2:
                raise JournalError("the disk went away", path=path)

    store = SessionStore([journal], loader=failing)
    entry = next(iter(store.entries.values()))
    store.load_now(entry)
    assert entry.session is None and not entry.partial and "the disk went away" in entry.error


async def test_the_page_says_it_is_loading_until_the_whole_journal_is_read(
    journal: Path, tmp_path: Path
) -> None:
    reached, release = threading.Event(), threading.Event()
    store = SessionStore([journal], loader=paused_loader(reached, release))
    entry = next(iter(store.entries.values()))
    sys.modules["_walkback_incremental"] = types.SimpleNamespace(store=store)  # type: ignore[assignment]
    main = tmp_path / "main.py"
    main.write_text(MAIN)
    try:
        async with user_simulation(main_file=main) as user:
            assert reached.wait(30)  # the store started with the app and read two chunks
            await user.open(f"/s/{entry.id}/step/150")
            await user.should_see("loading… ")
            await user.should_see("events so far")
            await user.should_see("integrity pending")
            user.find(marker="detail-tabs").trigger("change", "step")  # it opened on Conversation
            await user.should_see("Step 150")
            release.set()
            await user.should_see("chain ok", retries=40)
            await user.should_not_see("events so far")
            await user.should_see("500 events")
            await user.should_see("Step 150")  # the step the reader was on is kept
    finally:
        release.set()
        store.stop()
        sys.modules.pop("_walkback_incremental", None)
