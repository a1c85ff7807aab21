"""Filtering and search over a Session, fast at a million events.

Everything here works on numpy views of the :class:`~walkback.timeline.table.EventTable` columns (no copy,
no per-event Python objects). Text search scans the raw bytes of the source files, so it finds
anything a record contains without parsing a single line.
"""

from __future__ import annotations

import mmap
import re
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .kinds import FILE, KIND_INDEX, KINDS, PLACEHOLDER, PROBLEM_STATUSES
from .session import Session

PROBLEM_KINDS = ("recovery", "integrity")
"""Kinds that are problems whatever their status: recovery decisions and integrity repairs."""

Indices = np.ndarray  # int64, sorted ascending


@dataclass(frozen=True)
class Columns:
    """Zero-copy numpy views of a session's event table (valid while the table does not grow)."""

    n: int
    kind: np.ndarray
    type: np.ndarray
    agent: np.ndarray
    tool: np.ndarray
    target: np.ndarray
    status: np.ndarray
    ref: np.ndarray
    src: np.ndarray
    flags: np.ndarray
    offset: np.ndarray
    length: np.ndarray
    ts: np.ndarray
    lsn: np.ndarray
    line: np.ndarray


_columns: weakref.WeakKeyDictionary[Session, Columns] = weakref.WeakKeyDictionary()


def columns(session: Session) -> Columns:
    """The session's columns as numpy arrays, cached per session and length."""
    n = len(session)
    cached = _columns.get(session)
    if cached is not None and cached.n == n:
        return cached
    t = session.table

    def view(col: Any, dtype: Any) -> np.ndarray:
        return np.frombuffer(col, dtype=dtype)[:n] if n else np.zeros(0, dtype)

    cols = Columns(
        n=n,
        kind=view(t.kind, np.uint8),
        type=view(t.type, np.uint32),
        agent=view(t.agent, np.uint32),
        tool=view(t.tool, np.uint32),
        target=view(t.target, np.uint32),
        status=view(t.status, np.uint32),
        ref=view(t.ref, np.int64),
        src=view(t.src, np.uint32),
        flags=view(t.flags, np.uint8),
        offset=view(t.offset, np.int64),
        length=view(t.length, np.uint32),
        ts=view(t.ts, np.float64),
        lsn=view(t.lsn, np.int64),
        line=view(t.line, np.uint32),
    )
    _columns[session] = cols
    return cols


@dataclass(frozen=True)
class Query:
    """A step-list filter. Empty sets mean "any"; all given conditions must hold."""

    kinds: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    """Tool calls with these tools, and the events that complete them."""
    files: frozenset[str] = frozenset()
    """Tool calls on these targets, and the events that complete or answer them."""
    statuses: frozenset[str] = frozenset()
    text: str = ""
    """Substring of the raw record (smart case: case-insensitive unless it has capitals)."""
    problems: bool = False
    """Only failed, pending, in-doubt, torn, denied, recovered events and recovery/integrity records."""

    @property
    def empty(self) -> bool:
        return self == Query()

    def to_params(self) -> dict[str, str]:
        """URL query parameters (only the set ones), the inverse of :meth:`from_params`."""
        out: dict[str, str] = {}
        for name in ("kinds", "agents", "tools", "files", "statuses"):
            values: frozenset[str] = getattr(self, name)
            if values:
                out[name[:-1] if name != "statuses" else "status"] = ",".join(sorted(values))
        if self.text:
            out["q"] = self.text
        if self.problems:
            out["problems"] = "1"
        return out

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Query:
        def split(key: str) -> frozenset[str]:
            raw = params.get(key, "")
            return frozenset(v for v in raw.split(",") if v)

        return cls(
            kinds=frozenset(k for k in split("kind") if k in KIND_INDEX),
            agents=split("agent"),
            tools=split("tool"),
            files=split("file"),
            statuses=split("status"),
            text=params.get("q", "")[:500],
            problems=params.get("problems", "") in ("1", "true", "yes"),
        )

    def with_(self, **changes: Any) -> Query:
        return replace(self, **changes)


def _ids(session: Session, values: Iterable[str]) -> np.ndarray:
    find = session.table.pool.find
    return np.array([i for v in values if (i := find(v)) is not None], dtype=np.uint32)


def _with_completions(mask: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Add to ``mask`` every event whose ``ref`` points at an event already in it."""
    has_ref = ref >= 0
    out = mask.copy()
    out[has_ref] |= mask[ref[has_ref]]
    return out


def problems_mask(session: Session) -> np.ndarray:
    c = columns(session)
    bad = _ids(session, PROBLEM_STATUSES)
    mask = np.isin(c.status, bad)
    mask |= np.isin(c.kind, [KIND_INDEX[k] for k in PROBLEM_KINDS])
    return mask


def mask(session: Session, query: Query) -> np.ndarray:
    """Boolean mask of the events matching ``query``."""
    c = columns(session)
    m = np.ones(c.n, dtype=bool)
    if query.kinds:
        m &= np.isin(c.kind, [KIND_INDEX[k] for k in query.kinds if k in KIND_INDEX])
    if query.agents:
        m &= np.isin(c.agent, _ids(session, query.agents))
    if query.statuses:
        m &= np.isin(c.status, _ids(session, query.statuses))
    if query.tools:
        m &= _with_completions(np.isin(c.tool, _ids(session, query.tools)), c.ref)
    if query.files:
        m &= _with_completions(np.isin(c.target, _ids(session, query.files)), c.ref)
    if query.problems:
        m &= problems_mask(session)
    if query.text:
        m &= text_mask(session, query.text)
    return m


def select(session: Session, query: Query) -> Indices:
    """Indices (ascending) of the events matching ``query``."""
    if query.empty:
        return np.arange(len(session), dtype=np.int64)
    return np.flatnonzero(mask(session, query)).astype(np.int64, copy=False)


# -- text search -------------------------------------------------------------------------------
def _pattern(text: str) -> re.Pattern[bytes]:
    """The needle as written and as it appears inside a JSON string, smart case."""
    forms = {text.encode("utf-8"), orjson.dumps(text)[1:-1]}
    flags = 0 if any(ch.isupper() for ch in text) else re.IGNORECASE
    return re.compile(b"|".join(re.escape(f) for f in sorted(forms)), flags)


def text_mask(session: Session, text: str) -> np.ndarray:
    """Events whose raw record contains ``text`` (scans the source files' bytes, mmap'd)."""
    c = columns(session)
    out = np.zeros(c.n, dtype=bool)
    if not text:
        return out | True
    pattern = _pattern(text)
    for s, source in enumerate(session.sources):
        rows = np.flatnonzero((c.src == s) & (c.offset >= 0) & (c.flags & PLACEHOLDER == 0))
        if not len(rows):
            continue
        if not source.byte_addressed:
            for i in map(int, rows):
                out[i] = bool(pattern.search(_dump(session, i)))
            continue
        starts = c.offset[rows]
        order = np.argsort(starts, kind="stable")
        rows, starts = rows[order], starts[order]
        ends = starts + c.length[rows]
        hits = _scan(source.path, pattern)
        if not len(hits):
            continue
        k = np.searchsorted(starts, hits, side="right") - 1
        ok = k >= 0
        k = k[ok]
        inside = hits[ok] < ends[k]
        out[rows[k[inside]]] = True
    for i, payload in session.payloads.items():
        if i < c.n and pattern.search(orjson.dumps(payload, default=str)):
            out[i] = True
    return out


def _dump(session: Session, i: int) -> bytes:
    try:
        return orjson.dumps(session.raw(i), default=str)
    except (OSError, ValueError):
        return b""


def _scan(path: Path, pattern: re.Pattern[bytes]) -> np.ndarray:
    """Byte offsets of every match in the file."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                return np.zeros(0, np.int64)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                found = np.fromiter((x.start() for x in pattern.finditer(m)), dtype=np.int64)
    except OSError:
        return np.zeros(0, np.int64)
    return found


# -- facets and per-file history ------------------------------------------------------------------
@dataclass
class Facets:
    """The values present in a session for each filter, with counts (most frequent first)."""

    kinds: list[tuple[str, int]] = field(default_factory=list)
    agents: list[tuple[str, int]] = field(default_factory=list)
    tools: list[tuple[str, int]] = field(default_factory=list)
    files: list[tuple[str, int]] = field(default_factory=list)
    statuses: list[tuple[str, int]] = field(default_factory=list)
    problems: int = 0


def facets(session: Session) -> Facets:
    c = columns(session)
    vals = session.table.pool.values

    def counted(col: np.ndarray, where: np.ndarray | None = None) -> list[tuple[str, int]]:
        data = col if where is None else col[where]
        counts = np.bincount(data, minlength=1)
        nz = np.flatnonzero(counts)
        pairs = [(vals[i], int(counts[i])) for i in nz if i != 0]
        return sorted(pairs, key=lambda p: (-p[1], p[0]))

    kc = np.bincount(c.kind, minlength=len(KINDS))
    calls = c.kind == KIND_INDEX["tool_call"]
    return Facets(
        kinds=sorted(((KINDS[i], int(n)) for i, n in enumerate(kc) if n), key=lambda p: -p[1]),
        agents=counted(c.agent),
        tools=counted(c.tool, calls),
        files=counted(c.target, calls),
        statuses=counted(c.status),
        problems=int(problems_mask(session).sum()),
    )


def file_rows(session: Session) -> dict[str, Indices]:
    """Every changed file with the indices of the tool calls that change it, in order (commands
    and URLs are targets too, but not files)."""
    c = columns(session)
    rows = np.flatnonzero((c.kind == KIND_INDEX["tool_call"]) & (c.target != 0) & (c.flags & FILE != 0))
    if not len(rows):
        return {}
    targets = c.target[rows]
    order = np.argsort(targets, kind="stable")
    rows, targets = rows[order], targets[order]
    cuts = np.flatnonzero(np.diff(targets)) + 1
    vals = session.table.pool.values
    return {vals[int(g[0])]: r for g, r in zip(np.split(targets, cuts), np.split(rows, cuts), strict=True)}


def locate(session: Session, src: int, offset: int) -> int | None:
    """Index of the event read from ``sources[src]`` at ``offset`` (to follow one event across reloads)."""
    c = columns(session)
    hit = np.flatnonzero((c.offset == offset) & (c.src == src))
    return int(hit[0]) if len(hit) else None
