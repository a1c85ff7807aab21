"""Importer for the reference journal: format v1 and the two seed dialects.

A run directory brings its subagents along: every ``agent.spawn`` names the child's run
directory (relative, inside the parent's), whose journal is read into the same session.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from walkback.journal.blobs import BlobStore
from walkback.journal.errors import BlobError
from walkback.journal.reader import Scanner, ScanResult, is_seq_result
from walkback.journal.runlock import lock_is_held
from walkback.journal.writer import JOURNAL_NAME, journal_path
from walkback.timeline.model import KIND_INDEX, STATUSES, RecoveryFinding, Session, parse_time

NAME = "walkback"

TYPE_KIND = {
    "run.start": "run_start",
    "plan": "plan",
    "reframe": "plan",
    "message": "message",
    "model.call": "model_call",
    "model.result": "model_result",
    "intent": "tool_call",
    "commit": "tool_result",
    "fail": "tool_result",
    "approval.request": "approval_request",
    "approval.decision": "approval_decision",
    "agent.spawn": "agent_spawn",
    "agent.end": "agent_end",
    "checkpoint": "checkpoint",
    "test.result": "test_result",
    "recovery": "recovery",
    "journal.recovered": "integrity",
    "journal.continued": "integrity",
    "compaction": "compaction",
    "cancel": "run_end",
    "run.end": "run_end",
}
OK_WORDS = frozenset({"ok", "success", "succeeded", "completed", "done", "committed", "passed"})

Progress = Callable[[int], None]


def handles_path(path: Path) -> bool:
    return (path.is_dir() and (path / JOURNAL_NAME).is_file()) or path.name == JOURNAL_NAME


def handles_bytes(head: bytes) -> bool:
    first = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    return first.startswith(b'{"v":1,') or (
        first.startswith(b"{") and (b'"seq"' in first or (b'"lsn"' in first and b'"type"' in first))
    )


def target_of(rec: dict[str, Any]) -> str:
    """The file or resource an intent acts on, wherever the dialect put it."""
    for key in ("target", "file", "path"):
        v = rec.get(key)
        if isinstance(v, str):
            return v
    args = rec.get("args")
    if isinstance(args, dict):
        for key in ("path", "file", "target", "url"):
            v = args.get(key)
            if isinstance(v, str):
                return v
    return ""


CHUNK = 4096
"""Records read between two points where a loader may show the session so far."""


def load(path: Path, *, progress: Progress | None = None) -> Session:
    """Read a journal (or a run directory with its subagents) into a Session."""
    *_, session = load_chunks(path, progress=progress)
    return session


def load_chunks(path: Path, *, chunk: int = CHUNK, progress: Progress | None = None) -> Iterator[Session]:
    """Read like :func:`load`, yielding the same growing Session after every ``chunk`` records and
    once more, complete, at the end (a viewer shows the session before the whole journal is read).

    Between two yields only the events are in; session facts that need the whole journal (status,
    integrity, subagents' order by time) are set before the last one.
    """
    path = Path(path)
    jpath = journal_path(path)
    session = Session(format=NAME, sources=[])
    stores: list[BlobStore] = []
    yield from _load_one(
        session, jpath, parent=None, spawned_by=None, stores=stores, chunk=chunk, progress=progress
    )
    if len(session.sources) > 1:
        _order_by_time(session)
    session.blob_loader = _blob_loader(stores)
    yield session


def _blob_loader(stores: list[BlobStore]) -> Callable[[str], bytes | None]:
    def get(name: str) -> bytes | None:
        for s in stores:
            if s.has(name):
                try:
                    return s.get(name)
                except BlobError:
                    return None
        return None

    return get


class _Refs:
    """lsn/seq -> event index for one journal, without storing a thing for the usual dense run.

    Records numbered base, base+1, ... become consecutive events from ``first``, so their index is
    arithmetic; only numbers off that run (after damage, or every seq of the seq dialect, whose
    results interleave) go to a dict. The first record with a given number wins.
    """

    def __init__(self, first: int, *, dense: bool) -> None:
        self.first = first
        self.base = -1
        self.next = -1 if dense else -2
        """The number that extends the dense run (-2: no dense run for this journal)."""
        self.sparse: dict[int, int] = {}

    def put(self, key: int, index: int) -> None:
        if key == self.next:
            self.next += 1
        elif self.next == -1:
            self.base, self.next = key, key + 1
        elif not self.base <= key < self.next:
            self.sparse.setdefault(key, index)

    def get(self, key: Any) -> int:
        """The index of the record numbered ``key``, or -1 (also for a non-integer ``key``)."""
        if key.__class__ is not int:
            return -1
        if self.base <= key < self.next:
            return self.first + key - self.base
        return self.sparse.get(key, -1)


def _load_one(
    session: Session,
    jpath: Path,
    *,
    parent: str | None,
    spawned_by: int | None,
    stores: list[BlobStore],
    chunk: int,
    progress: Progress | None,
    segment_of: _Refs | None = None,
) -> Iterator[Session]:
    """Read one journal (then its subagents'), yielding ``session`` after every ``chunk`` records.

    A rotated journal's archived segments are read first, sharing one lsn index (``segment_of``)
    so a record may complete one in an earlier segment; damage inside an archived segment is
    corruption (the chain goes on in the next file), never a torn tail.

    The hot loop builds plain lists per column and hands them to the table once per chunk; rows
    still in those lists are indexed from ``base``.
    """
    from walkback.journal.segments import (
        archived,  # a rotated run: its archived segments first, each a source
    )

    shared = segment_of
    for seg in archived(jpath) if segment_of is None else ():
        shared = shared or _Refs(len(session.table), dense=True)
        yield from _load_one(
            session,
            seg.path,
            parent=parent,
            spawned_by=spawned_by,
            stores=stores,
            chunk=chunk,
            progress=progress,
            segment_of=shared,
        )
    src = len(session.sources)
    session.sources.append(jpath)
    stores.append(BlobStore(jpath.parent / "blobs"))
    t = session.table
    pool = t.pool
    intern = pool.id
    ids = pool._index  # noqa: SLF001 - the hot loop reads the pool's dict directly, misses go through id()
    scanner = Scanner(jpath)
    refs = _Refs(len(t), dense=True)
    children: list[tuple[Path, int]] = []
    gap_lines: set[int] = set()
    outcomes: dict[str, str] = {}
    types = _TypeCache(pool)
    type_info = types.cache.get
    agent_id = ""
    ended = ""
    n = 0
    seq = False
    clock = _Clock()
    minute, base_ts = clock.minute, clock.base
    nan = math.nan
    base = len(t)
    i = base - 1  # the current record's index
    flush_at = base + chunk - 1
    kinds: list[int] = []
    cols: dict[str, list[Any]] = {name: [] for name in t.COLUMNS}
    c_lsn, c_ts, c_agent, c_type, c_tool, c_target, c_status, c_ref, c_line, c_offset, c_length = (
        cols[k].append for k in "lsn ts agent type tool target status ref line offset length".split()
    )
    statuses = cols["status"]
    add_kind = kinds.append
    last_who, last_aid = "", 0
    agent_aid = 0
    for rec in scanner:
        d = rec.data
        lsn = rec.lsn
        if n == 0:
            seq = scanner.result.dialect == "seq"
            refs = shared if shared is not None and not seq else _Refs(len(t), dense=not seq)
            agent_id = str(d.get("agent") or ("main" if parent is None else f"agent-{src}"))
            agent_aid = last_aid = intern(agent_id)
            last_who = agent_id
            _add_agent(session, d, agent_id, parent, spawned_by)
            if src == 0:  # the task, for a session shown while it is still being read
                _head(session, scanner.result)
        typ = d.get("type")
        completes_seq = False
        if seq:
            completes_seq = is_seq_result(d)
            typ = "commit" if completes_seq else ("intent" if "tool" in d else typ)
            if completes_seq and str(d.get("status", "ok")).lower() not in OK_WORDS:
                typ = "fail"
        if typ.__class__ is not str:
            typ = ""
        info = type_info(typ)
        kind_id, type_id, fixed, group = info if info is not None else types.add(typ)
        key: Any
        if completes_seq:
            key = lsn
        else:
            key = d.get("ref", _MISSING)
            if key is _MISSING:
                key = d.get("intent")
        if key.__class__ is int and refs.base <= key < refs.next:
            ref = refs.first + key - refs.base
        else:
            ref = -1 if key is None else refs.get(key)
        if fixed >= 0:
            sid = fixed
            status = pool.values[sid] if group else ""
        else:
            status = _status(typ, d)
            found = ids.get(status)
            sid = found if found is not None else intern(status)
        ts = d.get("ts", _MISSING)
        if (
            ts.__class__ is str
            and len(ts) == 27
            and ts.startswith(minute)
            and ts[16] == ":"
            and ts[19] == "."
            and ts[26] == "Z"
        ):
            try:
                sec = float(ts[17:26])
            except ValueError:
                sec = -1.0
            if 0.0 <= sec < 61.0:
                c_ts(base_ts + sec)
            else:
                c_ts(clock(ts))
        elif ts is _MISSING:
            c_ts(nan)
        else:
            c_ts(clock(ts))
            minute, base_ts = clock.minute, clock.base
        who = d.get("agent")
        if who is None:
            c_agent(agent_aid)
        elif who == last_who:
            c_agent(last_aid)
        elif who.__class__ is str and who:
            last_who = who
            aid = ids.get(who)
            last_aid = aid if aid is not None else intern(who)
            c_agent(last_aid)
        else:
            c_agent(agent_aid)
        tool = d.get("tool")
        if tool is None:
            c_tool(0)
        else:
            tool = tool if tool.__class__ is str else str(tool or "")
            tid = ids.get(tool)
            c_tool(tid if tid is not None else intern(tool))
        i += 1
        add_kind(kind_id)
        c_lsn(lsn)
        c_type(type_id)
        if group == _TARGETED:
            target = target_of(d)
            tid = ids.get(target)
            c_target(tid if tid is not None else intern(target))
        else:
            c_target(0)
        c_status(sid)
        c_ref(ref)
        c_line(rec.line)
        c_offset(rec.offset)
        c_length(rec.length)
        if rec.after_gap:
            gap_lines.add(rec.line)
        if completes_seq:
            pass
        elif lsn == refs.next:
            refs.next += 1
        else:
            refs.put(lsn, i)
        if group:
            if ref >= 0 and group == _COMPLETES:
                done = _completed_status(typ, d, status)
                if done:
                    if ref >= base:
                        statuses[ref - base] = intern(done)
                    else:
                        t.set_status(ref, done)
            if group == _TARGETED:
                if "approval" in d and kind_id == _TOOL_CALL:
                    request = refs.get(d["approval"])
                    if request >= 0:
                        session.gated[request] = i
            elif typ == "commit":
                if parent is None:
                    session.last_committed_lsn = lsn
            if typ in NOTABLE:
                ended = _notable(session, jpath, typ, d, i, status, children, outcomes) or ended
        n += 1
        if i >= flush_at:
            cols["src"] = [src] * len(kinds)
            t.extend(kinds, cols)
            base = len(t)
            flush_at = base + chunk - 1
            kinds.clear()
            for col in cols.values():
                col.clear()
            if progress:
                progress(len(t))
            yield session
    cols["src"] = [src] * len(kinds)
    t.extend(kinds, cols)
    res = scanner.result
    if n == 0:  # every line damaged: keep the agent visible
        agent_id = "main" if parent is None else f"agent-{src}"
        _add_agent(session, {}, agent_id, parent, spawned_by)
    session.agents[agent_id].events += n
    session.integrity.skipped.extend(
        {"file": str(jpath), "line": d.line, "reason": d.reason}
        for d in res.corrupt + res.torn
        if d.line not in gap_lines
    )
    if parent is None:
        _finish_main(
            session, jpath, res, ended, archived_segment=segment_of is not None
        )
    for child_path, spawn_index in children:
        if child_path.is_file() and child_path not in session.sources:
            yield from _load_one(
                session,
                child_path,
                parent=agent_id,
                spawned_by=spawn_index,
                stores=stores,
                chunk=chunk,
                progress=progress,
            )
    for name, outcome in outcomes.items():
        if name in session.agents:
            session.agents[name].outcome = outcome


_MISSING: Any = object()
_TOOL_CALL = KIND_INDEX["tool_call"]
_TARGETED, _COMPLETES, _OTHER = 1, 2, 3
"""Record groups off the plain path: with a target (tool calls, approval requests), completing
another record, or notable / commit (session facts)."""
COMPLETING_TYPES = frozenset({"commit", "fail", "approval.decision", "agent.end", "recovery"})


class _TypeCache:
    """Per record type: kind id, interned type, fixed status id (-1: derived) and its group."""

    LIMIT = 4096
    """Types are the journal author's words: an unbounded variety is not cached."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.cache: dict[str, tuple[int, int, int, int]] = {}

    def add(self, typ: str) -> tuple[int, int, int, int]:
        kind = TYPE_KIND.get(typ, "other")
        fixed = -1 if typ in DERIVED_STATUS else self.pool.id(FIXED_STATUS.get(typ, ""))
        if kind in ("tool_call", "approval_request"):
            group = _TARGETED
        elif typ in COMPLETING_TYPES:
            group = _COMPLETES
        elif typ in NOTABLE:
            group = _OTHER
        else:
            group = 0
        info = (KIND_INDEX[kind], self.pool.id(typ or "?"), fixed, group)
        if len(self.cache) < self.LIMIT:
            self.cache[typ] = info
        return info


def _finish_main(
    session: Session, jpath: Path, res: ScanResult, ended: str, *, archived_segment: bool = False
) -> None:
    """Session-level facts that come from the top-level journal (all its segments together)."""
    if not archived_segment:
        _head(session, res)
    dialect = res.dialect
    integ = session.integrity
    bad = res.corrupt + res.torn if archived_segment else res.corrupt
    if bad or integ.chain != "broken":
        integ.chain = "broken" if bad else res.chain
    if integ.first_bad_lsn is None:
        integ.first_bad_lsn = bad[0].lsn if bad else None
    if not archived_segment:
        integ.torn_tail = res.torn_tail
        if integ.first_bad_lsn is None:
            integ.first_bad_lsn = res.first_bad_lsn
    integ.corrupt += [{"lsn": d.lsn, "line": d.line, "reason": d.reason, "file": str(jpath)} for d in bad]
    if ended:
        session.status = ended if ended in STATUSES else "unknown"
    elif lock_is_held(jpath.parent):
        session.status = "running"
    elif dialect == "v1" or session.pending():
        session.status = "crashed"  # a v1 writer always ends with run.end; a seed run left an intent open
    else:
        session.status = "unknown"


def _head(session: Session, res: ScanResult) -> None:
    """Header, format and task: known from the first record on."""
    session.header = res.header or {}
    session.format = NAME if res.dialect == "v1" else f"{NAME}-seed-{res.dialect}"
    session.task = str(session.header.get("task") or session.header.get("task_id") or "")


def _add_agent(
    session: Session, first: dict[str, Any], agent_id: str, parent: str | None, spawned_by: int | None
) -> None:
    from walkback.timeline.model import Agent

    if agent_id in session.agents:  # the next segment of a rotated journal: the same agent
        return
    run = str(first.get("run") or first.get("task_id") or "")
    session.agents[agent_id] = Agent(
        id=agent_id, parent=parent, spawned_by=spawned_by, run=run, task=str(first.get("task") or "")
    )
    if run and run not in session.runs:
        session.runs.append(run)


FIXED_STATUS = {
    "intent": "pending",
    "fail": "failed",
    "approval.request": "pending",
    "agent.spawn": "running",
    "journal.recovered": "torn",
}
"""Statuses that follow from the record type alone (an intent is pending until completed)."""
DERIVED_STATUS = frozenset({"commit", "approval.decision", "agent.end", "recovery", "test.result", "run.end"})
NOTABLE = frozenset({"agent.spawn", "agent.end", "run.end", "cancel", "recovery", "journal.recovered"})
"""Types that say something about the session beyond their own event."""


class _Clock:
    """A journal's RFC 3339 times as epoch seconds: each minute is parsed once, seconds added.

    :attr:`minute` and :attr:`base` are the last minute seen, for the importer's inline fast path.
    """

    def __init__(self) -> None:
        self.minutes: dict[str, float] = {}
        self.minute: Any = ()
        """``YYYY-MM-DDTHH:MM`` of the last time parsed by minute (the empty tuple prefixes no text)."""
        self.base = math.nan

    def __call__(self, value: Any) -> float:
        if value.__class__ is str and len(value) == 27 and value[26] == "Z":
            key = value[:16]
            base = self.minutes.get(key)
            if base is None:
                if len(self.minutes) >= 4096:
                    self.minutes.clear()
                base = self.minutes[key] = parse_time(key + ":00Z")
            self.minute, self.base = key, base
            try:
                sec = float(value[17:26])
            except ValueError:
                return parse_time(value)
            if 0.0 <= sec < 61.0 and value[16] == ":" and value[19] == ".":
                return base + sec
        return parse_time(value)


def _notable(
    session: Session,
    jpath: Path,
    typ: str,
    d: dict[str, Any],
    i: int,
    status: str,
    children: list[tuple[Path, int]],
    outcomes: dict[str, str],
) -> str:
    """Session facts from spawns, ends and recovery records; returns a run's end status if any."""
    if typ == "agent.spawn":
        child = _child_path(jpath, d["child_dir"]) if isinstance(d.get("child_dir"), str) else None
        if child is not None:
            children.append((child, i))
    elif typ == "agent.end":
        if isinstance(d.get("child_agent"), str):
            outcomes[d["child_agent"]] = status
    elif typ in ("run.end", "cancel"):
        return str(d.get("status") or ("cancelled" if typ == "cancel" else "completed"))
    else:
        session.recovered = True
        if typ == "recovery":
            _finding(session, d)
    return ""


def _status(typ: str, d: dict[str, Any]) -> str:
    """The status of a record whose type alone does not say it."""
    if typ == "commit":
        return "recovered" if d.get("recovered") else "ok"
    if typ == "approval.decision":
        return "approved" if str(d.get("decision")) in ("approve", "approved", "yes") else "denied"
    if typ == "agent.end":
        return str(d.get("outcome") or "completed")
    if typ == "recovery":
        return str(d.get("finding") or "")
    if typ == "test.result":
        return "ok" if d.get("passed", d.get("exit_code") == 0) else "failed"
    if typ == "run.end":
        return str(d.get("status") or "completed")
    return ""


def _completed_status(typ: str, d: dict[str, Any], status: str) -> str:
    """The status a completing record gives the record it completes ('' for none)."""
    if typ in ("commit", "fail", "approval.decision", "agent.end"):
        return status
    if typ == "recovery" and d.get("action") == "ask_human":
        return "in_doubt"
    return ""


def _finding(session: Session, d: dict[str, Any]) -> None:
    ref = d.get("ref")
    session.recovery_findings.append(
        RecoveryFinding(
            lsn=ref if isinstance(ref, int) else -1,
            target=str(d.get("target") or ""),
            tool=str(d.get("tool") or ""),
            finding=str(d.get("finding") or ""),
            action=str(d.get("action") or ""),
            detail=str(d.get("detail") or ""),
        )
    )
    if isinstance(d.get("brief"), str):
        session.brief = d["brief"]


def _child_path(parent_journal: Path, child_dir: str) -> Path | None:
    """The journal a spawn's ``child_dir`` names, or None if it escapes the parent's run dir."""
    if "\x00" in child_dir:
        return None
    base = parent_journal.parent.resolve()
    p = (base / child_dir).resolve()
    if base not in p.parents:
        return None  # never followed; the spawn itself stays visible
    return p / JOURNAL_NAME


def _order_by_time(session: Session) -> None:
    """Interleave the events of several journals by time, keeping each journal's own order."""
    t = session.table
    per_src: dict[int, list[int]] = {}
    for i in range(len(t)):
        per_src.setdefault(t.src[i], []).append(i)

    def when(i: int) -> float:
        return math.inf if math.isnan(t.ts[i]) else t.ts[i]

    perm = list(heapq.merge(*per_src.values(), key=when))
    t.reorder(perm)
    for a in session.agents.values():
        if a.spawned_by is not None:
            a.spawned_by = t.new_index(a.spawned_by)
    session.gated = {t.new_index(k): t.new_index(v) for k, v in session.gated.items()}
