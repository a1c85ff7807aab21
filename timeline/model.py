"""The one timeline model every importer fills and every view reads.

Sized for sessions of a million events: events are stored column-wise in compact arrays
(:class:`EventTable`), strings that repeat (kinds, agents, tools, targets, statuses) are interned
once, and each event's raw record stays in its source file — the table keeps only its byte offset
and length and parses it again on demand (:meth:`Session.raw`). :class:`Event` objects are built
only for the events a view actually shows.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

KINDS: tuple[str, ...] = (
    "run_start",
    "plan",
    "message",
    "model_call",
    "model_result",
    "tool_call",
    "tool_result",
    "approval_request",
    "approval_decision",
    "agent_spawn",
    "agent_end",
    "checkpoint",
    "test_result",
    "recovery",
    "compaction",
    "branch",
    "integrity",
    "run_end",
    "other",
)
"""The timeline's event kinds. An importer maps every source record to one of them; a record it
cannot map becomes ``other`` with its raw source kept."""
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
COMPLETING = frozenset(
    KIND_INDEX[k] for k in ("tool_result", "model_result", "approval_decision", "agent_end")
)
"""Kinds whose ``ref`` completes the event it names (a recovery decision only refers to it)."""

STATUSES = ("completed", "crashed", "failed", "cancelled", "running", "unknown")
"""Session statuses. ``recovered`` is a separate flag: a recovered run can still complete."""

PROBLEM_STATUSES = frozenset({"failed", "pending", "in_doubt", "torn", "recovered", "denied", "corrupt"})
"""Event statuses that "problems only" keeps."""


class StringPool:
    """Interns strings to small integers so repeated values cost four bytes per event."""

    def __init__(self) -> None:
        self.values: list[str] = [""]
        self._index: dict[str, int] = {"": 0}

    def id(self, value: str | None) -> int:
        if not value:
            return 0
        i = self._index.get(value)
        if i is None:
            i = len(self.values)
            self._index[value] = i
            self.values.append(value)
        return i

    def find(self, value: str) -> int | None:
        """The id of ``value`` if it was ever interned."""
        return self._index.get(value)


class EventTable:
    """Columns of events; row ``i`` is event number ``i`` in session order."""

    def __init__(self) -> None:
        self.pool = StringPool()
        self.kind = array("B")
        self.lsn = array("q")
        """lsn or seq in its source (-1 if the source has none)."""
        self.ts = array("d")
        """Seconds since the epoch (NaN if unknown)."""
        self.agent = array("I")
        self.type = array("I")
        """The source's own record type (``intent``, ``assistant`` ...), interned."""
        self.tool = array("I")
        self.target = array("I")
        self.status = array("I")
        self.ref = array("q")
        """Index of the event this one completes or answers (-1 if none)."""
        self.src = array("H")
        """Index into :attr:`Session.sources`."""
        self.line = array("I")
        self.offset = array("q")
        """Byte offset of the raw record in its source (-1: payload kept in memory)."""
        self.length = array("I")
        self._new_of = array("q")

    def __len__(self) -> int:
        return len(self.kind)

    def append(
        self,
        *,
        kind: str,
        type: str = "",
        lsn: int = -1,
        ts: float = math.nan,
        agent: str = "",
        tool: str = "",
        target: str = "",
        status: str = "",
        ref: int = -1,
        src: int = 0,
        line: int = 0,
        offset: int = -1,
        length: int = 0,
    ) -> int:
        i = len(self.kind)
        p = self.pool.id
        self.kind.append(KIND_INDEX.get(kind, KIND_INDEX["other"]))
        self.lsn.append(lsn)
        self.ts.append(ts)
        self.agent.append(p(agent))
        self.type.append(p(type))
        self.tool.append(p(tool))
        self.target.append(p(target))
        self.status.append(p(status))
        self.ref.append(ref)
        self.src.append(src)
        self.line.append(line)
        self.offset.append(offset)
        self.length.append(length)
        return i

    COLUMNS = tuple("lsn ts agent type tool target status ref src line offset length".split())
    """Every column but ``kind``, which :meth:`extend` fills last (its length is the table's)."""

    def extend(self, kind: list[int], cols: dict[str, list[Any]]) -> None:
        """Append many rows at once: ``kind`` ids and, per name of :attr:`COLUMNS`, one value per row
        (pool ids for the interned ones). What an importer's hot loop uses instead of :meth:`append`."""
        for name in self.COLUMNS:
            getattr(self, name).extend(cols[name])
        self.kind.extend(kind)

    def copy(self) -> EventTable:
        """An independent copy (the columns duplicated, the pool shared as it only ever grows)."""
        t = EventTable.__new__(EventTable)
        t.pool = self.pool
        for name in ("kind", *self.COLUMNS, "_new_of"):
            setattr(t, name, getattr(self, name)[:])
        return t

    def reorder(self, perm: list[int]) -> None:
        """Put row ``perm[k]`` at position ``k`` in every column, remapping ``ref``."""
        new_of = array("q", [0]) * len(perm)
        for k, old in enumerate(perm):
            new_of[old] = k
        for name in ("kind", *(c for c in self.COLUMNS if c != "ref")):
            col = getattr(self, name)
            setattr(self, name, array(col.typecode, (col[old] for old in perm)))
        self.ref = array("q", (new_of[self.ref[old]] if self.ref[old] >= 0 else -1 for old in perm))
        self._new_of = new_of

    def new_index(self, old: int) -> int:
        """Where the row that was at ``old`` before the last :meth:`reorder` is now."""
        return int(self._new_of[old])

    def set_status(self, i: int, status: str) -> None:
        self.status[i] = self.pool.id(status)

    def string(self, column: array, i: int) -> str:  # type: ignore[type-arg]
        return self.pool.values[column[i]]


@dataclass(slots=True)
class Event:
    """One event, materialised on demand from the table."""

    index: int
    """Position in the session (0-based); the viewer's step number is ``index + 1``."""
    kind: str
    type: str
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
    """Index of the spawn event in the parent."""
    run: str = ""
    task: str = ""
    outcome: str = ""
    """``completed``, ``failed`` ... from ``agent.end``; empty while unknown."""
    events: int = 0


@dataclass
class FileChange:
    """One change of one file: the tool call that made it and the hashes around it."""

    path: str
    event: int
    """Index of the tool call (intent)."""
    result: int | None
    """Index of the completing event, if any."""
    tool: str
    pre: str | None
    """``sha256:<hex>``, ``absent`` or None when the source does not say."""
    post: str | None
    pre_text: bytes | None = None
    """Content before, when the importer has it in memory (else fetch the blob by ``pre``)."""
    post_text: bytes | None = None
    patch: str | None = None
    """A unified diff when that is all the source has."""


@dataclass
class Approval:
    """An approval request with its decision (None while unanswered)."""

    request: int
    decision_event: int | None
    decision: str | None
    approver: str | None
    time: str | None
    reason: str | None
    tool: str
    target: str
    gated: int | None = None
    """Index of the action the approval gated, if it ran."""


@dataclass(frozen=True)
class RecoveryFinding:
    """A recovery decision about one unfinished intent (journal/recovery words)."""

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
    """Source lines an importer could not turn into events: ``{file, line, reason}``."""

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


class Session:
    """A whole session: its agents, its events (columnar) and what is known about its integrity."""

    def __init__(self, *, format: str, sources: list[Path]) -> None:
        self.format = format
        self.sources = sources
        self.table = EventTable()
        self.agents: dict[str, Agent] = {}
        self.runs: list[str] = []
        self.task = ""
        self.status = "unknown"
        self.recovered = False
        self.header: dict[str, Any] = {}
        self.integrity = IntegrityReport()
        self.last_committed_lsn: int | None = None
        self.recovery_findings: list[RecoveryFinding] = []
        self.brief = ""
        """The resume brief, when a recovery analysis was attached."""
        self.payloads: dict[int, dict[str, Any]] = {}
        """Raw records of events whose source is not addressable by offset."""
        self.blob_loader: Callable[[str], bytes | None] = lambda name: None
        """Returns the content of a blob by ``sha256:<hex>`` name, or None."""
        self.gated: dict[int, int] = {}
        """Approval request index -> index of the tool call it gated."""
        self._completed_by: array | None = None  # type: ignore[type-arg]
        self._rows_by_agent: dict[int, array] | None = None  # type: ignore[type-arg]

    def snapshot(self) -> Session:
        """A copy that later loading does not touch (views hold buffers of its columns), shown as
        a session still loading: its status and integrity are ``pending``."""
        s = Session.__new__(Session)
        s.__dict__.update(self.__dict__)
        s.sources = list(self.sources)
        s.table = self.table.copy()
        s.agents = {k: replace(a) for k, a in self.agents.items()}
        s.runs = list(self.runs)
        s.status = "pending"
        s.integrity = IntegrityReport(chain="pending", skipped=list(self.integrity.skipped))
        s.recovery_findings = list(self.recovery_findings)
        s.payloads = dict(self.payloads)
        s.gated = dict(self.gated)
        s._completed_by = s._rows_by_agent = None
        return s

    # -- events -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.table)

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
            source=str(self.sources[t.src[i]]) if self.sources else "",
            line=t.line[i],
        )

    def events(self, indices: Iterator[int] | list[int] | range | None = None) -> Iterator[Event]:
        for i in indices if indices is not None else range(len(self)):
            yield self.event(i)

    def raw(self, i: int) -> dict[str, Any]:
        """The event's source record, parsed now (never held for every event)."""
        if i in self.payloads:
            return self.payloads[i]
        t = self.table
        off = t.offset[i]
        if off < 0:
            return {}
        from walkback.journal.reader import read_at

        return read_at(self.sources[t.src[i]], off, t.length[i])

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
        out = []
        for i in range(len(t)):
            if k is not None and t.kind[i] != k:
                continue
            if sid is not None and t.status[i] != sid:
                continue
            out.append(i)
        return out

    def pending(self) -> list[int]:
        """Tool calls (intents) that have no completing event."""
        return self.indices_where(kind="tool_call", status="pending")

    def kinds(self) -> dict[str, int]:
        counts = [0] * len(KINDS)
        for k in self.table.kind:
            counts[k] += 1
        return {KINDS[i]: n for i, n in enumerate(counts) if n}

    def completion_of(self, i: int) -> int | None:
        """Index of the event that completes event ``i`` (the commit of an intent), if any."""
        if self._completed_by is None or len(self._completed_by) != len(self):
            done = array("q", [-1]) * len(self)
            ref = self.table.ref
            kind = self.table.kind
            for j in range(len(ref)):
                r = ref[j]
                if r >= 0 and done[r] < 0 and kind[j] in COMPLETING:
                    done[r] = j
            self._completed_by = done
        j = self._completed_by[i]
        return j if j >= 0 else None

    def file_history(self) -> dict[str, list[int]]:
        """Every file touched by a tool call, with the indices of those calls in order."""
        t = self.table
        call = KIND_INDEX["tool_call"]
        files: dict[str, list[int]] = {}
        vals = t.pool.values
        for i in range(len(t)):
            if t.kind[i] == call and t.target[i]:
                files.setdefault(vals[t.target[i]], []).append(i)
        return files

    def file_change(self, i: int) -> FileChange | None:
        """The file change made by tool call ``i``, read from its raw record; None if not a file."""
        ev = self.event(i)
        if ev.kind != "tool_call" or not ev.target:
            return None
        rec = self.raw(i)
        pre = rec.get("pre")
        post = rec.get("post")
        if not (isinstance(pre, str) or isinstance(post, str) or "patch" in rec):
            return None
        res = self.completion_of(i)
        if res is not None:
            post = self.raw(res).get("post", post)
        return FileChange(
            path=ev.target,
            event=i,
            result=res,
            tool=ev.tool,
            pre=pre if isinstance(pre, str) else None,
            post=post if isinstance(post, str) else None,
            pre_text=rec.get("_pre_text"),
            post_text=rec.get("_post_text"),
            patch=rec.get("patch") if isinstance(rec.get("patch"), str) else None,
        )

    def approvals(self) -> list[Approval]:
        t = self.table
        req = KIND_INDEX["approval_request"]
        dec = KIND_INDEX["approval_decision"]
        out: dict[int, Approval] = {}
        for i in range(len(t)):
            k = t.kind[i]
            if k == req:
                out[i] = Approval(i, None, None, None, None, None, t.string(t.tool, i), t.string(t.target, i))
                out[i].gated = self.gated.get(i)
            elif k == dec and t.ref[i] in out:
                a = out[t.ref[i]]
                raw = self.raw(i)
                a.decision_event = i
                a.decision = str(raw.get("decision", t.string(t.status, i)))
                a.approver = str(raw.get("approver", "")) or None
                a.time = str(raw.get("ts", "")) or None
                a.reason = str(raw.get("reason", "")) or None
        return list(out.values())

    def index_of_lsn(self, lsn: int, agent: str | None = None) -> int | None:
        """Index of the event with ``lsn`` in ``agent``'s journal (the first agent's by default)."""
        t = self.table
        if agent is None:
            agent = next(iter(self.agents), "")
        aid = t.pool.find(agent)
        if aid is None:
            return None
        if self._rows_by_agent is None:
            rows: dict[int, array] = {}  # type: ignore[type-arg]
            for i in range(len(t)):
                a = t.agent[i]
                r = rows.get(a)
                if r is None:
                    r = rows[a] = array("q")
                r.append(i)
            self._rows_by_agent = rows
        rows_a = self._rows_by_agent.get(aid)
        if not rows_a:
            return None
        k = bisect_left(rows_a, lsn, key=lambda j: t.lsn[j])
        if k < len(rows_a) and t.lsn[rows_a[k]] == lsn:
            return int(rows_a[k])
        return None

    def frame(self) -> Any:
        """A pandas DataFrame of the events (one row each) for filtering and charts."""
        import numpy as np
        import pandas as pd

        t = self.table
        vals = np.array(t.pool.values, dtype=object)

        def cat(col: array) -> Any:  # type: ignore[type-arg]
            codes = np.frombuffer(col, dtype=np.uint32) if len(col) else np.zeros(0, np.uint32)
            return pd.Categorical(vals[codes])

        kinds = np.array(KINDS, dtype=object)
        n = len(t)
        return pd.DataFrame(
            {
                "kind": pd.Categorical(kinds[np.frombuffer(t.kind, dtype=np.uint8)] if n else []),
                "lsn": np.frombuffer(t.lsn, dtype=np.int64) if n else np.zeros(0, np.int64),
                "time": pd.to_datetime(
                    np.frombuffer(t.ts, dtype=np.float64) if n else [], unit="s", utc=True
                ),
                "agent": cat(t.agent),
                "type": cat(t.type),
                "tool": cat(t.tool),
                "target": cat(t.target),
                "status": cat(t.status),
                "ref": np.frombuffer(t.ref, dtype=np.int64) if n else np.zeros(0, np.int64),
            }
        )


def parse_time(value: Any) -> float:
    """Seconds since the epoch from RFC 3339 text or epoch numbers (s or ms); NaN if unknown."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        v = v / 1000.0 if v > 1e11 else v
        return v if 0 <= v < 1e11 else math.nan  # beyond year 5000 (or NaN) is not a time
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return math.nan
    return math.nan
