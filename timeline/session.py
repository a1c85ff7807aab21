"""The one Session shape every importer fills and every view and exporter reads.

Sized for sessions of a million events: events live column-wise in an :class:`EventTable`;
:class:`Event` objects and typed details (:mod:`timeline.details`) are built only for the events
a view actually shows, the details by the importer that read the session, from the raw record.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .details import Detail, Integrity, Other
from .kinds import COMPLETING, KIND_INDEX, KINDS, PLACEHOLDER
from .measures import Measures
from .sources import Source
from .table import EventTable

DetailFn = Callable[["Session", int], Detail]
"""An importer's detail builder: the typed detail of event ``i`` from its raw record(s)."""
DETAIL_CACHE = 4096
"""Details kept per session (a page shows a few hundred; stepping revisits them)."""


@dataclass(slots=True)
class Event:
    """One event, materialised on demand from the table."""

    index: int
    """Position in the session (0-based); the viewer's step number is ``index + 1``."""
    kind: str
    type: str
    """The source's own record type (``intent``, ``assistant``, ``function_call`` ...)."""
    lsn: int | None
    ts: float | None
    agent: str
    tool: str
    target: str
    status: str
    ref: int | None
    """Index of the event this one completes or answers."""
    source: str
    """The file the event came from."""
    line: int
    """1-based line in ``source`` (0 when the source is not line-based)."""
    flags: int = 0
    """Bits of :mod:`timeline.kinds` (``FILE``, ``INFERRED``, ``PLACEHOLDER``)."""

    @property
    def time(self) -> str:
        if self.ts is None:
            return ""
        return datetime.fromtimestamp(self.ts, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


@dataclass
class Agent:
    """An agent or subagent of the session."""

    id: str
    parent: str | None = None
    spawned_by: int | None = None
    """Index of the event (a spawn, or the tool call) that started this agent in its parent."""
    run: str = ""
    task: str = ""
    outcome: str = ""
    """``completed``, ``failed`` ... from its end; empty while unknown."""
    events: int = 0
    label: str = ""
    """A short name for people (a subagent's type or nickname), when the source has one."""


@dataclass(frozen=True)
class RecoveryFinding:
    """A recovery decision about one unfinished intent, as recorded in the session."""

    lsn: int
    target: str
    tool: str
    finding: str
    action: str
    detail: str = ""


@dataclass
class IntegrityReport:
    """What the reader found about the record's trustworthiness."""

    chain: str = "absent"
    """``ok``, ``broken``, ``absent`` (the source has no hash chain) or ``pending`` (still reading)."""
    torn_tail: dict[str, int] | None = None
    first_bad_lsn: int | None = None
    corrupt: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    """Source records an importer could not turn into events: ``{file, line, reason}``."""

    @property
    def badge(self) -> str:
        """A short label for headers and lists."""
        if self.chain == "pending":
            return "integrity pending"
        if self.chain == "broken":
            return f"chain broken at lsn {self.first_bad_lsn}"
        if self.torn_tail:
            return "torn tail"
        if self.chain == "ok":
            return "chain ok"
        return "no hashes"


def _no_blob(name: str) -> bytes | None:
    return None


def _view(col: array, n: int) -> np.ndarray:  # type: ignore[type-arg]
    """A column's first ``n`` values as numpy (its dtype from the column's own type code), for the
    length of one call: a table that grows cannot resize a column whose buffer is held."""
    return np.frombuffer(col, dtype=col.typecode, count=n)


def _no_detail(session: Session, i: int) -> Detail:
    return Other(type=session.event(i).type)


class Session:
    """A whole session: its agents, its events (columnar) and what is known about its integrity."""

    def __init__(self, *, format: str, sources: list[Source] | None = None) -> None:
        self.format = format
        """The importer's name (``walkback``, ``claude-code`` ...), with a dialect suffix if any."""
        self.sources: list[Source] = sources if sources is not None else []
        self.table = EventTable()
        self.agents: dict[str, Agent] = {}
        self.runs: list[str] = []
        self.task = ""
        self.status = "unknown"
        self.complete = False
        """True once its importer has read every source (:meth:`SessionBuilder.finish`); a session
        yielded while it is still being read, or a snapshot of one, is not."""
        self.recovered = False
        self.header: dict[str, Any] = {}
        """The source's own header record or session metadata."""
        self.integrity = IntegrityReport()
        self.verification: Any = None
        """For a session opened from a signed bundle: what verifying it found
        (``walkback.exporters.bundle.verify.Verification``: checks, signer, where damage starts,
        redacted lines); None for any other source."""
        self.last_committed_lsn: int | None = None
        self.recovery_findings: list[RecoveryFinding] = []
        self.brief = ""
        """The resume brief, when a recovery decision recorded one."""
        self.payloads: dict[int, dict[str, Any]] = {}
        """Raw records of events no source can address (placeholders for damaged records)."""
        self.blob_loader: Callable[[str], bytes | None] = _no_blob
        """Returns the content of a blob by ``sha256:<hex>`` name, or None."""
        self.gated: dict[int, int] = {}
        """Approval request index -> index of the tool call it gated."""
        self.measures: Measures | None = None
        """Models, tokens and file hashes, when the importer records them while it reads (else
        None: an export measures the details instead)."""
        self.describe: DetailFn = _no_detail
        """The importer's detail builder (:meth:`detail` calls it)."""
        self.importer = format
        """The name of the importer that read the session (what extends it while it grows)."""
        self.hooked: Any = None
        """The hook journal walkback wrote while this (foreign) session ran, merged into it by call
        id (``importers.hooked.Hooked``); None when the session was not hooked."""
        self.follow: dict[Any, Any] = {}
        """The importer's state for reading what its sources append later (a live follow); each
        value has a ``copy()``."""
        self._details: dict[int, Detail] = {}
        self._completed_by: np.ndarray | None = None
        self._rows_by_agent: tuple[int, dict[int, tuple[np.ndarray, np.ndarray]]] | None = None
        """For :meth:`index_of_lsn`: the table length it was made at, and per agent its rows and lsns."""

    def copy(self) -> Session:
        """An independent copy: later loading (or a live follow extending it) does not touch this
        one, whose columns views may hold buffers of."""
        s = Session.__new__(Session)
        s.__dict__.update(self.__dict__)
        s.sources = list(self.sources)
        s.table = self.table.copy()
        s.agents = {k: replace(a) for k, a in self.agents.items()}
        s.runs = list(self.runs)
        s.integrity = replace(
            self.integrity, corrupt=list(self.integrity.corrupt), skipped=list(self.integrity.skipped)
        )
        s.recovery_findings = list(self.recovery_findings)
        s.payloads = dict(self.payloads)
        s.gated = dict(self.gated)
        s.measures = self.measures.copy() if self.measures is not None else None
        s.follow = {k: f.copy() for k, f in self.follow.items()}
        s._details = {}
        s._completed_by = s._rows_by_agent = None
        return s

    def snapshot(self) -> Session:
        """A copy shown as a session still loading: its status and integrity are ``pending``."""
        s = self.copy()
        s.status = "pending"
        s.complete = False
        s.integrity = IntegrityReport(chain="pending", skipped=s.integrity.skipped)
        return s

    # -- events -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.table)

    def files(self) -> list[Path]:
        """Every file the session was read from, once each, in reading order."""
        seen: dict[Path, None] = {}
        for s in self.sources:
            seen.setdefault(s.path, None)
        return list(seen)

    def event(self, i: int) -> Event:
        t = self.table
        s = t.pool.values
        ts = t.ts[i]
        ref = t.ref[i]
        lsn = t.lsn[i]
        return Event(
            index=i,
            kind=KINDS[t.kind[i]],
            type=s[t.type[i]],
            lsn=lsn if lsn >= 0 else None,
            ts=None if math.isnan(ts) else ts,
            agent=s[t.agent[i]],
            tool=s[t.tool[i]],
            target=s[t.target[i]],
            status=s[t.status[i]],
            ref=ref if ref >= 0 else None,
            source=str(self.sources[t.src[i]].path) if self.sources else "",
            line=t.line[i],
            flags=t.flags[i],
        )

    def events(self, indices: Iterable[int] | None = None) -> Iterator[Event]:
        for i in indices if indices is not None else range(len(self)):
            yield self.event(i)

    def raw(self, i: int) -> Any:
        """The event's source record, parsed now (never held for every event)."""
        if i in self.payloads:
            return self.payloads[i]
        t = self.table
        if not self.sources:
            return {}
        return self.sources[t.src[i]].read(t.offset[i], t.length[i])

    def where(self, i: int) -> str:
        """Where the event's raw record is: ``file:line``, ``file#/pointer/3``, ``zip!member#...``."""
        t = self.table
        if i in self.payloads or not self.sources:
            src = self.sources[t.src[i]] if self.sources else None
            return f"{src.path}:{t.line[i]}" if src is not None else ""
        return self.sources[t.src[i]].where(t.offset[i], t.line[i])

    def detail(self, i: int) -> Detail:
        """The typed content of event ``i``, built by its importer from the raw record (cached)."""
        d = self._details.get(i)
        if d is None:
            if self.table.flags[i] & PLACEHOLDER:
                p = self.payloads.get(i, {})
                d = Integrity(
                    what="unreadable record", reason=str(p.get("reason", "")), detail=str(p.get("text", ""))
                )
            else:
                d = self.describe(self, i)
            if len(self._details) >= DETAIL_CACHE:
                self._details.clear()
            self._details[i] = d
        return d

    def blob(self, name: str | None) -> bytes | None:
        """Content of a blob named by hash, or None if the session has no such blob."""
        if not name or not name.startswith("sha256:"):
            return None
        return self.blob_loader(name)

    # -- derived views ------------------------------------------------------------------------
    def indices_where(self, *, kind: str | None = None, status: str | None = None) -> list[int]:
        t = self.table
        k = KIND_INDEX[kind] if kind else None
        sid = t.pool.find(status) if status else None
        if status and sid is None:
            return []
        n = len(t)
        keep = np.ones(n, dtype=bool)
        if k is not None:
            keep &= _view(t.kind, n) == k
        if sid is not None:
            keep &= _view(t.status, n) == sid
        return np.flatnonzero(keep).tolist()

    def pending(self) -> list[int]:
        """Tool calls (intents) that have no completing event."""
        return self.indices_where(kind="tool_call", status="pending")

    def kinds(self) -> dict[str, int]:
        counts = np.bincount(_view(self.table.kind, len(self)), minlength=len(KINDS))
        return {KINDS[i]: int(n) for i, n in enumerate(counts) if n}

    def completion_of(self, i: int) -> int | None:
        """Index of the event that completes event ``i`` (the commit of an intent), if any."""
        if self._completed_by is None or len(self._completed_by) != len(self):
            n = len(self)
            ref = _view(self.table.ref, n)
            kind = _view(self.table.kind, n)
            by = np.flatnonzero((ref >= 0) & (ref < n) & np.isin(kind, list(COMPLETING)))
            done = np.full(n, -1, dtype=np.int64)
            refs, first = np.unique(ref[by], return_index=True)  # the first completing event wins
            done[refs] = by[first]
            self._completed_by = done
        j = int(self._completed_by[i])
        return j if j >= 0 else None

    def index_of_lsn(self, lsn: int, agent: str | None = None) -> int | None:
        """Index of the event with ``lsn`` in ``agent``'s journal (the first agent's by default)."""
        t = self.table
        if agent is None:
            agent = next(iter(self.agents), "")
        aid = t.pool.find(agent)
        if aid is None:
            return None
        if self._rows_by_agent is None or self._rows_by_agent[0] != len(t):
            self._rows_by_agent = (len(t), {})
        found = self._rows_by_agent[1].get(aid)
        if found is None:
            n = len(t)
            rows = np.flatnonzero(_view(t.agent, n) == aid)
            found = self._rows_by_agent[1][aid] = (rows, _view(t.lsn, n)[rows])
        rows, lsns = found
        k = int(np.searchsorted(lsns, lsn))
        return int(rows[k]) if k < len(rows) and lsns[k] == lsn else None


def parse_time(value: Any) -> float:
    """Seconds since the epoch from RFC 3339 text or epoch numbers (s or ms); NaN if unknown."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        v = v / 1000.0 if v > 1e11 else v
        return v if 0 <= v < 1e11 else math.nan  # beyond year 5000 (or NaN) is not a time
    if isinstance(value, str) and value:
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return math.nan
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)  # a time without a zone (OpenHands, Aider) is read as UTC
        return dt.timestamp()
    return math.nan
