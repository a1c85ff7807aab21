"""What the exports and the archive share: a session's stable id, many details read fast, and
the session's measures (models, tokens, file hashes) whoever recorded them.

A session's id is what re-exporting keys on (Parquet file names, OTLP trace ids), so it depends
on the session's content, never on where the files lie: the run id when the source has one, else
the first source file's name and a hash of its first 64 KiB.
"""

from __future__ import annotations

import hashlib
import mmap
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson
from walkback.journal.errors import ImporterError

from .details import Detail, ModelCall, ModelResult, ToolCall
from .kinds import FILE, KIND_INDEX, PLACEHOLDER
from .measures import Measures
from .query import columns
from .session import Session
from .sources import BOM, JsonLines

HEAD = 65536
"""Bytes of the first source file that identify a session without a run id."""
BATCH = 4096
"""Events whose raw records are read together (one pass over each source file per batch)."""


def session_id(session: Session) -> str:
    """The session's stable id: its (first) run id, else ``<file stem>-<hash of its head>``."""
    if session.runs:
        return session.runs[0]
    files = session.files()
    if not files:
        return "session"
    try:
        with open(files[0], "rb") as f:
            head = f.read(HEAD)
    except OSError:
        head = str(files[0]).encode()
    return f"{files[0].stem}-{hashlib.sha256(head).hexdigest()[:12]}"


def measures(session: Session) -> Measures:
    """The models, tokens and file hashes of the session's events: as its importer recorded them
    while reading, else measured now from the details of the events that have them (model calls
    and results, tool calls flagged as changing a file)."""
    if session.measures is not None:
        return session.measures
    m = Measures()
    c = columns(session)
    models = (c.kind == KIND_INDEX["model_result"]) | (c.kind == KIND_INDEX["model_call"])
    edits = (c.kind == KIND_INDEX["tool_call"]) & (c.flags & FILE != 0)
    intern = session.table.pool.id
    for i, d in details(session, np.flatnonzero(models | edits)):
        if isinstance(d, ModelResult):
            m.usage(i, intern(d.model), d.usage.input_tokens, d.usage.output_tokens)
        elif isinstance(d, ModelCall):
            m.usage(i, intern(d.model), None, None)
        elif isinstance(d, ToolCall) and d.edit is not None:
            m.edit(i, d.edit.pre, d.edit.post)
    return m


class _Prefetched(Session):
    """The same session, answering :meth:`raw` for one batch of events from records read in bulk."""

    batch: dict[int, Any]

    def raw(self, i: int) -> Any:
        found = self.batch.get(i)
        return found if found is not None else Session.raw(self, i)


def details(session: Session, indices: Sequence[int] | np.ndarray) -> Iterator[tuple[int, Detail]]:
    """``(i, detail)`` for each event in ``indices`` (in that order), built by the session's importer.

    What :meth:`Session.detail` gives, without its cache, and with the raw records of JSON-lines
    sources read in one pass per batch (a file opened once, not once per event).
    """
    view = _Prefetched.__new__(_Prefetched)
    view.__dict__.update(session.__dict__)
    describe = session.describe
    idx = np.asarray(indices, dtype=np.int64)
    t = session.table
    n = len(t)
    src = np.frombuffer(t.src, np.uint32)[:n] if n else np.zeros(0, np.uint32)
    offset = np.frombuffer(t.offset, np.int64)[:n] if n else np.zeros(0, np.int64)
    length = np.frombuffer(t.length, np.uint32)[:n] if n else np.zeros(0, np.uint32)
    maps: dict[int, mmap.mmap | None] = {}
    try:
        for start in range(0, len(idx), BATCH):
            part = idx[start : start + BATCH]
            view.batch = _read_batch(session, part, src, offset, length, maps)
            for i in part.tolist():
                yield i, session.detail(i) if t.flags[i] & PLACEHOLDER else describe(view, i)
    finally:
        for m in maps.values():
            if m is not None:
                m.close()


def _read_batch(
    session: Session,
    part: np.ndarray,
    src: np.ndarray,
    offset: np.ndarray,
    length: np.ndarray,
    maps: dict[int, mmap.mmap | None],
) -> dict[int, Any]:
    """The raw records of the events in ``part`` that live in JSON-lines files (others: none)."""
    out: dict[int, Any] = {}
    loads = orjson.loads
    for i, s, off, ln in zip(
        part.tolist(), src[part].tolist(), offset[part].tolist(), length[part].tolist(), strict=True
    ):
        if i in session.payloads or s >= len(session.sources):
            continue
        m = maps[s] if s in maps else maps.setdefault(s, _map(session.sources[s]))
        if m is None or off < 0 or off + ln > len(m):
            continue
        data = m[off : off + ln]
        try:
            out[i] = loads(data.removeprefix(BOM) if off == 0 else data)
        except orjson.JSONDecodeError:
            raise ImporterError(
                f"the record at byte {off} changed since it was read", path=session.sources[s].path
            ) from None
    return out


def _map(source: Any) -> mmap.mmap | None:
    """A read-only map of a JSON-lines source (None for other sources, or an empty file)."""
    if not isinstance(source, JsonLines):
        return None
    try:
        with open(source.path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
