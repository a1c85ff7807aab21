"""SessionBuilder: what every importer fills, so an importer is only the mapping from its format.

The builder owns what all importers need and none should write again: string interning, the
pending rows of the table (flushed in chunks, so a viewer can show a session while it is still
read), pairing of calls and results by key, agents and their links to the call that spawned them,
placeholder rows for records that could not be read, the count of skipped records with their
reasons, and the final interleaving of several files' events by time.

Hot path: :meth:`row` takes one event's values already interned, in the table's column order
(:data:`timeline.table.COLUMNS`); :meth:`add` is the convenient keyword form.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np

from .kinds import KIND_INDEX, OTHER, PLACEHOLDER
from .measures import Measures
from .session import Agent, DetailFn, Session
from .sources import Source
from .table import FIELDS, NAMES, POS, ROW

CHUNK = 4096
"""Events between two points where a loader may show the session so far."""
_STATUS, _REF, _FLAGS = POS["status"], POS["ref"], POS["flags"]
_TS, _LINE, _OFFSET, _LENGTH = POS["ts"], POS["line"], POS["offset"], POS["length"]


class SessionBuilder:
    """Builds one :class:`Session`; see the module docstring."""

    def __init__(
        self,
        format: str,
        *,
        describe: DetailFn,
        chunk: int = CHUNK,
        extend: Session | None = None,
        measure: bool = False,
    ) -> None:
        """``extend``: append to this (finished) session instead of a new one: a live follow.
        ``measure``: ask the importer to record measures (:meth:`measuring`), as an export does."""
        self.session = extend if extend is not None else Session(format=format)
        self.session.describe = describe
        self.pool = self.session.table.pool
        self.intern = self.pool.id
        """Interns a string (returns its id); ``pool.index.get`` first is faster on a hit."""
        self.rows = bytearray()
        """Pending rows, packed (:data:`~timeline.table.ROW`). Hot loops may append ``ROW.pack(...)``
        to it directly."""
        self.base = len(self.session.table)
        """Index of the first pending row (the table's length)."""
        self.chunk = chunk
        self.interleave = False
        """Set by an importer that reads several files (subagents): :meth:`finish` merges their
        events by time, keeping each file's own order."""
        self.measure = measure or (extend is not None and extend.measures is not None)
        self.measured_rows: list[Any] = []
        """Pending measures, flat: six values each (:meth:`Measures.extend`), for every event
        that has any, while :meth:`measuring`."""
        self._open: dict[Hashable, int] = {}

    # -- sources and agents ------------------------------------------------------------------------
    def source(self, src: Source) -> int:
        """Register a place events are read from; returns its number for the rows' ``src``."""
        self.session.sources.append(src)
        return len(self.session.sources) - 1

    def agent(
        self,
        id: str,
        *,
        parent: str | None = None,
        spawned_by: int | None = None,
        run: str = "",
        task: str = "",
        label: str = "",
    ) -> Agent:
        """The agent ``id``, created on first mention (later mentions fill what is still empty)."""
        a = self.session.agents.get(id)
        if a is None:
            a = self.session.agents[id] = Agent(
                id=id, parent=parent, spawned_by=spawned_by, run=run, task=task, label=label
            )
            if run and run not in self.session.runs:
                self.session.runs.append(run)
            return a
        a.parent = a.parent or parent
        a.spawned_by = a.spawned_by if a.spawned_by is not None else spawned_by
        a.task = a.task or task
        a.label = a.label or label
        if run and not a.run:
            a.run = run
            if run not in self.session.runs:
                self.session.runs.append(run)
        return a

    def measuring(self) -> bool:
        """Whether an importer that can should record models, tokens and file hashes as it reads
        (into :attr:`measured_rows`, for every event that has them; :mod:`timeline.measures`).
        Asked by exports only: a viewer's load does not pay for them."""
        if self.measure and self.session.measures is None:
            self.session.measures = Measures()
        return self.measure

    # -- rows ------------------------------------------------------------------------------------
    @property
    def count(self) -> int:
        """Events so far (the index the next row will get)."""
        return self.base + len(self.rows) // ROW.size

    def row(
        self,
        kind: int,
        type: int,
        lsn: int,
        ts: float,
        agent: int,
        tool: int,
        target: int,
        status: int,
        ref: int,
        src: int,
        line: int,
        offset: int,
        length: int,
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        """Append one event (kind id, pool ids for the strings); returns its index."""
        self.rows += ROW.pack(
            kind, type, lsn, ts, agent, tool, target, status, ref, src, line, offset, length, sub, flags
        )
        return self.base + len(self.rows) // ROW.size - 1

    def add(
        self,
        kind: str,
        *,
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
        sub: int = -1,
        flags: int = 0,
    ) -> int:
        """Append one event by name (strings interned here); returns its index."""
        p = self.intern
        return self.row(
            KIND_INDEX.get(kind, OTHER),
            p(type or "?"),
            lsn,
            ts,
            p(agent),
            p(tool),
            p(target),
            p(status),
            ref,
            src,
            line,
            offset,
            length,
            sub,
            flags,
        )

    def _set(self, i: int, pos: int, value: Any) -> None:
        if i >= self.base:
            field, at = FIELDS[pos]
            field.pack_into(self.rows, (i - self.base) * ROW.size + at, value)
        else:
            getattr(self.session.table, NAMES[pos])[i] = value

    def _get(self, i: int, pos: int) -> Any:
        if i >= self.base:
            field, at = FIELDS[pos]
            return field.unpack_from(self.rows, (i - self.base) * ROW.size + at)[0]
        return getattr(self.session.table, NAMES[pos])[i]

    def set_status(self, i: int, status: str) -> None:
        """Change event ``i``'s status (a call becomes ``ok`` or ``failed`` when its result arrives)."""
        self._set(i, _STATUS, self.intern(status))

    def set_ref(self, i: int, ref: int) -> None:
        self._set(i, _REF, ref)

    def add_flags(self, i: int, flags: int) -> None:
        self._set(i, _FLAGS, self._get(i, _FLAGS) | flags)

    def set_time(self, i: int, ts: float) -> None:
        """Give event ``i`` a time (a record without one takes its neighbour's, so interleaving by
        time keeps it in place)."""
        self._set(i, _TS, ts)

    def readdress(self, i: int, *, line: int, offset: int, length: int) -> None:
        """Point event ``i`` at another record of its source (a response streamed over several
        records is one event, read from its last and most complete copy)."""
        self._set(i, _LINE, line)
        self._set(i, _OFFSET, offset)
        self._set(i, _LENGTH, length)

    def status_of(self, i: int) -> str:
        return self.pool.values[self._get(i, _STATUS)]

    # -- pairing ---------------------------------------------------------------------------------
    def open(self, key: Hashable, index: int) -> None:
        """Event ``index`` waits for a completion named by ``key`` (a tool call id)."""
        self._open[key] = index

    def opened(self, key: Hashable) -> int:
        """The event waiting under ``key`` (-1 if none), left waiting."""
        return self._open.get(key, -1)

    def close(self, key: Hashable) -> int:
        """The event waiting under ``key`` (-1 if none), no longer waiting."""
        return self._open.pop(key, -1)

    def unanswered(self) -> dict[Hashable, int]:
        """Keys still waiting, with their events (calls whose results never came: a crash)."""
        return dict(self._open)

    # -- what could not be read ------------------------------------------------------------------
    def skip(self, file: Path | str, line: int, reason: str) -> None:
        """Count a source record that does not become an event, with why (``show`` lists them)."""
        self.session.integrity.skipped.append({"file": str(file), "line": line, "reason": reason})

    def placeholder(
        self,
        *,
        src: int,
        line: int,
        offset: int,
        length: int,
        reason: str,
        status: str = "corrupt",
        agent: str = "",
        lsn: int = -1,
        ts: float = math.nan,
        text: str = "",
    ) -> int:
        """A row for a record that could not be read (damaged, torn): shown with its reason, counted
        as a problem, never silently missing."""
        i = self.add(
            "integrity",
            type="unreadable",
            lsn=lsn,
            ts=ts,
            agent=agent,
            status=status,
            src=src,
            line=line,
            offset=offset,
            length=length,
            flags=PLACEHOLDER,
        )
        self.session.payloads[i] = {"reason": reason, "text": text[:2000]}
        return i

    # -- chunks and the end ----------------------------------------------------------------------
    def due(self) -> bool:
        """True when a chunk's worth of rows is pending (an importer yields then)."""
        return len(self.rows) >= self.chunk * ROW.size

    def flush(self) -> Session:
        """Move pending rows into the table; returns the growing session."""
        if self.rows:
            self.session.table.extend_packed(self.rows)
            self.rows = bytearray()
            self.base = len(self.session.table)
        if self.measured_rows and self.session.measures is not None:
            self.session.measures.extend(self.measured_rows)
            self.measured_rows = []
        return self.session

    def finish(self) -> Session:
        """Flush, interleave several files' events by time if asked, count events per agent."""
        s = self.flush()
        t = s.table
        if len(t):
            src = np.frombuffer(t.src, dtype=np.uint32)
            if self.interleave and (src != src[0]).any():
                _order_by_time(s)
            counts = np.bincount(np.frombuffer(t.agent, dtype=np.uint32)[: len(t)])
            for a in s.agents.values():
                code = t.pool.find(a.id)
                a.events = int(counts[code]) if code is not None and code < len(counts) else 0
        s.complete = True
        return s


def _order_by_time(session: Session) -> None:
    """Interleave the events of several files by time, keeping each file's own order."""
    t = session.table
    per_src: dict[int, list[int]] = {}
    for i in range(len(t)):
        per_src.setdefault(t.src[i], []).append(i)

    def when(i: int) -> float:
        return math.inf if math.isnan(t.ts[i]) else t.ts[i]

    perm = list(heapq.merge(*per_src.values(), key=when))
    new = t.reorder(perm)
    for a in session.agents.values():
        if a.spawned_by is not None:
            a.spawned_by = int(new[a.spawned_by])
    session.gated = {int(new[k]): int(new[v]) for k, v in session.gated.items()}
    session.payloads = {int(new[k]): v for k, v in session.payloads.items()}
    if session.measures is not None:
        session.measures.reordered(new)
    for state in session.follow.values():  # an importer's state for reading more later
        state.reordered(new)
