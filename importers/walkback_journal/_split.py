"""A big journal read in two parts at once, on two cores.

CPython reads a journal on one core, and its per-record Python (chain checks, the event row) costs
several times the JSON parse. For a v1 file of at least :data:`MIN_BYTES`, :func:`._read.read_journal`
starts this module as a child process on the file's second part. The child finds the first intact
record after the cut it was given, *assumes* the records before it are what a journal almost always
is (an unbroken chain from the file's first record: lsns dense, no damage, one agent) and reads on
from there with the same loop the parent runs (:class:`._reading.Reading`), into a builder whose event
indices start where the parent's will end (``SessionBuilder(origin=...)``).

The two processes do not run at a steady ratio of speeds (the second one starts later, a core is
shared with the viewer's server, a VM's cores drift), so the cut is not fixed: the middle of the file
is :data:`CHUNKS` chunks, and each is read by whichever process gets to it first. The parent takes
them from the front as it reaches each, the child from the back once its own part is read, each
chunk read up to the part already read after it and checked to fit it (:func:`read_part` with
``later``), so the child hands over one chain of parts (:attr:`Part.then`), joined in order. A chunk
is claimed by reading one byte of a pipe that holds one per chunk: the read is atomic, so each chunk
is taken once, and each process counts its own.

The parent reads up to where the child's part starts. If what it holds there is what the child
assumed (:meth:`Part.fits`), it joins the child's events and state on (:meth:`Part.join`); otherwise,
or if the child failed, it reads on itself from the record it stopped at, as if the child had never
run. Either way the session is the one a single read gives (``tests/importers/test_walkback_split.py``
compares them).
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
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import IO, Any

from walkback.journal import hashcheck
from walkback.journal.reader import BOM, Scanner, ScanState
from walkback.journal.record import FORMAT_VERSION, intact
from walkback.journal.scanresult import Fields, ScanResult
from walkback.timeline.builder import SessionBuilder
from walkback.timeline.session import RecoveryFinding
from walkback.timeline.table import EventTable

from ._details import details
from ._reading import NO_STOP, Reading, Refs, RemappedRefs
from ._vocab import NAME

MIN_BYTES = 64 << 20
"""Files smaller than this are read in one part (a child's start-up, ~0.5 s, would not pay)."""
MIDDLE = (0.34, 0.66)
"""Where in the file (as shares of its size) the chunks either process may read lie: the parent reads
up to the first at least, the child from the last on at least."""
CHUNKS = 16
"""How many chunks the middle is cut into: a process that gets to the end of its work first waits
for the other at most about one chunk's reading (~0.08 s at a million events)."""
CHILD = f"import sys; from {__name__} import main; sys.exit(main())"
LOOK_AHEAD = 64
"""Lines after the cut the child tries before it gives up finding an intact record to start at."""


@dataclass
class Child:
    """A child process, the file it writes its part to and the pipe of the chunks it and this
    process claim. The file is unlinked from the start, so nothing is left behind whichever process
    is killed. (Through a pipe, the child's write waited for this process's receiving thread to get
    the interpreter between two of its reads, chunk by chunk, while the reader held it: ~0.4 s for
    the part of a million-event file.)"""

    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    claims: int
    """The read end of a pipe holding one byte per chunk, its write end closed: a read of one byte
    takes a chunk, an empty read says they are all taken (see the module docstring)."""

    def waiting(self) -> bool:
        """Whether it is still there to take a job (it was started ahead of it)."""
        return self.proc.poll() is None

    def stop(self) -> None:
        hashcheck.stop(self.proc)
        self.out.close()
        os.close(self.claims)


def claim(claims: int) -> bool:
    """Take the next chunk from the pipe ``claims`` (see :class:`Child`); False once none is left."""
    try:
        return os.read(claims, 1) != b""
    except BlockingIOError:  # none left, and a process forked meanwhile holds the write end too
        return False


_ready: dict[Path, Child] = {}
"""Children started ahead of a read of their file, waiting for their job on stdin."""
_ready_lock = threading.Lock()


def _spawn() -> Child:
    out = tempfile.TemporaryFile(prefix="walkback-part-")
    claims, fill = os.pipe()
    try:
        os.write(fill, bytes(CHUNKS))  # a pipe holds 64 KiB: this never blocks
    finally:
        os.close(fill)
    os.set_blocking(claims, False)  # for the child too: they share the open pipe
    try:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(out.fileno(), claims),
        )
    except OSError:
        out.close()
        os.close(claims)
        raise
    return Child(proc, out, claims)


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
    """The child process reading the file's part after the parent's, and the chunks between them."""

    def __init__(self, jpath: Path, size: int, job: dict[str, Any]) -> None:
        with _ready_lock:
            child = _alive(_ready.pop(jpath, None))
        if child is None:
            child = _spawn()
        self.path = jpath
        self.bounds = bounds(size)
        """Byte offsets where the chunks start, the last one's end last: the parent reads up to the
        first; the first record at or after the last is the child's."""
        self.taken = 0
        """How many chunks the parent took."""
        self.child: Child | None = child
        job = {**job, "bounds": self.bounds, "out": child.out.fileno(), "claims": child.claims}
        try:  # (the descriptors have the same numbers there)
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

    def claim(self) -> bool:
        """Take the next chunk for the parent, which has reached its start; False once the child has
        taken the rest."""
        if self.child is None or self.taken == len(self.bounds) - 1 or not claim(self.child.claims):
            return False
        self.taken += 1
        return True

    def read(
        self, r: Reading, res: ScanResult, records: Generator[Fields, None, None]
    ) -> Generator[None, None, ScanState | None]:
        """The parent's side: read ``records`` into ``r`` up to the child's parts, claiming chunks
        on the way, join the parts on if they fit, else read on to the end. Returns the scan state a
        later read resumes from if the parts were joined, else None (the scanner's own is right)."""
        yield from r.records(res, records, stop=self.bounds[0])
        while r.held is not None and self.claim():
            yield from r.records(res, chain([r.held], records), stop=self.bounds[self.taken])
        if r.held is None:
            return None
        part = self.result()
        if part is not None and r.held[1] < part.cut:  # the child could not read a chunk it took
            yield from r.records(res, chain([r.held], records), stop=part.cut)
        if part is not None and part.fits(r, res):
            records.close()
            return part.join(r, res)
        if r.held is not None:
            yield from r.records(res, chain([r.held], records), stop=NO_STOP)
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


def bounds(size: int) -> list[int]:
    """Where the chunks of a file of ``size`` bytes start, the last one's end last (:data:`MIDDLE`)."""
    low, high = MIDDLE
    return [int(size * (low + (high - low) * k / CHUNKS)) for k in range(CHUNKS + 1)]


@dataclass
class Part:
    """What the child read from :attr:`cut` on (a chunk: up to the part after it, :attr:`then`),
    with what it assumed about the records before."""

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
    """The scan to the file's end (its ``records`` counted from the file's first record, as
    assumed); a chunk's is that of the part after it."""
    state: ScanState
    """Where a later read of the file resumes (a chunk's: that of the part after it)."""
    then: Part | None = None
    """The part read from where this one (a chunk) ends, found to fit it (:meth:`fits`)."""

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
        """Take the child's events and state, this part's and then those of the parts after it, into
        the parent's reading ``r`` and scan result ``res``; returns the scan state a later read of
        the file resumes from."""
        b = r.b
        s = b.session
        part: Part | None = self
        while part is not None:
            b.join(part.table, part.earlier_sets)
            s.payloads.update(part.payloads)
            s.gated.update(part.gated)
            if part.last_committed_lsn is not None:
                s.last_committed_lsn = part.last_committed_lsn
            s.recovered = s.recovered or part.recovered
            s.recovery_findings.extend(part.findings)
            s.brief = part.brief or s.brief
            r.refs, r.n, r.shown_damage = part.refs, part.n, part.shown_damage
            r.ended = part.ended or r.ended
            r.children.extend(part.children)
            r.outcomes.update(part.outcomes)
            part = part.then
        scan = self.result
        res.records = scan.records  # counted from the file's first record (see read_part)
        res.last_lsn, res.last_h = scan.last_lsn, scan.last_h
        res.valid_end, res.valid_line, res.file_size = scan.valid_end, scan.valid_line, scan.file_size
        res.corrupt.extend(scan.corrupt)
        res.torn.extend(scan.torn)
        snap = replace(res, torn=[], corrupt=list(res.corrupt))
        st = self.state
        return ScanState(st.path, st.offset, st.line, snap, st.chain.resumed(snap), st.anchor, st.file_id)


# -- the child ----------------------------------------------------------------------------------
def read_tail(
    jpath: Path,
    bounds: list[int],
    take: Callable[[], bool],
    *,
    first_index: int,
    src: int,
    parent: str | None,
) -> Part | None:
    """The child's side: read ``jpath`` from the last of ``bounds`` on, then, while ``take`` claims
    one, the chunk before what it has read, each up to it (see the module docstring).
    A chunk it cannot read (no intact record near its start, or what it read does not fit) ends the
    claims: the parent reads that chunk itself."""
    part = read_part(jpath, bounds[-1], first_index=first_index, src=src, parent=parent)
    k = len(bounds) - 1
    while part is not None and k > 0 and take():
        k -= 1
        before = read_part(jpath, bounds[k], later=part, first_index=first_index, src=src, parent=parent)
        if before is None:
            break
        part = before
    return part


def read_part(
    jpath: Path, hint: int, *, later: Part | None = None, first_index: int, src: int, parent: str | None
) -> Part | None:
    """Read ``jpath`` from the first intact record at or after byte ``hint`` (see the module
    docstring): to the end, or up to ``later`` (a part read from further on), which it must fit and
    is then linked to. None if there is no intact record nearby, the file does not start with a
    record, or what was read does not fit ``later``."""
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
        if later is None:
            f.seek(0)
            lines = sum(f.read(min(1 << 22, cut - k)).count(b"\n") for k in range(0, cut, 1 << 22))
        elif cut < later.cut:
            f.seek(cut)
            lines = later.line - 1 - f.read(later.cut - cut).count(b"\n")
        else:
            return None
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
    records = scanner.fields()
    res = scanner.result
    for _ in r.records(res, records, stop=NO_STOP if later is None else later.cut):
        pass
    records.close()
    if later is None:
        res.records += lsn - first_lsn  # the records assumed before the cut: a join takes this count
        state = scanner.state
    elif later.fits(r, res):
        res, state = later.result, later.state
    else:
        return None
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
        result=res,
        state=state,
        then=later,
    )


def _record(line: bytes) -> dict[str, Any] | None:
    """A whole v1 line whose own hash verifies, parsed; else None."""
    rec = intact(line[:-1]) if line.endswith(b"\n") else None
    if rec is None or rec.get("v") != FORMAT_VERSION or not isinstance(rec.get("prev"), str):
        return None
    return rec


def main() -> int:
    """The child (:data:`CHILD`): wait for the job (one JSON line on stdin), read the part it names
    (:func:`read_tail`), write it pickled to the file the job names (a descriptor this process was
    given, as was the pipe of chunks)."""
    line = sys.stdin.buffer.readline()
    if not line:
        return 1  # the parent is gone, or ended without a read for this child
    job = json.loads(line)
    part = read_tail(
        Path(job["path"]),
        job["bounds"],
        lambda: claim(job["claims"]),
        first_index=job["first_index"],
        src=job["src"],
        parent=job["parent"],
    )
    if part is None:
        return 1
    with os.fdopen(job["out"], "wb") as out:
        pickle.dump(part, out, protocol=pickle.HIGHEST_PROTOCOL)
    return 0
