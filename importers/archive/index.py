"""Building and updating the archive: which sessions are new or grew since the last run, read
them with their importers, replace their rows.

A session is read again only when one of its files changed: another size or mtime, or another
head (its first 64 KiB hashed, so a file rewritten to the same size is seen too). A session that
cannot be read is reported in one line and skipped; the others are indexed.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from walkback.journal.errors import WalkbackError

from ..discovery import find_sessions
from ..folders import discover, entry_id
from ..registry import detect, load, split_part
from .rows import Rows, session_rows
from .store import Archive

HEAD = 65536
"""Bytes of a file's start whose hash tells it is still the file indexed (not a rewrite)."""

WORKERS = 2
"""Worker processes that read sessions (at most one per core)."""
BATCH = 64
"""Sessions written in one transaction (a commit costs about as much as a session's rows)."""
POOL_FROM = 4
"""Sessions to read below which no worker is started (a re-index of what grew)."""
Progress = Callable[[int, int, str], None]
"""``(done, total, path)`` as each session to read is written."""


@dataclass
class IndexReport:
    """What one ``walkback index`` did."""

    indexed: list[str] = field(default_factory=list)
    unchanged: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    """``(path, reason)`` of each session that could not be read."""
    events: int = 0


def candidates(paths: list[Path], unchanged: dict[str, list[Path]]) -> list[tuple[Path, str]]:
    """``(session path, agent)`` for the paths given (folders expanded; a file or run dir in
    ``unchanged`` stands for the sessions it held, without detecting its format again), or for
    every session ``walkback sessions`` finds on this machine when none are given."""
    if not paths:
        return [(s.path, s.agent) for s in find_sessions()]
    return [(p, "") for p in discover(paths, detect, known=lambda p: unchanged.get(os.path.abspath(p)))]


def _unchanged(archive: Archive) -> tuple[dict[str, list[Path]], set[str]]:
    """What is indexed and still as it was (each file's size and mtime): by the file or run dir it
    lives in, the session paths it held; and those sessions' ids."""
    by_base: dict[str, list[Path]] = {}
    changed: set[str] = set()
    ids: dict[str, str] = {}
    for sid, (path, files) in archive.indexed().items():
        base = str(split_part(Path(path))[0])
        by_base.setdefault(base, []).append(Path(path))
        ids[path] = sid
        try:
            if not files or any(_size_mtime(f) != was for f, was in files.items()):
                changed.add(base)
        except OSError:
            changed.add(base)
    kept = {b: ps for b, ps in by_base.items() if b not in changed}
    return kept, {ids[str(p)] for ps in kept.values() for p in ps}


def _size_mtime(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def stat(path: Path) -> tuple[int, int, str]:
    """A file's size, mtime (ns) and head hash (kept to tell a file that grew from one rewritten)."""
    st = os.stat(path)
    with open(path, "rb") as f:
        head = hashlib.sha256(f.read(HEAD)).hexdigest()
    return st.st_size, st.st_mtime_ns, head


def _files(path: Path) -> list[Path]:
    """The files a session path stands for: a file (or the file of a ``file#part``), or every file
    of a session folder but its content-addressed blobs (which never change)."""
    base = split_part(path)[0]
    if base.is_dir():
        return sorted(p for p in base.rglob("*") if p.is_file() and "blobs" not in p.relative_to(base).parts)
    return [base]


def read(path: Path, agent: str) -> Rows | str:
    """A session's rows, or why it cannot be read (run in a worker process)."""
    try:
        session = load(path)
        return session_rows(session, path, agent or session.format.split("/")[0])
    except (WalkbackError, OSError, ValueError) as e:
        text = str(e).strip()
        return text.splitlines()[0] if text else type(e).__name__


def _reads(todo: list[tuple[Path, str]]) -> Iterator[Rows | str]:
    """Each session's rows in order: read by one worker process per core (a session is read and
    described in a worker while this process writes the one before), or here for a few."""
    if len(todo) <= POOL_FROM or (os.cpu_count() or 1) < 2:
        yield from (read(p, a) for p, a in todo)
        return
    ctx = multiprocessing.get_context("fork")  # the workers start with this process's imports
    with ProcessPoolExecutor(max_workers=min(os.cpu_count() or 1, WORKERS), mp_context=ctx) as pool:
        yield from pool.map(read, *zip(*todo, strict=True), chunksize=4)


def index(
    archive: Archive, paths: list[Path] | None = None, *, progress: Progress | None = None
) -> IndexReport:
    """Index the sessions of ``paths`` (or of this machine) that are new or changed."""
    report = IndexReport()
    unchanged, same = _unchanged(archive)
    todo: list[tuple[Path, str]] = []
    stats: list[dict[str, tuple[int, int, str]]] = []
    for path, agent in candidates(list(paths or []), unchanged):
        if entry_id(path) in same:
            report.unchanged += 1
            continue
        try:
            stats.append({str(f): stat(f) for f in _files(path)})
        except OSError as e:
            report.failed.append((str(path), e.strerror or str(e)))
            continue
        todo.append((path, agent))
    done = zip(todo, stats, _reads(todo), strict=True)
    for start in range(0, len(todo), BATCH):
        with archive.transaction():  # a batch commits together (each session a savepoint of it)
            for n, ((path, _), seen, rows) in enumerate(islice(done, BATCH), start + 1):
                if progress is not None:
                    progress(n, len(todo), str(path))
                if isinstance(rows, str):
                    report.failed.append((str(path), rows))
                    continue
                sid = rows.session["id"]
                archive.replace_session(rows, [(f, sid, *s) for f, s in seen.items()])
                report.indexed.append(sid)
                report.events += len(rows.events)
    return report
