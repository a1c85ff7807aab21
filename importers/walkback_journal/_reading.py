"""One journal file being read: the hot loop and what it carries from one record to the next.

:class:`Reading` is one file's read (:mod:`._read`), :class:`Refs` a file's lsn index,
:class:`Followed` what a read leaves behind for a live follow.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from walkback.journal.blobs import BlobStore
from walkback.journal.reader import ScanState, is_seq_result
from walkback.journal.record import changes_file, target_of
from walkback.journal.scanresult import Damage, Fields, ScanResult
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.clock import MinuteClock
from walkback.timeline.kinds import FILE, KIND_INDEX
from walkback.timeline.table import FIELDS, POS, ROW

from . import _facts
from ._details import hashes, usage_of
from ._vocab import (
    COMPLETES,
    NOTABLE,
    OK_WORDS,
    TARGETED,
    TOOL_CALL,
    TypeCache,
    completed_status,
    status,
)

_MISSING: Any = object()
_STATUS_FIELD, _STATUS_AT = FIELDS[POS["status"]]
DAMAGED_TEXT = 200
"""Bytes of a damaged line kept with its placeholder row."""
_MODEL_CALL, _MODEL_RESULT = KIND_INDEX["model_call"], KIND_INDEX["model_result"]
_OTHER = KIND_INDEX["other"]


class Refs:
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
        self.sealed = (0, 0, 0)
        """``(first, base, next)`` of a dense run ended by :meth:`seal`."""

    def seal(self) -> None:
        """End the dense run here (rows were inserted): later numbers go to the dict."""
        if self.next >= 0:
            self.sealed = (self.first, self.base, self.next)
        self.next = -2

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
        first, base, end = self.sealed
        if base <= key < end:
            return first + key - base
        return self.sparse.get(key, -1)


class RemappedRefs:
    """A file's lsn index after the session's events were reordered (interleaved by time): what
    it knew maps through ``new_of``; records read later are indexed as they come."""

    def __init__(self, refs: Refs | RemappedRefs, new_of: Any) -> None:
        self.old = refs
        self.new_of = new_of
        self.first, self.base, self.next = 0, 0, -2  # no arithmetic run: every lookup goes by get
        self.later: dict[int, int] = {}

    def put(self, key: int, index: int) -> None:
        self.later.setdefault(key, index)

    def get(self, key: Any) -> int:
        if key.__class__ is not int:
            return -1
        found = self.later.get(key)
        if found is not None:
            return found
        old = self.old.get(key)
        return int(self.new_of[old]) if old >= 0 else -1

    def seal(self) -> None:
        """Nothing to seal: there is no arithmetic run."""


@dataclass
class Followed:
    """What reading one live journal file leaves behind to read what is appended to it later
    (``Scanner(resume=...)``: the cost of a live follow is the new bytes, not the whole file)."""

    jpath: Path
    src: int
    parent: str | None
    spawned_by: int | None
    stores: list[BlobStore]
    refs: Refs | RemappedRefs
    agent_id: str
    agent_aid: int
    records: int
    shown_damage: int
    state: ScanState
    torn: bool
    """The read ended on a torn tail (shown as a placeholder row): the next read must start over."""
    waiting: list[tuple[Path, int]]
    """Spawned subagents whose journal did not exist yet (their spawn's index): looked for again."""
    ended: str
    """How the run ended, if a ``run.end`` was read (a later read may find no new record)."""

    def copy(self) -> Followed:
        refs = copy.copy(self.refs)
        if isinstance(refs, RemappedRefs):
            refs.later = dict(refs.later)
        else:
            refs.sparse = dict(refs.sparse)
        return replace(self, refs=refs, waiting=list(self.waiting))

    def reordered(self, new_of: Any) -> None:
        """The session's events were reordered: indices this read handed out moved."""
        self.refs = RemappedRefs(self.refs, new_of)
        if self.spawned_by is not None:
            self.spawned_by = int(new_of[self.spawned_by])


class Reading:
    """One journal file being read: what the hot loop (:meth:`records`) carries from one record
    to the next, kept for a live follow to go on from."""

    def __init__(
        self,
        b: SessionBuilder,
        jpath: Path,
        src: int,
        parent: str | None,
        spawned_by: int | None,
        shared: Refs | None,
        resume: Followed | None,
    ) -> None:
        self.b, self.jpath, self.src, self.parent = b, jpath, src, parent
        self.spawned_by, self.shared = spawned_by, shared
        self.refs: Refs | RemappedRefs = resume.refs if resume is not None else Refs(b.count, dense=True)
        self.children: list[tuple[Path, int]] = list(resume.waiting) if resume is not None else []
        """Spawned subagents' journals, with the index of the spawn."""
        self.outcomes: dict[str, str] = {}
        """Subagent -> how its ``agent.end`` says it ended."""
        self.agent_id = resume.agent_id if resume is not None else ""
        self.agent_aid = resume.agent_aid if resume is not None else 0
        self.ended = resume.ended if resume is not None else ""
        self.n = resume.records if resume is not None else 0
        """Records read from this file."""
        self.shown_damage = resume.shown_damage if resume is not None else 0
        """How many of the scan's corrupt lines have their placeholder row."""
        self.types = TypeCache(b.pool)

    def records(self, res: ScanResult, scanned: Iterator[Fields]) -> Iterator[None]:
        """Read ``scanned`` into the builder, yielding whenever a chunk is due."""
        b, jpath, src, parent = self.b, self.jpath, self.src, self.parent
        session = b.session
        pool = b.pool
        intern = pool.id
        ids = pool.index
        refs = self.refs
        children, outcomes = self.children, self.outcomes
        types = self.types
        type_info = types.cache.get
        agent_id, agent_aid, ended, n = self.agent_id, self.agent_aid, self.ended, self.n
        seq = res.dialect == "seq"
        clock = MinuteClock()
        damage = res.corrupt
        shown_damage = self.shown_damage
        base = b.base
        rows = b.rows
        put = rows.extend
        pack = ROW.pack
        size = ROW.size
        set_status = _STATUS_FIELD.pack_into
        i = b.count - 1  # the current record's index
        flush_at = b.count + b.chunk - 1
        last_who, last_aid = agent_id, agent_aid
        measuring = b.measuring()
        measure = b.measured_rows.extend
        other = _OTHER
        for lsn, offset, line, length, d, after_gap, closes in scanned:
            if n == 0:
                seq = res.dialect == "seq"
                v1 = res.dialect == "v1"  # seed commits take no new number: no arithmetic run there
                refs = self.shared if self.shared is not None and v1 else Refs(b.count, dense=v1)
                agent_id = str(d.get("agent") or ("main" if parent is None else f"agent-{src}"))
                agent_aid = last_aid = intern(agent_id)
                last_who = agent_id
                add_agent(b, d, agent_id, parent, self.spawned_by)
                if src == 0:  # the task, for a session shown while it is still being read
                    _facts.head(session, res)
            if after_gap and len(damage) > shown_damage:
                shown_damage = placeholders(b, jpath, src, damage, shown_damage, offset, agent_id)
                refs.seal()
                i = b.count - 1
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
            if kind_id == other:  # a type v1 does not define: the kind it had in an imported session
                claimed = d.get("kind")
                if claimed.__class__ is str:
                    kind_id = KIND_INDEX.get(claimed, other)
            key: Any = closes  # the reader's one rule of what a record completes (all dialects)
            if key is None:
                key = d.get("ref", _MISSING)  # a recovery record names its intent without closing it
                if key is _MISSING:
                    key = d.get("intent")
            if key.__class__ is int and refs.base <= key < refs.next:
                ref = refs.first + key - refs.base
            else:
                ref = -1 if key is None else refs.get(key)
            if fixed >= 0:
                sid = fixed
                own = pool.values[sid] if group else ""
            else:
                own = status(typ, d)
                found = ids.get(own)
                sid = found if found is not None else intern(own)
            who = d.get("agent")
            if who is None:
                aid = agent_aid
            elif who == last_who:
                aid = last_aid
            elif who.__class__ is str and who:
                last_who = who
                found = ids.get(who)
                last_aid = aid = found if found is not None else intern(who)
            else:
                aid = agent_aid
            tool = d.get("tool")
            if tool is None:
                tid = 0
            else:
                tool = tool if tool.__class__ is str else str(tool or "")
                found = ids.get(tool)
                tid = found if found is not None else intern(tool)
            flags = 0
            if group == TARGETED:
                target = target_of(d)
                found = ids.get(target)
                gid = found if found is not None else intern(target)
                if kind_id == TOOL_CALL and target and changes_file(d):
                    flags = FILE
            else:
                gid = 0
            i += 1
            put(
                pack(
                    kind_id,
                    type_id,
                    lsn,
                    clock(d.get("ts")),
                    aid,
                    tid,
                    gid,
                    sid,
                    ref,
                    src,
                    line,
                    offset,
                    length,
                    -1,
                    flags,
                )
            )
            if measuring and flags:
                measure((i, 0, None, None, *hashes(d)))
            elif measuring and (kind_id == _MODEL_RESULT or kind_id == _MODEL_CALL):
                model = d.get("model")
                model_id = (ids.get(model) or intern(model)) if model.__class__ is str else 0
                u = usage_of(d) if kind_id == _MODEL_RESULT else {}
                measure((i, model_id, u.get("input_tokens"), u.get("output_tokens"), None, None))
            if closes == lsn:
                pass  # a seed record that closes an intent carries the intent's number, not a new one
            elif lsn == refs.next:
                refs.next += 1
            else:
                refs.put(lsn, i)
            if group:
                if ref >= 0 and group == COMPLETES:
                    done = completed_status(typ, d, own)
                    if done:
                        if ref >= base:
                            set_status(rows, (ref - base) * size + _STATUS_AT, intern(done))
                        else:
                            b.set_status(ref, done)
                if group == TARGETED:
                    if "approval" in d and kind_id == TOOL_CALL:
                        request = refs.get(d["approval"])
                        if request >= 0:
                            session.gated[request] = i
                elif typ == "commit":
                    if parent is None:
                        session.last_committed_lsn = lsn
                if typ in NOTABLE:
                    ended = _facts.notable(session, jpath, typ, d, i, own, children, outcomes) or ended
            n += 1
            if i >= flush_at:
                b.flush()
                rows = b.rows
                put = rows.extend
                measure = b.measured_rows.extend
                base = b.base
                flush_at = base + b.chunk - 1
                yield
        self.refs, self.agent_id, self.agent_aid, self.ended, self.n = refs, agent_id, agent_aid, ended, n
        self.shown_damage = shown_damage


def placeholders(
    b: SessionBuilder,
    jpath: Path,
    src: int,
    damage: list[Damage],
    start: int,
    before: float,
    agent: str,
    *,
    status: str = "corrupt",
) -> int:
    """Placeholder rows for damaged lines ``damage[start:]`` that lie before offset ``before``;
    returns how many of ``damage`` are shown now."""
    k = start
    while k < len(damage) and damage[k].offset < before:
        dmg = damage[k]
        text = _line_at(jpath, dmg.offset)
        b.placeholder(
            src=src,
            line=dmg.line,
            offset=dmg.offset,
            length=len(text),
            reason=dmg.reason,
            status=status,
            agent=agent,
            lsn=dmg.lsn if dmg.lsn is not None else -1,
            text=text[:DAMAGED_TEXT].decode("utf-8", "replace"),
        )
        k += 1
    return k


def _line_at(path: Path, offset: int, limit: int = 1 << 16) -> bytes:
    """The damaged line at ``offset`` (up to its newline, at most ``limit`` bytes)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(limit)
    except OSError:
        return b""
    return data.split(b"\n", 1)[0]


def add_agent(
    b: SessionBuilder, first: dict[str, Any], agent_id: str, parent: str | None, spawned_by: int | None
) -> None:
    if agent_id in b.session.agents:  # the next segment of a rotated journal: the same agent
        return
    run = str(first.get("run") or first.get("task_id") or "")
    b.agent(agent_id, parent=parent, spawned_by=spawned_by, run=run, task=str(first.get("task") or ""))
