"""A big journal read in two parts at once, on two cores.

CPython reads a journal on one core, and its per-record Python (chain checks, the event row) costs
several times the JSON parse. For a v1 file of at least :data:`MIN_BYTES`, :func:`._read.read_journal`
starts this module as a child process on the file's second part. The child finds the first intact
record after the cut it was given, *assumes* the records before it are what a journal almost always
is (an unbroken chain from the file's first record: lsns dense, no damage, one agent) and reads on
from there with the same loop the parent runs (:class:`._reading.Reading`), into a builder whose event
indices start where the parent's will end (``SessionBuilder(origin=...)``).

The parent reads up to the cut. If what it holds there is what the child assumed (:meth:`Part.fits`),
it joins the child's events and state on (:meth:`Part.join`); otherwise, or if the child failed,
it reads on itself from the record it stopped at, as if the child had never run. Either way the
session is the one a single read gives (``tests/importers/test_walkback_split.py`` compares them).
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from walkback.journal import hashcheck
from walkback.journal.reader import BOM, Scanner, ScanState
from walkback.journal.record import FORMAT_VERSION, intact
from walkback.journal.scanresult import ScanResult
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.session import RecoveryFinding
from walkback.timeline.table import EventTable

from ._details import details
from ._reading import NO_STOP, Reading, Refs, RemappedRefs
from ._vocab import NAME

MIN_BYTES = 64 << 20
"""Files smaller than this are read in one part (a child's start-up, ~0.5 s, would not pay)."""
CHILD_SHARE = 0.48
"""The share of the file a child started for the read reads (it starts ~0.3 s after the parent)."""
READY_SHARE = 0.50
"""The share a child started ahead of the read (:func:`prepare`) reads."""
CHILD = f"import sys; from {__name__} import main; sys.exit(main())"
LOOK_AHEAD = 64
"""Lines after the cut the child tries before it gives up finding an intact record to start at."""


@dataclass
class Child:
    """A child process and the file it writes its part to: unlinked from the start, so nothing is
    left behind whichever process is killed. (Through a pipe, the child's write waited for this
    process's receiving thread to get the interpreter between two of its reads, chunk by chunk, while
    the reader held it: ~0.4 s for the part of a million-event file.)"""

    proc: subprocess.Popen[bytes]
    out: IO[bytes]

    def waiting(self) -> bool:
        """Whether it is still there to take a job (it was started ahead of it)."""
        return self.proc.poll() is None

    def stop(self) -> None:
        hashcheck.stop(self.proc)
        self.out.close()


_ready: dict[Path, Child] = {}
"""Children started ahead of a read of their file, waiting for their job on stdin."""
_ready_lock = threading.Lock()


def _spawn() -> Child:
    out = tempfile.TemporaryFile(prefix="walkback-part-")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(out.fileno(),),
        )
    except OSError:
        out.close()
        raise
    return Child(proc, out)


def _alive(child: Child | None) -> Child | None:
    """``child`` if it still waits for its job; one that died meanwhile is cleaned up."""
    if child is not None and not child.waiting():
        child.stop()
        return None
    return child


def _eligible(jpath: Path) -> int:
    """The size of ``jpath`` if it is a v1 file big enough to gain from a child, else 0."""
    try:
        size = jpath.stat().st_size
        if size < MIN_BYTES or not hashcheck.core_free():
            return 0
        with open(jpath, "rb") as f:
            return size if f.read(16).removeprefix(BOM).startswith(b'{"v":1,') else 0
    except OSError:
        return 0


def prepare(jpath: Path) -> None:
    """Start the child for a coming read of ``jpath`` now, so that the read does not wait ~0.3 s
    for its interpreter and imports (``walkback view`` does this while its server starts). The
    child waits for its job; it exits when this process does."""
    if not _eligible(jpath):
        return
    with _ready_lock:
        child = _alive(_ready.pop(jpath, None))
        try:
            _ready[jpath] = child or _spawn()
        except OSError:
            pass  # the read starts its own child


@atexit.register
def _discard_ready() -> None:
    with _ready_lock:
        for child in _ready.values():
            child.stop()
        _ready.clear()


class Tail:
    """The child process reading the file from about :attr:`hint` on."""

    def __init__(self, jpath: Path, size: int, job: dict[str, Any]) -> None:
        with _ready_lock:
            child = _alive(_ready.pop(jpath, None))
        share = READY_SHARE
        if child is None:
            child, share = _spawn(), CHILD_SHARE
        self.path = jpath
        self.hint = int(size * (1 - share))
        """Byte offset the parent stops at: the first record at or after it is the child's."""
        self.child: Child | None = child
        job = {**job, "hint": self.hint, "out": child.out.fileno()}  # the same descriptor there
        try:
            assert child.proc.stdin is not None
            child.proc.stdin.write(json.dumps(job).encode() + b"\n")
            child.proc.stdin.close()
        except OSError:
            pass  # a child that died while it waited: it exits with nothing written

    @classmethod
    def start(cls, jpath: Path, *, first_index: int, src: int, parent: str | None) -> Tail | None:
        """A child for the rest of ``jpath`` (the one :func:`prepare` started, if it did), if it is
        a v1 file big enough to gain from one."""
        size = _eligible(jpath)
        if not size:
            return None
        try:
            return cls(
                jpath, size, {"path": str(jpath), "first_index": first_index, "src": src, "parent": parent}
            )
        except OSError:
            return None

    def result(self) -> Part | None:
        """The child's part once it has read it (this waits for it), or None if it could not."""
        child, part = self.child, None
        try:
            if child is not None and child.proc.wait() == 0:
                child.out.seek(0)  # the child wrote through the same open file
                part = pickle.load(child.out)  # noqa: S301 - our own child process, started above
        except (OSError, ValueError, pickle.UnpicklingError, EOFError):
            pass  # failed: the parent reads on itself
        self.close()
        return part if isinstance(part, Part) else None

    def close(self) -> None:
        if self.child is not None:
            self.child.stop()  # a child still reading is killed
            self.child = None


@dataclass
class Part:
    """What the child read from :attr:`cut` on, with what it assumed about the records before."""

    cut: int
    """Byte offset of the record the child started at."""
    line: int
    lsn: int
    prev: str
    first_index: int
    first_lsn: int
    agent_id: str
    table: EventTable
    earlier_sets: list[tuple[int, int, Any]]
    payloads: dict[int, dict[str, Any]]
    gated: dict[int, int]
    last_committed_lsn: int | None
    recovered: bool
    findings: list[RecoveryFinding]
    brief: str
    refs: Refs | RemappedRefs
    children: list[tuple[Path, int]]
    outcomes: dict[str, str]
    ended: str
    n: int
    shown_damage: int
    result: ScanResult
    state: ScanState

    def fits(self, r: Reading, res: ScanResult) -> bool:
        """Whether the parent, stopped at the record ``r.held``, is where the child assumed it to be:
        that record is the child's first, taken on the chain with nothing damaged before it (so the
        chain before it is unbroken), lsns dense from the file's first record, the same agent."""
        if r.held is None:
            return False
        lsn, offset, line, _, data, after_gap, _ = r.held
        refs = r.refs
        return (
            (offset, line, lsn) == (self.cut, self.line, self.lsn)
            and not after_gap
            and data.get("prev") == self.prev
            and res.dialect == "v1"
            and not res.corrupt
            and isinstance(refs, Refs)
            and (refs.first, refs.base, refs.next) == (self.first_index, self.first_lsn, self.lsn)
            and not refs.sparse
            and refs.sealed == (0, 0, 0)
            and r.n == self.lsn - self.first_lsn
            and r.shown_damage == 0
            and r.agent_id == self.agent_id
            and r.b.count == self.first_index + r.n
        )

    def join(self, r: Reading, res: ScanResult) -> ScanState:
        """Take the child's events and state into the parent's reading ``r`` and scan result
        ``res``; returns the scan state a later read of the file resumes from."""
        b = r.b
        b.join(self.table, self.earlier_sets)
        s = b.session
        s.payloads.update(self.payloads)
        s.gated.update(self.gated)
        if self.last_committed_lsn is not None:
            s.last_committed_lsn = self.last_committed_lsn
        s.recovered = s.recovered or self.recovered
        s.recovery_findings.extend(self.findings)
        s.brief = self.brief or s.brief
        r.refs, r.n, r.shown_damage = self.refs, self.n, self.shown_damage
        r.ended = self.ended or r.ended
        r.children.extend(self.children)
        r.outcomes.update(self.outcomes)
        part = self.result
        res.records = self.lsn - self.first_lsn + part.records
        res.last_lsn, res.last_h = part.last_lsn, part.last_h
        res.valid_end, res.valid_line, res.file_size = part.valid_end, part.valid_line, part.file_size
        res.corrupt.extend(part.corrupt)
        res.torn.extend(part.torn)
        snap = replace(res, torn=[], corrupt=list(res.corrupt))
        st = self.state
        return ScanState(st.path, st.offset, st.line, snap, st.chain.resumed(snap), st.anchor, st.file_id)


# -- the child ----------------------------------------------------------------------------------
def read_part(jpath: Path, hint: int, *, first_index: int, src: int, parent: str | None) -> Part | None:
    """Read ``jpath`` from the first intact record at or after byte ``hint`` (see the module
    docstring); None if there is none nearby or the file does not start with a record."""
    with open(jpath, "rb") as f:
        first = _record(f.readline().removeprefix(BOM))
        if first is None or hint <= 0:
            return None
        f.seek(hint - 1)
        f.readline()  # to the start of the first line at or after the hint
        for _ in range(LOOK_AHEAD):
            cut = f.tell()
            at = _record(f.readline())
            if at is not None:
                break
        else:
            return None
        f.seek(0)
        lines = sum(f.read(min(1 << 22, cut - k)).count(b"\n") for k in range(0, cut, 1 << 22))
    first_lsn, lsn = first["lsn"], at["lsn"]
    if not first_lsn < lsn:
        return None
    b = SessionBuilder(NAME, describe=details, origin=first_index + lsn - first_lsn)
    r = Reading(b, jpath, src, parent, None, None, None)
    refs = r.refs = Refs(first_index, dense=True)
    refs.base, refs.next = first_lsn, lsn
    r.agent_id = str(first.get("agent") or ("main" if parent is None else f"agent-{src}"))
    r.agent_aid = b.pool.id(r.agent_id)
    r.n = lsn - first_lsn
    scanner = Scanner(jpath, resume=replace(ScanState.before(jpath, cut, at), line=lines), hash_worker=False)
    for _ in r.records(scanner.result, scanner.fields(), stop=NO_STOP):
        pass
    b.flush()
    s = b.session
    return Part(
        cut=cut,
        line=lines + 1,
        lsn=lsn,
        prev=at["prev"],
        first_index=first_index,
        first_lsn=first_lsn,
        agent_id=r.agent_id,
        table=s.table,
        earlier_sets=b.earlier_sets,
        payloads=s.payloads,
        gated=s.gated,
        last_committed_lsn=s.last_committed_lsn,
        recovered=s.recovered,
        findings=s.recovery_findings,
        brief=s.brief,
        refs=r.refs,
        children=r.children,
        outcomes=r.outcomes,
        ended=r.ended,
        n=r.n,
        shown_damage=r.shown_damage,
        result=scanner.result,
        state=scanner.state,
    )


def _record(line: bytes) -> dict[str, Any] | None:
    """A whole v1 line whose own hash verifies, parsed; else None."""
    rec = intact(line[:-1]) if line.endswith(b"\n") else None
    if rec is None or rec.get("v") != FORMAT_VERSION or not isinstance(rec.get("prev"), str):
        return None
    return rec


def main() -> int:
    """The child (:data:`CHILD`): wait for the job (one JSON line on stdin), read the part it names,
    write it pickled to the file the job names (a descriptor this process was given)."""
    line = sys.stdin.buffer.readline()
    if not line:
        return 1  # the parent is gone, or ended without a read for this child
    job = json.loads(line)
    part = read_part(
        Path(job["path"]), job["hint"], first_index=job["first_index"], src=job["src"], parent=job["parent"]
    )
    if part is None:
        return 1
    with os.fdopen(job["out"], "wb") as out:
        pickle.dump(part, out, protocol=pickle.HIGHEST_PROTOCOL)
    return 0
