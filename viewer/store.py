"""The sessions a viewer process serves: background loading and live follow (see ``discovery``
for which sessions, ``entry`` for what is kept of each).

One loader thread reads sessions (page requests first, then the session list's summaries) so a
page is never built while a big journal is being parsed. A poller notices when a journal grows
(an agent still running) and reloads it; pages compare :attr:`Entry.version` to redraw.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from walkback.importers.folders import Detect, discover, entry_id, label
from walkback.journal.errors import WalkbackError
from walkback.journal.recovery import RecoveryPlan
from walkback.journal.runlock import lock_is_held
from walkback.journal.writer import journal_path
from walkback.timeline.session import Session
from walkback.timeline.views import approvals

from .entry import Analysis, Derived, Entry, summarize

__all__ = ["LIST", "PAGE", "Analyzer", "Entry", "Loader", "SessionStore", "discover", "entry_id"]

Loader = Callable[..., Session | Iterator[Session]]
"""``importers.load_chunks(path, *, progress=None)`` (the growing session as it is read, the complete
one last) or ``importers.load`` (just the complete one): any callable of either shape."""
Analyzer = Callable[..., RecoveryPlan]
"""``journal.recovery.analyze(path, *, workspace=None) -> RecoveryPlan`` (wired by the CLI)."""

PAGE, LIST = 0, 1  # loader priorities: a page someone is waiting for goes first
SWITCH_WHILE_READING = 0.0005
"""The interpreter's thread switch interval while a session is read in chunks (default 5 ms): the
server's event loop gives the interpreter up at every turn and would wait that long to get it back,
so a request served during a long read would take many times longer than alone."""
PAGE_WAIT = 2.0
"""Longest a first read pauses for one page being built."""
KEEP_UNVIEWED = 50_000
"""A session read only for the list is kept in memory (and followed live) up to this many events;
bigger ones keep just their summary until a page asks for them."""


class SessionStore:
    """Entries by id, a loader thread, and the live-follow poller."""

    def __init__(
        self,
        paths: list[Path],
        *,
        loader: Loader,
        detect: Detect | None = None,
        workspace: Path | None = None,
        analyzer: Analyzer | None = None,
    ) -> None:
        self.loader = loader
        self.workspace = workspace
        self.analyzer = analyzer
        found = discover(paths, detect) if detect else list(paths)
        self.entries: dict[str, Entry] = {}
        for p in found:
            e = Entry(id=entry_id(p), path=p, label=label(p))
            self.entries.setdefault(e.id, e)
        self._queue: queue.PriorityQueue[tuple[int, int, str]] = queue.PriorityQueue()
        self._seq = itertools.count()
        self._queued: set[tuple[str, int]] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._pages = 0
        self._pages_done = threading.Condition()

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the loader thread and queue every entry for the session list."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="walkback-loader", daemon=True)
            self._thread.start()
        for e in self.entries.values():
            self.request(e, priority=LIST)

    def stop(self) -> None:
        self._stop.set()
        self._queue.put((-1, -1, ""))
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def get(self, sid: str) -> Entry | None:
        return self.entries.get(sid)

    def request(self, entry: Entry, *, priority: int = PAGE) -> None:
        """Queue ``entry`` for (re)loading unless it is loaded or already queued at this priority."""
        entry.viewed = entry.viewed or priority == PAGE
        with self._lock:
            if (entry.id, priority) in self._queued or (entry.session is not None and priority == LIST):
                return
            self._queued.add((entry.id, priority))
        self._queue.put((priority, next(self._seq), entry.id))

    @contextmanager
    def building_page(self) -> Iterator[None]:
        """A page is being built: the loader waits at its next chunk, so the page is not starved of
        the interpreter by a long first read (both run in one process)."""
        with self._pages_done:
            self._pages += 1
        try:
            yield
        finally:
            with self._pages_done:
                self._pages -= 1
                self._pages_done.notify_all()

    def _let_pages_build(self) -> None:
        with self._pages_done:
            self._pages_done.wait_for(lambda: self._pages == 0, timeout=PAGE_WAIT)

    def load_now(self, entry: Entry, *, second_pass: bool = True) -> None:
        """Load synchronously (tests and benchmarks); the second pass can be left out."""
        if self._load(entry) and second_pass:
            self._second_pass(entry)

    def wait(self, entry: Entry, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while (entry.session is None and not entry.error) or entry.loading:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    # -- loading ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            priority, _, sid = self._queue.get()
            if self._stop.is_set() or not sid:
                return
            entry = self.entries[sid]
            with self._lock:
                self._queued.discard((sid, priority))
            if priority == LIST and (entry.session is not None or entry.error):
                continue  # a page asked first and it is loaded already
            try:
                if self._load(entry):
                    if not entry.viewed and entry.session is not None and len(entry.session) > KEEP_UNVIEWED:
                        entry.session = entry.derived = None  # listed only: keep the summary, free the rest
                        continue
                    self._second_pass(entry)
            except Exception as e:  # noqa: BLE001 - one unreadable session must not stop the others
                entry.drop_partial()
                entry.error = f"{entry.path}: cannot be shown: {type(e).__name__}: {e}"
                entry.loading = False
                entry.version += 1

    def _load(self, entry: Entry) -> bool:
        """What a page needs to show the session; returns False if it cannot be read."""
        entry.loading = True
        entry.progress = 0
        before = self._stats(entry)
        t0 = time.perf_counter()

        def progress(n: int) -> None:
            entry.progress = n

        entry.first_seconds = 0.0
        try:
            session = self._read(entry, progress, t0, first=entry.session is None)
            entry.import_seconds = time.perf_counter() - t0
            derived = Derived.of(session)
            summary = summarize(session, derived.problems)
        except WalkbackError as e:
            entry.drop_partial()
            entry.error = str(e)
            entry.loading = False
            entry.signature = tuple(before.values())
            entry.version += 1
            return False
        entry.session, entry.derived, entry.summary = session, derived, summary
        entry.partial = False
        entry.error = ""
        entry.signature = self._signature(entry, before)
        entry.load_seconds = time.perf_counter() - t0
        if not entry.first_seconds:
            entry.first_seconds = entry.load_seconds
        entry.last_load = time.monotonic()
        entry.loading = False
        entry.version += 1
        return True

    def _read(self, entry: Entry, progress: Callable[[int], None], t0: float, *, first: bool) -> Session:
        """The loader's complete session. On a first read, a loader that yields the session as it
        grows has it shown before the end: a snapshot at its first yield that is not yet the complete
        session, then each time it has doubled (so the copies add up to about one more session). The
        complete one is not copied (at a million events a copy costs ~0.1 s)."""
        result = self.loader(entry.path, progress=progress)
        if isinstance(result, Session):
            return result
        chunks = iter(result)
        session = next(chunks, None)
        shown = 0
        switch = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_WHILE_READING)
        try:
            for session in chunks:  # noqa: B007 - the one the loop ends with is the complete session
                self._let_pages_build()
                if first and not session.complete and len(session) >= 2 * shown:
                    self._show_partial(entry, session)
                    shown = len(session)
                    if not entry.first_seconds:
                        entry.first_seconds = time.perf_counter() - t0
        finally:
            sys.setswitchinterval(switch)
        if session is None:
            raise WalkbackError("the importer produced no session", path=entry.path)
        return session

    @staticmethod
    def _show_partial(entry: Entry, session: Session) -> None:
        """Let pages show ``session`` as it is now, while the loader goes on filling it."""
        snap = session.snapshot()
        entry.derived = Derived.of(snap)
        entry.summary = summarize(snap, entry.derived.problems)
        entry.session = snap
        entry.partial = True
        entry.version += 1

    def _second_pass(self, entry: Entry) -> None:
        """Slower views, after the page can already show the session."""
        session, derived = entry.session, entry.derived
        assert session is not None and derived is not None
        session.completion_of(0) if len(session) else None
        derived.approvals = approvals(session)
        if self.analyzer is not None and session.status == "crashed":
            try:
                entry.analysis = Analysis(plan=self.analyzer(entry.path, workspace=self.workspace))
            except WalkbackError as e:
                entry.analysis = Analysis(error=str(e))
            except Exception as e:  # noqa: BLE001 - a failing analysis must not take the viewer down
                entry.analysis = Analysis(error=f"recovery analysis failed: {type(e).__name__}: {e}")
        entry.version += 1

    # -- live follow --------------------------------------------------------------------------
    @staticmethod
    def _stats(entry: Entry) -> dict[Path, Any]:
        sources = entry.session.files() if entry.session is not None else [journal_path(entry.path)]
        out: dict[Path, Any] = {}
        for s in sources:
            try:
                st = Path(s).stat()
                out[Path(s)] = (st.st_size, st.st_mtime_ns)
            except OSError:
                out[Path(s)] = None
        return out

    def _signature(self, entry: Entry, known: dict[Path, Any] | None = None) -> tuple[Any, ...]:
        """Sizes and times of the session's files (``known`` ones as they were before loading),
        and for a running session whether its lock is still held."""
        now = self._stats(entry)
        sig: list[Any] = [known[p] if known and p in known else v for p, v in now.items()]
        session = entry.session
        if session is not None and session.status == "running" and session.sources:
            sig.append(lock_is_held(session.sources[0].path.parent))
        return tuple(sig)

    def poll(self) -> None:
        """Queue a reload of every loaded session whose files changed (called twice a second)."""
        for e in self.entries.values():
            if e.session is None or e.loading or (e.id, PAGE) in self._queued:
                continue
            if time.monotonic() - e.last_load < min(e.load_seconds * 2, 10.0):
                continue
            if self._signature(e) != e.signature:
                self.request(e, priority=PAGE)
